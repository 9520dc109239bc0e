"""The end of a hand: reveals, the audit, the checkpoint and its signatures, and the
hand counted (docs/protocol.md II.5, II.7).

When play is over every key holder closes the hand: on an audit table it reveals its key
and shuffle witness and every node audits the hand; on a strict table it reveals nothing.
Each node then makes the hand's checkpoint (the state digest over the chains' cut) and
every holder signs it; the hand counts once a good signature of every holder is known and
no vote on a signature is open. A node keeps a counted hand's signatures a while, for
peers still in it (gap fill), and a holder without a key in the next hand says ``over``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from p2pkille.engine.cards import RANKS
from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome
from p2pkille.runtime.bodies import CheckpointBody, OverBody, RevealBody
from p2pkille.runtime.config import card_deck
from p2pkille.runtime.digest import state_digest
from p2pkille.runtime.faults import AUTHOR, Blame, Fault, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.outcome import HandOutcome
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage
from protocol.audit import HandRecord, audit_hand
from protocol.checkpoint import Checkpoint
from protocol.envelope import ZERO_HASH, Envelope, decode
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.transcript import Cut as TranscriptCut

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["CERTS_KEPT", "Closing"]

CERTS_KEPT: Final = 4
"""Hands whose checkpoint envelopes a node keeps to send on."""


class Closing:
    """Writes each hand's :class:`~p2pkille.runtime.records.CloseRecord`, and keeps what
    counted hands leave behind."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.prev = ZERO_HASH
        """The last counted checkpoint's id (the next one chains to it)."""
        self.base_cut = [0] * len(self.table.members)
        """Per member: its cut in the last counted checkpoint (at first: its accept)."""
        self.certs: dict[int, tuple[bytes, ...]] = {}
        """hand -> its checkpoint envelopes, for peers still in it."""
        self.cert_holders: dict[int, tuple[int, ...]] = {}
        """hand -> its key holders (whose ``over`` and votes it takes after the count)."""
        self.overs: set[tuple[int, int]] = set()
        """(member, hand) of the overs taken."""
        self.over_due: list[int] = []
        """Hands I held a key in and must say ``over`` for."""

    def start_cut(self, m: int, seq: int) -> None:
        """Member ``m`` accepted the genesis at ``seq``: its first cut."""
        self.base_cut[m] = seq

    def awaited(self, hand: Hand) -> tuple[int, ...] | None:
        """The seats whose close or signature the table waits for; None in the stages
        before."""
        stage, holders, close = self.table.stage, hand.holders, hand.close
        if stage == Stage.REVEAL:
            return tuple(s for k, s in enumerate(holders) if k not in close.revealed)
        if stage == Stage.CHECKPOINT:
            return tuple(s for k, s in enumerate(holders) if k not in close.signed)
        return None

    def reopen(self, hand: Hand) -> None:
        """Forget the close and the checkpoint (a rewind took the hand back into play):
        the others' closes came past the step, so each is taken again."""
        close = hand.close
        close.revealed.clear()
        close.reveal_seq.clear()
        close.secrets.clear()
        close.openings.clear()
        close.checkpoint = None
        close.signed.clear()
        close.agreed.clear()
        close.endorsed = None
        close.audited = False

    # -- the others' closes and signatures ------------------------------------------------

    def on_reveal(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        index = self.table.holder(m)
        if index in hand.close.revealed:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second reveal")
        body = RevealBody.parse(env, strict=self.table.strict)
        hand.close.revealed.add(index)
        hand.close.reveal_seq[index] = env.seq
        if body.secret is not None and body.witness is not None:
            hand.close.secrets[index] = body.secret
            hand.close.openings[index] = body.witness
        if len(hand.close.revealed) == len(hand.holders):
            self.audit()

    def audit(self) -> None:
        """Every holder closed: audit the hand (audit tables) and make its checkpoint."""
        hand = self.table.hand
        view = self.table.view
        assert hand is not None
        assert view is not None
        assert hand.deck.joint is not None
        # Public shares are not passed again: each was DLEQ-verified against the same
        # X_i and final deck when it arrived, which is what the audit's share check proves.
        report = None if self.table.strict else audit_hand(HandRecord(
            hand.ctx, card_deck(), hand.deck.joint, hand.deck.steps, hand.close.openings,
            hand.close.secrets))
        hand.close.audited = True
        if report is None:
            pass  # strict: every step was proved when it was taken; nothing to open
        elif report.blame is not None:
            b = report.blame
            self.core.accusations.fault(FaultKind.AUDIT, hand.holders[b.seat],
                                        f"{b.fault.value}: {b.reason}",
                                        self.table.last_of(hand.holders[b.seat]))
        else:
            hand.close.faces = report.cards
            found = view.audit({t: RANKS[c >> 1] for t, c in enumerate(report.cards)})
            if found is not None:
                self.core.claims.false_fact(found, self.table.last_of(found.seat))
        hand.close.heads = self._cut(hand)
        hand.close.checkpoint = Checkpoint.of(self.table.transcript, hand=hand.number,
                                              state=state_digest(view.game, hand.number),
                                              prev=self.prev, cut=TranscriptCut(hand.close.heads))
        self.table.move(Stage.CHECKPOINT)

    def _cut(self, hand: Hand) -> tuple[int, ...]:
        """The checkpoint's cut. A key holder's is its reveal: votes and accusations are
        read ahead of consumption, so how far past it a node has consumed differs between
        nodes. Another member's is its last decision the hand applied, else its cut in the
        last counted checkpoint: anything else of it (a stale or malformed envelope, an
        over, a late seen or decision) is consumed whenever it arrives. An expelled seat's
        chain may have forked (it equivocated): honest nodes can hold different branches
        of it, so checkpoints leave it out (cut 0)."""
        acted = list(self.base_cut)
        for _, m, seq in hand.play.acted:
            acted[m] = max(acted[m], seq)
        heads = []
        for m in range(len(self.table.members)):
            seat = self.table.seat_of[m]
            index = hand.protocol_seat(seat)
            heads.append(hand.close.reveal_seq[index] if index is not None else
                         0 if seat in self.core.verdict.expelled else acted[m])
        return tuple(heads)

    def on_checkpoint(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        assert hand.close.checkpoint is not None
        index = self.table.holder(m)
        if index in hand.close.forked_good:
            return  # the other branch of a fork whose good signature is counted already
        if index in hand.close.signed:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second checkpoint signature")
        try:
            sig = CheckpointBody.parse(env).sig
            hand.close.checkpoint.verify_signature(self.table.members[m], sig,
                                                   evidence=env.wire)
        except RemoteProtocolError as exc:
            # No signature: it counts as missing, so the holders vote its time out unless
            # a good one comes (as the other branch of a fork). No accuse: a hand that
            # still commits must not have its forwards disclosed (II.7).
            self.core.accusations.fault(FaultKind.CHECKPOINT, self.table.seat_of[m],
                                        f"not a signature of our checkpoint: {exc}", env.wire,
                                        stops=False)
            return
        hand.close.signed.add(index)
        hand.close.agreed.append(self.table.seat_of[m])
        hand.close.cert.append(env.wire)
        if len(hand.close.agreed) == len(hand.holders):
            # Even in a void round: a holder's accuse after its signature counts only
            # against a checkpoint signature, and a good one of every holder is known.
            self.endorse(hand)

    def take_forked(self, hand: Hand) -> None:
        """Forks held before this stage (or replayed from the log): a branch may be a good
        signature (:meth:`good_checkpoint`)."""
        forks = self.table.transcript.equivocations
        while hand.close.forks_seen < len(forks):
            fork = forks[hand.close.forks_seen]
            hand.close.forks_seen += 1
            self.good_checkpoint(fork.first)
            self.good_checkpoint(fork.second)

    def good_checkpoint(self, wire: bytes) -> None:
        """A checkpoint envelope that is not the one its author's chain holds at its slot
        (a fork: the author signed both), and a good signature of this hand's checkpoint:
        the author agreed to the hand. Count it, and hold it in that chain instead of the
        other branch, so nodes that took either branch decide alike and see the author's
        later envelopes alike (a hand counts once every holder's good signature is known,
        II.7); the fork itself costs its author the next hand (II.11)."""
        table = self.table
        hand = table.hand
        if hand is None or hand.close.checkpoint is None or table.stage != Stage.CHECKPOINT:
            return
        try:
            env = decode(wire, table=table.config.table_id, members=table.members,
                         kinds=msg.KINDS)
            if env.kind != msg.CHECKPOINT or msg.hand_of(env) != hand.number:
                return
            m = table.index[env.author]
            index = hand.protocol_seat(table.seat_of[m])
            held = table.transcript.get(env.author, env.seq)
            if (index is None or table.seat_of[m] in hand.close.agreed or held is None
                    or held.id == env.id):
                return  # not a holder, counted already, or the chain's own: consumed
            sig = CheckpointBody.parse(env).sig
            hand.close.checkpoint.verify_signature(table.members[m], sig, evidence=wire)
            events = table.transcript.adopt(env)
        except (RemoteProtocolError, LocalProtocolError):
            return  # not a good signature, or a fork deeper than its checkpoint
        hand.close.signed.add(index)
        hand.close.forked_good.add(index)
        hand.close.agreed.append(table.seat_of[m])
        hand.close.cert.append(env.wire)
        # The adopted one is counted here; what was consumed after it was dropped.
        table.consumed[m] = min(env.seq, table.consumed[m])
        self.core.intake.took(events)

    def on_over(self, m: int, env: Envelope) -> None:
        """A holder of a counted hand with no key in the next one says it moved on; taken
        once this node is past that hand (readiness.py). A bad one is a fault of a past
        hand: recorded, and it stops nothing. One for a hand the table voided is no
        fault: an honest holder that counted the hand before the votes that void it
        reached it sends one, and then starts over (rewind.py)."""
        number = OverBody.parse(env).hand
        holders = self.cert_holders.get(number)
        if ((holders is not None and self.table.seat_of[m] not in holders)
                or (m, number) in self.overs):
            self.table.note(Fault(FaultKind.ILLEGAL_ACT, self.table.seat_of[m], number,
                                  "over for a hand it held no key in, or a second one",
                                  env.wire))
            return
        self.overs.add((m, number))

    # -- counting the hand ----------------------------------------------------------------

    def endorse(self, hand: Hand) -> None:
        """With a good signature of every holder on my checkpoint: the hand may count. It
        counts once the table decides so (agreeing.py): a late signature, or one that
        reached some nodes only, counts nothing the holders voided."""
        assert hand.close.checkpoint is not None
        if hand.close.endorsed is None:
            hand.close.endorsed = hand.close.checkpoint.id
            self.core.agreeing.endorse(hand, Outcome.commit(hand.close.endorsed))
        self.core.agreeing.carry_out(hand)

    def commit(self) -> None:
        """Count the hand: record its outcome, keep its signatures, deal the next."""
        hand = self.table.hand
        view = self.table.view
        assert hand is not None
        assert view is not None
        assert hand.close.checkpoint is not None
        game = view.game
        names = self.table.names
        died = sorted(set(game.result.died)) if game.result is not None else []
        self.table.outcomes.append(HandOutcome(
            hand=hand.number,
            died=[names[s] for s in died],
            pot=game.pot,
            chips={names[s]: c for s, c in enumerate(game.chips)},
            checkpoint=hand.close.checkpoint.id.hex(),
            agreed_by=[names[s] for s in sorted(hand.close.agreed)],
            holders=[names[s] for s in sorted(hand.holders)],
            faces=hand.close.faces,
            facts=list(hand.play.facts),
            checked={"proofs": hand.deck.proofs + hand.claims.proofs,
                     "shares": len(hand.shares.public) + sum(
                         len(c) for c in hand.shares.held.values()),
                     "shuffle_steps": len(hand.deck.steps),
                     "signatures": len(hand.close.agreed)},
            dealt=game.result.dealt if game.result is not None else (),
        ))
        self.prev = hand.close.checkpoint.id
        self.base_cut = list(hand.close.heads)
        # Kept for peers still in this hand: one may hold another envelope of a signer's
        # (a fork) and wait for the good one to decide as we did (gap fill, II.10).
        self.certs[hand.number] = tuple(hand.close.cert)
        self.cert_holders[hand.number] = hand.holders
        self.core.late.counted(hand)
        for old in [k for k in self.certs if k <= hand.number - CERTS_KEPT]:
            del self.certs[old]
            self.cert_holders.pop(old, None)
        self.table.tell("commit")
        self.core.dealing.next_hand()
        if hand.me is not None and (self.table.stage == Stage.DONE or self.table.hand is None
                                    or self.table.hand.me is None):
            # No envelope of mine in the next hand would show the members without a key
            # that I moved on: say so.
            self.over_due.append(hand.number)

    # -- my own close ---------------------------------------------------------------------

    def say_over(self, out: list[Output]) -> bool:
        """My ``over`` for a counted hand I held a key in, with none in the next."""
        while self.over_due:
            number = self.over_due.pop(0)
            if self.core.outbox.once("over", number):
                self.core.outbox.emit(out, OverBody(number))
                return True
        return False

    def act(self, out: list[Output], hand: Hand) -> bool:
        """My close or my checkpoint signature (the caller marked the move as made)."""
        n, stage, outbox = hand.number, self.table.stage, self.core.outbox
        if stage == Stage.REVEAL and self.table.strict:
            outbox.emit(out, RevealBody(n))  # a close: nothing is revealed
        elif stage == Stage.REVEAL:
            assert hand.deck.key is not None
            outbox.emit(out, RevealBody(n, hand.deck.key.secret.data,
                                        self.core.dealing.witness_for(hand).to_bytes()))
        elif stage == Stage.CHECKPOINT:
            checkpoint = hand.close.checkpoint
            assert checkpoint is not None
            outbox.emit(out, CheckpointBody(n, checkpoint.id,
                                            checkpoint.sign(self.table.identity)))
        return True
