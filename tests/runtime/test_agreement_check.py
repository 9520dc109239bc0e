"""The agreement component (p2pkille/runtime/agreement.py), model-checked over every
reachable world of bounded scenarios (tests/runtime/agreement_model.py), and its API.

Each check prints its state count (``pytest -s`` shows them; docs/agreement.md quotes
them). The deepest runs (each 14,000 to 140,000 states) are in the thorough tier
(``THOROUGH=1 pytest``).
``AGREEMENT_MAX_STATES`` raises their cap.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.runtime.agreement import (
    Agreement,
    Amnesia,
    Broadcast,
    Decide,
    DoubleProposal,
    DoubleVote,
    Endorse,
    Evidence,
    Leave,
    Outcome,
    Output,
    Proposal,
    ScheduleTimeout,
    Stand,
    Standing,
    StandingProposal,
    StandingVote,
    Start,
    Step,
    Timeout,
    Vote,
    VoteStep,
    quorum_size,
)
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from tests.runtime.agreement_model import COMMIT, VOID, Result, Scenario, _cuts, explore

MAX_STATES = int(os.environ.get("AGREEMENT_MAX_STATES", "3000000"))


def _checked(scenario: Scenario, *, at_least: int) -> Result:
    result = explore(scenario, max_states=MAX_STATES)
    print(result.summary())
    assert result.violation is None, result.summary()
    assert result.states >= at_least
    assert result.leaves > 0
    return result


# -- the sound component: every reachable world ------------------------------------------


def test_three_holders_every_order_of_one_round() -> None:
    _checked(Scenario(holders=3, rounds=1), at_least=5_000)


def test_three_holders_two_rounds_with_a_double_voter() -> None:
    result = _checked(Scenario(holders=3, rounds=2, delays=0, double_voter=2),
                      at_least=3_000)
    assert result.evidence_worlds > 0


def test_three_holders_two_rounds_one_delay() -> None:
    _checked(Scenario(holders=3, rounds=2, delays=1), at_least=10_000)


def test_four_holders_two_rounds() -> None:
    _checked(Scenario(holders=4, rounds=2, delays=0), at_least=10_000)


@pytest.mark.thorough
def test_three_holders_two_rounds_and_a_cut() -> None:
    _checked(Scenario(holders=3, rounds=2, delays=0, cuts=_cuts(3, "all")), at_least=50_000)


@pytest.mark.thorough
def test_three_holders_every_order_with_a_double_voter() -> None:
    _checked(Scenario(holders=3, rounds=1, double_voter=2), at_least=100_000)


# -- one holder leaves, at any point ---------------------------------------------------


@pytest.mark.parametrize("leaver", [0, 1])
def test_two_holders_one_leaves_at_any_point_and_the_other_decides(leaver: int) -> None:
    """Every order, three rounds: the leave plus the holder that stays are both holders,
    and the fair run after every leaf must decide at the one that stays."""
    _checked(Scenario(holders=2, rounds=3, leaver=leaver), at_least=150)


@pytest.mark.thorough
def test_three_holders_one_leaves_at_any_point_every_order_of_one_round() -> None:
    _checked(Scenario(holders=3, rounds=1, leaver=2), at_least=15_000)


def test_three_holders_one_leaves_at_any_point_two_rounds() -> None:
    _checked(Scenario(holders=3, rounds=2, delays=0, leaver=2), at_least=300)


def test_three_holders_one_leaves_while_the_others_are_cut_off() -> None:
    """Holders 0 and 1 never hear each other; the leaver reaches both. Each side with the
    leave is a strict majority: both may decide, and only the same value."""
    _checked(Scenario(holders=3, rounds=2, delays=1, leaver=2,
                      apart=frozenset({(0, 1), (1, 0)})), at_least=3_000)


@pytest.mark.thorough
def test_three_holders_one_leaves_while_the_others_are_cut_off_every_order() -> None:
    _checked(Scenario(holders=3, rounds=2, leaver=2, apart=frozenset({(0, 1), (1, 0)})),
             at_least=10_000)


@pytest.mark.thorough
def test_three_holders_one_leaves_at_any_point_two_rounds_one_delay() -> None:
    _checked(Scenario(holders=3, rounds=2, delays=1, leaver=2), at_least=50_000)


@pytest.mark.thorough
def test_four_holders_one_leaves_at_any_point() -> None:
    _checked(Scenario(holders=4, rounds=2, delays=0, leaver=3), at_least=100_000)


@pytest.mark.parametrize("leaver", [0, 1])
def test_a_leave_that_stands_only_for_its_lock_stalls_two_holders(leaver: int) -> None:
    """The leaver prevoted the checkpoint and left before it saw the other's prevote: the
    other locked the checkpoint on that polka. A leave for the void of its seat (it holds
    no lock) leaves the other unable to decide; the sound leave stands for its prevote."""
    result = explore(Scenario(holders=2, rounds=2, leaver=leaver, variant="stand-lock"),
                     max_states=MAX_STATES)
    print(result.summary())
    assert result.violation is not None
    assert result.violation.kind == "liveness"
    assert len(result.violation.trace) <= 6


# -- broken variants: the checker must find a split -------------------------------------


@pytest.mark.parametrize(("scenario", "steps"), [
    pytest.param(Scenario(holders=3, rounds=2, delays=0, variant="half-quorum",
                          start_cut=frozenset({1}), heal=False), 20, id="half-quorum-3"),
    pytest.param(Scenario(holders=4, rounds=2, delays=0, variant="half-quorum",
                          start_cut=frozenset({1, 3}), heal=False), 20, id="half-quorum-4"),
    pytest.param(Scenario(holders=3, rounds=2, delays=2, variant="skip-lock"), 20,
                 id="skip-lock-3"),
])
def test_a_broken_variant_is_caught(scenario: Scenario, steps: int) -> None:
    result = explore(scenario, max_states=MAX_STATES)
    print(result.summary())
    assert result.violation is not None
    assert result.violation.kind == "safety"
    assert "decided" in result.violation.detail
    assert 0 < len(result.violation.trace) <= steps
    print(f"counterexample: {len(result.violation.trace)} steps")


def test_the_sound_component_passes_where_a_variant_fails() -> None:
    """The scenarios that catch the variants hold no split for the real component."""
    _checked(Scenario(holders=4, rounds=2, delays=0, start_cut=frozenset({1, 3}),
                      heal=False), at_least=10)
    _checked(Scenario(holders=3, rounds=2, delays=0, start_cut=frozenset({1}), heal=False),
             at_least=10)


@pytest.mark.thorough
def test_three_holders_two_rounds_two_delays() -> None:
    """The bound at which a holder that skips its lock splits the table (the everyday run
    finds that split, test_a_broken_variant_is_caught[skip-lock-3], and checks the sound
    component at the smaller bounds above)."""
    _checked(Scenario(holders=3, rounds=2, delays=2), at_least=50_000)


# -- the component's API ----------------------------------------------------------------


def _table(n: int) -> list[Agreement]:
    nodes = [Agreement(tuple(range(n)), seat) for seat in range(n)]
    for node in nodes:
        node.receive(Endorse(COMMIT))
    return nodes


def _run(nodes: list[Agreement], links: set[tuple[int, int]] | None = None,
         ) -> dict[int, list[ScheduleTimeout]]:
    """Start every node and deliver every broadcast over ``links`` (all when None) until
    quiet; return the time-outs each asked for."""
    inbox: list[tuple[int, Proposal | Vote]] = []
    asked: dict[int, list[ScheduleTimeout]] = {i: [] for i in range(len(nodes))}

    def take(i: int, outs: list[object]) -> None:
        for o in outs:
            if isinstance(o, Broadcast):
                inbox.extend((j, o.message) for j in range(len(nodes))
                             if j != i and (links is None or (i, j) in links))
            elif isinstance(o, ScheduleTimeout):
                asked[i].append(o)

    for i, node in enumerate(nodes):
        take(i, list(node.receive(Start())))
    while inbox:
        j, message = inbox.pop(0)
        take(j, list(nodes[j].receive(message)))
    return asked


def test_quorum_is_a_strict_majority() -> None:
    assert [quorum_size(n) for n in range(1, 8)] == [1, 2, 2, 3, 3, 4, 4]


def test_a_connected_table_decides_the_proposal() -> None:
    nodes = _table(3)
    _run(nodes)
    assert {node.decision for node in nodes} == {COMMIT}
    assert len(nodes[0].certificate()) >= quorum_size(3)


def test_two_holders_cut_off_from_each_other_both_wait() -> None:
    nodes = _table(2)
    asked = _run(nodes, links=set())
    assert [node.decision for node in nodes] == [None, None]
    assert nodes[1].waiting_for() == (0,)
    # Time-outs move them on, round after round, and still nobody decides alone.
    for _ in range(4):
        for i, node in enumerate(nodes):
            for t in asked[i]:
                if t.round == node.state.round:
                    node.receive(Timeout(t.round, t.step))
        asked = {0: [ScheduleTimeout(nodes[0].state.round, s) for s in Step],
                 1: [ScheduleTimeout(nodes[1].state.round, s) for s in Step]}
    assert [node.decision for node in nodes] == [None, None]
    assert all(node.waiting_for() for node in nodes)


def test_a_learner_decides_on_a_certificate_only() -> None:
    nodes = _table(3)
    _run(nodes)
    learner = Agreement((0, 1, 2), None)
    learner.receive(Start())
    votes = nodes[0].certificate()[:quorum_size(3)]
    outs = [o for v in votes[:-1] for o in learner.receive(v)]
    assert learner.decision is None
    assert not outs
    assert learner.receive(votes[-1]) == [Decide(COMMIT, 0)]


def test_a_double_vote_is_evidence_once() -> None:
    node = Agreement((0, 1, 2), 0)
    node.receive(Start())
    first = Vote(1, 0, VoteStep.PREVOTE, COMMIT)
    second = Vote(1, 0, VoteStep.PREVOTE, VOID)
    node.receive(first)
    assert node.receive(second) == [Evidence(DoubleVote(first, second))]
    assert node.receive(second) == []


def test_a_double_proposal_is_the_same_proof_whatever_came_first() -> None:
    one, other = Proposal(0, COMMIT, -1, 0), Proposal(0, VOID, -1, 0)
    proofs = []
    for first, second in ((one, other), (other, one)):
        node = Agreement((0, 1, 2), 1)
        node.receive(Start())
        node.receive(first)
        proofs.append([o for o in node.receive(second) if isinstance(o, Evidence)])
    assert proofs[0] == proofs[1]
    assert len(proofs[0]) == 1
    assert isinstance(proofs[0][0].proof, DoubleProposal)


def test_a_certificate_counts_whatever_else_its_signers_signed() -> None:
    """A holder that got a liar's other precommit first still takes the certificate the
    others decided on (the checker found a table stuck there: the one that decided had
    stopped voting, and the other kept only the liar's first precommit)."""
    node = Agreement((0, 1, 2), 1)
    node.receive(Start())
    node.receive(Vote(0, 0, VoteStep.PRECOMMIT, COMMIT))
    forged = Vote(2, 0, VoteStep.PRECOMMIT, VOID)
    node.receive(forged)
    outs = node.receive(Vote(2, 0, VoteStep.PRECOMMIT, COMMIT))
    assert Decide(COMMIT, 0) in outs
    assert Evidence(DoubleVote(Vote(2, 0, VoteStep.PRECOMMIT, COMMIT), forged)) in outs


def test_a_dropped_lock_is_evidence() -> None:
    node = Agreement((0, 1, 2), 0)
    node.receive(Start())
    precommit = Vote(1, 0, VoteStep.PRECOMMIT, COMMIT)
    prevote = Vote(1, 1, VoteStep.PREVOTE, VOID, pol_round=-1)
    node.receive(precommit)
    assert Evidence(Amnesia(precommit, prevote)) in node.receive(prevote)


def test_a_prevote_relying_on_a_polka_counts_only_with_it() -> None:
    node = _table(3)[0]
    node.receive(Endorse(VOID))
    node.receive(Start())
    node.receive(Proposal(1, VOID, -1, 1))
    outs = [o for seat in (1, 2)
            for o in node.receive(Vote(seat, 1, VoteStep.PREVOTE, VOID, pol_round=0))]
    assert node.state.round == 1
    assert Broadcast(Vote(0, 1, VoteStep.PREVOTE, VOID)) in outs
    assert node.state.locked_round == -1  # the two prevotes rely on a polka it lacks
    outs = [o for seat in (1, 2) for o in node.receive(Vote(seat, 0, VoteStep.PREVOTE, VOID))]
    assert Broadcast(Vote(0, 1, VoteStep.PRECOMMIT, VOID)) in outs
    assert (node.state.locked, node.state.locked_round) == (VOID, 1)


@given(st.lists(
    st.builds(Vote, st.integers(-2, 4), st.integers(-2, 1 << 17),
              st.sampled_from(VoteStep), st.sampled_from([COMMIT, VOID, None]),
              st.integers(-3, 3))
    | st.builds(Proposal, st.integers(-2, 1 << 17), st.sampled_from([COMMIT, VOID]),
                st.integers(-3, 3), st.integers(-2, 4))
    | st.builds(Standing, st.integers(-2, 4), st.sampled_from([COMMIT, VOID]),
                st.integers(-2, 1 << 17), st.integers(-3, 3)),
    max_size=4))
def test_peer_input_raises_only_the_remote_error(
        messages: list[Vote | Proposal | Standing]) -> None:
    node = _table(3)[1]
    node.receive(Start())
    for message in messages:
        with contextlib.suppress(RemoteProtocolError):
            node.receive(message)


def test_owner_mistakes_raise_the_local_error() -> None:
    node = _table(3)[0]
    node.receive(Start())
    with pytest.raises(LocalProtocolError):
        node.receive(Start())
    with pytest.raises(LocalProtocolError):
        node.receive(Timeout(5, Step.PROPOSE))
    with pytest.raises(LocalProtocolError):
        Agreement((0, 1), 2)


def test_outcome_text_round_trip() -> None:
    for value in (COMMIT, VOID, Outcome.void(), Outcome.void({3, 1})):
        assert Outcome.from_text(str(value)) == value
        assert eval(repr(value)) == value
    for bad in ("", "commit:00", "void:x", "win:1", "void:-1", "void:1,1", "void: 1",
                "void:+1", "void:1_0", "void:\u0663", "void:3,1", "commit:" + "AB" * 32):
        with pytest.raises(InvalidEncoding):
            Outcome.from_text(bad)


# -- what a lying holder can make a node store and count ----------------------------------


def test_a_liar_gets_two_votes_kept_per_slot_however_many_it_signs() -> None:
    node = Agreement((0, 1, 2), 0)
    node.receive(Start())
    for k in range(3, 403):
        node.receive(Vote(2, 0, VoteStep.PRECOMMIT, Outcome.void({k})))
    assert len([v for v in node.state.votes if v.seat == 2]) == 2
    assert len(node.state.proofs) == 1


class _Counting(Agreement):
    """Counts the quorum checks it makes (each count of votes is one)."""

    def __init__(self, holders: tuple[int, ...], seat: int | None) -> None:
        super().__init__(holders, seat)
        self.counts = 0

    def quorum(self) -> int:
        self.counts += 1
        return super().quorum()


def test_prevotes_relying_on_older_polkas_are_counted_once_per_polka() -> None:
    # A liar's prevote of each round relies on the polka of each of the two rounds before:
    # counted without a memo, that is a Fibonacci tree of counts per vote.
    rounds = 24
    last = rounds - 1
    node = _Counting((0, 1, 2), 0)
    node.receive(Start())
    for r in range(2, rounds):
        for back in (1, 2):
            node.receive(Vote(2, r, VoteStep.PREVOTE, VOID, pol_round=r - back))
    node.receive(Vote(1, last, VoteStep.PREVOTE, None))  # the node skips to the last round
    node.counts = 0
    node.receive(Timeout(last, Step.PROPOSE))  # and prevotes there: it counts prevotes
    assert (node.state.round, node.state.step) == (last, Step.PRECOMMIT)
    assert node.counts <= 2 * rounds, node.counts


# -- a signed leave ------------------------------------------------------------------------


class _Net:
    """Holders that hear each other only when a test delivers: what each sent waits per
    receiver; time-outs fire only when a test fires them."""

    def __init__(self, n: int, endorse: tuple[Outcome, ...] = ()) -> None:
        self.nodes = [Agreement(tuple(range(n)), seat) for seat in range(n)]
        self.waiting: dict[tuple[int, int], list[Proposal | Vote | Standing]] = {}
        self.timers: list[set[tuple[int, Step]]] = [set() for _ in range(n)]
        self.decided: dict[int, Decide] = {}
        self.proofs: list[Evidence] = []
        self.gone: set[int] = set()
        for i, node in enumerate(self.nodes):
            for value in endorse:
                self.take(i, node.receive(Endorse(value)))
            self.take(i, node.receive(Start()))

    def take(self, i: int, outs: list[Output] | list[Stand]) -> None:
        for o in outs:
            message = o.message if isinstance(o, Broadcast) else (
                o.standing if isinstance(o, Stand) else None)
            if message is not None:
                for j in range(len(self.nodes)):
                    if j != i and j not in self.gone:
                        self.waiting.setdefault((i, j), []).append(message)
            elif isinstance(o, ScheduleTimeout):
                self.timers[i].add((o.round, o.step))
            elif isinstance(o, Decide):
                self.decided[i] = o
            elif isinstance(o, Evidence):
                self.proofs.append(o)

    def deliver(self, among: set[int] | None = None,
                links: set[tuple[int, int]] | None = None) -> None:
        """Deliver what waits between ``among`` (all) or over ``links`` only, in each
        sender's order, till quiet."""
        among = set(range(len(self.nodes))) if among is None else among
        while pending := [k for k, q in self.waiting.items() if q and (
                k in links if links is not None else k[0] in among and k[1] in among)]:
            for src, dst in pending:
                for message in self.waiting.pop((src, dst)):
                    self.take(dst, self.nodes[dst].receive(message))

    def leave(self, i: int) -> Standing:
        outs = self.nodes[i].receive(Leave())
        self.take(i, outs)
        assert len(outs) == 1
        self.gone.add(i)  # it quit: it hears nothing more
        self.waiting = {k: q for k, q in self.waiting.items() if k[1] != i}
        return outs[0].standing

    def time_out(self, i: int) -> None:
        """Fire the node's earliest time-out of its current round."""
        node = self.nodes[i]
        due = min(t for t in self.timers[i] if t[0] == node.state.round)
        self.timers[i].discard(due)
        self.take(i, node.receive(Timeout(*due)))


def test_the_other_of_two_holders_decides_the_leave_at_once_before_any_vote() -> None:
    # Nobody has a value yet (mid-hand): holder 1 leaves; holder 0 proposes round 0.
    net = _Net(2)
    standing = net.leave(1)
    assert standing == Standing(1, Outcome.void({1}), 0, -1)
    net.deliver()
    assert net.decided == {0: Decide(Outcome.void({1}), 0)}
    assert not net.proofs


def test_the_other_of_two_holders_decides_at_once_when_the_proposer_leaves() -> None:
    net = _Net(2)
    net.leave(0)  # the proposer of round 0 leaves before it has anything to propose
    net.deliver()
    assert net.decided == {1: Decide(Outcome.void({0}), 0)}
    assert net.nodes[1].state.round == 0


def test_the_other_of_two_holders_decides_at_once_after_voting_otherwise() -> None:
    """Both prevoted in round 0 (holder 0 its checkpoint, holder 1 nil: it lacks a
    signature); holder 0 leaves. Its leave stands from round 1, holder 1 joins that round
    on it and, as its proposer, proposes the void; no time-out passes."""
    net = _Net(2)
    net.take(0, net.nodes[0].receive(Endorse(COMMIT)))
    net.deliver()
    net.take(1, net.nodes[1].receive(Timeout(0, Step.PROPOSE)))  # it cannot prevote it
    net.deliver()
    assert [n.state.step for n in net.nodes] == [Step.PREVOTE, Step.PREVOTE]
    standing = net.leave(0)
    assert standing == Standing(0, Outcome.void({0}), 1, -1)
    net.deliver()
    assert net.decided == {1: Decide(Outcome.void({0}), 1)}
    assert not net.proofs


def test_a_leaver_that_precommitted_a_value_stands_for_it_and_the_others_decide_it() -> None:
    """Holder 2 locked the checkpoint in round 0; 0 and 1 precommitted nil. Holder 2
    leaves, and 0 and 1 are cut off from each other: each, with the leave, is a strict
    majority, and each decides the checkpoint, not the void of the leaver."""
    net = _Net(3, endorse=(COMMIT,))
    net.deliver(links={(0, 2)})  # 0 proposes the checkpoint; 0 and 2 prevote it
    assert net.nodes[2].state.locked == COMMIT
    assert net.nodes[0].state.locked is None  # 2's prevote has not reached it
    net.time_out(1)  # 1 heard nothing: prevotes nil
    net.deliver(among={0, 1})
    net.time_out(0)
    net.time_out(1)  # both precommit nil at their prevote time-outs
    net.deliver(among={0, 1})
    standing = net.leave(2)
    assert standing == Standing(2, COMMIT, 1, 0)
    for i in (0, 1):
        net.deliver(among={i, 2})
    assert not net.decided
    for _ in range(4):
        for i in (0, 1):
            if i not in net.decided:
                net.time_out(i)
            net.deliver(among={i, 2})
    assert net.decided == {0: Decide(COMMIT, 2), 1: Decide(COMMIT, 1)}
    net.deliver()  # healed: nothing changes, nobody is blamed
    assert not net.proofs
    # A learner decides on either certificate: the standing precommit comes with the
    # prevotes of its round's polka, and those of the polka they rely on.
    for i in (0, 1):
        cert = net.nodes[i].certificate()
        assert any(isinstance(v, StandingVote) for v in cert)
        learner = Agreement((0, 1, 2), None)
        learner.receive(Start())
        outs = [o for v in cert for o in learner.receive(
            v.standing if isinstance(v, StandingVote) else v)]
        assert [o for o in outs if isinstance(o, Decide)] == [net.decided[i]]


def test_three_holders_one_leaves_the_others_cut_off_decide_the_same() -> None:
    """The leave plus either of the other two is a strict majority; both sides decide, and
    the same value: any quorum with the leave in it decides what the leave stands for."""
    net = _Net(3)
    net.leave(2)
    for i in (0, 1):
        net.deliver(among={i, 2})
    while len(net.decided) < 2:
        for i in (0, 1):
            if i not in net.decided:
                net.time_out(i)
            net.deliver(among={i, 2})
    assert {d.value for d in net.decided.values()} == {Outcome.void({2})}
    net.deliver()
    assert not net.proofs


def test_a_vote_against_a_leave_is_a_double_vote_with_the_leave_whatever_came_first() -> None:
    standing = Standing(1, Outcome.void({1}), 2, -1)
    vote = Vote(1, 3, VoteStep.PREVOTE, None)
    found = []
    for order in ((standing, vote), (vote, standing)):
        node = Agreement((0, 1, 2), 0)
        node.receive(Start())
        found.append([o for m in order for o in node.receive(m) if isinstance(o, Evidence)])
    assert found[0] == found[1] == [Evidence(DoubleVote(vote, standing.prevote(3)))]
    proof = found[0][0].proof
    assert isinstance(proof, DoubleVote)
    assert isinstance(proof.second, StandingVote)
    assert proof.second.standing == standing  # the leave is the signed message


def test_a_vote_before_the_leave_stands_or_alike_its_standing_vote_is_no_fault() -> None:
    standing = Standing(1, VOID, 2, -1)
    node = Agreement((0, 1, 2), 0)
    node.receive(Start())
    for m in (Vote(1, 0, VoteStep.PREVOTE, COMMIT), Vote(1, 1, VoteStep.PRECOMMIT, None),
              standing, Vote(1, 4, VoteStep.PREVOTE, VOID), Vote(1, 5, VoteStep.PRECOMMIT, VOID)):
        assert not [o for o in node.receive(m) if isinstance(o, Evidence)]


def test_a_leave_that_drops_a_lock_is_amnesia() -> None:
    precommit = Vote(1, 0, VoteStep.PRECOMMIT, COMMIT)
    for standing in (Standing(1, Outcome.void({1}), 1, -1), Standing(1, VOID, 3, -1)):
        node = Agreement((0, 1, 2), 0)
        node.receive(Start())
        node.receive(precommit)
        outs = node.receive(standing)
        assert outs.count(Evidence(Amnesia(precommit, standing.prevote(standing.first_round)))) == 1
    # Standing for the precommitted value, or relying on a polka after it, is no fault.
    for standing in (Standing(1, COMMIT, 1, 0), Standing(1, VOID, 3, 1)):
        node = Agreement((0, 1, 2), 0)
        node.receive(Start())
        node.receive(precommit)
        assert not [o for o in node.receive(standing) if isinstance(o, Evidence)]


def test_two_leaves_of_one_holder_that_differ_are_a_double_vote() -> None:
    node = Agreement((0, 1, 2), 0)
    node.receive(Start())
    one, other = Standing(1, VOID, 2, -1), Standing(1, COMMIT, 4, -1)
    node.receive(one)
    assert node.receive(other) == [Evidence(DoubleVote(other.prevote(4), one.prevote(4)))]
    # The same votes from an earlier round are no fault, and a third leave is not kept.
    assert node.receive(Standing(1, VOID, 1, -1)) == []
    node.receive(Standing(1, Outcome.void({1}), 1, -1))
    assert len([s for s in node.state.standings if s.seat == 1]) == 2


def test_a_proposal_in_a_round_the_proposer_stands_in_is_a_double_proposal() -> None:
    node = Agreement((0, 1, 2), 2)
    node.receive(Start())
    standing = Standing(1, VOID, 0, -1)
    node.receive(standing)
    proposal = Proposal(1, COMMIT, -1, 1)
    assert Evidence(DoubleProposal(proposal, standing.proposal(1))) in node.receive(proposal)
    assert node.receive(Proposal(4, VOID, -1, 1)) == []  # what the leave stands for


def test_a_leave_is_counted_in_every_round_without_a_vote_stored_per_round() -> None:
    node = Agreement((0, 1), 0)
    node.receive(Endorse(COMMIT))
    node.receive(Start())
    node.receive(Standing(1, COMMIT, 5000, -1))
    # Round 5000 is joined on the leave alone (it is all but this node), and decided.
    assert node.state.round == 5000
    assert node.decision == COMMIT
    assert all(v.seat == 0 for v in node.state.votes)


def test_after_its_leave_a_node_signs_nothing() -> None:
    net = _Net(3, endorse=(COMMIT,))
    node = net.nodes[1]
    assert node.waiting_for() == (0,)
    standing = net.leave(1)
    assert standing == Standing(1, Outcome.void({1}), 0, -1)
    assert node.left
    outs = node.receive(Proposal(0, COMMIT, -1, 0))
    outs += node.receive(Timeout(0, Step.PROPOSE))
    outs += node.receive(Vote(2, 3, VoteStep.PREVOTE, None))
    outs += node.receive(Vote(0, 3, VoteStep.PREVOTE, None))
    assert not [o for o in outs if isinstance(o, Broadcast | ScheduleTimeout)]
    assert node.state.round == 0
    with pytest.raises(LocalProtocolError):
        node.receive(Leave())


def test_leave_mistakes_and_a_leave_in_ones_own_name() -> None:
    with pytest.raises(LocalProtocolError):
        Agreement((0, 1, 2), None).receive(Leave())
    node = _table(3)[0]
    node.receive(Start())
    with pytest.raises(RemoteProtocolError):
        node.receive(Standing(0, VOID, 0, -1))
    with pytest.raises(LocalProtocolError):
        node.receive(Standing(1, VOID, 0, -1).prevote(0))
    with pytest.raises(LocalProtocolError):
        node.receive(StandingProposal(1, VOID, -1, 1, standing=Standing(1, VOID, 0, -1)))
    for bad in (Standing(5, VOID, 0, -1), Standing(1, VOID, -1, -1),
                Standing(1, VOID, 2, 2), Standing(1, VOID, 0, -2)):
        with pytest.raises(RemoteProtocolError):
            node.receive(bad)
    decided = _table(3)
    _run(decided)
    assert decided[0].receive(Leave()) == []  # decided: nothing left to stand for


def test_a_leave_endorses_the_void_of_the_leaver() -> None:
    node = Agreement((0, 1, 2), 1)
    node.receive(Start())
    node.receive(Standing(2, COMMIT, 0, -1))
    assert Outcome.void({2}) in node.state.endorsed
    assert node.state.candidate == Outcome.void({2})  # the commit is not endorsed here
    node.receive(Endorse(COMMIT))
    node.receive(Standing(0, COMMIT, 0, -1))
    assert node.state.candidate == COMMIT  # what the leave stands for, being endorsed
