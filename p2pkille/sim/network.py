"""A discrete-event network of sans-I/O nodes on a virtual clock, with fault injection.

Every event (a message arriving, a timer firing) sits in one heap ordered by (time, sequence
number), so events at the same instant run in the order they were scheduled. All randomness
comes from one ``random.Random(seed)`` owned by the network, drawn in a fixed order, so a seed
gives the same run byte for byte; ``trace_digest()`` proves it.

What happens to a message from ``a`` to ``b``, decided when it is sent, with the faults of
the link (``set_link``) or else the network's:

- it is cut if a partition separates ``a`` and ``b``, and lost if ``b`` is down;
- it is dropped with probability ``drop``;
- it arrives after ``delay`` plus up to ``jitter`` (uniform);
- with probability ``reorder`` it is held back one to two reorder windows more (a window is
  ``delay + jitter``, at least 1 ms), so messages sent up to a window later overtake it;
- with probability ``dup`` a second copy arrives up to one window after the first.

On arrival it is delivered only if ``a`` and ``b`` are still connected and ``b`` is up (a
message already on the wire still arrives after its sender crashes). A crash also discards
the node's pending timers; ``restart`` starts a new node object under the same name at the
current time. Several ``WakeAt`` for the same node and instant are one wake: ``wake`` means
"time has passed", so a second call at the same instant would tell the node nothing.
"""

from __future__ import annotations

import enum
import hashlib
import heapq
import math
import random
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType

from p2pkille.runtime.io import Node, Send, WakeAt
from p2pkille.sim.faults import Faults

__all__ = ["SimError", "SimNetwork", "SimStats", "StopReason", "Tap"]

_TRACE_LABEL = b"p2pkille:sim:trace:v1\x00"
_MIN_REORDER_WINDOW = 0.001
_NO_FAULTS = Faults()

Tap = Callable[[float, str, str, bytes], None]
"""Sees every delivery as (time, sender, recipient, data), just before the recipient does."""


class SimError(Exception):
    """The simulator was misused, or a node returned an output it cannot carry out."""


class StopReason(enum.Enum):
    """Why ``SimNetwork.run`` returned."""

    IDLE = "idle"  # no event left; the clock is at `until` if one was given
    UNTIL = "until"  # the next event is after `until`; the clock is at `until`
    MAX_EVENTS = "max-events"
    STOPPED = "stopped"  # the stop predicate returned True


@dataclass(frozen=True, slots=True)
class SimStats:
    """Counts since the network was made. Messages count once per recipient.

    ``sent + duplicated == delivered + dropped + cut + lost + in_flight`` always holds.
    """

    sent: int = 0
    delivered: int = 0
    dropped: int = 0  # by the drop fault
    duplicated: int = 0  # extra copies made by the dup fault
    cut: int = 0  # by a partition
    lost: int = 0  # the recipient was down
    bytes_sent: int = 0
    bytes_delivered: int = 0
    timers_fired: int = 0
    timers_discarded: int = 0  # their node crashed before they fired
    events: int = 0
    in_flight: int = 0


@dataclass(frozen=True, slots=True)
class _Delivery:
    sender: str
    recipient: str
    data: bytes


@dataclass(frozen=True, slots=True)
class _Timer:
    name: str
    incarnation: int


@dataclass(frozen=True, slots=True)
class _Action:
    name: str
    incarnation: int
    act: Callable[[Node, float], object]
    what: str


