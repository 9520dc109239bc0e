"""The chaos sweep (``p2pkille chaos``): random simulated tables, each fixed by one seed,
run through crashes, partitions and lies, and each run sorted into one class.

**The generator.** :meth:`Plan.draw` draws everything from ``random.Random`` seeded with
``"p2pkille-chaos/1:<seed>"`` and nothing else (the simulated network draws its own faults
from the seed, as in ``p2pkille sim --seed``; the table's keys are ``build_table``'s for
the seed). A plan holds: the table (3..9 peers, 10..15 in about one run of twelve; audit
or strict; a ruleset; 2-4 chips; 2 or 3 hands to play; threshold or random bots), the
latency (delay and jitter) and, in some runs, network faults (drop, dup, reorder; drops of
5 % or more only with limits of 5 s or more, so that a lost message and its gap-fill
retries cannot outlast a limit), sometimes one peer whose links are slow one way (at most
a quarter of the shortest limit), each node's ``Timing`` (one for all, or skewed: one per
node; ``answer_limit`` is always longer than every node's ``limit`` and ``decide_limit``,
as ``Timing`` requires), misbehaving nodes (:data:`p2pkille.sim.byzantine.BEHAVIOURS`),
honest nodes crashed for a while and restarted from their log
(:func:`~p2pkille.runtime.log.restart_from_log`, in a temporary directory removed after the
run), honest nodes crashed for good (never during the genesis, which needs every member),
one or two cuts one after the other (a partition into two or three groups, or one or two
nodes muted: others cannot hear them, they hear everyone) of a short, medium or long length
(short: under the shortest limit; long: longer than the longest ``limit + decide_limit +
answer_limit``), and slow deciders (an honest seat that answers some of its first
decisions after a delay, some past every ``decide_limit``).

A disruption starts at a *trigger*, ``(hand, stage, after)``: ``after`` virtual seconds
past the first moment an honest node that is up has recorded ``hand`` hands and is at
``stage`` or later (or has recorded more). Restarts and heals follow at fixed lengths; the
second cut is armed once the first has healed. A trigger the table never reaches does not
fire (the verbose schedule says so). Once every honest node that is up has recorded the
planned hands (or its game is over), no trigger fires any more and what is still open
ends at once (a node down for a while restarts, a cut heals): what is left to see is
whether those nodes catch up. A run stops when every honest node that is up has recorded
the planned hands (or its game is over) and nothing is left open; or when no node has
taken a new envelope for ``W`` virtual seconds, ``W = 2 * (max limit + max decide_limit +
max answer_limit) + longest slow decision + 10`` (every timer of every node has run out by
then: nothing can change); or at the virtual deadline, :data:`DEADLINE` seconds past the
last disruption; or at the caps on the run's CPU time (``--cpu-cap``) and wall-clock time
(``--wall-cap``). Results do not depend on the machine, except for a run stopped by a
cap.

**Isolation.** A node is *isolated* at a moment when it is down, or when the nodes it can
exchange messages with (its partition group, or the unmuted nodes; those that are up)
hold no strict majority of the key holders of the hand. The hands are taken from the
honest records: hand ``k``'s holders are the ones most honest nodes record for it (for the
hand still open at the end: the holders of the hand most unfinished honest nodes are in;
every member during the genesis), and its window runs from the first moment an honest node
recorded hand ``k - 1`` (0 for the first) to the last moment an honest node that is up at
the end recorded hand ``k`` (the end of the run if one never did). A node is *cut off in
hand k* when it was isolated, within that window and with respect to those holders, for
one stretch of at least ``tau = min limit - slack``, where ``slack = 3 * sync_interval +
4 * (3 * (delay + jitter) + slowest link's extra delay)`` covers a message held back by
reordering and the gap-fill rounds after a heal (when ``tau <= 0``, any stretch counts).
A node is *clean* when it was cut off in no hand. A seat is *blamed* when some honest node
holds a fault against it, or some honest record eliminates it or holds a proven
accusation against it.

**The classes** (a run gets the first that applies, in this order; ``classes`` lists all):

- ``error``: a node raised, or the simulator refused an input (a node must never raise on
  what a peer sends).
- ``split`` (printed SPLIT): two clean honest nodes record different outcomes
  (``HandOutcome.to_json``) for one hand.
- ``split-out``: an honest node that is not clean and is up at the end records a hand
  differently from the reference: per hand, what most clean nodes record (most honest
  nodes up at the end, if no node is clean).
- ``wrong-blame``: the reference eliminates an honest seat without a time-out against it
  (a proven fault, or an accusation of its judged false).
- ``timeout-blame``: the reference eliminates an honest seat by a time-out in a hand in
  which that seat was not cut off.
- ``missed-blame``: a misbehaving seat whose misbehaviour showed and had to be detected is
  never blamed. It *showed* when the node first sent other envelopes than its honest twin
  (an honest node with the same keys and decider fed the same input) would have; it *had
  to be detected*: ``equivocate``, when one honest node took both envelopes of the forked
  slot (a fork is its own proof); ``bad-shuffle``, ``wrong-share``, ``false-answer`` and
  ``out-of-turn``, when the bad envelope reached an honest node and the reference commits
  (does not void) its hand, which no honest node does before it checked every envelope of
  it; ``withhold``, when the reference commits the hand whose reveal it kept back;
  ``false-accuse``, when the reference records its hand with the accusation in it (the
  void round judges it). A misbehaviour hidden by a void for something else need not be
  found. ``replay`` and ``garbage`` need no accusation and never count.
- ``stall``: the run stopped (no new envelope for ``W``, or the deadline) with an honest
  node that is up and has not recorded the planned hands, although a strict majority of
  the key holders of the hand it is in (every member, during the genesis) were honest and
  up at the end (and connected: every cut has healed by then). An unfinished run without
  such a majority is ``ok``: it waits by design (its detail says so).
- ``slow``: the run (or its quiet table) hit the CPU-time or the wall-clock cap; or it
  finished, but only after ``E + 10 * Q +
  (2 + 2 * V) * L + D`` virtual seconds, where ``E`` is when the last disruption ended (0
  without any), ``Q`` the same table's quiet virtual time (the same peers, rules, timings
  and latency, honest, without faults, crashes or slow decisions: only run when this bound
  with ``Q = 0`` is exceeded), ``V`` the voided hands of the reference, ``L = max limit +
  max decide_limit + max answer_limit`` and ``D`` the sum of the slow decisions' delays.
- ``ok``: none of these.
"""

from __future__ import annotations

import enum
import functools
import itertools
import json
import math
import random
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from p2pkille.bots.randombot import RandomBot
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision, Fact, VoteChoice
from p2pkille.engine.options import PRESETS
from p2pkille.engine.view import Decider, DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Node, Output, Send
from p2pkille.runtime.log import LoggedNode, restart_from_log
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.byzantine import BEHAVIOURS, make_byzantine
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import build_table
from protocol.envelope import decode
from protocol.errors import ProtocolError

__all__ = [
    "CPU_CAP",
    "DEADLINE",
    "GENERATOR",
    "WALL_CAP",
    "Caps",
    "Crash",
    "Cut",
    "HandSeen",
    "NodeRecord",
    "Observation",
    "Plan",
    "RunClass",
    "RunResult",
    "Script",
    "Show",
    "SlowDecider",
    "Trigger",
    "classify",
    "execute",
    "replay_command",
    "run_seed",
]

