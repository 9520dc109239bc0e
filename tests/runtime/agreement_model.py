"""An explicit-state model checker over the real agreement component
(p2pkille/runtime/agreement.py), in the style of TLC and stateright.

A *world* is every holder's :class:`AgreementState`, the time-outs each has scheduled,
the messages in flight on each link (author to receiver), and the faults used so far.
From each world every enabled action leads to a successor: deliver a message (each
receiver takes an author's messages in the author's order, as a transcript accepts a
chain, docs/protocol.md 10.5, and the links interleave freely; ``network="any"`` drops
the per-link order), fire a scheduled time-out (at any point), cut the holders in two
(messages across the cut wait until it heals), heal it, and let the double-voting holder
sign a second, different vote for a (round, step) it voted in, sent to one holder in
place of the first (a fork of its chain) or after it, and let the leaving holder leave
(once per run, at any point before it decides): its standing votes go to every holder
after its other messages, and it takes nothing more. Worlds are deduplicated by value
and searched breadth first, so a counterexample is a shortest trace.

Faults the free order already holds, so the search does not add them (exact for the
invariants below, which read only holders' decisions and evidence): a **drop** is a
message that is never delivered, and every world in which it has not arrived is
visited; a **crash** is a holder that never takes another event, and the interleaving of
holders is free; a **late vote** is one delivered after its receiver moved on. A crash
matters only to liveness, which tries every single crash.

Bounds: ``rounds`` (the last round's precommit time-out does not fire) and ``delays``:
None searches every order; a number searches delay-bounded (Emmi, Qadeer, Rakamaric,
"Delay-bounded scheduling", POPL 2011): each holder takes the message at the head of its
lowest open link, and times out only when no link is open to it, except at most
``delays`` times in a run. A cut closes links for free, so cuts are searched only then.

Checked in every world:

- **agreement**: no two holders other than the double voter decide different values,
  unless the signed votes that exist prove the double voter lied (accountable safety);
- **no false evidence**: no holder holds evidence against another honest holder.

Checked in every *leaf* (no delivery or time-out left within the bounds): when the
holders that neither crash nor double-vote are a strict majority, the faults stop (the
cut heals, the double voter falls silent, at most one holder crashes for good, every
signed message reaches every live holder as the runtime's sync does) and a fair run
(deliver everything, then fire each live holder's time-out) decides at every live
honest holder within ``2n + 2`` more rounds. A holder that left is not live, but its
leave counts: with no crash, the live honest holders and the leave making a strict
majority (two holders, one left) must decide too. Every world reaches a leaf by deliveries and
time-outs alone, so a decision stays reachable from every world.

Reductions, exact for what is checked: a message to a holder that decided is dropped (its
decision is final; evidence is judged from the votes that exist); a time-out that would
change nothing (its round or step is past) is forgotten; each holder's step is memoized
(the component is deterministic).

Run deeper from the command line::

    PYTHONPATH=. python -m tests.runtime.agreement_model --holders 4 --rounds 2 --delays 2
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from p2pkille.runtime.agreement import (
    Agreement,
    AgreementState,
    Broadcast,
    Endorse,
    Evidence,
    Leave,
    Outcome,
    Output,
    Proposal,
    ScheduleTimeout,
    Stand,
    Standing,
    Start,
    Step,
    Timeout,
    Vote,
    quorum_size,
)
from protocol.errors import RemoteProtocolError

COMMIT = Outcome.commit(bytes(range(32)))
VOID = Outcome.void({0})
VALUES = (COMMIT, VOID)

Message: TypeAlias = Proposal | Vote | Standing
Timer: TypeAlias = tuple[int, Step]


# -- broken variants (each must be caught) ----------------------------------------------


class HalfQuorum(Agreement):
    """Certifies with half of the holders (rounded down), not a strict majority."""

    __slots__ = ()

    def quorum(self) -> int:
        return max(1, len(self.holders) // 2)


class SkipLock(Agreement):
    """Prevotes any endorsed proposal, ignoring its lock."""

    __slots__ = ()

    def may_prevote(self, value: Outcome, valid_round: int) -> bool:
        return value in self.state.endorsed


class StandLock(Agreement):
    """A leave stands for its locked value, else the void of its own seat: blind to a
    polka that formed on its last prevote without it seeing one."""

    __slots__ = ()

    def stand_for(self) -> tuple[Outcome, int]:
        state = self.state
        if state.locked is not None:
            return state.locked, state.locked_round
        assert self.seat is not None
        return Outcome.void({self.seat}), -1


VARIANTS: dict[str, type[Agreement]] = {
    "sound": Agreement, "half-quorum": HalfQuorum, "skip-lock": SkipLock,
    "stand-lock": StandLock}


# -- the scenario and the world ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scenario:
    """What the checker may do. ``cuts``: the partitions it may make (one side given;
    at most one cut per run); ``double_voter``: the holder that may sign ``double_votes``
    second votes; ``crash``: whether liveness is also asked with one holder (not the
    double voter) crashed for good."""

    holders: int = 3
    rounds: int = 2
    variant: str = "sound"
    crash: bool = True
    cuts: tuple[frozenset[int], ...] = ()
    double_voter: int | None = None
    double_votes: int = 1
    start_cut: frozenset[int] | None = None
    """A cut in place from the start (one side)."""
    heal: bool = True
    """Whether a cut may heal during the search (liveness always heals it)."""
    liveness: bool = True
    network: str = "fifo"
    """``fifo``: each holder takes another's messages in the order they were sent (they
    travel in the author's signed chain, which a transcript accepts in order,
    docs/protocol.md 10.5); ``any``: in any order."""
    delays: int | None = None
    """None: every order of delivery and time-out. A number: delay-bounded search (Emmi,
    Qadeer, Rakamaric, "Delay-bounded scheduling", POPL 2011): every holder takes its
    messages link by link and times out only when nothing is open for it, except at
    most this many times in a run; the interleaving of holders stays free."""
    extra_rounds: int = 0
    """Liveness: how many rounds past the bound the fair run may take (0: 2n + 2)."""
    leaver: int | None = None
    """The holder that may leave (once, at any point before it decides)."""
    apart: frozenset[tuple[int, int]] = frozenset()
    """Links (author, receiver) that deliver nothing during the search: holders cut off
    from each other while a third reaches both (liveness heals them)."""

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(range(self.holders))

    def candidate(self, seat: int) -> Outcome:
        """What a holder proposes: the even seats hold the checkpoint, the odd ones have
        timed a seat out, so consecutive proposers differ. Every holder endorses both, so
        every proposal is valid everywhere."""
        return COMMIT if seat % 2 == 0 else VOID


@dataclass(frozen=True, slots=True)
class World:
    nodes: tuple[AgreementState, ...]
    timers: tuple[frozenset[Timer], ...]
    links: tuple[tuple[Message, ...], ...]
    """The messages in flight from seat ``s`` to seat ``d`` at ``links[s * n + d]``:
    in sending order (FIFO), or sorted where any order is allowed."""
    cut: frozenset[int] | None = None
    cuts_left: int = 1
    forged: frozenset[Vote] = frozenset()
    delays: int | None = None
    """Delays left (None: unbounded, every order)."""
    left: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str
    detail: str
    trace: tuple[str, ...]


@dataclass(slots=True)
class Result:
    scenario: Scenario
    states: int = 0
    transitions: int = 0
    leaves: int = 0
    seconds: float = 0.0
    violation: Violation | None = None
    evidence_worlds: int = 0
    decided_worlds: int = 0

    def summary(self) -> str:
        s = self.scenario
        order = "every order" if s.delays is None else f"{s.delays} delays"
        head = (f"{s.variant}: {s.holders} holders, {s.rounds} rounds, {s.network} network, "
                f"{order}, "
                f"crash={s.crash}, cuts={len(s.cuts)}, double voter={s.double_voter}, "
                f"leaver={s.leaver}: "
                f"{self.states} states, {self.transitions} transitions, {self.leaves} leaves "
                f"checked live, {self.decided_worlds} with a decision, "
                f"{self.evidence_worlds} with evidence, {self.seconds:.1f} s")
        if self.violation is None:
            return head + ", no violation"
        v = self.violation
        return head + f"\n  {v.kind} violation after {len(v.trace)} steps: {v.detail}\n    " \
            + "\n    ".join(v.trace)


class Model:
    """The transition relation of one scenario, over the real component."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.kind = VARIANTS[scenario.variant]
        self.seats = scenario.seats
        self.n = len(self.seats)
        self.fifo = scenario.network == "fifo"
        self.memo: dict[tuple[int, AgreementState, Message | Timeout],
                        tuple[AgreementState, list[Output]]] = {}

    def machine(self, seat: int, state: AgreementState) -> Agreement:
        return self.kind(self.seats, seat, state)

    # -- building worlds -----------------------------------------------------------------

    def initial(self) -> World:
        nodes: list[AgreementState] = []
        timers: list[frozenset[Timer]] = []
        links: list[tuple[Message, ...]] = [()] * (self.n * self.n)
        for seat in self.seats:
            node = self.machine(seat, AgreementState())
            mine = self.scenario.candidate(seat)
            node.receive(Endorse(next(v for v in VALUES if v != mine)))
            node.receive(Endorse(mine))
            outs = node.receive(Start())
            nodes.append(node.state)
            timers.append(self._timers(node.state, (), outs))
            self._send(links, seat, outs, frozenset())
        s = self.scenario
        cuts = 1 if s.cuts and s.delays is not None else 0
        return World(tuple(nodes), tuple(timers), tuple(links), cut=s.start_cut,
                     cuts_left=cuts, delays=s.delays)

    def _send(self, links: list[tuple[Message, ...]], seat: int,
              outs: list[Output] | list[Stand], gone: frozenset[int]) -> None:
        for o in outs:
            if isinstance(o, Broadcast | Stand):
                message = o.message if isinstance(o, Broadcast) else o.standing
                for to in self.seats:
                    if to != seat and to not in gone:
                        self._put(links, seat * self.n + to, message)

    def _put(self, links: list[tuple[Message, ...]], index: int, message: Message) -> None:
        queue = (*links[index], message)
        links[index] = queue if self.fifo else tuple(sorted(queue, key=_message_key))

    def _timers(self, state: AgreementState, old: frozenset[Timer] | tuple[()],
                outs: list[Output]) -> frozenset[Timer]:
        """The time-outs that could still change something."""
        new = {(o.round, o.step) for o in outs if isinstance(o, ScheduleTimeout)}
        if state.decision is not None:
            return frozenset()
        return frozenset(
            (r, s) for r, s in itertools.chain(old, new) if r == state.round
            and (s is Step.PRECOMMIT or s is state.step))

    def _gone(self, world: World, nodes: tuple[AgreementState, ...]) -> frozenset[int]:
        """Holders no message needs to reach: those that decided or left."""
        return world.left | {i for i, n in enumerate(nodes) if n.decision is not None}

    def step(self, seat: int, state: AgreementState, event: Message | Timeout,
             ) -> tuple[AgreementState, list[Output]]:
        """One holder takes one event (memoized: the component is deterministic, and one
        holder's state recurs in many worlds)."""
        key = (seat, state, event)
        known = self.memo.get(key)
        if known is None:
            node = self.machine(seat, state)
            try:
                outs = node.receive(event)
            except RemoteProtocolError:
                outs = []
            known = self.memo[key] = (node.state, outs)
        return known

    def _apply(self, world: World, seat: int, event: Message | Timeout) -> World:
        state, outs = self.step(seat, world.nodes[seat], event)
        nodes = (*world.nodes[:seat], state, *world.nodes[seat + 1:])
        timers = list(world.timers)
        timers[seat] = self._timers(state, world.timers[seat], outs)
        links = list(world.links)
        gone = self._gone(world, nodes)
        self._send(links, seat, outs, gone)
        if state.decision is not None:
            for src in self.seats:
                links[src * self.n + seat] = ()
        return replace(world, nodes=nodes, timers=tuple(timers), links=tuple(links))

    # -- the actions ---------------------------------------------------------------------

    def successors(self, world: World) -> Iterator[tuple[str, World]]:
        yield from self.progress(world)
        yield from self._faults(world)

    def progress(self, world: World) -> Iterator[tuple[str, World]]:
        """Deliveries and time-outs: what happens without a new fault. With a delay
        bound, each holder's next event is by default the message at the head of its
        lowest open link (a time-out only when none is open); any other costs a delay."""
        for to in self.seats:
            choices = list(self._deliveries(world, to))
            timers = sorted(world.timers[to], key=lambda t: (t[0], t[1].value))
            timers = [t for t in timers
                      if not (t[1] is Step.PRECOMMIT and t[0] + 1 >= self.scenario.rounds)]
            for k, (label, nxt) in enumerate(choices):
                yield label, self._spend(nxt, k > 0)
            for r, step in timers:
                yield (f"time-out at {to}: round {r} {step.name.lower()}",
                       self._spend(self._apply(world, to, Timeout(r, step)), bool(choices)))

    def _deliveries(self, world: World, to: int) -> Iterator[tuple[str, World]]:
        for src in self.seats:
            index = src * self.n + to
            queue = world.links[index]
            if not queue or (world.cut is not None and (src in world.cut) != (to in world.cut)
                             ) or (src, to) in self.scenario.apart:
                continue
            for at in range(1 if self.fifo else len(queue)):
                if at and queue[at] == queue[at - 1]:
                    continue
                links = list(world.links)
                links[index] = queue[:at] + queue[at + 1:]
                rest = replace(world, links=tuple(links))
                yield f"deliver to {to}: {_show(queue[at])}", self._apply(rest, to, queue[at])

    def _spend(self, world: World, delay: bool) -> World:
        if not delay or world.delays is None:
            return world
        return replace(world, delays=world.delays - 1)

    def _faults(self, world: World) -> Iterator[tuple[str, World]]:
        s = self.scenario
        if world.cut is None and world.cuts_left:
            for cut in s.cuts:
                yield (f"cut {sorted(cut)} | {sorted(set(self.seats) - cut)}",
                       replace(world, cut=cut, cuts_left=world.cuts_left - 1))
        if world.cut is not None and s.heal:
            yield "heal", replace(world, cut=None)
        yield from self._forge(world)
        yield from self._leave(world)

    def _leave(self, world: World) -> Iterator[tuple[str, World]]:
        """The leaving holder quits: its standing votes go out after its other messages,
        and it takes nothing more (its links in and time-outs are gone)."""
        b = self.scenario.leaver
        if b is None or world.left or world.nodes[b].decision is not None:
            return
        node = self.machine(b, world.nodes[b])
        outs = node.receive(Leave())
        nodes = (*world.nodes[:b], node.state, *world.nodes[b + 1:])
        links = list(world.links)
        for src in self.seats:
            links[src * self.n + b] = ()
        left = world.left | {b}
        self._send(links, b, outs, self._gone(replace(world, left=left), nodes))
        timers = (*world.timers[:b], frozenset(), *world.timers[b + 1:])
        standing = outs[0].standing
        yield (f"{b} leaves: {_show(standing)}",
               replace(world, nodes=nodes, links=tuple(links), timers=timers, left=left))

    def _forge(self, world: World) -> Iterator[tuple[str, World]]:
        """The double voter signs another vote for a (round, step) it voted in, and sends
        it to one holder: in place of the first where that has not left (a fork of its
        chain: the holder sees only the second), else after it."""
        s = self.scenario
        b = s.double_voter
        if b is None or len(world.forged) >= s.double_votes:
            return
        gone = self._gone(world, world.nodes)
        for vote in sorted((v for v in world.nodes[b].votes if v.seat == b), key=_vote_key):
            for value in (*VALUES, None):
                if value == vote.value:
                    continue
                forged = Vote(b, vote.round, vote.step, value, -1)
                for to in self.seats:
                    if to == b or to in gone:
                        continue
                    links = list(world.links)
                    queue = links[b * self.n + to]
                    if vote in queue:
                        links[b * self.n + to] = tuple(forged if m == vote else m for m in queue)
                    else:
                        self._put(links, b * self.n + to, forged)
                    yield (f"{b} signs a second vote to {to}: {_show(forged)}",
                           replace(world, forged=world.forged | {forged}, links=tuple(links)))

    # -- invariants ------------------------------------------------------------------------

    def honest(self) -> tuple[int, ...]:
        return tuple(i for i in self.seats if i != self.scenario.double_voter)

    def check(self, world: World) -> str | None:
        """The safety invariants of one world, or what breaks them. A broken variant's
        holders are all broken alike and their evidence against each other is true, so
        only agreement is asked of them."""
        honest = self.honest()
        for i in honest if self.scenario.variant == "sound" else ():
            for proof in world.nodes[i].proofs:
                if proof.seat in honest:
                    return f"holder {i} holds evidence against honest {proof.seat}: {proof!r}"
        decisions = {world.nodes[i].decision for i in honest} - {None}
        if len(decisions) > 1 and not self._accountable(world):
            return "honest holders decided " + " and ".join(sorted(map(str, decisions)))
        return None

    def _accountable(self, world: World) -> bool:
        """Whether the signed messages that exist prove the double voter lied."""
        b = self.scenario.double_voter
        if b is None:
            return False
        judge = Agreement(self.seats, None)
        signed: set[Vote | Standing] = {v for n in world.nodes for v in n.votes}
        signed |= world.forged | {s for n in world.nodes for s in n.standings}
        for vote in sorted(signed, key=_message_key):
            for out in judge.receive(vote):
                if isinstance(out, Evidence) and out.proof.seat == b:
                    return True
        return False

    def live(self, world: World) -> str | None:
        """From a leaf: the faults stop (the cut heals, the double voter falls silent, at
        most one other holder crashes for good) and a fair run decides at every live honest
        holder, or what it ends in."""
        crashes: list[int | None] = [None]
        if self.scenario.crash:
            crashes += list(self.honest())
        for crashed in crashes:
            alive = [i for i in self.honest() if i != crashed and i not in world.left]
            standing = len(world.left) if crashed is None else 0
            if len(alive) + standing >= quorum_size(self.n) and alive:
                stuck = self._fair_run(world, alive)
                if stuck is not None:
                    return f"{stuck} (crashed: {crashed})"
        return None

    def _fair_run(self, world: World, alive: list[int]) -> str | None:
        machines = {i: self.machine(i, world.nodes[i]) for i in alive}
        signed: set[Message] = {m for q in world.links for m in q} | set(world.forged)
        for n in world.nodes:
            signed |= set(n.votes) | set(n.proposals) | set(n.standings)
        timers = {i: set(world.timers[i]) for i in alive}
        inbox: dict[int, list[Message]] = {
            i: sorted(signed, key=_message_key) for i in alive}
        limit = self.scenario.rounds + (self.scenario.extra_rounds or 2 * self.n + 2)
        while any(machines[i].decision is None for i in alive):
            if not _fair_step(machines, inbox, timers, limit):
                stuck = {i: (m.state.round, m.state.step.name) for i, m in machines.items()}
                return f"no decision by round {limit}: {stuck}"
        return None


