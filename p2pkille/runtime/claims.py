"""Claims that a card is none of some ranks, and the proofs that test them.

A plain answer says the asked card is none of the answering ranks; a "no kille"
disclosure says it is no kille. On an audit table such a claim is checked as soon as
this node knows the card's face, and at the audit: a lie is proven at once by opening the
card in the accuse (docs/protocol.md II.11.1). On a strict table every such claim carries
a proof (a joint plaintext test, PET): its fact is applied only once every other key
holder's part shows it holds (docs/protocol.md II.13).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.engine.cards import RANKS, Rank
from p2pkille.engine.facts import Answer, Fact
from p2pkille.engine.peer import FalseFact
from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import PetBody, need_proof
from p2pkille.runtime.config import card_deck
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Hand, Pet
from p2pkille.runtime.steps import keyless_index
from protocol.envelope import Envelope
from protocol.group import Point
from protocol.pet import BadPet, PetClaim, PetContext, PetShare, pet_matches, verify_pet_shares

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Claims", "encodings"]


def encodings(ranks: frozenset[Rank]) -> tuple[Point, ...]:
    """The card encodings of every copy of ``ranks``, in card order."""
    deck = card_deck()
    return tuple(deck.encodings[i] for i in range(len(deck)) if RANKS[i >> 1] in ranks)


class Claims:
    """Writes each hand's :class:`~p2pkille.runtime.records.ClaimRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table

    def false_fact(self, found: FalseFact, evidence: bytes = b"") -> None:
        """A claim the faces contradict (at the showdown or the audit): accuse with the
        claim as evidence and open the card in the accuse, so every node decides it
        alone (docs/protocol.md II.11.1)."""
        hand = self.table.hand
        token = found.claim.token
        if hand is not None:
            wire = next((w for seat, w, _ in hand.claims.claims_on.get(token, [])
                         if seat == found.seat), None)
            shares = self.core.custody.opening(hand, token)
            if wire is not None and shares:
                evidence = wire
                if not any(t == token for t, _ in hand.claims.exposed):
                    # Each share with its own context: a shown card's shares were made
                    # for their sealed recipients, not for a public open.
                    hand.claims.exposed += [(token, msg.ShareEntry(sh.context.sender,
                                                            sh.context.recipient,
                                                            sh.to_bytes())) for sh in shares]
        self.core.accusations.fault(FaultKind.FALSE_FACT, found.seat,
                                    found.describe(self.table.names), evidence)

    def no_pet(self, pet: bytes | None) -> None:
        """A card opened in public carries no proof."""
        if pet is not None:
            raise Blame(FaultKind.MALFORMED, AUTHOR, "a card opened in public needs no proof")

    def pet_claim(self, m: int, env: Envelope, pet: bytes | None, token: int, purpose: bytes,
                  ranks: frozenset[Rank], fact: Fact) -> bool:
        """Take a strict table's proved claim that ``token`` is none of ``ranks`` (and
        hold its fact back until the test is done); ``False`` on an audit table."""
        hand, view = self.table.hand, self.table.view
        assert hand is not None
        assert view is not None
        assert hand.deck.joint is not None
        if not self.table.strict:
            self.no_pet(pet)
            return False
        seat = self.table.seat_of[m]
        index = hand.protocol_seat(seat)
        # A buyer holds no key: its claim is keyless and every key holder answers it.
        keyless = index is None
        prover = keyless_index(len(hand.holders), seat) if index is None else index
        excluded = encodings(ranks)
        ctx = PetContext(hand.ctx, token, prover, purpose, view.game.fact_count)
        try:
            claim = PetClaim.from_bytes(ctx, need_proof(env, pet), len(excluded),
                                        keyless=keyless)
            claim.verify(hand.deck.final[token], excluded,
                         None if index is None else hand.deck.joint.share_of(index),
                         workers=self.table.workers)
        except BadPet as exc:
            raise Blame(FaultKind.BAD_PROOF, AUTHOR, f"{env.kind} proof: {exc}") from exc
        hand.claims.proofs += 1
        hand.claims.pet = Pet(env, claim, fact, prover, seat)
        hand.claims.tested[env.id] = (claim, hand.deck.final[token], excluded)
        return True

    def on_pet(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        assert hand.deck.joint is not None
        index = self.table.holder(m)
        pet = hand.claims.pet
        body = PetBody.parse(env)
        at = body.at
        if pet is None or at != pet.claim.context.sequence:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, f"a test part for step {at}, "
                         "which has no claim under test")
        if index in pet.pending:
            # A second part: whether it may be given depends on the first being good (a
            # bad one is its giver's fault and this one takes its place), as when each
            # part was checked on receipt; nodes that took them in any order then agree.
            self.check_parts(hand, pet)
        if index == pet.prover or index in pet.parts:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a test part it may not give")
        try:
            part = PetShare.from_bytes(pet.claim, index, body.share)
        except BadPet as exc:
            raise Blame(FaultKind.BAD_PROOF, AUTHOR, f"test part: {exc}") from exc
        pet.pending[index] = (part, env.wire)
        wanted = len(hand.holders) - (0 if pet.claim.keyless else 1)
        if len(pet.parts) + len(pet.pending) < wanted:
            return
        self.check_parts(hand, pet)
        if len(pet.parts) < wanted:
            return  # a bad part: its giver is at fault, and the test never ends
        hand.claims.pet = None
        matches = pet_matches(pet.claim, list(pet.parts.values()), holders=len(hand.holders))
        hand.claims.pet_result[pet.env.id] = bool(matches)
        if matches:
            # Every node holds the same claim and parts: each finds the lie itself, and
            # its accuse shows the parts, so the accusation stands on its own.
            hand.claims.lie_parts = [(k, p.to_bytes()) for k, p in sorted(pet.parts.items())]
            self.core.accusations.fault(FaultKind.FALSE_FACT, pet.seat,
                        f"{self.table.names[pet.seat]}'s {pet.env.kind} is proven "
                        f"false: slot {pet.claim.context.slot} holds a card it said it did not",
                        pet.env.wire)
            return
        if isinstance(pet.fact, Answer):
            self.core.play.answered(pet.fact)
        else:
            self.core.play.feed(pet.fact)

    def check_parts(self, hand: Hand, pet: Pet) -> None:
        """Check the pending test parts; a bad one is its giver's fault, with its envelope
        as evidence, as if it had been checked when taken (a part is used only once every
        part is in, so checking later changes nothing else)."""
        assert hand.deck.joint is not None
        pending = list(pet.pending.items())
        pet.pending.clear()
        try:
            verify_pet_shares(pet.claim, [(part, hand.deck.joint.share_of(index))
                                          for index, (part, _) in pending],
                              workers=self.table.workers)
        except BadPet:
            for index, (part, wire) in pending:
                try:
                    part.verify(pet.claim, hand.deck.joint.share_of(index))
                except BadPet as exc:
                    self.core.accusations.fault(FaultKind.BAD_PROOF, hand.holders[index],
                                                f"test part: {exc}", wire)
                else:
                    pet.parts[index] = part
            return
        for index, (part, _) in pending:
            pet.parts[index] = part

    def pet_body(self, hand: Hand, token: int, purpose: bytes, ranks: frozenset[Rank]
                 ) -> bytes:
        """My proved claim that ``token`` is none of ``ranks``, for an answer or a disclose."""
        view = self.table.view
        assert view is not None
        assert self.table.my_seat is not None
        prover = (keyless_index(len(hand.holders), self.table.my_seat) if hand.me is None
                  else hand.me)
        ctx = PetContext(hand.ctx, token, prover, purpose, view.game.fact_count)
        claim = PetClaim.make(ctx, hand.deck.final[token], encodings(ranks), hand.deck.key,
                              self.table.rng("pet-" + purpose.decode(), hand.number, token,
                                        view.game.fact_count), workers=self.table.workers)
        return claim.to_bytes()

    def claim(self, env: Envelope, token: int, seat: int, excluded: frozenset[Rank]) -> None:
        hand = self.table.hand
        assert hand is not None
        hand.claims.claimed[env.id] = (token, excluded)
        hand.claims.claims_on.setdefault(token, []).append((seat, env.wire, excluded))
        self.expose(token)

    def expose(self, token: int) -> None:
        """If I know the face of ``token`` and a seat claimed it is not that face, prove
        the lie at once: open the card in my accusation (docs/protocol.md II.11.1)."""
        hand, view = self.table.hand, self.table.view
        assert hand is not None
        assert view is not None
        rank = view.known.get(token)
        if rank is None or hand.me is None or not self.core.custody.complete(hand, token):
            return
        if not self.core.behaviour.proves_lie(self.core.node, token):
            return
        for seat, wire, excluded in hand.claims.claims_on.get(token, []):
            if rank in excluded and seat != self.table.my_seat:
                if not any(t == token for t, _ in hand.claims.exposed):
                    hand.claims.exposed += [(token, msg.ShareEntry(sh.context.sender,
                                                            sh.context.recipient,
                                                            sh.to_bytes()))
                                     for sh in self.core.custody.holdings(hand, token, None)]
                self.core.accusations.fault(FaultKind.FALSE_FACT, seat,
                            f"{self.table.names[seat]} said slot {token} is not "
                            f"{'/'.join(sorted(r.id for r in excluded))}; it is {rank.id}",
                            wire)

    def send_part(self, out: list[Output], hand: Hand) -> bool:
        """My part of the test of the claim under test, once (not the prover's)."""
        pet = hand.claims.pet
        assert pet is not None
        n = hand.number
        if (hand.me is None or hand.me == pet.prover or hand.me in pet.parts
                or hand.me in pet.pending
                or not self.core.outbox.once("pet", n, pet.claim.context.sequence)):
            return False
        assert hand.deck.key is not None
        part = PetShare.make(pet.claim, hand.deck.key, self.table.rng(
            "pet-part", n, pet.claim.context.sequence))
        self.core.outbox.emit(out, PetBody(n, pet.claim.context.sequence, part.to_bytes()))
        return True
