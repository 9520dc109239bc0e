"""An in-memory transport: the peers of one process on one asyncio loop.

:class:`LocalNet` is a hub; :meth:`LocalNet.transport` gives each peer a
:class:`LocalTransport` that implements ``p2pkille.net.driver.Transport``. Frames
are delivered on the next loop iteration (never inside ``send``), in send order.
A peer can :meth:`LocalNet.vanish`: from then on nothing reaches it or leaves it,
as when a process dies or its cable is pulled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

__all__ = ["LocalNet", "LocalTransport"]

Deliver = Callable[[str, bytes], None]


class LocalNet:
    """The hub for the peers named ``names`` (transport names)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"peer names must be distinct: {self.names!r}")
        self._deliver: dict[str, Deliver] = {}
        self._all_in: asyncio.Event | None = None
        self.vanished: set[str] = set()
        self.frames = 0

    def transport(self, name: str) -> LocalTransport:
        if name not in self.names:
            raise ValueError(f"{name!r} is not one of the peers {self.names!r}")
        return LocalTransport(self, name)

    def vanish(self, name: str) -> None:
        """Cut ``name`` off: it neither sends nor receives any more."""
        self.vanished.add(name)

    def _event(self) -> asyncio.Event:
        if self._all_in is None:
            self._all_in = asyncio.Event()
        return self._all_in

    def _join(self, name: str, deliver: Deliver) -> None:
        self._deliver[name] = deliver
        if len(self._deliver) == len(self.names):
            self._event().set()

    def _leave(self, name: str) -> None:
        self._deliver.pop(name, None)

    def _send(self, sender: str, to: str | None, data: bytes) -> int:
        if sender in self.vanished:
            return 0
        targets = [n for n in self.names if n != sender] if to is None else [to]
        loop = asyncio.get_running_loop()
        count = 0
        for target in targets:
            deliver = self._deliver.get(target)
            if deliver is None or target in self.vanished:
                continue
            loop.call_soon(self._arrive, target, sender, data)
            count += 1
        self.frames += count
        return count

    def _arrive(self, target: str, sender: str, data: bytes) -> None:
        deliver = self._deliver.get(target)
        if deliver is not None and target not in self.vanished and sender not in self.vanished:
            deliver(sender, data)


class LocalTransport:
    """One peer's end of a :class:`LocalNet`."""

    def __init__(self, net: LocalNet, name: str) -> None:
        self.net = net
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def send(self, to: str | None, data: bytes) -> int:
        return self.net._send(self._name, to, bytes(data))

    async def run(self, deliver: Deliver) -> None:
        self.net._join(self._name, deliver)
        try:
            await asyncio.Event().wait()
        finally:
            self.net._leave(self._name)

    async def wait_ready(self) -> None:
        """Ready once every peer of the net has joined (nothing sent early is lost)."""
        await self.net._event().wait()
