"""A player who does not decide in time gets the default (keep, refuse, decline, no
cut), agreed by every other key holder; it is not eliminated, and a decision it makes
after the table agreed is dropped everywhere, its own node included (docs/protocol.md
II.11.3)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from p2pkille.bots.base import swap
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision, Keep, VoteChoice
from p2pkille.engine.machine import Phase
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.runtime.play import Play
from p2pkille.runtime.records import Hand
from p2pkille.sim.chaos import RunClass, run_seed
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, build_table
from protocol.envelope import Envelope
from tests.runtime.bots import CrashesAHolderWhenAsked, Restless
from tests.runtime.helpers import referee_replay

LIMIT = 2.0
TIMING = Timing(limit=LIMIT, decide_limit=LIMIT)
LAG = 1.5


class Late(ThresholdBot):
    """Decides ``delay`` seconds (virtual) after it is first asked; ``None``: never."""

    def __init__(self, delay: float | None) -> None:
        super().__init__()
        self.delay = delay
        self.network: SimNetwork | None = None
        self.asked: dict[int, float] = {}
        self.made = 0

    def _wait(self, view: SeatView) -> None:
        assert self.network is not None
        now = self.network.now
        first = self.asked.setdefault(view.game.fact_count, now)
        if self.delay is None or now - first < self.delay:
            raise DecisionPending("thinking")
        self.made += 1

    def turn(self, view: SeatView) -> Decision:
        self._wait(view)
        return super().turn(view)

    def vote(self, view: SeatView) -> VoteChoice:
        self._wait(view)
        return super().vote(view)

    def buyin(self, view: SeatView) -> bool:
        self._wait(view)
        return super().buyin(view)


def _table(seat: int, delay: float | None, seed: int = 5) -> tuple[SimTable, Late]:
    probe = build_table(4, seed=seed, chips=4, timing=TIMING)
    slow_index = probe.seats()[seat]
    late = Late(delay)
    table = build_table(4, seed=seed, chips=4, timing=TIMING,
                        deciders=lambda i: late if i == slow_index else ThresholdBot())
    late.network = table.network
    return table, late


def test_a_seat_that_never_decides_keeps_and_plays_on() -> None:
    table, late = _table(seat=1, delay=None)
    run = table.run(until=3600.0, max_hands=4)
    assert run.honest_agree
    slow = table.nodes[table.seats()[1]]
    for node in run.nodes:
        assert not any(o.voided for o in node.outcomes), "a slow decision voids nothing"
        assert node.timed_decisions == slow.timed_decisions
        assert node.faults == []
    assert slow.timed_decisions
    assert all(s == 1 for _, s, _ in slow.timed_decisions)
    keeps = [f for o in slow.outcomes for f in o.facts if isinstance(f, Keep) and f.seat == 1]
    assert len(keeps) >= len([t for t in slow.timed_decisions if t[0] <= 4])
    # The defaults are decisions like any other: the referee replays them.
    assert referee_replay(slow) == [(o.hand, o.died, o.pot, o.chips) for o in slow.outcomes]
    assert late.made == 0


@pytest.mark.parametrize("delay", [LIMIT * 0.5, LIMIT + 0.3, LIMIT + 0.6, LIMIT * 3])
@pytest.mark.parametrize("lag", [0.0, 1.5])
def test_a_late_decision_never_splits_the_table(delay: float, lag: float) -> None:
    table, _late = _table(seat=2, delay=delay)
    slow = table.nodes[table.seats()[2]]
    if lag:
        # The others' votes reach the slow seat late: it decides before it hears them
        # and must take its decision back.
        for node in table.nodes:
            if node is not slow:
                table.network.set_link(node.name, slow.name, Faults(delay=lag), one_way=True)
    run = table.run(until=3600.0, max_hands=3)
    assert run.honest_agree, [n.faults for n in run.nodes]
    first = [o.to_json() for o in run.nodes[0].outcomes[:3]]
    assert all([o.to_json() for o in n.outcomes[:3]] == first for n in run.nodes)
    assert all(not o.voided for o in run.nodes[0].outcomes[:3])
    assert all(n.timed_decisions == slow.timed_decisions for n in run.nodes)
    if delay + lag < LIMIT:
        assert slow.timed_decisions == []
    if delay > LIMIT * 2:
        assert slow.timed_decisions
    if delay == LIMIT + 0.3:
        # It decided just after the others' votes were cast, before it heard them.
        assert slow.rewinds > 0
        assert all(n.rewinds == 0 for n in run.nodes if n is not slow)


class _Slow(ThresholdBot):
    """Waits ``delay`` seconds (virtual) after it is first asked at a step (``_wait``)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.network: SimNetwork | None = None
        self.asked: dict[tuple[int, int], float] = {}

    def _wait(self, view: SeatView) -> None:
        assert self.network is not None
        now = self.network.now
        first = self.asked.setdefault((view.game.hand_no, view.game.fact_count), now)
        if now - first < self.delay:
            raise DecisionPending("thinking")


