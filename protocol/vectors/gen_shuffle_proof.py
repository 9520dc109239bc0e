"""Vectors for the proof of a correct shuffle: a 6-card step in full detail and a 42-card step.

Everything comes from ``DeterministicRng(SEED)``. Each case records the
statement (context, joint key, both decks), the witness (permutation and
re-masking scalars), the 32 random bytes the prover drew for its hedged nonce
seed, the derived values a second implementation needs to check itself step by
step (statement digest, generators, challenges ``u`` and ``c``), and the proof
bytes. The 42-card case starts from the public initial deck (recomputable from
its labels and the joint key) and lists only digests and ``c`` besides the
proof, to keep the file small.
"""

from __future__ import annotations

from typing import Any, Final

from protocol import domain
from protocol.deck import Ciphertext, Deck, ShuffleContext, encode_deck, initial_deck
from protocol.group import Point
from protocol.keys import HandContext, KeyShare
from protocol.rng import DeterministicRng
from protocol.shuffle_proof import (
    _challenge_c,
    _challenges_u,
    _statement,
    proof_size,
    shuffle_generators,
    shuffle_with_proof,
    verify_shuffle,
)
from protocol.vectors.tap import Tap

SEED: Final = b"p2pkille shuffle-proof vectors v1"
TABLE: Final = b"vector-table-0002"
HAND: Final = 3
SEATS: Final = 3
PURPOSES: Final = (
    "shuffle-generators", "shuffle-proof-statement", "shuffle-proof-u", "shuffle-proof-c",
    "shuffle-proof-nonce", "shuffle-proof-batch",
)


def _case(
    tap: Tap, ctx: ShuffleContext, joint: Point, deck_in: tuple[Ciphertext, ...], *, full: bool
) -> dict[str, Any]:
    n = len(deck_in)
    tap.take()
    step, witness, proof = shuffle_with_proof(deck_in, joint, ctx, tap)
    draws = tap.take()
    verify_shuffle(ctx, joint, deck_in, step.deck, proof)
    digest = _statement(ctx, joint, deck_in, step.deck)
    c = _challenge_c(digest, proof.commitments, proof.chain, proof.t, proof.chain_t)
    out: dict[str, Any] = {
        "cards": n,
        "table_id_hex": ctx.hand.table_id.hex(),
        "hand": ctx.hand.hand,
        "seat": ctx.seat,
        "step": ctx.step,
        "joint_key_hex": joint.hex(),
        "deck_out_hex": encode_deck(step.deck).hex(),
        "witness": {
            "permutation": list(witness.permutation),
            "scalars_hex": [s.hex() for s in witness.scalars],
            "salt_hex": witness.salt.hex(),
        },
        # The last draw is the prover's: seed = hash32("shuffle-proof-nonce", witness, it, d).
        "prover_random_hex": draws[-1].hex(),
        "nonce_seed_hex": domain.hash32(
            "shuffle-proof-nonce", witness.to_bytes(), draws[-1], digest
        ).hex(),
        "statement_digest_hex": digest.hex(),
        "challenge_c_hex": c.hex(),
        "proof_size": proof_size(n),
        "proof_hex": proof.to_bytes().hex(),
    }
    if full:
        out["deck_in_hex"] = encode_deck(deck_in).hex()
        out["generators_hex"] = [p.hex() for p in shuffle_generators(n)]
        out["challenges_u_hex"] = [u.hex() for u in _challenges_u(digest, proof.commitments)]
        out["proof_fields"] = {
            "commitments_hex": [p.hex() for p in proof.commitments],
            "chain_hex": [p.hex() for p in proof.chain],
            "t_hex": [p.hex() for p in proof.t],
            "chain_t_hex": [p.hex() for p in proof.chain_t],
            "s_hex": [x.hex() for x in proof.s],
            "chain_s_hex": [x.hex() for x in proof.chain_s],
            "perm_s_hex": [x.hex() for x in proof.perm_s],
        }
    else:
        out["deck_in_digest_hex"] = domain.hash32("deck", encode_deck(deck_in)).hex()
        out["generators_digest_hex"] = domain.hash32(
            "deck", b"".join(p.data for p in shuffle_generators(n))
        ).hex()
    return out


def generate() -> dict[str, Any]:
    tap = Tap(DeterministicRng(SEED))
    hand = HandContext(TABLE, HAND)
    keys = [KeyShare.generate(seat, tap) for seat in range(SEATS)]
    joint = Point.sum([k.public for k in keys])

    small_deck = Deck(tuple(f"card-{i:02d}" for i in range(6)))
    step0 = initial_deck(small_deck, joint)
    # The 6-card case shuffles a deck that was already shuffled once, so its C1s differ.
    tap.take()
    first, _, _ = shuffle_with_proof(step0, joint, ShuffleContext(hand, 0, 0), tap)
    small = _case(tap, ShuffleContext(hand, 1, 1), joint, first.deck, full=True)

    big_deck = Deck(tuple(f"card-{i:02d}" for i in range(42)))
    big = _case(tap, ShuffleContext(hand, 0, 0), joint, initial_deck(big_deck, joint), full=False)
    big["deck_in_labels"] = list(big_deck.labels)

    return {
        "description": (
            "Proof of a correct shuffle (Terelius-Wikstrom as in Haenni et al. 2017, additive, "
            "ristretto255); see docs/protocol.md. Hex fields are raw bytes; points and scalars "
            "are their 32-byte encodings; a deck is C1 || C2 per slot."
        ),
        "seed_utf8": SEED.decode(),
        "labels": {p: domain.label(p).decode() for p in PURPOSES},
        "joint_key_hex": joint.hex(),
        "six_cards": small,
        "forty_two_cards": big,
    }