GENERATOR: Final = "p2pkille-chaos/1"
"""Names the generator: a seed means the same run only under the same name."""
DEADLINE: Final = 6000.0
"""Virtual seconds a run may go on after its last disruption."""
SLOW_FACTOR: Final = 10.0
CPU_CAP: Final = 900.0
"""CPU seconds (of the process running it) a run may take by default before it is
stopped and counted slow: a measure a busy machine changes little."""
WALL_CAP: Final = 3600.0
"""Wall-clock seconds a run may take by default before it is stopped and counted slow."""
_SYNC_INTERVAL: Final = Timing().sync_interval
_WALL_CHECK: Final = 256  # events between looks at the wall clock


class RunClass(enum.Enum):
    """What a run showed, most severe first (see the module doc for each)."""

    ERROR = "error"
    SPLIT = "split"
    SPLIT_OUT = "split-out"
    WRONG_BLAME = "wrong-blame"
    TIMEOUT_BLAME = "timeout-blame"
    MISSED_BLAME = "missed-blame"
    STALL = "stall"
    SLOW = "slow"
    OK = "ok"

    @property
    def label(self) -> str:
        """How output shows it: SPLIT in capitals, to stand out."""
        return "SPLIT" if self is RunClass.SPLIT else self.value


# -- the plan -------------------------------------------------------------------------------

_STAGES: Final = (Stage.KEYS, Stage.SHUFFLE, Stage.DEAL, Stage.PLAY, Stage.PLAY, Stage.PLAY,
                  Stage.REVEAL, Stage.CHECKPOINT)


@dataclass(frozen=True, slots=True)
class Trigger:
    """Fires ``after`` virtual seconds past the first moment an honest node that is up has
    recorded ``hand`` hands and is at ``stage`` or later (or has recorded more)."""

    hand: int
    stage: Stage
    after: float

    def __str__(self) -> str:
        return f"hand {self.hand + 1} {self.stage.name.lower()} +{self.after:.2f} s"

    def to_json(self) -> dict[str, object]:
        return {"after": self.after, "hand": self.hand, "stage": self.stage.name.lower()}


@dataclass(frozen=True, slots=True)
class Cut:
    """A partition into ``groups`` (node names), or, ``mute``, the first group's nodes
    unheard by the rest (they hear everyone), for ``length`` virtual seconds."""

    groups: tuple[tuple[str, ...], ...]
    length: float
    trigger: Trigger
    mute: bool = False

    def __str__(self) -> str:
        if self.mute:
            what = f"mute {' '.join(self.groups[0])} (they hear, nobody hears them)"
        else:
            what = "partition " + " | ".join(" ".join(g) for g in self.groups)
        return f"{what} for {self.length:.1f} s"

    def to_json(self) -> dict[str, object]:
        return {"groups": [list(g) for g in self.groups], "length": self.length,
                "mute": self.mute, "trigger": self.trigger.to_json()}


@dataclass(frozen=True, slots=True)
class Crash:
    """``node`` crashes; it restarts from its log after ``down`` virtual seconds, or never
    (``down`` is None)."""

    node: str
    down: float | None
    trigger: Trigger

    def __str__(self) -> str:
        if self.down is None:
            return f"crash {self.node} for good"
        return f"crash {self.node}, restart from its log after {self.down:.1f} s"

    def to_json(self) -> dict[str, object]:
        return {"down": self.down, "node": self.node, "trigger": self.trigger.to_json()}


@dataclass(frozen=True, slots=True)
class SlowDecision:
    """``node``'s decider answers its decisions number ``decisions`` (1-based) ``delay``
    virtual seconds late."""

    node: str
    decisions: tuple[int, ...]
    delay: float

    def to_json(self) -> dict[str, object]:
        return {"decisions": list(self.decisions), "delay": self.delay, "node": self.node}


def _timing_json(t: Timing) -> dict[str, float]:
    return {"answer_limit": t.answer_limit, "decide_limit": t.decide_limit, "limit": t.limit}


@dataclass(frozen=True, slots=True)
class Plan:
    """One run, all drawn from ``seed`` (see the module doc). Nodes are named ``n1``.."""

    seed: int
    peers: int
    mode: str
    ruleset: str
    chips: int
    hands: int
    bots: str
    latency: Faults
    faults: Faults
    timings: tuple[Timing, ...]
    slow_links: tuple[tuple[str, str, float], ...] = ()
    byzantine: tuple[tuple[str, str], ...] = ()
    crashes: tuple[Crash, ...] = ()
    cuts: tuple[Cut, ...] = ()
    slow: tuple[SlowDecision, ...] = ()

    @property
    def names(self) -> list[str]:
        return [f"n{i + 1}" for i in range(self.peers)]

    @property
    def network_faults(self) -> Faults:
        """Latency and faults of every link (the slow links add their extra delay)."""
        return replace(self.faults, delay=self.latency.delay, jitter=self.latency.jitter)

    @property
    def limits(self) -> tuple[float, float, float]:
        """The longest ``limit``, ``decide_limit`` and ``answer_limit`` of any node."""
        return (max(t.limit for t in self.timings), max(t.decide_limit for t in self.timings),
                max(t.answer_limit for t in self.timings))

    @property
    def slack(self) -> float:
        """How much shorter than the shortest limit an isolation may be and still time a
        seat out: a message held back by reordering, and gap-fill rounds after a heal."""
        trip = 3 * (self.latency.delay + self.latency.jitter)
        extra = max((d for _a, _b, d in self.slow_links), default=0.0)
        return 3 * _SYNC_INTERVAL + 4 * (trip + extra)

    @property
    def tau(self) -> float:
        """The shortest isolation that may time a seat out (see the module doc)."""
        return min(t.limit for t in self.timings) - self.slack

    @property
    def quiet_window(self) -> float:
        """``W``: virtual seconds without a new envelope after which nothing can change."""
        longest = max((s.delay for s in self.slow), default=0.0)
        return 2 * sum(self.limits) + longest + 10.0

    @classmethod
    def draw(cls, seed: int) -> Plan:
        """The plan of ``seed`` (deterministic: its own ``random.Random`` only)."""
        return _Drawer(seed).plan()

    def to_json(self) -> dict[str, object]:
        return {
            "bots": self.bots, "byzantine": dict(self.byzantine), "chips": self.chips,
            "crashes": [c.to_json() for c in self.crashes],
            "cuts": [c.to_json() for c in self.cuts], "faults": str(self.faults),
            "hands": self.hands, "latency": str(self.latency), "mode": self.mode,
            "peers": self.peers, "ruleset": self.ruleset, "seed": self.seed,
            "slow_decisions": [s.to_json() for s in self.slow],
            "slow_links": [{"from": a, "to": b, "extra": d} for a, b, d in self.slow_links],
            "timings": [_timing_json(t) for t in self.timings],
        }

    def describe(self) -> list[str]:
        """The plan as lines for a reader (``--verbose``)."""
        lines = [f"{self.peers} peers, {self.mode}, {self.ruleset}, {self.chips} chips, "
                 f"{self.hands} hands, {self.bots} bots",
                 f"latency {self.latency}; faults {self.faults}"]
        if len(set(self.timings)) == 1:
            t = self.timings[0]
            lines.append(f"timing (every node): limit {t.limit:g} s, decide {t.decide_limit:g}"
                         f" s, answer {t.answer_limit:g} s")
        else:
            lines.append("timings (skewed): " + "; ".join(
                f"{name} {t.limit:g}/{t.decide_limit:g}/{t.answer_limit:g} s"
                for name, t in zip(self.names, self.timings, strict=True)))
        for a, b, d in self.slow_links:
            lines.append(f"slow link {a} -> {b}: +{d:.2f} s")
        lines += [f"misbehaving: {node} {behaviour}" for node, behaviour in self.byzantine]
        lines += [f"slow decider: {s.node}, decisions {', '.join(map(str, s.decisions))} "
                  f"late by {s.delay:.1f} s" for s in self.slow]
        lines.append(f"isolation that may time a seat out: tau = {self.tau:.2f} s; "
                     f"W = {self.quiet_window:.0f} s")
        return lines


