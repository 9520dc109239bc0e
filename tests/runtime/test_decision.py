"""A hand's agreement with signed envelopes and a clock (p2pkille/runtime/decision.py).

Every test runs real :class:`HandDecision` objects that sign their ``propose`` and ``vote``
envelopes into per-member hash chains and decode each other's from the wire, as a
table's nodes do; delivery is by hand, so each test picks who hears whom and when.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import MAX_ROUND, Outcome, VoteStep, quorum_size
from p2pkille.runtime.bodies import LeaveBody, ProposeBody, VoteBody
from p2pkille.runtime.decision import (
    GROWTH_ROUNDS,
    ROUND_STEP,
    Contradiction,
    Decided,
    HandDecision,
    Sign,
    proposers,
)
from p2pkille.runtime.outcome import Timing
from protocol.envelope import ZERO_HASH, Envelope, decode
from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.identity import Identity

TABLE = b"decision-tests"
TIMING = Timing(limit=10.0)
KINDS = msg.KINDS | msg.AGREEMENT_KINDS
CHECKPOINT = Outcome.commit(hashlib.sha256(b"a checkpoint").digest())


@dataclass
class Member:
    """A member at table seat ``seat``: its identity, its chain's head, its decision, and
    what it decided."""

    seat: int
    identity: Identity
    decision: HandDecision
    seq: int = 0
    prev: bytes = ZERO_HASH
    decided: list[Outcome] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    outbox: list[Envelope] = field(default_factory=list)

    def seal(self, kind: str, body: dict[str, object]) -> Envelope:
        self.seq += 1
        env = Envelope.seal(self.identity, table=TABLE, seq=self.seq, prev=self.prev,
                            kind=kind, body=body)
        self.prev = env.id
        return env


class Table:
    """Members (seats 0..n-1) of one hand; ``holders`` vote, the others learn."""

    def __init__(self, members: int, holders: tuple[int, ...], hand: int = 1) -> None:
        self.members = [
            Member(s, Identity.from_seed(bytes([s + 1]) * 32),
                   HandDecision(hand, holders, s, TIMING)) for s in range(members)]
        self.keys = [m.identity.public for m in self.members]

    def act(self, member: Member, actions: list[object]) -> None:
        for action in actions:
            if isinstance(action, Sign):
                env = member.seal(action.body.KIND, action.body.to_json())
                member.outbox.append(env)
                assert member.decision.take(member.seat, env, 0.0) == []
            elif isinstance(action, Decided):
                member.decided.append(action.value)
            elif isinstance(action, Contradiction):
                member.contradictions.append(action)

    def endorse(self, seat: int, value: Outcome, now: float = 0.0) -> None:
        member = self.members[seat]
        self.act(member, list(member.decision.endorse(value, now)))

    def deliver(self, among: set[int] | None = None, now: float = 0.0) -> int:
        """Deliver every envelope sent so far to every member in ``among`` (all by default),
        from the wire, until nothing new is sent; how many deliveries."""
        among = set(range(len(self.members))) if among is None else among
        done: set[tuple[int, bytes]] = set()
        count = 0
        while True:
            pending = [(m, env) for m in self.members if m.seat in among for env in m.outbox
                       for to in among if to != m.seat and (to, env.wire) not in done]
            if not pending:
                return count
            for sender, env in pending:
                for to in among - {sender.seat}:
                    if (to, env.wire) in done:
                        continue
                    done.add((to, env.wire))
                    count += 1
                    self.take(to, sender.seat, env.wire, now)

    def take(self, to: int, sender: int, wire: bytes, now: float) -> None:
        env = decode(wire, table=TABLE, members=self.keys, kinds=KINDS)
        member = self.members[to]
        self.act(member, list(member.decision.take(sender, env, now)))

    def wake(self, seats: set[int], now: float) -> None:
        for seat in seats:
            member = self.members[seat]
            self.act(member, list(member.decision.wake(now)))


def test_the_proposers_are_the_holders_rotated_by_the_hand() -> None:
    assert proposers((1, 3, 4), 0) == (1, 3, 4)
    assert proposers((1, 3, 4), 1) == (3, 4, 1)
    assert proposers((1, 3, 4), 5) == (4, 1, 3)


@pytest.mark.parametrize("holders", [2, 3, 4, 5])
def test_holders_that_all_endorse_the_checkpoint_commit_it_and_a_learner_follows(
        holders: int) -> None:
    table = Table(holders + 1, tuple(range(holders)))  # the last member holds no key
    for seat in range(holders):
        table.endorse(seat, CHECKPOINT)
    table.deliver()
    assert all(m.decided == [CHECKPOINT] for m in table.members)
    # The certificate: signed precommits of a strict majority, from the wire alone.
    for member in table.members:
        certified = member.decision.certified()
        assert certified is not None
        assert certified.value == CHECKPOINT
        seats = set()
        for wire in certified.envelopes:
            env = decode(wire, table=TABLE, members=table.keys, kinds=KINDS)
            body = VoteBody.parse(env)
            assert (body.step, body.value) == (VoteStep.PRECOMMIT, CHECKPOINT)
            seats.add(table.keys.index(env.author))
        assert len(seats) >= quorum_size(holders)


def test_a_learner_decides_on_the_certificate_alone() -> None:
    table = Table(4, (0, 1, 2))
    for seat in range(3):
        table.endorse(seat, CHECKPOINT)
    table.deliver(among={0, 1, 2})
    assert table.members[3].decided == []
    certified = table.members[0].decision.certified()
    assert certified is not None
    learner = table.members[3]
    for wire in certified.envelopes:
        env = decode(wire, table=TABLE, members=table.keys, kinds=KINDS)
        table.act(learner, list(learner.decision.take(table.keys.index(env.author), env,
                                                      1.0)))
    assert learner.decided == [CHECKPOINT]


def test_a_crashed_holder_is_voided_by_the_others_once_their_limits_pass() -> None:
    table = Table(3, (0, 1, 2), hand=0)  # holder 0 proposes round 0
    void = Outcome.void({2})
    for seat in (0, 1):
        table.endorse(seat, void, now=TIMING.limit)
    table.deliver(among={0, 1}, now=TIMING.limit)
    assert table.members[0].decided == [void]
    assert table.members[1].decided == [void]


def test_the_proposer_down_the_others_move_to_the_next_round_on_their_clocks() -> None:
    table = Table(3, (0, 1, 2), hand=0)  # holder 0 proposes round 0, and is down
    void = Outcome.void({0})
    for seat in (1, 2):
        table.endorse(seat, void)
    table.deliver(among={1, 2})
    assert table.members[1].decided == []
    now = TIMING.limit
    for _ in range(4):  # propose, prevote and precommit time-outs of round 0, then round 1
        table.wake({1, 2}, now)
        table.deliver(among={1, 2}, now=now)
        now += TIMING.limit + ROUND_STEP
    assert table.members[1].decided == [void]
    assert table.members[2].decided == [void]


def test_two_holders_cut_off_from_each_other_both_wait() -> None:
    table = Table(2, (0, 1))
    table.endorse(0, Outcome.void({1}))
    table.endorse(1, Outcome.void({0}))
    now = 0.0
    for _ in range(10):
        now += 4 * TIMING.limit
        table.wake({0, 1}, now)
        table.deliver(among={0}, now=now)
        table.deliver(among={1}, now=now)
    assert table.members[0].decided == table.members[1].decided == []
    assert table.members[0].decision.waiting_for() == (1,)
    assert table.members[1].decision.waiting_for() == (0,)


def test_two_votes_of_one_holder_for_one_round_and_step_are_its_fault_with_both() -> None:
    table = Table(3, (0, 1, 2), hand=0)
    liar = table.members[2]
    table.endorse(0, CHECKPOINT)  # proposes
    table.deliver(among={0, 1})
    table.endorse(1, CHECKPOINT)
    first = liar.seal(msg.VOTE, VoteBody(0, 0, VoteStep.PREVOTE, CHECKPOINT).to_json())
    second = liar.seal(msg.VOTE, VoteBody(0, 0, VoteStep.PREVOTE, None).to_json())
    for env in (first, second):
        table.take(1, 2, env.wire, 0.0)
    found = table.members[1].contradictions
    assert [(c.seat, c.reason) for c in found] == [(2, "two votes for one round and step")]
    assert {found[0].first, found[0].second} == {first.wire, second.wire}


def test_an_agreement_envelope_a_peer_made_up_is_its_remote_error() -> None:
    table = Table(4, (0, 1, 2))
    sender = table.members[1]
    bad: list[tuple[str, dict[str, object]]] = [
        (msg.VOTE, {"hand": 1, "round": 0, "step": "prevote", "value": "void:01"}),
        (msg.VOTE, {"hand": 1, "round": 0, "step": "decide", "value": None}),
        (msg.VOTE, {"hand": 1, "round": 0, "step": "prevote"}),
        (msg.VOTE, {"hand": 2, "round": 0, "step": "prevote", "value": None}),
        (msg.VOTE, {"hand": 1, "round": 0, "step": "precommit", "value": None, "pol": 0}),
        (msg.PROPOSE, {"hand": 1, "round": 0, "value": None}),
        (msg.PROPOSE, {"hand": 1, "round": 0, "value": "commit:00"}),
        (msg.PROPOSE, {"hand": 1, "round": 1, "value": "void:"}),  # seat 1 proposes round 0
    ]
    for kind, body in bad:
        env = sender.seal(kind, body)
        with pytest.raises(RemoteProtocolError):
            table.members[0].decision.take(1, env, 0.0)
    voter = table.members[3]  # not a holder: it never votes
    env = voter.seal(msg.VOTE, VoteBody(1, 0, VoteStep.PREVOTE, None).to_json())
    with pytest.raises(RemoteProtocolError, match="not a holder"):
        table.members[0].decision.take(3, env, 0.0)


@pytest.mark.parametrize("body", [
    ProposeBody(3, 0, CHECKPOINT),
    ProposeBody(3, 2, Outcome.void({1, 4}), valid_round=1),
    VoteBody(3, 1, VoteStep.PREVOTE, Outcome.void(), pol_round=0),
    VoteBody(3, 1, VoteStep.PRECOMMIT, None),
])
def test_agreement_bodies_round_trip_through_a_signed_envelope(
        body: ProposeBody | VoteBody) -> None:
    member = Table(1, (0,)).members[0]
    env = member.seal(body.KIND, body.to_json())
    assert type(body).parse(env) == body


def test_an_outcome_has_one_text_only() -> None:
    member = Table(1, (0,)).members[0]
    for text in ("void:3,1", "void:01", "commit:" + "AB" * 32, "void: 1"):
        env = member.seal(msg.VOTE, {"hand": 1, "round": 0, "step": "prevote", "value": text})
        with pytest.raises(InvalidEncoding):
            VoteBody.parse(env)


def test_a_holders_flood_for_one_slot_and_a_non_holders_votes_cost_nothing() -> None:
    table = Table(4, (0, 1, 2))
    node = table.members[0].decision
    liar, stranger = table.members[1], table.members[3]
    for k in range(50):
        value = Outcome.void({k % 3, 3})
        env = liar.seal(msg.VOTE, VoteBody(1, 0, VoteStep.PREVOTE, value).to_json())
        node.take(1, env, 0.0)
        env = stranger.seal(msg.VOTE, VoteBody(1, 0, VoteStep.PREVOTE, value).to_json())
        with pytest.raises(RemoteProtocolError):
            node.take(3, env, 0.0)
    assert sum(len(held) for held in node.signed.values()) == 2  # the first and its proof


def test_a_lying_holder_cannot_lengthen_the_time_outs_or_push_a_node_past_the_last_round(
        ) -> None:
    table = Table(2, (0, 1), hand=0)
    honest, liar = table.members[0], table.members[1]
    table.endorse(0, Outcome.void({1}))
    # One vote of the other holder in the last round moves this node there (2 holders).
    env = liar.seal(msg.VOTE, VoteBody(0, MAX_ROUND, VoteStep.PREVOTE, None).to_json())
    table.act(honest, list(honest.decision.take(1, env, 0.0)))
    deadline = honest.decision.next_deadline()
    assert deadline is not None
    assert deadline <= TIMING.limit + GROWTH_ROUNDS * ROUND_STEP
    now = 0.0
    for _ in range(6):
        now += 2 * (TIMING.limit + GROWTH_ROUNDS * ROUND_STEP)
        table.wake({0}, now)
    rounds = {VoteBody.parse(env).round for env in honest.outbox if env.kind == msg.VOTE}
    assert rounds
    assert max(rounds) == MAX_ROUND


def test_a_proposers_flood_of_proposals_for_one_round_is_one_fault_and_no_crash() -> None:
    table = Table(3, (0, 1, 2), hand=0)  # holder 0 proposes round 0
    node, liar = table.members[1], table.members[0]
    for k in range(5):
        body = ProposeBody(0, 0, Outcome.void({2} if k % 2 else {k}))
        env = liar.seal(msg.PROPOSE, body.to_json())
        table.act(node, list(node.decision.take(0, env, 0.0)))
    assert [(c.seat, c.reason) for c in node.contradictions] == [
        (0, "two proposals for one round")]
    assert len(node.decision.signed[(0, 0, "propose")]) == 2  # the first and its proof


def test_a_holder_restarted_from_its_log_signs_nothing_against_what_it_signed() -> None:
    # Holder 0 prevoted and precommitted the checkpoint, then crashed. Rebuilt, it takes
    # its own logged envelopes back first (agreeing.py does so before any other's): it is
    # where casting them left it, locked on the checkpoint, and what it signs after (a
    # later round's votes, on its clock) never contradicts them.
    table = Table(3, (0, 1, 2))
    for seat in (0, 1, 2):
        table.endorse(seat, CHECKPOINT)
    table.deliver(among={0, 1})  # seat 2 hears nothing: no quorum of precommits yet
    me = table.members[0]
    logged = list(me.outbox)
    assert [VoteBody.parse(e).step for e in logged if e.kind == msg.VOTE] == [
        VoteStep.PREVOTE, VoteStep.PRECOMMIT]
    fresh = HandDecision(1, (0, 1, 2), 0, TIMING)
    signed: list[Sign] = []
    for env in logged:
        signed += [a for a in fresh.take(0, env, 100.0) if isinstance(a, Sign)]
    signed += [a for a in fresh.resume(100.0) if isinstance(a, Sign)]
    assert signed == []
    state = fresh.component.state
    assert (state.locked, state.locked_round, state.round) == (CHECKPOINT, 0, 0)
    assert fresh.next_deadline() is not None  # the step's time-out runs again
    later = [a for now in (1e6, 2e6) for a in fresh.wake(now) if isinstance(a, Sign)]
    assert later
    assert all(a.body.round > 0 for a in later)
    assert all(not isinstance(a.body, VoteBody) or a.body.value in (None, CHECKPOINT)
               for a in later)


def test_a_holder_that_leaves_stands_by_its_votes_and_two_holders_decide_without_it() -> None:
    # At two holders a quorum is both: holder 1 quits before any vote, its leave stands
    # for the void of its own seat, and holder 0 decides that void with it, as does a
    # learner that takes the leave and holder 0's precommit.
    table = Table(3, (0, 1))
    leaver = table.members[1]
    standing = leaver.decision.leave(0.0)
    assert standing is not None
    assert (standing.value, standing.first_round) == (Outcome.void({1}), 0)

    body = LeaveBody(1, standing.value, standing.first_round, standing.pol_round)
    env = leaver.seal(msg.LEAVE, body.to_json())
    parsed = LeaveBody.parse(decode(env.wire, table=TABLE, members=table.keys, kinds=KINDS))
    assert parsed == body
    for seat in (0, 2):
        member = table.members[seat]
        got = parsed.standing(1)
        assert got is not None
        table.act(member, list(member.decision.take_leave(1, env, got, 0.0)))
    table.deliver(among={0, 2})
    assert table.members[0].decided == [Outcome.void({1})]
    assert table.members[2].decided == [Outcome.void({1})]
    certified = table.members[0].decision.certified()
    assert certified is not None
    assert env.wire in certified.envelopes


def test_a_proposer_restarted_from_its_log_signs_no_second_prevote() -> None:
    # Seat 1 proposes round 0 of hand 1 and votes for its proposal. Rebuilt, it takes back
    # its proposal before its votes: no rule may run in between (it would prevote nil on
    # its own proposal, found not endorsed yet), only once all are back.
    table = Table(3, (0, 1, 2))
    assert proposers((0, 1, 2), 1)[0] == 1
    for seat in (0, 1, 2):
        table.endorse(seat, CHECKPOINT)
    table.deliver(among={1, 2})
    logged = list(table.members[1].outbox)
    assert [e.kind for e in logged][:2] == [msg.PROPOSE, msg.VOTE]
    fresh = HandDecision(1, (0, 1, 2), 1, TIMING)
    actions = [a for env in logged for a in fresh.take(1, env, 50.0)]
    actions += fresh.resume(50.0)
    assert [a for a in actions if isinstance(a, Sign)] == []
    assert CHECKPOINT in fresh.component.state.endorsed
