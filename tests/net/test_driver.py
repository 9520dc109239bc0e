"""The driver's contract with nodes, over a real (single-peer) mesh."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from p2pkille.net import Driver, DriverError, Mesh
from p2pkille.runtime.io import Output, Send, WakeAt
from tests.net.nodes import identity

TABLE = b"test-table-driver"


class Returns:
    """Returns ``outputs`` from ``start``; raises ``error`` from its first wake."""

    def __init__(self, name: str, outputs: object, error: Exception | None = None) -> None:
        self.name = name
        self.outputs = outputs
        self.error = error

    def start(self, now: float) -> Sequence[Output]:
        return self.outputs  # type: ignore[return-value]

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        return []

    def wake(self, now: float) -> Sequence[Output]:
        if self.error is not None:
            raise self.error
        return []


def drive(outputs: object, error: Exception | None = None) -> None:
    ident = identity(0)
    mesh = Mesh(ident, TABLE, [ident.public])
    driver = Driver(Returns(mesh.name, outputs, error), mesh)

    async def main() -> None:
        async with asyncio.timeout(5):
            await driver.run()

    asyncio.run(main())


def test_names_must_match() -> None:
    ident = identity(0)
    with pytest.raises(DriverError, match="names must be equal"):
        Driver(Returns("someone else", []), Mesh(ident, TABLE, [ident.public]))


@pytest.mark.parametrize(("outputs", "message"), [
    (None, "expected a sequence"), (b"xy", "expected a sequence"),
    (["not an output"], "expected Send or WakeAt"), ([WakeAt(float("nan"))], "finite time"),
    ([WakeAt(True)], "finite time"),
])
def test_bad_outputs_end_the_run(outputs: object, message: str) -> None:
    with pytest.raises(ExceptionGroup) as info:
        drive(outputs)
    assert info.group_contains(DriverError, match=message)


def test_an_exception_from_the_node_ends_the_run_with_a_note() -> None:
    with pytest.raises(ExceptionGroup) as info:
        drive([WakeAt(0.0)], error=KeyError("bug"))
    assert info.group_contains(KeyError)
    (error,) = info.value.exceptions
    assert "in wake at t=" in " ".join(getattr(error, "__notes__", []))


class Counts:
    """Counts its wakes; each returns one loop-back Send so the effect is visible."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.wakes = 0
        self.got: list[bytes] = []

    def start(self, now: float) -> Sequence[Output]:
        return []

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.got.append(data)
        return []

    def wake(self, now: float) -> Sequence[Output]:
        self.wakes += 1
        return [Send(b"woke %d" % self.wakes, to=self.name)]


def test_poke_wakes_the_node_at_once_and_carries_out_its_outputs() -> None:
    ident = identity(0)
    mesh = Mesh(ident, TABLE, [ident.public])
    node = Counts(mesh.name)
    driver = Driver(node, mesh)
    driver.poke()  # not started: nothing happens
    assert node.wakes == 0

    async def main() -> None:
        task = asyncio.create_task(driver.run())
        async with asyncio.timeout(5):
            while not driver._started:
                await asyncio.sleep(0.01)
            driver.poke()
            assert node.wakes == 1  # at once, not on a later loop turn
            while not node.got:
                await asyncio.sleep(0.01)
        driver.stop()
        await task

    asyncio.run(main())
    assert node.got == [b"woke 1"]
    assert driver.sent == 1
