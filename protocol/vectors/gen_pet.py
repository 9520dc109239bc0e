"""Vectors for proved answers (protocol/pet.py): three key holders, one honest claim with
its responses, one false claim (the card is an excluded encoding) that the test catches,
and one keyless claim (a prover without a key share; every key holder responds).

Everything comes from ``DeterministicRng(SEED)``; the random bytes each step draws
are recorded next to its result (``*_random_hex``) so another implementation can
recompute the blind, the nonces, the proofs and the digests from the spec alone.
"""

from __future__ import annotations

from typing import Any, Final

from protocol import domain
from protocol.deck import Ciphertext, Deck, mask
from protocol.group import Point, Scalar
from protocol.keys import HandContext, KeyShare, joint_key
from protocol.pet import PetClaim, PetContext, PetShare, pet_matches
from protocol.rng import DeterministicRng
from protocol.vectors.tap import Tap

SEED: Final = b"p2pkille pet vectors v1"
TABLE: Final = b"vector-table-pet"
HAND: Final = 3
HOLDERS: Final = 3
LABELS: Final = tuple(f"card-{i:02d}" for i in range(16))
#: Cards 4..15 are the excluded set (12 encodings, like Kille's answering ranks).
EXCLUDED: Final = tuple(range(4, 16))
PURPOSES: Final = (
    "pet-blind", "pet-claim", "pet-claim-keyless", "pet-claim-nonce", "pet-digest", "pet-share",
    "pet-share-nonce",
)


def _case(
    tap: Tap, ctx: PetContext, ct: Ciphertext, card: int, deck: Deck, keys: list[KeyShare],
) -> dict[str, Any]:
    excluded = [deck.encodings[j] for j in EXCLUDED]
    prover = keys[ctx.prover] if ctx.prover < len(keys) else None
    tap.take()
    claim = PetClaim.make(ctx, ct, excluded, prover, tap)
    blind_random, nonce_random = tap.take()
    statement = (*ctx.parts(), ct.c1.data, ct.c2.data, b"".join(b.data for b in excluded))
    hedge = () if prover is None else (prover.secret.data,)
    blind = Scalar.from_hash("pet-blind", *hedge, blind_random, *statement)
    assert claim.a == ct.c1 * blind
    responses = []
    shares = []
    for key in keys:
        if key.seat == ctx.prover:
            continue
        share = PetShare.make(claim, key, tap)
        shares.append(share)
        responses.append({
            "seat": key.seat,
            "nonce_random_hex": b"".join(tap.take()).hex(),
            "value_hex": share.value.hex(),
            "proof_challenge_hex": share.proof.challenge.hex(),
            "proof_response_hex": share.proof.response.hex(),
            "wire_hex": share.to_bytes().hex(),
        })
    return {
        "context": {
            "slot": ctx.slot,
            "prover": ctx.prover,
            "purpose_hex": ctx.purpose.hex(),
            "sequence": ctx.sequence,
            "parts_hex": [p.hex() for p in ctx.parts()],
        },
        "card": card,
        "ciphertext_hex": ct.to_bytes().hex(),
        "blind_random_hex": blind_random.hex(),
        "blind_hex": blind.hex(),
        "nonce_random_hex": nonce_random.hex(),
        "a_hex": claim.a.hex(),
        "e_hex": [p.hex() for p in claim.e],
        "keyless": claim.keyless,
        "own_share_hex": None if claim.own is None else claim.own.hex(),
        "challenge_hex": claim.challenge.hex(),
        "response_z_hex": claim.response_z.hex(),
        "response_x_hex": None if claim.response_x is None else claim.response_x.hex(),
        "wire_hex": claim.to_bytes().hex(),
        "digest_hex": claim.digest().hex(),
        "responses": responses,
        "matches": list(pet_matches(claim, shares, holders=len(keys))),
    }


def generate() -> dict[str, Any]:
    tap = Tap(DeterministicRng(SEED))
    hand = HandContext(TABLE, HAND)
    deck = Deck(LABELS)
    keys = [KeyShare.generate(seat, tap) for seat in range(HOLDERS)]
    joint = joint_key(hand, [k.announce(hand, tap) for k in keys])
    tap.take()

    def masked(card: int) -> tuple[Ciphertext, str]:
        tap.take()
        ct = mask(deck.encodings[card], Scalar.random(tap), joint.public)
        return ct, b"".join(tap.take()).hex()

    honest_ct, honest_r = masked(1)
    false_ct, false_r = masked(7)
    honest = _case(tap, PetContext(hand, 5, 1, b"answer", 17), honest_ct, 1, deck, keys)
    honest["mask_random_hex"] = honest_r
    false = _case(tap, PetContext(hand, 9, 2, b"disclose", 18), false_ct, 7, deck, keys)
    false["mask_random_hex"] = false_r
    keyless_ct, keyless_r = masked(2)
    # A prover outside the key holders' seats 0..2, as p2pkille numbers a buyer.
    keyless = _case(tap, PetContext(hand, 11, HOLDERS + 4, b"answer", 19), keyless_ct, 2, deck,
                    keys)
    keyless["mask_random_hex"] = keyless_r
    assert honest["matches"] == []
    assert false["matches"] == [EXCLUDED.index(7)]
    assert keyless["matches"] == []

    return {
        "description": "p2pkille protocol/v1 proved answers (plaintext-inequality test); "
                       "see docs/protocol.md",
        "seed_utf8": SEED.decode(),
        "labels": {p: domain.label(p).decode() for p in PURPOSES},
        "hand": {"table_id_hex": TABLE.hex(), "hand": HAND},
        "deck_labels": list(LABELS),
        "excluded_cards": list(EXCLUDED),
        "excluded_hex": [deck.encodings[j].hex() for j in EXCLUDED],
        "key_shares": [
            {"seat": k.seat, "secret_hex": k.secret.hex(), "public_hex": k.public.hex()}
            for k in keys
        ],
        "joint_key_hex": joint.public.hex(),
        "honest_claim": honest,
        "false_claim": false,
        "keyless_claim": keyless,
        "generator_hex": Point.GENERATOR.hex(),
    }