def _fair_step(machines: dict[int, Agreement], inbox: dict[int, list[Message]],
               timers: dict[int, set[Timer]], limit: int) -> bool:
    """Deliver every message waiting, else fire each holder's earliest time-out."""
    def run(i: int, event: Message | Timeout) -> None:
        try:
            outs = machines[i].receive(event)
        except RemoteProtocolError:
            return
        for o in outs:
            if isinstance(o, Broadcast):
                for j in machines:
                    if j != i:
                        inbox[j].append(o.message)
            elif isinstance(o, ScheduleTimeout):
                timers[i].add((o.round, o.step))

    if any(inbox.values()):
        for i in machines:
            while inbox[i]:
                run(i, inbox[i].pop(0))
        return True
    fired = False
    for i, m in machines.items():
        due = sorted((t for t in timers[i] if t[0] == m.state.round and m.decision is None),
                     key=lambda t: t[1].value)
        timers[i] = {t for t in timers[i] if t[0] >= m.state.round}
        if due and m.state.round < limit:
            timers[i].discard(due[0])
            run(i, Timeout(*due[0]))
            fired = True
    return fired


def _vote_key(v: Vote) -> tuple[int, int, str, str, int]:
    return (v.round, v.seat, v.step.value, str(v.value), v.pol_round)


