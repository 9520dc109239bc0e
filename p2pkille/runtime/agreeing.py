"""Each hand's agreements (docs/protocol.md II.11.5): its outcome, and once voided its
verdict, each a :class:`~p2pkille.runtime.decision.HandDecision` fed from the chains, and
their decisions carried out.

What a node finds valid is what it endorses. For the hand's outcome: ``commit:C`` once it
holds a good signature of every holder on its checkpoint ``C``; ``void:S`` once the
time-out votes agree every seat of ``S`` silent (II.11.3) or the seat left, and
``void:{}`` too once it found a fault or took a holder's accuse. For the verdict: what
verdict.py says. A proposal is endorsed when its value is valid here, not only when it
equals this node's own candidate. The hand counts, stops for its void round, or is voided
with its verdict only on a decision: the precommits of a strict majority of the voters,
so no two honest nodes carry out different outcomes (docs/agreement.md). The verdict's
voters are the holders the hand's decision did not time out: that decision is the same
everywhere, so every node runs the verdict's agreement among the same seats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome, OutcomeKind, Step, VoteStep
from p2pkille.runtime.bodies import Instance, LeaveBody, ProposeBody, VoteBody
from p2pkille.runtime.decision import Action, Contradiction, Decided, HandDecision, Sign
from p2pkille.runtime.faults import Fault, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage
from protocol.envelope import Envelope
from protocol.errors import ProtocolError, RemoteProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Agreeing"]

KEPT: int = 4
"""Hands whose instances are kept after them: a late vote of a decided hand is read and
dropped."""

PENDING: int = 4
"""Proposals of the current round held back until valid here (a proposer has one; more
are a liar's, whose contradiction the component reports when they are taken)."""

Key = tuple[int, Instance]
"""(hand, which of its agreements)."""


def instance_of(env: Envelope) -> Instance:
    """Which agreement of its hand ``env`` (a propose, vote or leave) is of; a bad ``of``
    reads as the hand's, whose parse then blames it."""
    return Instance.VERDICT if env.body.get("of") == Instance.VERDICT.value else Instance.HAND


class Agreeing:
    """The agreement instances of this node's hands, and what their decisions do."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.hands: dict[Key, HandDecision] = {}
        self.to_sign: list[Sign] = []
        self.decided: dict[Key, Outcome] = {}
        """(hand, instance) -> its decided value (carried out, or waiting to be)."""
        self.taken: set[bytes] = set()
        """Ids of the agreement envelopes of the latest hand taken (read ahead or not)."""
        self.pending: dict[bytes, tuple[int, Envelope, int, Instance]] = {}
        """id -> (member, envelope, round, instance) of another's proposal not valid here
        yet."""
        self.learner = False
        """Take my own agreement messages as a peer's and sign none (an audit of my log:
        they were the clock's call, which no replay can check; ``verify``)."""

    # -- the instances ----------------------------------------------------------------

    def voters(self, hand: Hand, instance: Instance) -> tuple[int, ...] | None:
        """Who votes in ``instance`` of ``hand``: its holders; for the verdict, the holders
        the decided void did not time out (None before that decision)."""
        if instance is Instance.HAND:
            return tuple(hand.holders)
        value = self.decided.get((hand.number, Instance.HAND))
        if value is None or value.kind is not OutcomeKind.VOID:
            return None
        return tuple(s for s in hand.holders if s not in value.timed_out) or tuple(
            hand.holders)

    def of(self, hand: Hand, instance: Instance = Instance.HAND) -> HandDecision | None:
        """The instance; a new one first restores my own messages of it from my chain (a
        node rebuilt from its log goes on from what it signed), then takes the leaves of
        the voters, and a verdict's the messages its voters signed before it could begin
        here. None for a verdict before the hand's void is decided."""
        key = (hand.number, instance)
        found = self.hands.get(key)
        if found is not None:
            return found
        voters = self.voters(hand, instance)
        if voters is None:
            return None
        if all(k[0] < hand.number for k in self.hands):
            # A later hand: what was read of the earlier ones is of no more use.
            self.taken.clear()
            self.pending.clear()
        found = HandDecision(hand.number, voters, None if self.learner else self.table.my_seat,
                             self.table.timing, instance)
        self.hands[key] = found
        for old in [k for k in self.hands if k[0] <= hand.number - KEPT]:
            del self.hands[old]
            self.decided.pop(old, None)
        if self.table.my_seat in voters and not self.learner:
            self._restore(hand, instance, found)
        for m in sorted(self.table.left):
            chain = self.table.transcript.chain(self.table.members[m])
            if chain and chain[-1].kind == msg.LEAVE:
                self.on_leave(m, chain[-1])
        if instance is Instance.VERDICT:
            self._take_signed(hand, instance)
        return found

    def _restore(self, hand: Hand, instance: Instance, found: HandDecision) -> None:
        """My own messages of the instance, read back from my chain, then go on."""
        me, restored = self.table.me, False
        for env in self.table.transcript.chain(self.table.identity.public):
            if env.kind in msg.AGREEMENT_KINDS and msg.hand_of(env) == hand.number and (
                    instance_of(env) is instance):
                self._take(hand, instance, me, env)
                restored = True
            elif (env.kind == msg.LEAVE and me in self.table.left
                  and instance_of(env) is instance):
                self.on_leave(me, env)
                restored = True
        if restored:
            self._carry(hand, instance, found.resume(self.table.now))

    def _take_signed(self, hand: Hand, instance: Instance) -> None:
        """The others' messages of the instance in the chains, taken before it began here
        (a verdict's, read while the hand's void was not decided here yet)."""
        key = (hand.number, instance)
        for m, member in enumerate(self.table.members):
            if m == self.table.me and not self.learner:
                continue
            for env in self.table.transcript.chain(member):
                if key in self.decided:
                    return
                if (env.kind in msg.AGREEMENT_KINDS and msg.hand_of(env) == hand.number
                        and instance_of(env) is instance):
                    try:
                        self._take(hand, instance, m, env)
                    except ProtocolError:
                        continue  # blamed in chain order

    # -- endorsements -----------------------------------------------------------------

    def endorse(self, hand: Hand, value: Outcome,
                instance: Instance = Instance.HAND) -> None:
        """This node finds ``value`` valid for ``instance`` of ``hand``."""
        if hand.me is None or self.learner or (hand.number, instance) in self.decided:
            return
        decision = self.of(hand, instance)
        if decision is None or self.table.my_seat not in decision.holders:
            return
        self._carry(hand, instance, decision.endorse(value, self.table.now))
        if self.pending:
            self._flush(hand, instance, all_valid=True)

    def stopped(self, hand: Hand) -> None:
        """I found a fault, or took a holder's accuse: the hand's void is valid here."""
        self.endorse(hand, Outcome.void())

    def valid(self, hand: Hand, value: Outcome, instance: Instance = Instance.HAND) -> bool:
        """Is ``value`` valid here? For the verdict, what verdict.py says; for the hand's
        outcome, my checkpoint with every holder's good signature, or a void of seats the
        votes agree silent or that left (of none once the hand is stopping here)."""
        if instance is Instance.VERDICT:
            return self.core.verdict.valid(hand, value)
        if value.kind is OutcomeKind.COMMIT:
            checkpoint = hand.close.checkpoint
            return (self.table.stage == Stage.CHECKPOINT and checkpoint is not None
                    and len(hand.close.agreed) == len(hand.holders)
                    and (hand.close.endorsed or checkpoint.id) == value.checkpoint)
        if value.kind is not OutcomeKind.VOID:
            return False
        silent = self.core.timeouts.silent(hand) if hand.timeouts.votes else frozenset()
        gone = {s for s in value.timed_out if self.table.has_left(s)}
        return ((bool(value.timed_out) or hand.void.stopping)
                and value.timed_out <= silent | gone)

    @staticmethod
    def _waits(decision: HandDecision, round_: int) -> bool:
        """May a proposal of ``round_`` wait: this node is not past its proposal step?"""
        state = decision.component.state
        return state.round < round_ or (state.round == round_
                                        and state.step is Step.PROPOSE)

    def _flush(self, hand: Hand, instance: Instance, *, all_valid: bool = False) -> None:
        """Take the proposals that waited and may wait no longer (or are valid now)."""
        key = (hand.number, instance)
        decision = self.hands.get(key)
        for pid, (m, env, round_, of) in sorted(self.pending.items(), key=lambda kv: kv[1][2]):
            if key in self.decided or decision is None:
                break
            if of is instance and pid in self.pending and (
                    not self._waits(decision, round_) or (
                        all_valid and self.valid(hand, ProposeBody.parse(env).value, of))):
                del self.pending[pid]
                try:
                    self._take(hand, instance, m, env)
                except RemoteProtocolError:
                    continue  # blamed in chain order

    def refresh(self, hand: Hand, instance: Instance = Instance.HAND) -> None:
        """Endorse the proposals held whose value has become valid here."""
        key = (hand.number, instance)
        found = self.hands.get(key)
        if found is None or hand.me is None or self.learner or key in self.decided:
            return
        if self.pending:
            self._flush(hand, instance, all_valid=True)
        state = found.component.state
        for proposal in sorted(state.proposals, key=lambda p: p.round):
            if proposal.value not in state.endorsed and self.valid(hand, proposal.value,
                                                                   instance):
                self.endorse(hand, proposal.value, instance)

    # -- envelopes --------------------------------------------------------------------

    def on_agreement(self, m: int, env: Envelope) -> None:
        """A ``propose`` or ``vote`` of the current hand (read ahead, or in chain order).
        One of a verdict whose agreement has not begun here is read again when it does."""
        hand = self.table.hand
        if hand is None or msg.hand_of(env) != hand.number or env.id in self.taken:
            return
        instance = instance_of(env)
        key = (hand.number, instance)
        if key in self.decided or self.table.stage == Stage.DONE:
            self.taken.add(env.id)
            return  # a late vote of a decided hand: the others decide on the certificate
        self.of(hand)  # first: my own messages are restored before another's is taken
        if self.of(hand, instance) is None:
            # The verdict's agreement has not begun here: read again when it does (of);
            # a malformed one is blamed now, in chain order.
            (ProposeBody if env.kind == msg.PROPOSE else VoteBody).parse(env)
            return
        self._take(hand, instance, m, env)

    def _take(self, hand: Hand, instance: Instance, m: int, env: Envelope) -> None:
        """Take it into the instance; refused (RemoteProtocolError), it is not marked
        taken, so that its consumption in chain order blames its author."""
        if env.id in self.taken:
            return
        decision = self.hands[(hand.number, instance)]
        seat = self.table.seat_of[m]
        voter = self.table.my_seat in decision.holders and not self.learner
        if instance is Instance.VERDICT and m != self.table.me:
            value = (ProposeBody.parse(env) if env.kind == msg.PROPOSE
                     else VoteBody.parse(env)).value
            if value is not None:
                self.core.verdict.named(hand, value)
        if m != self.table.me and env.kind == msg.PROPOSE and hand.me is not None and voter:
            # The component prevotes on a proposal at once: one whose value is not valid
            # here yet (a signature or a vote still on its way) waits until it is, or until
            # the round's proposal time-out has passed here (then the prevote is nil).
            body = ProposeBody.parse(env)
            decision.component.check_proposal(body.event(seat))  # refused: blamed now
            if (body.value in decision.component.state.endorsed
                    or self.valid(hand, body.value, instance)):
                self._carry(hand, instance, decision.endorse(body.value, self.table.now))
            elif (self._waits(decision, body.round)
                  and body.round == max(decision.component.state.round, 0)
                  and (env.id in self.pending or len(self.pending) < PENDING)):
                # Only the current round's: a proposal for a later one waits in the
                # component until its round, and a proposer's flood is bounded.
                self.pending[env.id] = (m, env, body.round, instance)
                self._carry(hand, instance, decision.begin(self.table.now))
                return
        self.pending.pop(env.id, None)
        actions = decision.take(seat, env, self.table.now)
        self.taken.add(env.id)
        self._carry(hand, instance, actions)

    def on_leave(self, m: int, env: Envelope) -> None:
        """A member's ``leave`` (on arrival): a voter's votes it stands by join the
        agreement they are of. A malformed one is blamed in chain order."""
        hand = self.table.hand
        seat = self.table.seat_of[m] if self.table.seat_of else None
        if hand is None or seat is None or seat not in hand.holders:
            return
        try:
            body = LeaveBody.parse(env)
        except ProtocolError:
            return
        standing = body.standing(seat)
        key = (hand.number, body.instance)
        if (standing is None or body.hand != hand.number or key in self.decided
                or self.table.stage == Stage.DONE):
            return
        decision = self.of(hand, body.instance)
        if decision is None:
            return  # taken when the verdict's agreement begins here (of)
        try:
            self._carry(hand, body.instance,
                        decision.take_leave(seat, env, standing, self.table.now))
        except RemoteProtocolError as exc:
            self.table.note(Fault(FaultKind.ILLEGAL_ACT, seat, hand.number,
                                  f"a leave that stands by no votes it may: {exc}"[:200],
                                  env.wire))

    def leave(self) -> LeaveBody:
        """My ``leave``: with the votes I stand by, if I vote in an undecided agreement of
        the current hand (its verdict's, once its void is decided)."""
        hand = self.table.hand
        if hand is None:
            return LeaveBody(0)
        instance = (Instance.HAND if self.voters(hand, Instance.VERDICT) is None
                    else Instance.VERDICT)
        if (hand.me is None or (hand.number, instance) in self.decided
                or self.table.stage == Stage.DONE):
            return LeaveBody(hand.number)
        decision = self.of(hand, instance)
        standing = None if decision is None else decision.leave(self.table.now)
        self.to_sign.clear()
        if standing is None:
            return LeaveBody(hand.number)
        return LeaveBody(hand.number, standing.value, standing.first_round,
                         standing.pol_round, instance)

    # -- time and moves ---------------------------------------------------------------

    def _open(self) -> list[tuple[Hand, Instance, HandDecision]]:
        """The current hand's instances not decided yet."""
        hand = self.table.hand
        if hand is None:
            return []
        return [(hand, instance, self.hands[(hand.number, instance)])
                for instance in Instance if (hand.number, instance) in self.hands
                and (hand.number, instance) not in self.decided]

    def wake(self) -> None:
        for hand, instance, decision in self._open():
            self._carry(hand, instance, decision.wake(self.table.now))
            if self.pending:
                self._flush(hand, instance)

    def next_deadline(self) -> float | None:
        return min((d for _, _, decision in self._open()
                    if (d := decision.next_deadline()) is not None), default=None)

    def waiting_for(self) -> tuple[int, ...]:
        """The holders whose message the current hand's open agreement waits for."""
        found = self._open()
        return found[-1][2].waiting_for() if found else ()

    def act(self, out: list[Output]) -> bool:
        """Sign my next proposal or vote."""
        if not self.to_sign:
            return False
        self.core.outbox.emit(out, self.to_sign.pop(0).body)
        return True

    # -- decisions --------------------------------------------------------------------

    def _carry(self, hand: Hand, instance: Instance, actions: list[Action]) -> None:
        key = (hand.number, instance)
        for action in actions:
            if isinstance(action, Sign):
                self.to_sign.append(action)
            elif isinstance(action, Contradiction):
                # Recorded, and it stops nothing: both messages are in the author's own
                # chain (no fork), which the void round does not judge yet.
                self.table.note(Fault(FaultKind.ILLEGAL_ACT, action.seat, hand.number,
                                      f"agreement: {action.reason}", action.second))
            elif isinstance(action, Decided):
                # What I cast with the decision still goes out (my precommit, and with a
                # leaver's standing precommit my prevote of its polka: a learner needs
                # them for the certificate), and so does a precommit of the decided value
                # cast before. Nothing else of the instance: nobody needs it now, and a
                # node replaying its log, which may take the votes in another order than
                # it did live, signs as little as it can that it did not sign live.
                batch = [a for a in actions if isinstance(a, Sign)]
                self.to_sign = [s for s in self.to_sign
                                if (s.body.hand, s.body.instance) != key
                                or s in batch or _precommits(s, action.value)]
                self.decided[key] = action.value
                self.pending = {k: v for k, v in self.pending.items() if v[3] is not instance}
                self.carry_out(hand, instance)

    def carry_out(self, hand: Hand, instance: Instance = Instance.HAND) -> None:
        """Do what the hand's decision says, once this node can: a commit once it holds
        the checkpoint and its signatures (every holder signed it, or no honest holder
        would have precommitted), a void at once. A verdict is carried out by
        verdict.py, once every accuse it counts is here."""
        value = self.decided.get((hand.number, instance))
        if (value is None or instance is Instance.VERDICT or self.table.hand is not hand
                or self.table.stage == Stage.DONE):
            return
        if value.kind is OutcomeKind.VOID:
            self.core.timeouts.void_decided(hand, value.timed_out)
            return
        if self.valid(hand, value):
            self.core.closing.commit()

    def decided_void(self, hand: Hand) -> bool:
        found = self.decided.get((hand.number, Instance.HAND))
        return found is not None and found.kind is OutcomeKind.VOID


def _precommits(sign: Sign, value: Outcome) -> bool:
    body = sign.body
    return (isinstance(body, VoteBody) and body.step is VoteStep.PRECOMMIT
            and body.value == value)
