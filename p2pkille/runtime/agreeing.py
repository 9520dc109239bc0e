"""Each hand's outcome by agreement (docs/protocol.md II.11.5): the hand's
:class:`~p2pkille.runtime.decision.HandDecision`, fed from the chains, and its decision
carried out.

What a node finds valid is what it endorses: ``commit:C`` once it holds a good signature
of every holder on its checkpoint ``C``; ``void:S`` once the time-out votes agree every
seat of ``S`` silent (II.11.3) or the seat left. A proposal is endorsed when its value is
valid here, not only when it equals this node's own candidate. The hand counts, or
stops for its void round, only on a decision: the precommits of a strict majority of its
holders, so no two honest nodes carry out different outcomes (docs/agreement.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome, OutcomeKind, Step, VoteStep
from p2pkille.runtime.bodies import LeaveBody, ProposeBody, VoteBody
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
"""Instances kept after their hand: a late vote of a decided hand is read and dropped."""

PENDING: int = 4
"""Proposals of the current round held back until valid here (a proposer has one; more
are a liar's, whose contradiction the component reports when they are taken)."""


class Agreeing:
    """The agreement instances of this node's hands, and what their decisions do."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.hands: dict[int, HandDecision] = {}
        self.to_sign: list[Sign] = []
        self.decided: dict[int, Outcome] = {}
        """hand -> its decided outcome (carried out, or waiting to be: :meth:`carry_out`)."""
        self.taken: set[bytes] = set()
        """Ids of the agreement envelopes of the latest hand taken (read ahead or not)."""
        self.pending: dict[bytes, tuple[int, Envelope, int]] = {}
        """id -> (member, envelope, round) of another's proposal not valid here yet."""
        self.learner = False
        """Take my own agreement messages as a peer's and sign none (an audit of my log:
        they were the clock's call, which no replay can check; ``verify``)."""

    # -- the instance -----------------------------------------------------------------

    def of(self, hand: Hand) -> HandDecision:
        """The hand's instance; a new one first restores my own messages of the hand from
        my chain (a node rebuilt from its log goes on from what it signed) and takes the
        leaves of the hand's holders."""
        found = self.hands.get(hand.number)
        if found is not None:
            return found
        if all(k < hand.number for k in self.hands):
            # A later hand: what was read of the earlier ones is of no more use.
            self.taken.clear()
            self.pending.clear()
        found = HandDecision(hand.number, tuple(hand.holders),
                             None if self.learner else self.table.my_seat, self.table.timing)
        self.hands[hand.number] = found
        for old in [k for k in self.hands if k <= hand.number - KEPT]:
            del self.hands[old]
            self.decided.pop(old, None)
        if hand.me is not None and not self.learner:
            restored = False
            for env in self.table.transcript.chain(self.table.identity.public):
                if env.kind in msg.AGREEMENT_KINDS and msg.hand_of(env) == hand.number:
                    self._take(hand, self.table.me, env)
                    restored = True
                elif env.kind == msg.LEAVE and self.table.me in self.table.left:
                    self.on_leave(self.table.me, env)
                    restored = True
            if restored:
                self._carry(hand, found.resume(self.table.now))
        for m in sorted(self.table.left):
            chain = self.table.transcript.chain(self.table.members[m])
            if chain and chain[-1].kind == msg.LEAVE:
                self.on_leave(m, chain[-1])
        return found

    # -- endorsements -----------------------------------------------------------------

    def endorse(self, hand: Hand, value: Outcome) -> None:
        """This node finds ``value`` valid for ``hand``."""
        if hand.me is None or self.learner or hand.number in self.decided:
            return
        self._carry(hand, self.of(hand).endorse(value, self.table.now))
        if self.pending:
            self._flush(hand, all_valid=True)

    def valid(self, hand: Hand, value: Outcome) -> bool:
        """Is ``value`` valid here: my checkpoint with every holder's good signature, or a
        void of seats the votes agree silent or that left?"""
        if value.kind is OutcomeKind.COMMIT:
            checkpoint = hand.close.checkpoint
            return (self.table.stage == Stage.CHECKPOINT and checkpoint is not None
                    and len(hand.close.agreed) == len(hand.holders)
                    and (hand.close.endorsed or checkpoint.id) == value.checkpoint)
        silent = self.core.timeouts.silent(hand) if hand.timeouts.votes else frozenset()
        gone = {s for s in value.timed_out if self.table.has_left(s)}
        return bool(value.timed_out) and value.timed_out <= silent | gone

    @staticmethod
    def _waits(decision: HandDecision, round_: int) -> bool:
        """May a proposal of ``round_`` wait: this node is not past its proposal step?"""
        state = decision.component.state
        return state.round < round_ or (state.round == round_
                                        and state.step is Step.PROPOSE)

    def _flush(self, hand: Hand, *, all_valid: bool = False) -> None:
        """Take the proposals that waited and may wait no longer (or are valid now)."""
        decision = self.hands.get(hand.number)
        for key, (m, env, round_) in sorted(self.pending.items(), key=lambda kv: kv[1][2]):
            if hand.number in self.decided or decision is None:
                break
            if key in self.pending and (not self._waits(decision, round_) or (
                    all_valid and self.valid(hand, ProposeBody.parse(env).value))):
                del self.pending[key]
                try:
                    self._take(hand, m, env)
                except RemoteProtocolError:
                    continue  # blamed in chain order

    def refresh(self, hand: Hand) -> None:
        """Endorse the proposals held whose value has become valid here."""
        found = self.hands.get(hand.number)
        if found is None or hand.me is None or self.learner or hand.number in self.decided:
            return
        if self.pending:
            self._flush(hand, all_valid=True)
        state = found.component.state
        for proposal in sorted(state.proposals, key=lambda p: p.round):
            if proposal.value not in state.endorsed and self.valid(hand, proposal.value):
                self.endorse(hand, proposal.value)

    # -- envelopes --------------------------------------------------------------------

    def on_agreement(self, m: int, env: Envelope) -> None:
        """A ``propose`` or ``vote`` of the current hand (read ahead, or in chain order)."""
        hand = self.table.hand
        if hand is None or msg.hand_of(env) != hand.number or env.id in self.taken:
            return
        if hand.number in self.decided or self.table.stage == Stage.DONE:
            self.taken.add(env.id)
            return  # a late vote of a decided hand: the others decide on the certificate
        self.of(hand)  # first: my own messages are restored before another's is taken
        self._take(hand, m, env)

    def _take(self, hand: Hand, m: int, env: Envelope) -> None:
        """Take it into the instance; refused (RemoteProtocolError), it is not marked
        taken, so that its consumption in chain order blames its author."""
        if env.id in self.taken:
            return
        decision = self.hands[hand.number]
        seat = self.table.seat_of[m]
        if (m != self.table.me and env.kind == msg.PROPOSE and hand.me is not None
                and not self.learner):
            # The component prevotes on a proposal at once: one whose value is not valid
            # here yet (a signature or a vote still on its way) waits until it is, or until
            # the round's proposal time-out has passed here (then the prevote is nil).
            body = ProposeBody.parse(env)
            decision.component.check_proposal(body.event(seat))  # refused: blamed now
            if self.valid(hand, body.value):
                self._carry(hand, decision.endorse(body.value, self.table.now))
            elif (self._waits(decision, body.round)
                  and body.round == max(decision.component.state.round, 0)
                  and (env.id in self.pending or len(self.pending) < PENDING)):
                # Only the current round's: a proposal for a later one waits in the
                # component until its round, and a proposer's flood is bounded.
                self.pending[env.id] = (m, env, body.round)
                self._carry(hand, decision.begin(self.table.now))
                return
        self.pending.pop(env.id, None)
        actions = decision.take(seat, env, self.table.now)
        self.taken.add(env.id)
        self._carry(hand, actions)

    def on_leave(self, m: int, env: Envelope) -> None:
        """A member's ``leave`` (on arrival): a holder of the current hand's votes it
        stands by join the hand's agreement. A malformed one is blamed in chain order."""
        hand = self.table.hand
        seat = self.table.seat_of[m] if self.table.seat_of else None
        if hand is None or seat is None or seat not in hand.holders:
            return
        try:
            body = LeaveBody.parse(env)
        except ProtocolError:
            return
        standing = body.standing(seat)
        if (standing is None or body.hand != hand.number or hand.number in self.decided
                or self.table.stage == Stage.DONE):
            return
        decision = self.of(hand)
        try:
            self._carry(hand, decision.take_leave(seat, env, standing, self.table.now))
        except RemoteProtocolError as exc:
            self.table.note(Fault(FaultKind.ILLEGAL_ACT, seat, hand.number,
                                  f"a leave that stands by no votes it may: {exc}"[:200],
                                  env.wire))

    def leave(self) -> LeaveBody:
        """My ``leave``: with the votes I stand by, if I hold a key in an undecided hand."""
        hand = self.table.hand
        if hand is None:
            return LeaveBody(0)
        if (hand.me is None or hand.number in self.decided
                or self.table.stage == Stage.DONE):
            return LeaveBody(hand.number)
        standing = self.of(hand).leave(self.table.now)
        self.to_sign.clear()
        if standing is None:
            return LeaveBody(hand.number)
        return LeaveBody(hand.number, standing.value, standing.first_round,
                         standing.pol_round)

    # -- time and moves ---------------------------------------------------------------

    def wake(self) -> None:
        hand = self.table.hand
        if hand is None or hand.number not in self.hands or hand.number in self.decided:
            return
        self._carry(hand, self.hands[hand.number].wake(self.table.now))
        if self.pending:
            self._flush(hand)

    def next_deadline(self) -> float | None:
        hand = self.table.hand
        if hand is None or hand.number not in self.hands or hand.number in self.decided:
            return None
        return self.hands[hand.number].next_deadline()

    def waiting_for(self) -> tuple[int, ...]:
        """The holders whose message the current hand's agreement waits for."""
        hand = self.table.hand
        if hand is None or hand.number not in self.hands or hand.number in self.decided:
            return ()
        return self.hands[hand.number].waiting_for()

    def act(self, out: list[Output]) -> bool:
        """Sign my next proposal or vote."""
        if not self.to_sign:
            return False
        self.core.outbox.emit(out, self.to_sign.pop(0).body)
        return True

    # -- decisions --------------------------------------------------------------------

    def _carry(self, hand: Hand, actions: list[Action]) -> None:
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
                # cast before. Nothing else of the hand: nobody needs it now, and a node
                # replaying its log, which may take the votes in another order than it
                # did live, signs as little as it can that it did not sign live.
                batch = [a for a in actions if isinstance(a, Sign)]
                self.to_sign = [s for s in self.to_sign if s.body.hand != hand.number
                                or s in batch or _precommits(s, action.value)]
                self.decided[hand.number] = action.value
                self.carry_out(hand)

    def carry_out(self, hand: Hand) -> None:
        """Do what the hand's decision says, once this node can: a commit once it holds
        the checkpoint and its signatures (every holder signed it, or no honest holder
        would have precommitted), a void at once."""
        value = self.decided.get(hand.number)
        if value is None or self.table.hand is not hand or self.table.stage == Stage.DONE:
            return
        if value.kind is OutcomeKind.VOID:
            self.core.timeouts.void_decided(hand, value.timed_out)
            return
        if self.valid(hand, value):
            self.core.closing.commit()

    def decided_void(self, hand: Hand) -> bool:
        found = self.decided.get(hand.number)
        return found is not None and found.kind is OutcomeKind.VOID


def _precommits(sign: Sign, value: Outcome) -> bool:
    body = sign.body
    return (isinstance(body, VoteBody) and body.step is VoteStep.PRECOMMIT
            and body.value == value)