def _message_key(m: Message) -> tuple[int, int, str, str, int]:
    if isinstance(m, Vote):
        return _vote_key(m)
    if isinstance(m, Standing):
        return (m.first_round, m.seat, "standing", str(m.value), m.pol_round)
    return (m.round, m.proposer, "proposal", str(m.value), m.valid_round)


def _show(m: Message) -> str:
    if isinstance(m, Standing):
        pol = f" pol={m.pol_round}" if m.pol_round >= 0 else ""
        return f"stands for {str(m.value)[:12]}{pol} from r{m.first_round}"
    if isinstance(m, Proposal):
        return f"proposal r{m.round} {str(m.value)[:12]} vr={m.valid_round} by {m.proposer}"
    value = "nil" if m.value is None else str(m.value)[:12]
    pol = f" pol={m.pol_round}" if m.pol_round >= 0 else ""
    return f"{m.step.value} r{m.round} {value}{pol} by {m.seat}"


# -- the search ---------------------------------------------------------------------------


@dataclass(slots=True)
class Search:
    model: Model
    parents: dict[World, tuple[World | None, str]] = field(default_factory=dict)

    def trace(self, world: World) -> tuple[str, ...]:
        steps: list[str] = []
        at: World | None = world
        while at is not None:
            parent, label = self.parents[at]
            if parent is not None:
                steps.append(label)
            at = parent
        return tuple(reversed(steps))


