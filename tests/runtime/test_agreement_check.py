"""The agreement component (p2pkille/runtime/agreement.py), model-checked over every
reachable world of bounded scenarios (tests/runtime/agreement_model.py), and its API.

Each check prints its state count (``pytest -s`` shows them; docs/agreement.md quotes
them). The three deepest runs (each 60,000 to 140,000 states) are in the thorough tier
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
    Outcome,
    Proposal,
    ScheduleTimeout,
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


@given(st.builds(Vote, st.integers(-2, 4), st.integers(-2, 1 << 17),
                 st.sampled_from(VoteStep), st.sampled_from([COMMIT, VOID, None]),
                 st.integers(-3, 3))
       | st.builds(Proposal, st.integers(-2, 1 << 17), st.sampled_from([COMMIT, VOID]),
                   st.integers(-3, 3), st.integers(-2, 4)))
def test_peer_input_raises_only_the_remote_error(message: Vote | Proposal) -> None:
    node = _table(3)[1]
    node.receive(Start())
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
