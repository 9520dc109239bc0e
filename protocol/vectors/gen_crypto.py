"""Vectors for the cryptography: hash-to-group, key proofs, masking, a 3-seat shuffle and deal,
DLEQ shares, sealed shares and the audit of the hand.

Everything comes from ``DeterministicRng(SEED)``. Wherever a value depends on
randomness, the random bytes drawn are recorded next to it (``*_random_hex``)
so another implementation can recompute the value from the spec alone. Hex
fields are raw bytes; points and scalars are their 32-byte encodings.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from protocol import domain
from protocol.audit import HandRecord, audit_hand
from protocol.deck import (
    Deck,
    ShuffleContext,
    initial_deck,
    mask,
    random_permutation,
    remask,
    shuffle_step,
    uniform_below,
)
from protocol.group import Point, Scalar
from protocol.keys import DeliveryKeyPair, HandContext, KeyShare, joint_key, u64
from protocol.reveal import DecryptionShare, RevealContext, open_card
from protocol.rng import DeterministicRng
from protocol.seal import seal_share
from protocol.vectors.tap import Tap

SEED: Final = b"p2pkille crypto vectors v1"
TABLE: Final = b"vector-table-0001"
HAND: Final = 1
SEATS: Final = 3
LABELS: Final = tuple(f"card-{i:02d}" for i in range(6))
PURPOSES: Final = (
    "card", "key-share-pok", "key-share-pok-nonce", "shuffle-commit", "dleq", "dleq-nonce",
    "seal-key", "seal-aad", "sealed", "deck",
)


RNG_SEED: Final = b"p2pkille rng vectors v1"
# A bound just above 2^31: about half of all 4-byte draws are rejected (5.3).
REJECTING_BOUND: Final = 2**31 + 1


def _rng_vectors() -> dict[str, Any]:
    """DeterministicRng (section 1) and the draws of 5.3, with every byte drawn."""
    stream = DeterministicRng(RNG_SEED).randbytes(160)
    tap = Tap(DeterministicRng(RNG_SEED))
    below = []
    for bound in (REJECTING_BOUND, REJECTING_BOUND, REJECTING_BOUND, 6):
        value = uniform_below(bound, tap)
        below.append({"bound": bound, "draws_hex": [d.hex() for d in tap.take()],
                      "value": value})
    perm = random_permutation(10, tap)
    return {
        "seed_utf8": RNG_SEED.decode(),
        "key_hex": hashlib.sha512(domain.label("rng-seed") + RNG_SEED).hexdigest(),
        "stream_hex": stream.hex(),
        "uniform_below": below,
        "permutation": {"n": 10, "draws_hex": [d.hex() for d in tap.take()],
                        "value": list(perm)},
    }


def _ct(c: Any) -> str:
    return str(c.to_bytes().hex())


# One RNG stream in a fixed order: the vectors depend on it.
def generate() -> dict[str, Any]:  # noqa: PLR0915
    tap = Tap(DeterministicRng(SEED))
    ctx = HandContext(TABLE, HAND)
    deck = Deck(LABELS)

    hash_to_group = [
        {
            "label": lab,
            "uniform_hex": domain.hash64("card", lab.encode()).hex(),
            "point_hex": p.hex(),
        }
        for lab, p in zip(LABELS, deck.encodings, strict=True)
    ]

    keys: list[KeyShare] = []
    key_vectors = []
    for seat in range(SEATS):
        tap.take()
        key = KeyShare.generate(seat, tap)
        secret_random = tap.take()
        announced = key.announce(ctx, tap)
        nonce_random = tap.take()
        keys.append(key)
        key_vectors.append({
            "seat": seat,
            "secret_random_hex": b"".join(secret_random).hex(),
            "secret_hex": key.secret.hex(),
            "public_hex": key.public.hex(),
            "nonce_random_hex": b"".join(nonce_random).hex(),
            "proof_challenge_hex": announced.proof.challenge.hex(),
            "proof_response_hex": announced.proof.response.hex(),
            "wire_hex": announced.to_bytes().hex(),
        })
        assert announced.seat == seat
    joint = joint_key(ctx, [k.announce(ctx, tap) for k in keys])
    tap.take()

    r, r2 = Scalar.from_int(5), Scalar.from_int(7)
    masked = mask(deck.encodings[0], r, joint.public)
    masking = {
        "message_label": LABELS[0],
        "r_hex": r.hex(),
        "joint_key_hex": joint.public.hex(),
        "ciphertext_hex": _ct(masked),
        "remask_r_hex": r2.hex(),
        "remasked_hex": _ct(remask(masked, r2, joint.public)),
    }

    current = initial_deck(deck, joint.public)
    start = current
    steps, witnesses = [], []
    step_vectors = []
    for seat in range(SEATS):
        step, witness = shuffle_step(current, joint.public, ShuffleContext(ctx, seat, seat), tap)
        tap.take()
        steps.append(step)
        witnesses.append(witness)
        step_vectors.append({
            "seat": seat,
            "step": seat,
            "salt_hex": witness.salt.hex(),
            "permutation": list(witness.permutation),
            "scalars_hex": [s.hex() for s in witness.scalars],
            "witness_hex": witness.to_bytes().hex(),
            "commitment_hex": step.commitment.hex(),
            "deck": [_ct(c) for c in step.deck],
        })
        current = step.deck
    final = current

    delivery = [DeliveryKeyPair.generate(tap) for _ in range(SEATS)]
    tap.take()
    shares: list[DecryptionShare] = []

    def make_share(slot: int, sender: int, recipient: int | None) -> dict[str, Any]:
        rctx = RevealContext(ctx, slot, sender, recipient)
        tap.take()
        share = DecryptionShare.make(keys[sender], final[slot], rctx, tap)
        shares.append(share)
        out: dict[str, Any] = {
            "slot": slot,
            "sender": sender,
            "recipient": recipient,
            "context_header_hex": rctx.header().hex(),
            "nonce_random_hex": b"".join(tap.take()).hex(),
            "share_hex": share.value.hex(),
            "proof_challenge_hex": share.proof.challenge.hex(),
            "proof_response_hex": share.proof.response.hex(),
            "wire_hex": share.to_bytes().hex(),
        }
        if recipient is not None:
            box, digest = seal_share(share, delivery[recipient].public, tap)
            out["sealed"] = {
                "ephemeral_private_hex": b"".join(tap.take()).hex(),
                "box_hex": box.hex(),
                "digest_hex": digest.hex(),
            }
        return out

    private = []
    for holder in range(SEATS):
        slot = holder
        entries = [make_share(slot, s, holder) for s in range(SEATS) if s != holder]
        own = shares[-(SEATS - 1):]
        card = open_card(final[slot], own, joint, deck, own=keys[holder])
        private.append({"slot": slot, "holder": holder, "card": card, "shares": entries})
    public_slot = SEATS
    public_entries = [make_share(public_slot, s, None) for s in range(SEATS)]
    public_card = open_card(final[public_slot], shares[-SEATS:], joint, deck)

    report = audit_hand(HandRecord(
        hand=ctx,
        deck=deck,
        keys=joint,
        steps=steps,
        openings={i: w.to_bytes() for i, w in enumerate(witnesses)},
        secrets={k.seat: k.secret.data for k in keys},
        shares=shares,
    ))
    assert report.ok

    return {
        "description": "p2pkille protocol/v1 cryptography vectors; see docs/protocol.md",
        "seed_utf8": SEED.decode(),
        "labels": {p: domain.label(p).decode() for p in PURPOSES},
        "generator_hex": Point.GENERATOR.hex(),
        "hash_to_group": hash_to_group,
        "hand": {"table_id_hex": TABLE.hex(), "hand": HAND, "hand_u64_hex": u64(HAND).hex()},
        "key_shares": key_vectors,
        "joint_key_hex": joint.public.hex(),
        "masking": masking,
        "initial_deck": [_ct(c) for c in start],
        "shuffle_steps": step_vectors,
        "delivery_keys": [
            {"seat": i, "private_hex": d.private.hex(), "public_hex": d.public.hex()}
            for i, d in enumerate(delivery)
        ],
        "private_deals": private,
        "public_open": {"slot": public_slot, "card": public_card, "shares": public_entries},
        "audit_cards": list(report.cards),
        "deterministic_rng": _rng_vectors(),
    }