def explore(scenario: Scenario, *, max_states: int = 5_000_000) -> Result:
    """Breadth-first over every reachable world; stops at the first violation."""
    started = time.perf_counter()
    model = Model(scenario)
    result = Result(scenario)
    search = Search(model)
    first = model.initial()
    search.parents[first] = (None, "")
    queue: deque[World] = deque([first])
    while queue:
        world = queue.popleft()
        result.states += 1
        if result.states > max_states:
            raise RuntimeError(f"more than {max_states} states: bound the scenario")
        broken = model.check(world)
        if broken is not None:
            result.violation = Violation("safety", broken, search.trace(world))
            break
        result.decided_worlds += any(n.decision is not None for n in world.nodes)
        result.evidence_worlds += any(n.proofs for n in world.nodes)
        leaf = True
        for label, nxt in model.successors(world):
            if nxt.delays is not None and nxt.delays < 0:
                continue
            result.transitions += 1
            leaf = leaf and label.split(" ")[0] not in ("deliver", "time-out")
            if nxt not in search.parents:
                search.parents[nxt] = (world, label)
                queue.append(nxt)
        if leaf and scenario.liveness:
            result.leaves += 1
            stuck = model.live(world)
            if stuck is not None:
                result.violation = Violation("liveness", stuck, search.trace(world))
                break
    result.seconds = time.perf_counter() - started
    return result