class _Drawer:
    """Draws a :class:`Plan`; the order of draws is part of the generator (GENERATOR)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.r = random.Random(f"{GENERATOR}:{seed}")

    def plan(self) -> Plan:
        r = self.r
        peers = r.randint(10, 15) if r.random() < 0.08 else r.choice(
            [3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9])
        mode = "strict" if r.random() < (0.3 if peers <= 9 else 0.1) else "audit"
        rulesets = [name for name, o in sorted(PRESETS.items())
                    if o.min_players <= peers <= o.max_players]
        ruleset = r.choice(rulesets)
        chips = r.choice([2, 3, 3, 4])
        hands = r.choice([2, 3]) if peers <= 6 else 2
        bots = "random" if r.random() < 0.25 else "threshold"
        latency = Faults(delay=r.choice([0.005, 0.02, 0.05]), jitter=r.choice([0.0, 0.01, 0.03]))
        faults = Faults()
        if r.random() < 0.4:
            faults = Faults(drop=r.choice([0.0, 0.02, 0.05, 0.1]), dup=r.choice([0.0, 0.05]),
                            reorder=r.choice([0.0, 0.1]))
        timings = self.timings(peers, faults.drop >= 0.05)
        names = [f"n{i + 1}" for i in range(peers)]
        shortest = min(t.limit for t in timings)
        slow_links: list[tuple[str, str, float]] = []
        if r.random() < 0.15:
            laggard = r.choice(names)
            slow_links = [(laggard, other, round(r.uniform(0, shortest / 4), 3))
                          for other in names if other != laggard]
        byzantine: list[tuple[str, str]] = []
        if r.random() < 0.3:
            count = 2 if peers >= 6 and r.random() < 0.2 else 1
            byzantine = [(node, r.choice(sorted(BEHAVIOURS)))
                         for node in sorted(r.sample(names, count), key=names.index)]
        honest = [n for n in names if n not in dict(byzantine)]
        crashes: list[Crash] = []
        if r.random() < 0.35:
            count = 2 if peers >= 5 and r.random() < 0.3 else 1
            crashes += [Crash(node, self.length(timings), self.trigger(hands, genesis=True))
                        for node in r.sample(honest, count)]
        if r.random() < 0.15:
            count = 2 if peers >= 7 and r.random() < 0.3 else 1
            free = [n for n in honest if n not in {c.node for c in crashes}]
            crashes += [Crash(node, None, self.trigger(hands, genesis=False))
                        for node in r.sample(free, min(count, len(free)))]
        cuts: list[Cut] = []
        if r.random() < 0.45:
            for _ in range(2 if r.random() < 0.35 else 1):
                cuts.append(self.cut(names, hands, timings))
        slow: list[SlowDecision] = []
        if r.random() < 0.2:
            node = r.choice(honest)
            decisions = tuple(sorted(r.sample(range(1, 7), r.randint(1, 3))))
            low = min(t.decide_limit for t in timings)
            high = max(t.decide_limit for t in timings)
            delay = r.choice([0.5 * low, r.uniform(1.2, 2.0) * high])
            slow = [SlowDecision(node, decisions, round(delay, 3))]
        return Plan(self.seed, peers, mode, ruleset, chips, hands, bots, latency, faults,
                    timings, tuple(slow_links), tuple(byzantine), tuple(crashes), tuple(cuts),
                    tuple(slow))

    def timings(self, peers: int, lossy: bool) -> tuple[Timing, ...]:
        r = self.r
        limits = [5.0, 10.0, 20.0] if lossy else [2.0, 5.0, 10.0, 20.0]
        decides = [5.0, 10.0, 30.0, 60.0]
        skewed = r.random() < 0.5
        pairs = [(r.choice(limits), r.choice(decides)) for _ in range(peers if skewed else 1)]
        # answer_limit must be longer than every node's limit and decide_limit (Timing).
        most = max(max(pair) for pair in pairs)
        answers = [most * r.choice([1.5, 2.0, 3.0]) for _ in pairs]
        timings = tuple(Timing(limit=a, decide_limit=b, answer_limit=c)
                        for (a, b), c in zip(pairs, answers, strict=True))
        return timings if skewed else timings * peers

    def length(self, timings: Sequence[Timing]) -> float:
        r = self.r
        shortest = min(t.limit for t in timings)
        most = (max(t.limit for t in timings) + max(t.decide_limit for t in timings)
                + max(t.answer_limit for t in timings))
        kind = r.choices(["short", "medium", "long"], [0.3, 0.4, 0.3])[0]
        if kind == "short":
            return round(r.uniform(0.1, 0.6) * shortest, 3)
        if kind == "medium":
            return round(r.uniform(1.2, 3.0) * max(t.limit for t in timings), 3)
        return round(r.uniform(1.1, 1.6) * most, 3)

    def trigger(self, hands: int, *, genesis: bool) -> Trigger:
        r = self.r
        hand = r.randrange(hands)
        stages: Sequence[Stage] = _STAGES
        if genesis and hand == 0 and r.random() < 0.15:
            stages = (Stage.COMMIT,)
        after = r.choice([0.0, r.uniform(0, 0.3), r.uniform(0, 2.0)])
        return Trigger(hand, r.choice(stages), round(after, 3))

    def cut(self, names: list[str], hands: int, timings: Sequence[Timing]) -> Cut:
        r = self.r
        length = self.length(timings)
        trigger = self.trigger(hands, genesis=True)
        if r.random() < 0.2:
            count = 2 if len(names) >= 5 and r.random() < 0.3 else 1
            muted = tuple(sorted(r.sample(names, count), key=names.index))
            rest = tuple(n for n in names if n not in muted)
            return Cut((muted, rest), length, trigger, mute=True)
        order = list(names)
        r.shuffle(order)
        parts = 3 if len(names) >= 4 and r.random() < 0.35 else 2
        bounds = sorted(r.sample(range(1, len(names)), parts - 1))
        groups = [order[a:b] for a, b in zip([0, *bounds], [*bounds, len(names)], strict=True)]
        return Cut(tuple(tuple(sorted(g, key=names.index)) for g in groups), length, trigger)


# -- deciders ---------------------------------------------------------------------------------


class SlowDecider:
    """A decider that answers its decisions number ``slow`` (1-based, counted per question
    asked, not per retry) only ``delay`` seconds of ``clock`` after it was first asked."""

    def __init__(self, inner: Decider, clock: Callable[[], float], slow: Iterable[int],
                 delay: float) -> None:
        self.inner = inner
        self.clock = clock
        self.slow = frozenset(slow)
        self.delay = delay
        self.count = 0
        self.since: float | None = None

    @property
    def wants_facts(self) -> bool:
        return bool(getattr(self.inner, "wants_facts", False))

    def _wait(self) -> None:
        if self.since is None:
            self.count += 1
            if self.count not in self.slow:
                return
            self.since = self.clock()
        if self.clock() - self.since < self.delay:
            raise DecisionPending("slow decider")
        self.since = None

    def turn(self, view: SeatView) -> Decision:
        self._wait()
        return self.inner.turn(view)

    def vote(self, view: SeatView) -> VoteChoice:
        self._wait()
        return self.inner.vote(view)

    def answer_sale(self, view: SeatView) -> bool:
        self._wait()
        return self.inner.answer_sale(view)

    def cut(self, view: SeatView) -> int:
        self._wait()
        return self.inner.cut(view)

    def buyin(self, view: SeatView) -> bool:
        self._wait()
        return self.inner.buyin(view)

    def observe(self, fact: Fact, view: SeatView) -> None:
        self.inner.observe(fact, view)


def _bot(plan: Plan, index: int, incarnation: int) -> Decider:
    if plan.bots == "random":
        return RandomBot(random.Random(f"{GENERATOR}:{plan.seed}:bot:{index}:{incarnation}"))
    return ThresholdBot()


# -- what a run leaves: the classifier's input ------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandSeen:
    """One hand as a node recorded it: ``HandOutcome.to_json`` as canonical JSON, the
    hand's key holders (seat names), and when the node first held the record."""

    outcome: str
    holders: tuple[str, ...]
    at: float

    @property
    def json(self) -> dict[str, Any]:
        value = json.loads(self.outcome)
        assert isinstance(value, dict)
        return value


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """One node at the end of a run."""

    name: str
    seat: str
    honest: bool
    up: bool
    finished: bool
    hands: tuple[HandSeen, ...] = ()
    blames: frozenset[str] = frozenset()
    """Seats this node holds a fault against."""
    holders: tuple[str, ...] = ()
    """The key holders of the hand it is in at the end (every seat during the genesis)."""
    waiting: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Show:
    """A misbehaving node's first envelopes that its honest twin would not have sent
    (``omission``: that it did not send); see the module doc for when it must be blamed."""

    seat: str
    behaviour: str
    kind: str
    hand: int | None
    at: float
    omission: bool = False
    delivered: tuple[str, ...] = ()
    """Honest nodes the envelope reached (from anyone)."""
    forked: tuple[str, ...] = ()
    """Honest nodes that took two envelopes of the misbehaving node for one slot."""


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything :func:`classify` reads: the records, the disruptions as they happened
    (node names; ``math.inf`` for never), and how the run stopped."""

    planned: int
    tau: float
    nodes: tuple[NodeRecord, ...]
    seats: Mapping[str, str]
    """Seat name -> node name."""
    downs: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    cuts: tuple[tuple[float, float, tuple[frozenset[str], ...]], ...] = ()
    stopped: str = "finished"
    """finished, quiet (nothing new for W), deadline, cpu-cap, wall-cap or error."""
    end: float = 0.0
    shows: tuple[Show, ...] = ()
    disrupted_until: float = 0.0
    limits_sum: float = 0.0
    dawdle: float = 0.0
    quiet: float | None = None
    error: str | None = None

    def slow_bound(self, quiet: float | None = None) -> float:
        """The virtual time after which a finished run is slow (module doc)."""
        q = self.quiet if quiet is None else quiet
        voided = sum(1 for h in _reference(self) if h is not None and h.json["voided"])
        return (self.disrupted_until + SLOW_FACTOR * (q or 0.0)
                + (2 + 2 * voided) * self.limits_sum + self.dawdle)


@dataclass(frozen=True, slots=True)
class Finding:
    cls: RunClass
    detail: str


# -- the classifier -----------------------------------------------------------------------------


def _most(items: Iterable[str]) -> str | None:
    counts = Counter(items)
    if not counts:
        return None
    return min(counts, key=lambda k: (-counts[k], k))


def _windows(obs: Observation) -> list[tuple[float, float, frozenset[str]]]:
    """Per hand (the last one: still open at the end): its window and its holders as node
    names."""
    honest = [n for n in obs.nodes if n.honest]
    deepest = max((len(n.hands) for n in honest), default=0)
    out: list[tuple[float, float, frozenset[str]]] = []
    everyone = frozenset(obs.seats.values())
    # The hand still open at the end, if an honest node that is up has not finished.
    open_hand = any(n.up and not n.finished for n in honest)
    for k in range(deepest + 1 if open_hand else deepest):
        start = 0.0 if k == 0 else min(n.hands[k - 1].at for n in honest if len(n.hands) >= k)
        upto = [n for n in honest if n.up]
        if k < deepest and upto and all(len(n.hands) > k for n in upto):
            end = max(n.hands[k].at for n in upto)
        else:
            end = obs.end
        if k < deepest:
            text = _most(",".join(n.hands[k].holders) for n in honest if len(n.hands) > k)
        else:
            text = _most(",".join(n.holders) for n in honest if n.up and not n.finished
                         and len(n.hands) == k)
        seats = text.split(",") if text else []
        holders = frozenset(obs.seats[s] for s in seats if s in obs.seats) or everyone
        out.append((start, end, holders))
    return out


def _longest_isolation(obs: Observation, name: str, start: float, end: float,
                       holders: frozenset[str]) -> float:
    """The longest stretch within [start, end] in which ``name`` was isolated."""
    if end <= start:
        return 0.0
    marks = {start, end}
    for spans in obs.downs.values():
        for a, b in spans:
            marks.update(t for t in (a, b) if start < t < end)
    for a, b, _groups in obs.cuts:
        marks.update(t for t in (a, b) if start < t < end)
    points = sorted(marks)
    longest = run = 0.0
    for a, b in itertools.pairwise(points):
        if _isolated(obs, name, (a + b) / 2, holders):
            run += b - a
            longest = max(longest, run)
        else:
            run = 0.0
    return longest


def _down(obs: Observation, name: str, t: float) -> bool:
    return any(a <= t < b for a, b in obs.downs.get(name, ()))


def _isolated(obs: Observation, name: str, t: float, holders: frozenset[str]) -> bool:
    if _down(obs, name, t):
        return True
    reach = frozenset(obs.seats.values())
    for a, b, groups in obs.cuts:
        if a <= t < b:
            reach = next((g for g in groups if name in g), frozenset({name}))
    reach = frozenset(n for n in reach if not _down(obs, n, t))
    return 2 * len(reach & holders) <= len(holders)


def _cut_off(obs: Observation) -> dict[str, set[int]]:
    """Per node, the hands (indices) in which it was cut off (module doc)."""
    windows = _windows(obs)
    out: dict[str, set[int]] = {}
    for node in obs.nodes:
        hands = out.setdefault(node.name, set())
        for k, (start, end, holders) in enumerate(windows):
            longest = _longest_isolation(obs, node.name, start, end, holders)
            if longest > 0 and longest >= obs.tau:
                hands.add(k)
    return out


def _reference(obs: Observation, cut: Mapping[str, set[int]] | None = None
               ) -> list[HandSeen | None]:
    """Per hand, what most clean honest nodes record (most honest nodes up at the end,
    when none is clean)."""
    if cut is None:
        cut = _cut_off(obs)
    honest = [n for n in obs.nodes if n.honest]
    base = [n for n in honest if not cut[n.name]] or [n for n in honest if n.up]
    out: list[HandSeen | None] = []
    for k in range(max((len(n.hands) for n in base), default=0)):
        seen = {n.hands[k].outcome: n.hands[k] for n in base if len(n.hands) > k}
        text = _most(n.hands[k].outcome for n in base if len(n.hands) > k)
        out.append(seen[text] if text is not None else None)
    return out


# One branch per run class, most severe first.
def classify(obs: Observation) -> list[Finding]:  # noqa: PLR0912
    """Every class the run falls in, most severe first (``[ok]`` when none)."""
    if obs.error is not None:
        return [Finding(RunClass.ERROR, obs.error)]
    cut = _cut_off(obs)
    reference = _reference(obs, cut)
    honest = [n for n in obs.nodes if n.honest]
    node_of = {n.name: n for n in obs.nodes}
    seat_of = {n.name: n.seat for n in obs.nodes}
    findings: list[Finding] = []
    clean = [n for n in honest if not cut[n.name]]
    split = _split(clean)
    if split:
        findings.append(Finding(RunClass.SPLIT, split))
    for node in honest:
        if not cut[node.name] or not node.up:
            continue
        for k, (mine, ref) in enumerate(zip(node.hands, reference, strict=False)):
            if ref is not None and mine.outcome != ref.outcome:
                who = [n.name for n in honest
                       if len(n.hands) > k and n.hands[k].outcome == ref.outcome]
                findings.append(Finding(RunClass.SPLIT_OUT, (
                    f"{node.name} ({node.seat}), cut off in hand(s) "
                    f"{', '.join(str(h + 1) for h in sorted(cut[node.name]))}, records hand "
                    f"{k + 1} as {_brief(mine)}; {' '.join(who)} as {_brief(ref)}")))
                break
    honest_seats = {n.seat for n in honest}
    for k, ref in enumerate(reference):
        if ref is None:
            continue
        record = ref.json
        for seat in record["eliminated"]:
            if seat not in honest_seats:
                continue
            name = obs.seats[seat]
            against = [a for a in record["accusations"]
                       if a["accused"] == seat or (a["by"] == seat and a["verdict"] == "false")]
            if not any(a["kind"] == "timeout" and a["accused"] == seat for a in against):
                why = "; ".join(f"{a['kind']} by {a['by']}: {a['verdict']}" for a in against)
                findings.append(Finding(RunClass.WRONG_BLAME, (
                    f"honest {seat} ({name}) eliminated in hand {k + 1} "
                    f"({why or 'no accusation names it'})")))
            elif k not in cut[name]:
                start, end, holders = _windows(obs)[k]
                longest = _longest_isolation(obs, name, start, end, holders)
                findings.append(Finding(RunClass.TIMEOUT_BLAME, (
                    f"honest {seat} ({name}) timed out in hand {k + 1} though never cut off "
                    f"(longest isolation {longest:.2f} s, tau {obs.tau:.2f} s)")))
    findings += _missed(obs, reference, honest)
    if obs.stopped in ("quiet", "deadline"):
        stall = _stall(obs, node_of, seat_of)
        if stall:
            findings.append(Finding(RunClass.STALL, stall))
    if obs.stopped in _CAPPED:
        findings.append(Finding(RunClass.SLOW, f"stopped by the {_CAPPED[obs.stopped]} cap"))
    elif obs.stopped == "finished" and obs.end > obs.slow_bound():
        findings.append(Finding(RunClass.SLOW, (
            f"finished at {obs.end:.0f} s, bound {obs.slow_bound():.0f} s (last disruption "
            f"ended {obs.disrupted_until:.0f} s, quiet run {obs.quiet or 0:.1f} s)")))
    order = list(RunClass)
    findings.sort(key=lambda f: order.index(f.cls))
    return findings or [Finding(RunClass.OK, _ok_note(obs))]


_CAPPED: Final = {"cpu-cap": "CPU-time", "wall-cap": "wall-clock"}


def _ok_note(obs: Observation) -> str:
    if obs.stopped == "finished":
        return "finished"
    return f"waits without a majority of honest holders up (by design), stopped: {obs.stopped}"


def _brief(hand: HandSeen) -> str:
    o = hand.json
    if o["voided"]:
        return f"voided, eliminated {', '.join(o['eliminated']) or 'nobody'}"
    return (f"committed {str(o['checkpoint'])[:12]}, died "
            f"{', '.join(o['died']) or 'nobody'}")


def _split(clean: list[NodeRecord]) -> str | None:
    for i, a in enumerate(clean):
        for b in clean[i + 1:]:
            for k, (x, y) in enumerate(zip(a.hands, b.hands, strict=False)):
                if x.outcome != y.outcome:
                    return (f"{a.name} ({a.seat}) and {b.name} ({b.seat}), both never cut "
                            f"off, record hand {k + 1} differently: {_brief(x)} / {_brief(y)}")
    return None


_MUST_COMMIT: Final = frozenset({"bad-shuffle", "wrong-share", "false-answer", "out-of-turn",
                                 "withhold"})


def _missed(obs: Observation, reference: list[HandSeen | None],
            honest: list[NodeRecord]) -> list[Finding]:
    by_hand = {record["hand"]: record for record in (r.json for r in reference if r)}
    out: list[Finding] = []
    for show in obs.shows:
        record = by_hand.get(show.hand)
        must = False
        if show.behaviour == "equivocate":
            must = bool(show.forked)
        elif show.behaviour in _MUST_COMMIT:
            must = (show.omission or bool(show.delivered)) and record is not None and (
                not record["voided"])
        elif show.behaviour == "false-accuse":
            must = record is not None and any(
                a["by"] == show.seat for a in record["accusations"])
        if must and not _blamed(show.seat, honest):
            out.append(Finding(RunClass.MISSED_BLAME, (
                f"{show.seat} ({obs.seats.get(show.seat, '?')}, {show.behaviour}) "
                f"{'withheld' if show.omission else 'sent'} a {show.kind} of hand {show.hand} "
                f"at {show.at:.2f} s, and nobody blames it")))
    return out


def _blamed(seat: str, honest: list[NodeRecord]) -> bool:
    for node in honest:
        if seat in node.blames:
            return True
        for hand in node.hands:
            record = hand.json
            if seat in record["eliminated"]:
                return True
            if any(a["accused"] == seat and a["verdict"] == "proven"
                   for a in record["accusations"]):
                return True
    return False


def _stall(obs: Observation, node_of: Mapping[str, NodeRecord],
           seat_of: Mapping[str, str]) -> str | None:
    for node in obs.nodes:
        if not (node.honest and node.up and not node.finished):
            continue
        holders = [obs.seats[s] for s in node.holders if s in obs.seats]
        able = [h for h in holders if node_of[h].honest and node_of[h].up]
        if 2 * len(able) > len(holders):
            return (f"{node.name} ({node.seat}) stopped ({obs.stopped}) at {obs.end:.0f} s "
                    f"with {len(node.hands)} of {obs.planned} hands, waiting for "
                    f"{', '.join(node.waiting) or 'nobody'}; {len(able)} of "
                    f"{len(holders)} holders honest and up: "
                    f"{', '.join(seat_of[h] for h in able)}")
    return None


# -- running a plan -----------------------------------------------------------------------------


class _Twinned:
    """A misbehaving node run beside its honest twin, fed the same input, until the first
    call after which they send different things (the behaviour showed)."""

    def __init__(self, node: TableNode, twin: TableNode,
                 showed: Callable[[float, list[bytes], list[bytes], list[bytes]], None]
                 ) -> None:
        self.node = node
        self.twin: TableNode | None = twin
        self.showed = showed

    @property
    def name(self) -> str:
        return self.node.name

    def _compare(self, now: float, out: Sequence[Output],
                 call: Callable[[TableNode], Sequence[Output]]) -> Sequence[Output]:
        twin = self.twin
        if twin is None:
            return out
        mine = [s.data for s in out if isinstance(s, Send)]
        theirs = [s.data for s in call(twin) if isinstance(s, Send)]
        a, b = Counter(mine), Counter(theirs)
        if a != b:
            self.twin = None
            self.showed(now, list((a - b).elements()), list((b - a).elements()), mine)
        return out

    def start(self, now: float) -> Sequence[Output]:
        return self._compare(now, self.node.start(now), lambda t: t.start(now))

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        return self._compare(now, self.node.receive(sender, data, now),
                             lambda t: t.receive(sender, data, now))

    def wake(self, now: float) -> Sequence[Output]:
        return self._compare(now, self.node.wake(now), lambda t: t.wake(now))


@dataclass(slots=True)
class _Watch:
    """A show being followed: which honest nodes its envelopes reached."""

    seat: str
    behaviour: str
    kind: str
    hand: int | None
    at: float
    omission: bool
    wires: dict[bytes, int]  # watched wire -> its slot (seq)
    extra: frozenset[bytes]
    reached: dict[str, set[bytes]] = field(default_factory=dict)


class _Runner:
    """Runs one plan on a fresh simulated network (see :func:`execute`)."""

    def __init__(self, plan: Plan, logs: Path, budget: _Budget,
                 script: Script | None = None) -> None:
        self.plan = plan
        self.script = script
        self.logs = logs
        self.budget = budget
        self.names = plan.names
        slow = {s.node: s for s in plan.slow}

        def decider(i: int) -> Decider:
            name = self.names[i]
            bot = _bot(plan, i, 0)
            if name in slow:
                s = slow[name]
                return SlowDecider(bot, self._clock, s.decisions, s.delay)
            return bot

        table = build_table(plan.peers, seed=plan.seed, ruleset=plan.ruleset,
                            chips=plan.chips, mode=plan.mode, faults=plan.network_faults,
                            deciders=decider, timings=dict(enumerate(plan.timings)))
        self.table_nodes = table.nodes
        order = table.seats()  # seat -> node index
        self.seat_of = {self.names[index]: f"P{seat + 1}" for seat, index in enumerate(order)}
        byzantine = dict(plan.byzantine)
        self.honest = [n for n in self.names if n not in byzantine]
        self.net = SimNetwork(plan.seed, plan.network_faults, tap=self._tap)
        self.current: dict[str, TableNode] = {}
        self.logged: dict[str, LoggedNode] = {}
        self.watches: list[_Watch] = []
        restarts = {c.node for c in plan.crashes if c.down is not None}
        for i, node in enumerate(table.nodes):
            name = node.name
            self.current[name] = node
            wrapper: Node = node
            if name in byzantine:
                twin = TableNode(name, node.identity, node.delivery, node.config,
                                 _bot(plan, i, 0), node.seed, node.timing)
                make_byzantine(node, byzantine[name])
                wrapper = _Twinned(node, twin, self._showed(name, byzantine[name], node))
            elif name in restarts:
                wrapper = self.logged[name] = LoggedNode(node, logs / f"{name}.log",
                                                         durable=False)
            self.net.add(wrapper)
        self.links: dict[tuple[str, str], Faults] = {}
        for a, b, extra in plan.slow_links:
            faults = replace(plan.network_faults, delay=plan.latency.delay + extra)
            self.links[a, b] = faults
            self.net.set_link(a, b, faults, one_way=True)
        # the schedule
        self.timed: list[tuple[float, int, str, Callable[[], None], bool]] = []
        self.wrapping = False
        self.armed: list[tuple[Trigger, str, Callable[[], None]]] = []
        self.seq = 0
        self.log: list[str] = []
        self.downs: dict[str, list[list[float]]] = {}
        self.cuts: list[tuple[float, float, tuple[frozenset[str], ...]]] = []
        self.last_action = 0.0
        self.recorded: dict[str, list[float]] = {n: [] for n in self.names}
        self.progress = -1
        self.progress_at = 0.0
        self.events = 0
        self.stopped = ""

    # -- misbehaviour ------------------------------------------------------------------------

    def _showed(self, name: str, behaviour: str, node: TableNode
                ) -> Callable[[float, list[bytes], list[bytes], list[bytes]], None]:
        def showed(now: float, extra: list[bytes], missing: list[bytes],
                   sent: list[bytes]) -> None:
            omission = not extra
            first = (extra or missing)[0]
            kind, hand, _seq = self._envelope(node, first)
            wires: dict[bytes, int] = {}
            for wire in extra:
                wires[wire] = self._envelope(node, wire)[2]
            # the other branch of a fork: what it sent in the same call for the same slot
            for wire in sent:
                slot = self._envelope(node, wire)[2]
                if slot >= 0 and slot in wires.values():
                    wires[wire] = slot
            self.watches.append(_Watch(self.seat_of[name], behaviour, kind, hand, now,
                                       omission, wires, frozenset(extra)))
        return showed

    @staticmethod
    def _envelope(node: TableNode, wire: bytes) -> tuple[str, int | None, int]:
        """(kind, hand, seq) of one of ``node``'s envelopes (garbage: ('bytes', None, -1))."""
        try:
            env = decode(wire, table=node.config.table_id, members=node.config.identities,
                         kinds=msg.KINDS)
        except ProtocolError:
            return ("sync" if wire[:1] == b"S" else "bytes"), None, -1
        hand = env.body.get("hand")
        return env.kind, hand if isinstance(hand, int) else None, env.seq

    def _tap(self, _at: float, _sender: str, recipient: str, data: bytes) -> None:
        for watch in self.watches:
            if data in watch.wires and recipient in self.honest:
                watch.reached.setdefault(recipient, set()).add(data)

    # -- the schedule ------------------------------------------------------------------------

    def _at(self, at: float, label: str, action: Callable[[], None], *, ends: bool) -> None:
        """Do ``action`` at ``at``; ``ends``: it ends a disruption (a restart, a heal)."""
        self.seq += 1
        self.timed.append((at, self.seq, label, action, ends))
        self.timed.sort(key=lambda e: (e[0], e[1]))

    def _arm(self, trigger: Trigger, label: str, action: Callable[[], None]) -> None:
        self.armed.append((trigger, label, action))

    def _fired(self, trigger: Trigger) -> bool:
        for name in self.honest:
            if not self.net.is_up(name):
                continue
            node = self.current[name]
            done = len(node.outcomes)
            if done > trigger.hand or (done == trigger.hand and node.stage >= trigger.stage):
                return True
        return False

    def _note(self, text: str) -> None:
        self.last_action = self.net.now
        self.log.append(f"t={self.net.now:9.2f}  {text}")

    def _schedule(self) -> None:
        plan = self.plan
        for crash in plan.crashes:
            self._arm(crash.trigger, str(crash), functools.partial(self._crash, crash))
        if plan.cuts:
            self._arm_cut(0)

    def _arm_cut(self, index: int) -> None:
        cut = self.plan.cuts[index]
        self._arm(cut.trigger, str(cut), lambda: self._cut(index))

    def _crash(self, crash: Crash) -> None:
        name = crash.node
        self.net.crash(name)
        self.downs.setdefault(name, []).append([self.net.now, math.inf])
        self._note(str(crash) + f" (trigger {crash.trigger})")
        if crash.down is not None:
            self._at(self.net.now + crash.down, f"restart {name}", lambda: self._restart(name),
                     ends=True)

    def _restart(self, name: str) -> None:
        old = self.logged[name]
        old.close()
        index = self.names.index(name)
        decider = _bot(self.plan, index, 1)
        slow = {s.node: s for s in self.plan.slow}
        if name in slow:
            s = slow[name]
            decider = SlowDecider(decider, self._clock, s.decisions, s.delay)
        again = restart_from_log(old.path, decider, timing=self.plan.timings[index],
                                 durable=False)
        self.logged[name] = again
        self.current[name] = again.node
        self.net.restart(name, again)
        self.downs[name][-1][1] = self.net.now
        self._note(f"restart {name} from its log ({len(again.node.outcomes)} hands replayed)")

    def _cut(self, index: int) -> None:
        cut = self.plan.cuts[index]
        start = self.net.now
        if cut.mute:
            muted, rest = cut.groups
            for a in muted:
                for b in rest:
                    self.net.set_link(a, b, Faults(drop=1.0), one_way=True)
        else:
            self.net.partition(*cut.groups)
        self._note(str(cut) + f" (trigger {cut.trigger})")

        def heal() -> None:
            if cut.mute:
                muted, rest = cut.groups
                for a in muted:
                    for b in rest:
                        self.net.set_link(a, b, self.links.get((a, b)), one_way=True)
            else:
                self.net.heal()
            self.cuts.append((start, self.net.now, tuple(frozenset(g) for g in cut.groups)))
            self._note("heal")
            if index + 1 < len(self.plan.cuts):
                self._arm_cut(index + 1)

        self._at(start + cut.length, "heal", heal, ends=True)

    # -- running -----------------------------------------------------------------------------

    def _finished(self) -> bool:
        for name in self.honest:
            if self.net.is_up(name):
                node = self.current[name]
                if not (node.done or len(node.outcomes) >= self.plan.hands):
                    return False
        return True

    def _stop(self, net: SimNetwork) -> bool:  # noqa: PLR0911  one return per reason a run stops
        self.events += 1
        if self.script is not None:
            self.script(net, self.current)
        if self.events % _WALL_CHECK == 0:
            spent = self.budget.spent()
            if spent:
                self.stopped = spent
                return True
        now = net.now
        progress = 0
        for name, node in self.current.items():
            count = len(node.outcomes)
            progress += len(node.transcript.accepted) + count
            times = self.recorded[name]
            while len(times) < count:
                times.append(now)
        if progress != self.progress:
            self.progress, self.progress_at = progress, now
        if self._finished():
            if not self.timed:
                self.stopped = "finished"
                return True
            if not self.wrapping:
                self.wrapping = True  # run() ends what is still open, at once
                return True
        if not self.wrapping and any(self._fired(t) for t, _label, _action in self.armed):
            return True
        if self.timed:
            return False
        if now - self.progress_at >= self.plan.quiet_window:
            self.stopped = "quiet"
            return True
        return False

    def _over(self) -> bool:
        return bool(self.stopped)

    def _clock(self) -> float:
        return self.net.now

    def run(self) -> None:
        """Run the schedule (module doc). Once every honest node that is up has finished,
        no trigger fires any more, and the disruptions still open end at once (a node down
        for a while comes back, a cut heals): only whether they catch up is left to see,
        and the table would otherwise play on past the planned hands until they end."""
        self._schedule()
        net = self.net
        while not self._over():
            until = self.timed[0][0] if self.timed else self.last_action + DEADLINE
            net.run(until=max(until, net.now), stop=self._stop)
            if self._over():
                break
            if self.wrapping:
                pending, self.timed = self.timed, []
                for _at, _seq, label, action, ends in pending:
                    if ends:
                        action()
                    else:
                        self.log.append(f"never reached: {label} (the table had finished)")
                self.log += [f"never reached: {label} (trigger {trigger})"
                             for trigger, label, _action in self.armed]
                self.armed.clear()
                continue
            for trigger, label, action in list(self.armed):
                if self._fired(trigger):
                    self.armed.remove((trigger, label, action))
                    self._at(net.now + trigger.after, label, action, ends=False)
            while self.timed and self.timed[0][0] <= net.now:
                _at, _seq, _label, action, _ends = self.timed.pop(0)
                action()
            if not self.timed and net.now >= self.last_action + DEADLINE:
                self.stopped = "deadline"
        self.log += [f"never reached: {label} (trigger {trigger})"
                     for trigger, label, _action in self.armed]

    def close(self) -> None:
        for logged in self.logged.values():
            logged.close()

    # -- the result --------------------------------------------------------------------------

    def observation(self, error: str | None = None) -> Observation:
        plan = self.plan
        nodes: list[NodeRecord] = []
        for name in self.names:
            node = self.current[name]
            names = node.names
            times = self.recorded[name]
            hands = tuple(HandSeen(_canonical(o.to_json()), tuple(o.holders),
                                   times[k] if k < len(times) else self.net.now)
                          for k, o in enumerate(node.outcomes))
            view = node.view
            if view is None or node.stage < Stage.KEYS:
                holders = tuple(names)
            else:
                holders = tuple(names[s] for s in sorted(view.game.dealt))
            nodes.append(NodeRecord(
                name=name, seat=self.seat_of[name], honest=name in self.honest,
                up=self.net.is_up(name),
                finished=node.done or len(node.outcomes) >= plan.hands, hands=hands,
                blames=frozenset(names[f.seat] for f in node.faults if f.seat is not None),
                holders=holders, waiting=tuple(
                    names[s] for s in node.waiting_for() if node.my_seat is not None
                    and 0 <= s < len(names))))
        shows = tuple(Show(w.seat, w.behaviour, w.kind, w.hand, w.at, w.omission,
                           tuple(sorted(r for r, got in w.reached.items() if got & w.extra)),
                           tuple(sorted(r for r, got in w.reached.items()
                                        if len({w.wires[g] for g in got}) < len(got))))
                      for w in self.watches)
        ends = [b for spans in self.downs.values() for _a, b in spans if b != math.inf]
        ends += [b for _a, b, _g in self.cuts]
        return Observation(
            planned=plan.hands, tau=plan.tau, nodes=tuple(nodes),
            seats={seat: name for name, seat in self.seat_of.items()},
            downs={n: tuple((a, b) for a, b in spans) for n, spans in self.downs.items()},
            cuts=tuple(self.cuts), stopped="error" if error else self.stopped,
            end=self.net.now, shows=shows, disrupted_until=max(ends, default=0.0),
            limits_sum=sum(plan.limits),
            dawdle=sum(s.delay * len(s.decisions) for s in plan.slow), error=error)

    def outcomes(self) -> list[str]:
        """Each node's record as lines (``--verbose``)."""
        lines = []
        for name in self.names:
            node = self.current[name]
            state = ("misbehaving" if name not in self.honest
                     else "up" if self.net.is_up(name) else "down")
            lines.append(f"{name} ({self.seat_of[name]}, {state}): {len(node.outcomes)} "
                         f"hands{', game over' if node.done else ''}")
            if name not in self.honest:
                continue
            for o in node.outcomes:
                if o.voided:
                    why = "; ".join(f"{a['kind']} {a['accused']} by {a['by']} {a['verdict']}"
                                    for a in o.accusations)
                    lines.append(f"  hand {o.hand}: voided, eliminated "
                                 f"{', '.join(o.eliminated) or 'nobody'} ({why})")
                else:
                    lines.append(f"  hand {o.hand}: committed {o.checkpoint[:12]}, died "
                                 f"{', '.join(o.died) or 'nobody'}, chips "
                                 f"{' '.join(f'{k}={v}' for k, v in o.chips.items())}")
        return lines


