"""Each hand's keys, shuffle and deal (docs/protocol.md II.4, II.13).

A hand starts with the game's deal: the seats dealt a card are its key holders, in turn
order (a holder's index there is its protocol seat). Every holder announces its key share
with a proof, then shuffles in turn (a commitment on an audit table, a proof on a strict
one, checked before anything is built on it), then deals: one sealed share of each other
holder's card to that holder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.engine.facts import Deal
from p2pkille.runtime.bodies import DealBody, KeyBody, ShuffleBody
from p2pkille.runtime.config import card_deck
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage
from protocol.deck import (
    ShuffleContext,
    ShuffleStep,
    ShuffleWitness,
    deck_digest,
    decode_deck,
    encode_deck,
    initial_deck,
    shuffle_step,
)
from protocol.envelope import Envelope
from protocol.errors import RemoteProtocolError
from protocol.group import Scalar
from protocol.keys import HandContext, KeyShare, PublicKeyShare, joint_key
from protocol.shuffle_proof import (
    BadShuffleProof,
    ShuffleProof,
    ShuffleStatement,
    prove_shuffle,
    verify_shuffles,
)

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Dealing", "u64"]


def u64(value: int) -> bytes:
    return value.to_bytes(8, "big")


class Dealing:
    """Deals the hands; writes each hand's :class:`~p2pkille.runtime.records.DeckRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.attempt = 0
        """Hands dealt so far, voided ones included (the next hand's number - 1)."""
        self.witnesses: dict[int, ShuffleWitness] = {}
        """hand -> my shuffle's witness (audit tables open it after the hand)."""

    def key(self, number: int, me: int) -> KeyShare:
        """My key share of hand ``number`` as holder ``me``: from the seed, so a node
        replaying its log has its key before its key envelope."""
        return KeyShare.from_secret(
            me, Scalar.from_hash("hand-key", self.table.secret("hand-key", u64(number))))

    def next_hand(self) -> None:
        """Deal the next hand, or end the game if it is over."""
        table = self.table
        view = table.view
        assert view is not None
        if view.game.over:
            table.move(Stage.DONE)
            return
        if table.record_events and view.game.events is None:
            view.game.events = []  # before the snapshot: a void keeps what it recorded
        snapshot = view.game.snapshot()
        self.core.play.feed(Deal())
        holders = tuple(view.game.dealt)
        seat = table.my_seat
        me = holders.index(seat) if seat in holders else None
        self.attempt += 1
        hand = Hand(self.attempt, HandContext(table.config.table_id, self.attempt), holders, me,
                    snapshot)
        table.hand = hand
        self.core.play.begin(hand)
        if me is not None:
            hand.deck.key = self.key(hand.number, me)
        table.move(Stage.KEYS)
        # A fork found before this hand began (e.g. a later hand's envelope arrived in two
        # versions during the genesis): its author is a holder here with a dead chain.
        for f in list(table.faults):
            if (f.kind == FaultKind.EQUIVOCATION and f.seat in holders and f.evidence
                    and f.hand < hand.number and me is not None):
                self.core.accusations.fault(f.kind, f.seat, f.reason, f.evidence)
        table.tell("hand")

    def awaited(self, hand: Hand) -> tuple[int, ...] | None:
        """The seats whose key, shuffle step or deal the table waits for; None in the
        later stages."""
        stage, holders, deck = self.table.stage, hand.holders, hand.deck
        if stage == Stage.KEYS:
            return tuple(s for k, s in enumerate(holders) if k not in deck.announced)
        if stage == Stage.SHUFFLE:
            return (holders[len(deck.steps)],)
        if stage == Stage.DEAL:
            return tuple(s for k, s in enumerate(holders) if k not in deck.dealt)
        return None

    # -- the others' steps ----------------------------------------------------------------

    def on_key(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        index = self.table.holder(m)
        if index in hand.deck.announced:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second key")
        share = PublicKeyShare.from_bytes(index, KeyBody.parse(env).share)
        try:
            share.verify(hand.ctx)
        except RemoteProtocolError as exc:
            raise Blame(FaultKind.BAD_KEY, AUTHOR, str(exc)) from exc
        hand.deck.announced[index] = share
        if len(hand.deck.announced) == len(hand.holders):
            hand.deck.joint = joint_key(hand.ctx, list(hand.deck.announced.values()))
            self.table.move(Stage.SHUFFLE)

    def on_shuffle(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        deck_record = hand.deck
        workers = self.table.workers
        index = self.table.holder(m)
        body = ShuffleBody.parse(env, strict=self.table.strict)
        deck = decode_deck(body.deck, len(card_deck()), workers=workers)
        commit = body.commit or b""
        if body.proof is not None:
            proof = ShuffleProof.from_bytes(body.proof, len(card_deck()), workers=workers)
        taken = body.input
        if index < len(deck_record.steps):
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second shuffle step")
        assert deck_record.joint is not None
        prev = deck_record.steps[-1].deck if deck_record.steps else initial_deck(
            card_deck(), deck_record.joint.public)
        if taken != deck_digest(prev):
            # The step before forked (sent two decks): blame nobody here; the fork's
            # evidence reaches us with the other version and is that seat's fault.
            raise Blame(FaultKind.EQUIVOCATION, None,
                        f"shuffle step {index} took a deck we do not hold")
        ctx = ShuffleContext(hand.ctx, index, index)
        if self.table.strict and index != hand.me:
            deck_record.unchecked.append((ShuffleStatement(ctx, tuple(prev), deck, proof),
                                          env.wire))
        deck_record.steps.append(ShuffleStep(ctx, deck, commit))
        if len(deck_record.steps) == len(hand.holders):
            self.check_steps(hand)
            deck_record.final = deck
            self.table.move(Stage.DEAL)

    def check_steps(self, hand: Hand) -> None:
        """Check the proofs of the shuffle steps taken since the last check, together (a
        deck two steps share is then multiplied once): before my own step and before the
        deal, so a bad step is refused before anything is built on it and before any card
        is dealt (docs/protocol.md II.13). The first bad step is named exactly."""
        todo, hand.deck.unchecked = hand.deck.unchecked, []
        if not todo or hand.deck.joint is None:
            return
        try:
            verify_shuffles(hand.deck.joint.public, [st for st, _ in todo],
                            workers=self.table.workers)
        except BadShuffleProof as exc:
            bad = next((wire for st, wire in todo if st.context.step == exc.step), None)
            if exc.step is None or bad is None:  # pragma: no cover - each proof alone passed
                raise
            self.core.accusations.fault(FaultKind.BAD_PROOF, hand.holders[exc.step],
                                        f"shuffle step {exc.step}: {exc}", bad)
        hand.deck.proofs += len(todo)

    def on_deal(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        index = self.table.holder(m)
        if index in hand.deck.dealt:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second deal")
        boxes = DealBody.parse(env).boxes
        hand.deck.dealt.add(index)
        want = {(j, hand.holders[j]) for j in range(len(hand.holders)) if j != index}
        if {(b.token, b.recipient) for b in boxes} != want or len(boxes) != len(want):
            raise Blame(FaultKind.BAD_SEAL, AUTHOR, "deal boxes are not one per other player")
        try:
            for box in boxes:
                if box.sender != index:
                    raise Blame(FaultKind.BAD_SEAL, AUTHOR, "deal box made as another seat")
                if hand.me is not None and box.token == hand.me:
                    self.core.custody.take_box(box)
        finally:
            # A bad box is one seat's fault: the table still moves on with the others.
            if len(hand.deck.dealt) == len(hand.holders):
                self.table.move(Stage.PLAY)
                self.core.custody.learn_all()

    # -- my own steps ---------------------------------------------------------------------

    def act(self, out: list[Output], hand: Hand) -> bool:
        """My key, shuffle step or deal (the caller marked the stage's move as made)."""
        assert hand.me is not None
        stage, n, outbox = self.table.stage, hand.number, self.core.outbox
        if stage == Stage.KEYS:
            assert hand.deck.key is not None
            share = hand.deck.key.announce(hand.ctx, self.table.rng("key-proof", n))
            outbox.emit(out, KeyBody(n, share.to_bytes()))
        elif stage == Stage.SHUFFLE:
            if len(hand.deck.steps) != hand.me:
                outbox.unmark(stage, n)
                return False
            outbox.emit(out, self._shuffle(hand))
        else:
            outbox.emit(out, DealBody(n, tuple(
                self.core.custody.box(hand, j, hand.holders[j], f"deal-{j}")
                for j in range(len(hand.holders)) if j != hand.me)))
        return True

    def _shuffle(self, hand: Hand) -> ShuffleBody:
        assert hand.deck.joint is not None
        assert hand.me is not None
        n, joint, workers = hand.number, hand.deck.joint.public, self.table.workers
        prev = hand.deck.steps[-1].deck if hand.deck.steps else initial_deck(card_deck(),
                                                                             joint)
        ctx = ShuffleContext(hand.ctx, hand.me, hand.me)
        step, witness = shuffle_step(prev, joint, ctx, self.table.rng("shuffle", n),
                                     workers=workers)
        deck, taken = encode_deck(step.deck), deck_digest(prev)
        if self.table.strict:
            proof = prove_shuffle(ctx, joint, prev, step.deck, witness,
                                  self.table.rng("shuffle-proof", n), workers=workers)
            return ShuffleBody(n, deck, taken, proof=proof.to_bytes())
        self.witnesses[n] = witness
        return ShuffleBody(n, deck, taken, commit=step.commitment)

    def witness_for(self, hand: Hand) -> ShuffleWitness:
        """My shuffle's witness, recomputed from the seed if need be: a node restarted
        from its log opens the same."""
        known = self.witnesses.pop(hand.number, None)
        if known is not None:
            return known
        assert hand.deck.joint is not None
        assert hand.me is not None
        prev = hand.deck.steps[hand.me - 1].deck if hand.me else initial_deck(
            card_deck(), hand.deck.joint.public)
        ctx = ShuffleContext(hand.ctx, hand.me, hand.me)
        return shuffle_step(prev, hand.deck.joint.public, ctx,
                            self.table.rng("shuffle", hand.number))[1]