# -- the command line ---------------------------------------------------------------------


def _cuts(holders: int, wanted: str) -> tuple[frozenset[int], ...]:
    if wanted == "none":
        return ()
    seats = range(holders)
    sides = [frozenset(c) for k in range(1, holders // 2 + 1)
             for c in itertools.combinations(seats, k)]
    if wanted == "halves":
        sides = [c for c in sides if 2 * len(c) == holders or len(c) == holders // 2]
    return tuple(c for c in sides if 0 in c or 2 * len(c) != holders)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holders", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="sound")
    parser.add_argument("--no-crash", action="store_true")
    parser.add_argument("--cuts", choices=("none", "halves", "all"), default="all")
    parser.add_argument("--double-voter", type=int, default=None)
    parser.add_argument("--double-votes", type=int, default=1)
    parser.add_argument("--leaver", type=int, default=None)
    parser.add_argument("--network", choices=("fifo", "any"), default="fifo")
    parser.add_argument("--delays", type=int, default=None)
    parser.add_argument("--max-states", type=int, default=5_000_000)
    parser.add_argument("--no-liveness", action="store_true")
    args = parser.parse_args(argv)
    scenario = Scenario(
        holders=args.holders, rounds=args.rounds, variant=args.variant,
        crash=not args.no_crash, cuts=_cuts(args.holders, args.cuts),
        double_voter=args.double_voter, double_votes=args.double_votes,
        network=args.network, delays=args.delays, liveness=not args.no_liveness,
        leaver=args.leaver)
    result = explore(scenario, max_states=args.max_states)
    print(result.summary())
    return 0 if result.violation is None else 1


if __name__ == "__main__":
    sys.exit(main())
