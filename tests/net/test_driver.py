"""The driver's contract with nodes, over a real (single-peer) mesh."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from p2pkille.net import Driver, DriverError, Mesh
from p2pkille.runtime.io import Output, WakeAt
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