class LateSwapper(_Slow):
    """Always swaps (or agrees), ``delay`` seconds after it is first asked."""

    def turn(self, view: SeatView) -> Decision:
        self._wait(view)
        return swap(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        self._wait(view)
        return VoteChoice.AGREE


def test_what_a_late_decider_built_on_its_decision_is_dropped_everywhere() -> None:
    # The slow dealer swaps with the stock just after the others agreed its time-out and
    # sends its draw share before it hears their votes. That share, built on the dropped
    # decision, must not block its chain (it would be timed out at the showdown though
    # honest): its node marks the rewind, and the others skip what it sent in between.
    seed, seat, lag = 6, 3, 1.5
    probe = build_table(4, seed=seed, chips=4, ruleset="enkortskille", timing=TIMING)
    slow_index = probe.seats()[seat]
    late = LateSwapper(1.5)
    table = build_table(4, seed=seed, chips=4, ruleset="enkortskille", timing=TIMING,
                        deciders=lambda i: late if i == slow_index else ThresholdBot())
    late.network = table.network
    slow = table.nodes[slow_index]
    for node in table.nodes:
        if node is not slow:
            table.network.set_link(node.name, slow.name, Faults(delay=lag), one_way=True)
    run = table.run(until=3600.0, max_hands=2)
    assert run.honest_agree
    assert slow.rewinds > 0
    assert slow.timed_decisions
    assert not any(o.voided for o in run.nodes[0].outcomes[:2])
    kinds = [e.kind for e in slow.transcript.chain(slow.identity.public)]
    assert "rewound" in kinds


class LateVoter(Restless):
    """Agrees to every redeal, 1.5 s (virtual) after it is first asked."""

    def __init__(self) -> None:
        super().__init__()
        self.network: SimNetwork | None = None
        self.asked: dict[tuple[int, int], float] = {}

    def vote(self, view: SeatView) -> VoteChoice:
        assert self.network is not None
        now = self.network.now
        first = self.asked.setdefault((view.game.hand_no, view.game.fact_count), now)
        if now - first < 1.5:
            raise DecisionPending("thinking")
        return VoteChoice.AGREE


def test_a_late_decision_that_ended_the_hand_at_its_own_node_is_taken_back() -> None:
    # The slow voter's late agreement completes a redeal at its own node, which closes the
    # hand there (and reveals its key) before it hears the votes; the rewind takes that
    # stage back too, or it would take the next act as out of its stage and split the
    # table.
    probe = build_table(4, seed=2, ruleset="bytes-kille", timing=TIMING)
    slow_index = probe.seats()[0]
    late = LateVoter()
    table = build_table(4, seed=2, ruleset="bytes-kille", timing=TIMING,
                        deciders=lambda i: late if i == slow_index else Restless())
    late.network = table.network
    slow = table.nodes[slow_index]
    for node in table.nodes:
        if node is not slow:
            table.network.set_link(node.name, slow.name, Faults(delay=1.5), one_way=True)
    run = table.run(until=600.0, max_hands=2)
    assert run.honest_agree
    assert all(n.faults == [] for n in run.nodes)
    assert not any(o.voided for o in run.nodes[0].outcomes[:2])


class LateBuyer(_Slow):
    """Decides its buy-ins (and nothing else) ``delay`` seconds after it is first asked."""

    def buyin(self, view: SeatView) -> bool:
        self._wait(view)
        return super().buyin(view)


class Consumption:
    """A probe that tells ``seen(member, envelope, stage)`` of each envelope ``node``
    consumes, with the stage the node was at before it."""

    def __init__(self, node: TableNode, seen: Callable[[int, Envelope, Stage], None]) -> None:
        self.node, self.seen = node, seen
        self.before = node.consumed

    def start(self) -> None:
        now = self.node.consumed
        taken = [m for m, (a, b) in enumerate(zip(self.before, now, strict=True)) if b > a]
        if len(taken) == 1:  # a consumption, not a move
            (m,) = taken
            env = self.node.transcript.get(self.node.members[m], now[m])
            assert env is not None
            self.seen(m, env, self.node.stage)

    def moved(self, kinds: Sequence[str]) -> None:
        self.before = self.node.consumed

    def consumed(self, kind: str) -> None:
        self.before = self.node.consumed


def _late_buyin(seed: int, last_vote_lag: float = LAG,
                ) -> tuple[SimTable, TableNode, list[int], list[int]]:
    """The seat asked first to buy in decides just after the others' time ran out (it
    hears their votes 1.5 s late; one voter's ``last_vote_lag`` s late). Played two
    hands; also the stages the others took its late act in, and for each close its node
    took before it rewound, the closer's holder index."""
    probe = build_table(4, seed=seed, chips=4, timing=TIMING)
    net = probe.network
    net.run(stop=lambda _: any(n.view is not None and n.view.game.phase == Phase.AFTER
                               for n in probe.nodes), until=600.0)
    asked = next(n.view.game for n in probe.nodes
                 if n.view is not None and n.view.game.phase == Phase.AFTER)
    seat = asked.expect_seat
    assert seat is not None
    slow_index = probe.seats()[seat]
    late = LateBuyer(LIMIT + 0.3)
    table = build_table(4, seed=seed, chips=4, timing=TIMING,
                        deciders=lambda i: late if i == slow_index else ThresholdBot())
    late.network = table.network
    slow = table.nodes[slow_index]
    others = [n for n in table.nodes if n is not slow]
    for node in others:
        lag = last_vote_lag if node is others[-1] else LAG
        table.network.set_link(node.name, slow.name, Faults(delay=lag), one_way=True)
    stages: list[int] = []
    for node in others:
        def late_act(m: int, env: Envelope, stage: Stage, node: TableNode = node) -> None:
            fact = env.body.get("fact")
            if (env.kind == msg.ACT and node.seat_of[m] == seat and isinstance(fact, dict)
                    and fact.get("type") in ("buyin", "decline")):
                stages.append(int(stage))
        node.probe = Consumption(node, late_act)
    closes: list[int] = []

    def close(m: int, env: Envelope, stage: Stage) -> None:
        if env.kind == msg.REVEAL and slow.rewinds == 0 and m != slow.me:
            status = slow.status()
            assert status is not None
            closes.append(status.holders.index(slow.seat_of[m]))

    slow.probe = Consumption(slow, close)
    run = table.run(until=3600.0, max_hands=2)
    assert run.honest_agree, [n.faults for n in run.nodes]
    assert all(n.faults == [] for n in run.nodes)
    assert not any(o.voided for o in run.nodes[0].outcomes[:2])
    assert slow.rewinds == 1
    assert slow.timed_decisions[:1] == [(1, seat, asked.fact_count)]
    assert all(n.timed_decisions == slow.timed_decisions for n in run.nodes)
    return table, slow, stages, closes


@pytest.mark.parametrize("seed", [1, 6])
def test_a_late_buy_in_is_dropped_after_play_as_in_play(seed: int) -> None:
    # The hand's last decision, a buy-in, comes just after the others agreed its time
    # ran out and gave the default: it is dropped at every node whatever its stage, a node
    # still in play and one that has left play (in the reveals) alike, so whether the
    # honest, slow seat is eliminated never hangs on arrival order (seed 6 has both kinds
    # of node).
    _table, _slow, stages, _closes = _late_buyin(seed)
    assert len(stages) == 3
    assert any(stage > Stage.PLAY for stage in stages)
    if seed == 6:
        assert Stage.PLAY in stages


def test_a_slow_seat_that_took_closes_before_the_last_vote_rewinds_without_a_fault() -> None:
    # One voter's vote reaches the slow seat later still: its node, on its late branch,
    # takes the other two closes first, then the last vote, and rewinds. The rewind gives
    # those closes back to their chains and counts them no more, so none is "a second
    # reveal" of an honest holder when taken again.
    _table, _slow, _stages, closes = _late_buyin(1, last_vote_lag=3.0)
    assert len(set(closes)) == 2


class _DecidesLateAndCrashesAHolder(CrashesAHolderWhenAsked, ThresholdBot):
    """Decides its first turn late and, as it is asked, crashes another key holder for
    good: the third holder votes the decision out, holds the late act back until a holder
    says it saw it in time, and the crashed one never says so."""

    def turn(self, view: SeatView) -> Decision:
        self._late(next(s for s in view.game.order if s != view.seat))
        return super().turn(view)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_late_decider_and_a_crashed_holder_do_not_stall_three_holders(seed: int) -> None:
    # Three holders, no silent set of two: the voter's hold on the late act is released
    # only by the crashed holder's seen, and the late decider waits for the voter's next
    # step. The late decider votes the crashed holder's answer out as well (its own step,
    # which it took), and with the voter's that times the crashed holder out: the table
    # does not wait for ever.
    timing = Timing(limit=LIMIT, decide_limit=LIMIT, answer_limit=8.0)
    table = build_table(3, seed=seed, chips=3, timing=timing)
    late = _DecidesLateAndCrashesAHolder(table, delay=5.0)
    table.nodes[0].decider = late
    run = table.run(until=3000.0, max_hands=3)
    assert late.victim is not None, "the late seat was asked to decide"
    live = [n for n in run.nodes if n.name != late.victim]
    assert all(n.done or len(n.outcomes) >= 2 for n in live), "the game goes on without it"
    records = [[o.to_json() for o in n.outcomes] for n in live]
    assert records[0] == records[1]
    victim = next(n for n in run.nodes if n.name == late.victim)
    first = live[0].outcomes[0]
    assert first.voided
    assert [(a["accused"], a["kind"]) for a in first.accusations] == [
        (victim.names[victim.my_seat or 0], "timeout")]
    assert all(n.faults == [] for n in live)


def test_a_seat_that_decided_on_a_late_branch_takes_its_own_act_again_after_the_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A member without a key takes another seat's late buy-in and makes its own decision
    on it; when the holders' votes give that seat the default, it rewinds. Its own
    decision is in its chain and the holders took it: it takes it again on the table's
    branch and signs no second decision for that step (one would be an illegal act of an
    honest seat, and its checkpoint would differ from the holders'). The table is the
    run of ``p2pkille chaos --seed 327 --runs 1``; the test checks that such a rewind
    happens in it, so a change that reroutes the run fails here instead of passing idly."""
    given_back: list[tuple[int, int]] = []
    give_back = Play.give_back

    def watching(self: Play, hand: Hand, at: int) -> dict[int, int]:
        me = self.table.me
        given_back.extend((at, played) for played, m, _ in hand.play.acted
                          if m == me and played > at)
        return give_back(self, hand, at)

    monkeypatch.setattr(Play, "give_back", watching)
    result = run_seed(327)
    assert given_back, "no node rewound past its own decision: the run no longer tests this"
    assert result.cls is RunClass.OK, result.detail