def _error_text(exc: BaseException) -> str:
    """One line: the exception, the simulator's note on which node raised, and where."""
    notes = "; ".join(getattr(exc, "__notes__", []))
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"{type(exc).__name__}: {exc}{f' ({notes})' if notes else ''}{at}"


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass(frozen=True, slots=True)
class Caps:
    """How long one run may take (its quiet table's run included): ``cpu`` seconds of its
    process's CPU time, ``wall`` seconds of wall-clock time."""

    cpu: float = CPU_CAP
    wall: float = WALL_CAP


class _Budget:
    """What is left of the caps of a run, from when it was made."""

    def __init__(self, caps: Caps) -> None:
        self.cpu_end = time.process_time() + caps.cpu
        self.wall_end = time.monotonic() + caps.wall

    def spent(self) -> str:
        """``cpu-cap`` or ``wall-cap`` once that cap is reached, else empty."""
        if time.process_time() > self.cpu_end:
            return "cpu-cap"
        if time.monotonic() > self.wall_end:
            return "wall-cap"
        return ""


def _quiet_time(plan: Plan, budget: _Budget) -> float | str:
    """Virtual seconds the same table takes for the planned hands without any fault (or
    the cap it reached first)."""
    table = build_table(plan.peers, seed=plan.seed, ruleset=plan.ruleset, chips=plan.chips,
                        mode=plan.mode, faults=plan.latency,
                        deciders=lambda i: _bot(plan, i, 0),
                        timings=dict(enumerate(plan.timings)))
    events = 0
    nodes = table.nodes
    spent = ""

    def stop(_: SimNetwork) -> bool:
        nonlocal events, spent
        events += 1
        if events % _WALL_CHECK == 0:
            spent = budget.spent()
            if spent:
                return True
        return all(n.done or len(n.outcomes) >= plan.hands for n in nodes)

    table.network.run(until=DEADLINE, stop=stop)
    return spent or table.network.now


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run: its class, every class it falls in, and for ``--verbose`` the schedule as
    it happened and each node's record. Nothing in it depends on the machine except
    ``wall_s`` (and the class of a run stopped by a cap)."""

    seed: int
    cls: RunClass
    classes: tuple[RunClass, ...]
    detail: str
    virtual_s: float
    wall_s: float
    plan: tuple[str, ...] = ()
    schedule: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    plan_json: str = ""
    caps: Caps = Caps()

    @property
    def replay(self) -> str:
        """The command that replays this run alone, under the caps it ran with."""
        return replay_command(self.seed, self.caps)

    def to_json(self, *, verbose: bool = False) -> dict[str, object]:
        doc: dict[str, object] = {
            "class": self.cls.value, "classes": [c.value for c in self.classes],
            "detail": self.detail, "seed": self.seed, "virtual_s": round(self.virtual_s, 3)}
        if self.cls is not RunClass.OK:
            doc["replay"] = self.replay
        if verbose:
            doc.update(plan=json.loads(self.plan_json), schedule=list(self.schedule),
                       outcomes=list(self.outcomes))
        return doc


def replay_command(seed: int, caps: Caps = Caps()) -> str:
    """``p2pkille chaos`` for ``seed`` alone; caps other than the defaults are named (a
    run stopped by a cap may end otherwise under another)."""
    extra = "".join(f" --{flag} {value:g}" for flag, value, default in (
        ("cpu-cap", caps.cpu, CPU_CAP), ("wall-cap", caps.wall, WALL_CAP)) if value != default)
    return f"p2pkille chaos --seed {seed} --runs 1{extra} --verbose"


Script = Callable[[SimNetwork, Mapping[str, TableNode]], None]
"""Called before every event with the network and the current node under each name."""


def execute(plan: Plan, caps: Caps = Caps(), *, script: Script | None = None
            ) -> tuple[Observation, list[str], list[str]]:
    """Run ``plan``; return what the classifier reads, the schedule as it happened and each
    node's record (lines). Logs of restarted nodes live in a temporary directory that is
    removed before this returns. ``script`` does what the plan does not say (a scripted
    table, e.g. two halves kept apart); the classifier knows nothing of it."""
    return _execute(plan, _Budget(caps), script)


def _execute(plan: Plan, budget: _Budget, script: Script | None = None
             ) -> tuple[Observation, list[str], list[str]]:
    with tempfile.TemporaryDirectory(prefix="p2pkille-chaos-") as tmp:
        runner = _Runner(plan, Path(tmp), budget, script)
        error = None
        try:
            runner.run()
        except Exception as exc:  # a node raised: what the class "error" reports
            error = _error_text(exc)
        finally:
            runner.close()
        return runner.observation(error), runner.log, runner.outcomes()


def run_seed(seed: int, caps: Caps = Caps()) -> RunResult:
    """Draw, run and classify the run of ``seed`` (one process; the sweep's unit). Never
    raises for what a run does: a node (or the quiet table) that raises is an ``error``."""
    started = time.monotonic()
    budget = _Budget(caps)
    try:
        plan = Plan.draw(seed)
        obs, schedule, outcomes = _execute(plan, budget)
    except Exception as exc:  # building the table or reading its end raised
        return RunResult(seed=seed, cls=RunClass.ERROR, classes=(RunClass.ERROR,),
                         detail=f"{RunClass.ERROR.label}: the run: {_error_text(exc)}",
                         virtual_s=0.0, wall_s=time.monotonic() - started, caps=caps)
    if obs.stopped == "finished" and obs.end > obs.slow_bound(0.0):
        try:
            quiet = _quiet_time(plan, budget)
        except Exception as exc:  # a node of the quiet table raised
            obs = replace(obs, stopped="error", error=f"the quiet table: {_error_text(exc)}")
        else:
            obs = (replace(obs, stopped=quiet) if isinstance(quiet, str)
                   else replace(obs, quiet=quiet))
    findings = classify(obs)
    return RunResult(
        seed=seed, cls=findings[0].cls, classes=tuple(dict.fromkeys(f.cls for f in findings)),
        detail="; ".join(f"{f.cls.label}: {f.detail}" for f in findings),
        virtual_s=obs.end, wall_s=time.monotonic() - started,
        plan=tuple(plan.describe()), schedule=tuple(schedule), outcomes=tuple(outcomes),
        plan_json=_canonical(plan.to_json()), caps=caps)