class SimNetwork:
    """Runs nodes against each other on a virtual clock that starts at 0.0 seconds.

    ``faults`` (the default for links without their own) and ``tap`` are plain attributes
    that may be changed between runs. A ``Send`` to the sender's own name loops back through
    the network like any other message; a broadcast (``to=None``) skips the sender.
    """

    def __init__(self, seed: int, faults: Faults = _NO_FAULTS, *, tap: Tap | None = None) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SimError(f"seed {seed!r}: must be an int")
        self.seed = seed
        self.faults = faults
        self.tap = tap
        self._rng = random.Random(seed)
        self._now = 0.0
        self._seq = 0
        self._heap: list[tuple[float, int, _Delivery | _Timer | _Action]] = []
        self._nodes: dict[str, Node] = {}
        self._incarnation: dict[str, int] = {}
        self._down: set[str] = set()
        self._links: dict[tuple[str, str], Faults] = {}
        self._groups: dict[str, int] | None = None
        self._wakes: set[tuple[str, int, float]] = set()
        self._counts = dict.fromkeys((f.name for f in fields(SimStats)), 0)
        self._trace = hashlib.sha256(_TRACE_LABEL)
        self._started = False
        self._running = False

    # -- state ---------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self._now

    @property
    def nodes(self) -> Mapping[str, Node]:
        """The current node object under each name, in the order they were added."""
        return MappingProxyType(self._nodes)

    @property
    def pending(self) -> int:
        """Events waiting in the heap (messages in flight and timers)."""
        return len(self._heap)

    @property
    def stats(self) -> SimStats:
        return SimStats(**self._counts)

    def is_up(self, name: str) -> bool:
        self._known(name, "is_up")
        return name not in self._down

    def trace_digest(self) -> str:
        """SHA-256 (hex) over every delivery so far: time, sender, recipient and bytes."""
        return self._trace.hexdigest()

    # -- set-up and faults -----------------------------------------------------------------

    def add(self, node: Node) -> None:
        """Register a node; once the network has started, it starts at once."""
        name: object = node.name
        if not isinstance(name, str) or not name:
            raise SimError(f"node {node!r}: its name must be a non-empty str, got {name!r}")
        if name in self._nodes:
            raise SimError(f"add {name!r}: a node of that name is already on the network")
        self._nodes[name] = node
        self._incarnation[name] = 0
        if self._started:
            self._start_node(name)

    def start(self) -> None:
        """Call ``start`` on every node, in the order they were added. ``run`` does it too."""
        if self._started:
            raise SimError(f"start at t={self._now!r}: the network has already started")
        self._started = True
        for name in list(self._nodes):
            self._start_node(name)

    def set_link(self, a: str, b: str, faults: Faults | None, *, one_way: bool = False) -> None:
        """Give the link between ``a`` and ``b`` its own faults (``None`` restores the default).

        Both directions unless ``one_way``, which sets only ``a`` to ``b``.
        """
        self._known(a, "set_link")
        self._known(b, "set_link")
        for key in [(a, b)] if one_way else [(a, b), (b, a)]:
            if faults is None:
                self._links.pop(key, None)
            else:
                self._links[key] = faults

    def partition(self, *groups: Iterable[str]) -> None:
        """Split the network: messages between different groups are cut until ``heal``.

        Nodes in no group (and outside senders of ``inject``) form one more group together.
        A new partition replaces the current one.
        """
        if not groups:
            raise SimError("partition: give at least one group of node names")
        group_of: dict[str, int] = {}
        for index, group in enumerate(groups):
            if isinstance(group, str):
                raise SimError(f"partition: group {group!r} is a str; give a collection of names")
            for name in group:
                self._known(name, "partition")
                if name in group_of:
                    raise SimError(f"partition: {name!r} is in two groups")
                group_of[name] = index
        self._groups = group_of

    def heal(self) -> None:
        """End the partition; messages cut while it lasted stay lost."""
        self._groups = None

    def crash(self, name: str) -> None:
        """Stop a node: it receives nothing, its pending timers are discarded."""
        self._known(name, "crash")
        if name in self._down:
            raise SimError(f"crash {name!r} at t={self._now!r}: it is already down")
        self._down.add(name)
        self._incarnation[name] += 1

    def restart(self, name: str, node: Node) -> None:
        """Bring a crashed node back as ``node`` (e.g. rebuilt from its log), started now."""
        self._known(name, "restart")
        if name not in self._down:
            raise SimError(f"restart {name!r} at t={self._now!r}: it is up; crash it first")
        if node.name != name:
            raise SimError(f"restart {name!r}: the new node is named {node.name!r}")
        self._nodes[name] = node
        self._down.discard(name)
        if self._started:
            self._start_node(name)

    def at(self, when: float, name: str, act: Callable[[Node, float], object],
           what: str = "an action") -> None:
        """At virtual time ``when``, call ``act(node, now)`` on node ``name`` and carry out
        the outputs it returns, as for a wake: input from outside the network, such as
        a player quitting. Nothing happens if the node is down then, or was restarted."""
        self._known(name, "at")
        if not (math.isfinite(when) and when >= self._now):
            raise SimError(f"at: {when!r} is not a time at or after now={self._now!r}")
        self._push(when, _Action(name, self._incarnation[name], act, what))

    def inject(self, sender: str, data: bytes, to: str | None = None) -> None:
        """Send ``data`` now as if ``sender`` had (any name, e.g. an attacker or a broker).

        The message meets the same faults as a node's; ``to=None`` reaches every node but
        ``sender``.
        """
        self._send(sender, data, to, "inject")

    # -- running ---------------------------------------------------------------------------

    def run(
        self,
        until: float | None = None,
        max_events: int | None = None,
        stop: Callable[[SimNetwork], bool] | None = None,
    ) -> StopReason:
        """Process events in time order until one of the conditions holds; start if needed.

        ``stop`` is asked before each event, ``max_events`` counts events of this call.
        """
        if self._running:
            raise SimError("run: called from inside run (a tap or a stop predicate)")
        if until is not None and not (math.isfinite(until) and until >= self._now):
            raise SimError(f"run: until={until!r} is not a time at or after now={self._now!r}")
        if max_events is not None and max_events < 0:
            raise SimError(f"run: max_events={max_events!r} is negative")
        if not self._started:
            self.start()
        self._running = True
        try:
            return self._loop(until, max_events, stop)
        finally:
            self._running = False

    def _loop(
        self,
        until: float | None,
        max_events: int | None,
        stop: Callable[[SimNetwork], bool] | None,
    ) -> StopReason:
        processed = 0
        heap = self._heap
        while True:
            if stop is not None and stop(self):
                return StopReason.STOPPED
            if max_events is not None and processed >= max_events:
                return StopReason.MAX_EVENTS
            if not heap:
                if until is not None:
                    self._now = until
                return StopReason.IDLE
            if until is not None and heap[0][0] > until:
                self._now = until
                return StopReason.UNTIL
            at, _, event = heapq.heappop(heap)
            self._now = at
            processed += 1
            self._counts["events"] += 1
            if isinstance(event, _Delivery):
                self._deliver(event)
            elif isinstance(event, _Action):
                self._act(event)
            else:
                self._fire(event)

    def _deliver(self, event: _Delivery) -> None:
        counts = self._counts
        counts["in_flight"] -= 1
        sender, recipient, data = event.sender, event.recipient, event.data
        if not self._reachable(sender, recipient):
            return
        counts["delivered"] += 1
        counts["bytes_delivered"] += len(data)
        now = self._now
        sender_b, recipient_b = sender.encode(), recipient.encode()
        self._trace.update(
            struct.pack(">dIII", now, len(sender_b), len(recipient_b), len(data))
            + sender_b
            + recipient_b
            + data
        )
        if self.tap is not None:
            self.tap(now, sender, recipient, data)
        node = self._nodes[recipient]
        try:
            outputs: object = node.receive(sender, data, now)
        except Exception as exc:
            exc.add_note(f"raised by node {recipient!r} receiving from {sender!r} at t={now!r}")
            raise
        self._apply(recipient, outputs, "receive")

    def _fire(self, event: _Timer) -> None:
        name, now = event.name, self._now
        self._wakes.discard((name, event.incarnation, now))
        if event.incarnation != self._incarnation[name]:
            self._counts["timers_discarded"] += 1
            return
        self._counts["timers_fired"] += 1
        try:
            outputs: object = self._nodes[name].wake(now)
        except Exception as exc:
            exc.add_note(f"raised by node {name!r} in wake at t={now!r}")
            raise
        self._apply(name, outputs, "wake")

    def _act(self, event: _Action) -> None:
        name, now = event.name, self._now
        if name in self._down or event.incarnation != self._incarnation[name]:
            return
        try:
            outputs = event.act(self._nodes[name], now)
        except Exception as exc:
            exc.add_note(f"raised by node {name!r} in {event.what} at t={now!r}")
            raise
        self._apply(name, outputs, event.what)

    def _start_node(self, name: str) -> None:
        now = self._now
        try:
            outputs: object = self._nodes[name].start(now)
        except Exception as exc:
            exc.add_note(f"raised by node {name!r} in start at t={now!r}")
            raise
        self._apply(name, outputs, "start")

    # -- outputs and messages ----------------------------------------------------------------

    def _apply(self, name: str, outputs: object, call: str) -> None:
        if not isinstance(outputs, Sequence) or isinstance(outputs, str | bytes):
            raise SimError(f"node {name!r} returned {outputs!r} from {call}; expected a sequence")
        for output in outputs:
            if isinstance(output, Send):
                self._send(name, output.data, output.to, f"a Send from node {name!r} in {call}")
            elif isinstance(output, WakeAt):
                self._wake_at(name, output.at, call)
            else:
                raise SimError(
                    f"node {name!r} returned {output!r} from {call}; expected Send or WakeAt"
                )

    def _send(self, sender: str, data: object, to: object, what: str) -> None:
        if not isinstance(data, bytes):
            raise SimError(f"{what}: data must be bytes, got {type(data).__name__}")
        if to is None:
            for recipient in self._nodes:
                if recipient != sender:
                    self._transmit(sender, recipient, data)
        elif isinstance(to, str) and to in self._nodes:
            self._transmit(sender, to, data)
        else:
            raise SimError(f"{what}: no node named {to!r} on the network")

    def _transmit(self, sender: str, recipient: str, data: bytes) -> None:
        counts = self._counts
        counts["sent"] += 1
        counts["bytes_sent"] += len(data)
        if not self._reachable(sender, recipient):
            return
        faults = self._links.get((sender, recipient), self.faults)
        rng = self._rng
        # Draws happen only for faults that are set, always in this order: a run without
        # faults uses no randomness at all, and any run is reproducible from its seed.
        if faults.drop and rng.random() < faults.drop:
            counts["dropped"] += 1
            return
        at = self._now + faults.delay
        if faults.jitter:
            at += faults.jitter * rng.random()
        window = max(faults.delay + faults.jitter, _MIN_REORDER_WINDOW)
        if faults.reorder and rng.random() < faults.reorder:
            at += window * (1.0 + rng.random())
        message = _Delivery(sender, recipient, data)
        self._push(at, message)
        if faults.dup and rng.random() < faults.dup:
            counts["duplicated"] += 1
            self._push(at + window * rng.random(), message)

    def _push(self, at: float, event: _Delivery | _Timer | _Action) -> None:
        if isinstance(event, _Delivery):
            self._counts["in_flight"] += 1
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, event))

    def _wake_at(self, name: str, at: object, call: str) -> None:
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
            raise SimError(f"node {name!r} returned WakeAt({at!r}) from {call}; need a finite time")
        # A deadline already passed is due now; the clock never runs backwards.
        at = max(float(at), self._now)
        key = (name, self._incarnation[name], at)
        if key not in self._wakes:
            self._wakes.add(key)
            self._push(at, _Timer(name, self._incarnation[name]))

    def _reachable(self, sender: str, recipient: str) -> bool:
        """Whether a message can pass now; if not, count it as cut or lost."""
        groups = self._groups
        if groups is not None and groups.get(sender, -1) != groups.get(recipient, -1):
            self._counts["cut"] += 1
            return False
        if recipient in self._down:
            self._counts["lost"] += 1
            return False
        return True

    def _known(self, name: str, call: str) -> None:
        if name not in self._nodes:
            raise SimError(f"{call}: no node named {name!r} on the network")
