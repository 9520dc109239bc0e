"""Runs one sans-I/O node over a real transport on the asyncio loop.

The driver is to a real network what ``p2pkille.sim.SimNetwork`` is to the simulated one: it
calls the node's ``start``, ``receive`` and ``wake`` one at a time from a single task, with
``now`` read from the loop's monotonic clock, and carries out the outputs:

- ``Send(data, to)`` goes to the transport; a ``Send`` to the node's own name loops back to
  it (as in the simulator), and a broadcast (``to=None``) skips the sender;
- ``WakeAt(at)`` is a deadline on the loop clock. Several ``WakeAt`` for the same instant
  give one wake, and so do all the deadlines that are due when the node gets to run: ``wake``
  means "time has passed", and one call at the current time tells the node all of it.

The node is started once the transport is ready. An exception from the node is a bug in this
process and ends :meth:`Driver.run` (peer input is the node's to judge and must not raise).

With a :class:`~p2pkille.net.guard.Guard` (a peer at a real table), input passes the guard
before it waits for the node: a sync not proven to come from a member is refused there,
and what the node answers to a sync is repair traffic, charged to that member's budget and
sent through the transport's repair lane (``send_repair``, behind game traffic) where the
transport has one. Input waits in an :class:`~p2pkille.net.guard.Inbox`, bounded per
sender.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
from collections.abc import Callable, Sequence
from typing import Final, Protocol, runtime_checkable

from p2pkille.net.guard import Guard, Inbox
from p2pkille.runtime import gapfill
from p2pkille.runtime.io import Node, Send, WakeAt

__all__ = ["Driver", "DriverError", "RepairLane", "Transport"]

log = logging.getLogger(__name__)


class Transport(Protocol):
    """What the driver needs of a transport (``Mesh``, ``MqttTransport``)."""

    @property
    def name(self) -> str: ...

    def send(self, to: str | None, data: bytes) -> int: ...

    async def run(self, deliver: Callable[[str, bytes], None]) -> None: ...

    async def wait_ready(self) -> None: ...


@runtime_checkable
class RepairLane(Protocol):
    """A transport that sends repair traffic (answers to gap-fill syncs) only after every
    game message queued before or after it (``Mesh``, ``MqttTransport``)."""

    def send_repair(self, to: str | None, data: bytes) -> int: ...


class DriverError(Exception):
    """The driver was misused, or the node returned an output it cannot carry out."""


_YIELD_EVERY: Final = 64
"""Inputs the node takes in a row before the loop lets the transports run."""


class Driver:
    """Drives ``node`` over ``transport`` until :meth:`stop`; ``node.name`` must be the
    transport's name for us (on real transports, the text of our public key)."""

    def __init__(self, node: Node, transport: Transport, *, guard: Guard | None = None,
                 inbox: Inbox | None = None) -> None:
        if node.name != transport.name:
            raise DriverError(f"node {node.name!r} on a transport that calls us "
                              f"{transport.name!r}: the names must be equal")
        self.node = node
        self.transport = transport
        self.guard = guard
        self.inbox = inbox if inbox is not None else Inbox()
        self.name = node.name
        self.received = 0
        self.sent = 0
        self._lane = transport if isinstance(transport, RepairLane) else None
        self._signal = asyncio.Event()
        self._wake_due = False
        self._deadlines: list[float] = []
        self._deadline_set: set[float] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = False

    def now(self) -> float:
        """The node's clock: the running loop's monotonic time, in seconds."""
        loop = self._loop if self._loop is not None else asyncio.get_running_loop()
        return loop.time()

    def stop(self) -> None:
        """Ask :meth:`run` to cancel the node and the transport and return."""
        self._stopping.set()

    def poke(self) -> None:
        """Let the node act now: ``node.wake`` at the current time, its outputs carried out
        at once. For a decider that answered after the node asked (a human seat). Before the
        node started, or once :meth:`run` ended, it does nothing (``start`` acts anyway).
        Call it from the driver's loop, outside the node's own calls."""
        if not self._started:
            return
        now = self.now()
        try:
            outputs: object = self.node.wake(now)
        except Exception as exc:
            exc.add_note(f"raised by node {self.name!r} in wake (poke) at t={now!r}")
            raise
        self._apply(outputs, "poke")

    def act(self, action: Callable[[float], object], what: str) -> None:
        """Carry out ``action(now)``'s outputs as the node's own: input from its person,
        such as quitting (``node.leave``). Call it from the driver's loop, outside the
        node's own calls; before the node started it does nothing."""
        if not self._started:
            return
        now = self.now()
        try:
            outputs = action(now)
        except Exception as exc:
            exc.add_note(f"raised by node {self.name!r} in {what} at t={now!r}")
            raise
        self._apply(outputs, what)

    def send(self, to: str | None, data: bytes) -> int:
        """Send ``data`` for the node outside its own outputs (e.g. a sync once more as the
        peer leaves), as the node's outputs go: through the guard."""
        if self.guard is not None:
            data = self.guard.wrap(data)
        return self.transport.send(to, data)

    async def run(self) -> None:
        """Run the transport and the node in a task group until :meth:`stop` is called."""
        self._loop = asyncio.get_running_loop()
        try:
            async with asyncio.TaskGroup() as tg:
                transport = tg.create_task(self.transport.run(self._on_frame),
                                           name=f"transport {self.name[:12]}")
                await self.transport.wait_ready()
                node = tg.create_task(self._node_loop(), name=f"node {self.name[:12]}")
                await self._stopping.wait()
                node.cancel()
                transport.cancel()
        finally:
            self._started = False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _on_frame(self, sender: str, data: bytes) -> None:
        if self.guard is not None:
            taken = self.guard.take(sender, data)
            if taken is None:
                return
            data = taken
        if self.inbox.put(sender, data):
            self._signal.set()
        elif self.guard is not None:
            self.guard.stats.inbox_dropped += 1

    def _loop_back(self, data: bytes) -> None:
        self.inbox.put(self.name, data, force=True)
        self._signal.set()

    def _on_deadline(self) -> None:
        self._wake_due = True
        self._signal.set()

    async def _node_loop(self) -> None:
        node = self.node
        now = self.now()
        try:
            outputs: object = node.start(now)
        except Exception as exc:
            exc.add_note(f"raised by node {self.name!r} in start at t={now!r}")
            raise
        self._started = True
        self._apply(outputs, "start")
        inbox = self.inbox
        while True:
            await self._signal.wait()
            self._signal.clear()
            taken = 0
            while inbox or self._wake_due:
                if self._wake_due:
                    self._wake_due = False
                    self._on_timer()
                    continue
                sender, data = inbox.pop()
                self.received += 1
                now = self.now()
                try:
                    outputs = node.receive(sender, data, now)
                except Exception as exc:
                    exc.add_note(f"raised by node {self.name!r} receiving from {sender!r} "
                                 f"at t={now!r}")
                    raise
                # What a node answers to a sync is gap fill: repair traffic.
                self._apply(outputs, "receive", repair=data.startswith(gapfill.PREFIX))
                taken += 1
                if taken % _YIELD_EVERY == 0:
                    await asyncio.sleep(0)

    def _on_timer(self) -> None:
        self._timer, self._timer_at = None, math.inf
        now = self.now()
        due = False
        while self._deadlines and self._deadlines[0] <= now:
            self._deadline_set.discard(heapq.heappop(self._deadlines))
            due = True
        if due:
            try:
                outputs: object = self.node.wake(now)
            except Exception as exc:
                exc.add_note(f"raised by node {self.name!r} in wake at t={now!r}")
                raise
            self._apply(outputs, "wake")
        self._arm()

    def _arm(self) -> None:
        """Keep one loop timer, at the earliest deadline."""
        if not self._deadlines:
            return
        first = self._deadlines[0]
        if first < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            assert self._loop is not None
            self._timer = self._loop.call_at(first, self._on_deadline)
            self._timer_at = first

    def _apply(self, outputs: object, call: str, *, repair: bool = False) -> None:
        if not isinstance(outputs, Sequence) or isinstance(outputs, str | bytes):
            raise DriverError(f"node {self.name!r} returned {outputs!r} from {call}; "
                              "expected a sequence")
        for output in outputs:
            if isinstance(output, Send):
                self._send(output, call, repair=repair)
            elif isinstance(output, WakeAt):
                self._wake_at(output, call)
            else:
                raise DriverError(f"node {self.name!r} returned {output!r} from {call}; "
                                  "expected Send or WakeAt")

    def _send(self, output: Send, call: str, *, repair: bool) -> None:
        if not isinstance(output.data, bytes):
            raise DriverError(f"node {self.name!r}: a Send from {call} carries "
                              f"{type(output.data).__name__}, not bytes")
        self.sent += 1
        if output.to == self.name:
            self._loop_back(output.data)
            return
        data = output.data if self.guard is None else self.guard.wrap(output.data)
        if not repair:
            self.transport.send(output.to, data)
        elif self.guard is None or output.to is None \
                or self.guard.charge(output.to, len(data)):
            if self._lane is not None:
                self._lane.send_repair(output.to, data)
            else:
                self.transport.send(output.to, data)

    def _wake_at(self, output: WakeAt, call: str) -> None:
        at: object = output.at
        if isinstance(at, bool) or not isinstance(at, int | float) \
                or not math.isfinite(at):
            raise DriverError(f"node {self.name!r} returned WakeAt({at!r}) from {call}; "
                              "need a finite time")
        if at not in self._deadline_set:
            self._deadline_set.add(float(at))
            heapq.heappush(self._deadlines, float(at))
            self._arm()
