"""protocol.shuffle_proof: completeness, soundness against each kind of cheat, wire format."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import shuffle_proof as sp
from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    ShuffleWitness,
    apply_witness,
    decode_deck,
    encode_deck,
    initial_deck,
    mask,
    remask,
)
from protocol.domain import hash32
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.group import GROUP_ORDER, Point, Scalar, counters
from protocol.keys import HandContext, KeyShare
from protocol.rng import DeterministicRng
from protocol.shuffle_proof import (
    BadShuffleProof,
    ShuffleProof,
    ShuffleStatement,
    proof_size,
    prove_shuffle,
    shuffle_generators,
    shuffle_with_proof,
    verify_shuffle,
    verify_shuffles,
)
from protocol.vectors import VECTOR_DIR, dumps, generate, load

G = Point.GENERATOR
HAND = HandContext(b"table-sp", 7)
CTX = ShuffleContext(HAND, 1, 1)


def joint_of(rng: DeterministicRng, seats: int = 3) -> Point:
    return Point.sum([KeyShare.generate(s, rng).public for s in range(seats)])


def masked_deck(n: int, joint: Point, rng: DeterministicRng) -> tuple[Ciphertext, ...]:
    """A deck as after some earlier step: distinct C1s (unlike the initial deck's all-G)."""
    deck = Deck(tuple(f"card-{i}" for i in range(max(n, 2))))
    return tuple(mask(m, Scalar.random(rng), joint) for m in deck.encodings[:n])


class Case:
    def __init__(self, n: int, seed: bytes = b"case") -> None:
        self.rng = DeterministicRng(seed)
        self.joint = joint_of(self.rng)
        self.deck_in = masked_deck(n, self.joint, self.rng)
        step, self.witness, self.proof = shuffle_with_proof(
            self.deck_in, self.joint, CTX, self.rng
        )
        self.deck_out = step.deck

    def verify(
        self,
        *,
        ctx: ShuffleContext = CTX,
        joint: Point | None = None,
        deck_in: Sequence[Ciphertext] | None = None,
        deck_out: Sequence[Ciphertext] | None = None,
        proof: ShuffleProof | None = None,
    ) -> None:
        verify_shuffle(
            ctx,
            self.joint if joint is None else joint,
            self.deck_in if deck_in is None else deck_in,
            self.deck_out if deck_out is None else deck_out,
            self.proof if proof is None else proof,
        )


@pytest.fixture(scope="module")
def case6() -> Case:
    return Case(6)


@pytest.fixture(scope="module")
def case2() -> Case:
    return Case(2, b"two")


def cheat_prove(
    joint: Point,
    deck_in: Sequence[Ciphertext],
    mapping: Sequence[int],
    rng: DeterministicRng,
    ctx: ShuffleContext = CTX,
) -> tuple[tuple[Ciphertext, ...], ShuffleProof]:
    """Follow the prover's steps for an arbitrary map (e.g. one that duplicates a card)."""
    scalars = [Scalar.random(rng) for _ in mapping]
    out = tuple(remask(deck_in[j], r, joint) for j, r in zip(mapping, scalars, strict=True))
    digest = sp._statement(ctx, joint, deck_in, out)
    return out, sp._prove(joint, out, digest, mapping, scalars, rng.randbytes(32))


# -- completeness --------------------------------------------------------------


class TestCompleteness:
    @settings(max_examples=6)
    @given(n=st.integers(1, 9), seed=st.binary(min_size=1, max_size=8))
    def test_random_decks_verify(self, n: int, seed: bytes) -> None:
        Case(n, seed).verify()

    @pytest.mark.parametrize("n", [1, 2])
    def test_smallest_decks(self, n: int) -> None:
        Case(n, b"small").verify()

    def test_full_42_card_deck(self) -> None:
        Case(42, b"forty-two").verify()

    def test_chain_of_steps_from_the_initial_deck(self) -> None:
        # The initial deck has C1 = G everywhere: equal bases are merged, proofs still hold.
        rng = DeterministicRng(b"chain")
        joint = joint_of(rng)
        deck = initial_deck(Deck(tuple(f"k{i}" for i in range(8))), joint)
        for step_no in range(3):
            ctx = ShuffleContext(HAND, step_no, step_no)
            step, _, proof = shuffle_with_proof(deck, joint, ctx, rng)
            verify_shuffle(ctx, joint, deck, step.deck, proof)
            deck = step.deck

    def test_witness_commitment_matches_the_plain_step(self, case6: Case) -> None:
        assert apply_witness(case6.deck_in, case6.joint, case6.witness) == case6.deck_out

    def test_nonces_are_hedged_and_reproducible(self, case6: Case) -> None:
        def prove(seed: bytes) -> bytes:
            return prove_shuffle(
                CTX, case6.joint, case6.deck_in, case6.deck_out, case6.witness,
                DeterministicRng(seed),
            ).to_bytes()

        assert prove(b"a") == prove(b"a")
        assert prove(b"a") != prove(b"b")

    def test_each_equation_holds_alone_for_an_honest_proof(self, case6: Case) -> None:
        # The unbatched equations (used to name a failure) agree with the batched check.
        assert sp._failed_check(
            CTX, case6.joint, case6.deck_in, case6.deck_out, case6.proof
        ) == "the batched equations (each holds alone)"

    def test_verifier_cost_is_8n_mults_and_one_base_mult(self, case6: Case) -> None:
        counters.reset()
        case6.verify()
        assert counters.var_mults <= 8 * 6 + 6
        assert counters.base_mults == 1
        assert counters.adds <= 8 * 6 + 6


# -- soundness -----------------------------------------------------------------


def rejected(fn: object, *args: object, **kwargs: object) -> BadShuffleProof:
    with pytest.raises(BadShuffleProof) as info:
        fn(*args, **kwargs)  # type: ignore[operator]
    return info.value


class TestSoundness:
    def test_substituted_card(self, case6: Case) -> None:
        other = Point.from_hash("card", b"not-in-the-deck")
        fake = mask(other, Scalar.random(case6.rng), case6.joint)
        out = (fake, *case6.deck_out[1:])
        rejected(case6.verify, deck_out=out)
        # Proving honestly over the substituted deck fails too.
        proof = prove_shuffle(CTX, case6.joint, case6.deck_in, out, case6.witness, case6.rng)
        assert "E4a" in str(rejected(case6.verify, deck_out=out, proof=proof))

    def test_duplicated_card(self) -> None:
        rng = DeterministicRng(b"dup")
        joint = joint_of(rng)
        deck_in = masked_deck(6, joint, rng)
        out, proof = cheat_prove(joint, deck_in, [0, 0, 2, 3, 4, 5], rng)
        err = rejected(verify_shuffle, CTX, joint, deck_in, out, proof)
        # Every other equation holds for this honest-looking prover: only the product fails.
        assert "E2" in str(err)
        assert (err.seat, err.step) == (CTX.seat, CTX.step)

    def test_non_permutation_that_keeps_row_sums(self) -> None:
        # Every column of the committed matrix is hit (sum of commitments is right), but
        # one card is dropped and another doubled: only the product argument catches it.
        rng = DeterministicRng(b"non-perm")
        joint = joint_of(rng)
        deck_in = masked_deck(5, joint, rng)
        out, proof = cheat_prove(joint, deck_in, [1, 1, 0, 3, 4], rng)
        assert "E2" in str(rejected(verify_shuffle, CTX, joint, deck_in, out, proof))

    def test_honest_map_through_the_cheat_helper_verifies(self) -> None:
        # The helper above is the real prover: with a permutation its proofs verify.
        rng = DeterministicRng(b"helper")
        joint = joint_of(rng)
        deck_in = masked_deck(5, joint, rng)
        out, proof = cheat_prove(joint, deck_in, [4, 2, 0, 1, 3], rng)
        verify_shuffle(CTX, joint, deck_in, out, proof)

    def test_remask_with_a_wrong_key(self, case6: Case) -> None:
        wrong = joint_of(DeterministicRng(b"wrong"))
        out = apply_witness(case6.deck_in, wrong, case6.witness)
        proof = prove_shuffle(CTX, case6.joint, case6.deck_in, out, case6.witness, case6.rng)
        # The C1s are right (re-masked with G), the C2s carry the wrong key.
        assert "E4b" in str(rejected(case6.verify, deck_out=out, proof=proof))
        # ... and a proof made under the wrong key does not verify under the right one.
        proof = prove_shuffle(CTX, wrong, case6.deck_in, out, case6.witness, case6.rng)
        verify_shuffle(CTX, wrong, case6.deck_in, out, proof)
        rejected(case6.verify, deck_out=out, proof=proof)

    def test_outputs_swapped_after_proving(self, case6: Case) -> None:
        out = list(case6.deck_out)
        out[0], out[3] = out[3], out[0]
        rejected(case6.verify, deck_out=out)

    def test_plaintext_kept_but_mask_changed(self, case6: Case) -> None:
        out = list(case6.deck_out)
        out[2] = remask(out[2], Scalar.from_int(5), case6.joint)
        rejected(case6.verify, deck_out=out)

    @pytest.mark.parametrize(
        "ctx",
        [
            ShuffleContext(HAND, 2, 1),
            ShuffleContext(HAND, 1, 2),
            ShuffleContext(HandContext(b"table-sp", 8), 1, 1),
            ShuffleContext(HandContext(b"table-other", 7), 1, 1),
        ],
        ids=["seat", "step", "hand", "table"],
    )
    def test_replay_for_another_context(self, case6: Case, ctx: ShuffleContext) -> None:
        rejected(case6.verify, ctx=ctx)

    def test_replay_for_another_deck(self, case6: Case) -> None:
        other = Case(6, b"other-deck")
        rejected(case6.verify, deck_in=other.deck_in)
        rejected(case6.verify, deck_in=other.deck_in, deck_out=other.deck_out)
        rejected(case6.verify, joint=other.joint)

    def test_wrong_lengths_are_remote_errors(self, case6: Case) -> None:
        rejected(case6.verify, deck_out=case6.deck_out[:5])
        rejected(case6.verify, deck_in=case6.deck_in[:5], deck_out=case6.deck_out[:5])
        short = Case(5, b"short")
        rejected(case6.verify, proof=short.proof)
        broken = ShuffleProof(
            case6.proof.commitments, case6.proof.chain[:5], case6.proof.t,
            case6.proof.chain_t, case6.proof.s, case6.proof.chain_s, case6.proof.perm_s,
        )
        rejected(case6.verify, proof=broken)

    def test_empty_statement_is_a_bad_proof(self, case2: Case) -> None:
        p = case2.proof
        empty = ShuffleProof((), (), p.t, (), p.s, (), ())
        rejected(verify_shuffle, CTX, case2.joint, (), (), empty)

    def test_zero_response_built_locally_is_rejected(self, case2: Case) -> None:
        p = case2.proof
        forged = ShuffleProof(
            p.commitments, p.chain, p.t, p.chain_t, (Scalar.from_int(0), *p.s[1:]),
            p.chain_s, p.perm_s,
        )
        rejected(case2.verify, proof=forged)

    def test_degenerate_combinations_are_bad_proofs_not_crashes(self) -> None:
        p = Point.from_hash("x", b"p")
        cancelled = sp._Combination()
        cancelled.add(p, 7)
        cancelled.add(p, GROUP_ORDER - 7)
        identity = sp._Combination()
        identity.add(p, 2)
        identity.add(p + p, -1)
        for acc in (cancelled, identity):
            with pytest.raises(BadShuffleProof, match="degenerate"):
                sp._conclude(acc, G, "test", seat=1, step=1, evidence=b"")


@pytest.fixture(scope="module")
def chain() -> tuple[Point, list[ShuffleStatement]]:
    rng = DeterministicRng(b"batch")
    joint = joint_of(rng)
    deck = initial_deck(Deck(tuple(f"k{i}" for i in range(7))), joint)
    out = []
    for seat in range(4):
        ctx = ShuffleContext(HAND, seat, seat)
        step, _, proof = shuffle_with_proof(deck, joint, ctx, rng)
        out.append(ShuffleStatement(ctx, deck, step.deck, proof))
        deck = step.deck
    return joint, out


class TestBatch:
    def test_chain_verifies_in_one_combination_with_shared_decks_merged(
        self, chain: tuple[Point, list[ShuffleStatement]]
    ) -> None:
        joint, sts = chain
        counters.reset()
        for stm in sts:
            verify_shuffle(stm.context, joint, stm.deck_in, stm.deck_out, stm.proof)
        alone = counters.var_mults
        counters.reset()
        verify_shuffles(joint, sts)
        assert counters.base_mults == 1
        # Each of the three shared decks (14 points) is multiplied once instead of twice.
        assert counters.var_mults <= alone - 3 * 14
        verify_shuffles(joint, sts[:1])
        verify_shuffles(joint, [])

    @pytest.mark.parametrize("bad", [0, 2, 3])
    def test_a_bad_step_in_a_batch_is_named(
        self, chain: tuple[Point, list[ShuffleStatement]], bad: int
    ) -> None:
        joint, sts = chain
        stm = sts[bad]
        swapped = (stm.deck_out[1], stm.deck_out[0], *stm.deck_out[2:])
        forged = list(sts)
        forged[bad] = ShuffleStatement(stm.context, stm.deck_in, swapped, stm.proof)
        err = rejected(verify_shuffles, joint, forged)
        assert (err.seat, err.step) == (bad, bad)

    def test_a_proof_moved_to_another_step_in_a_batch(
        self, chain: tuple[Point, list[ShuffleStatement]]
    ) -> None:
        joint, sts = chain
        forged = list(sts)
        forged[1] = ShuffleStatement(sts[2].context, sts[1].deck_in, sts[1].deck_out,
                                     sts[1].proof)
        err = rejected(verify_shuffles, joint, forged)
        assert err.seat == 2

    def test_shape_errors_in_a_batch(self, chain: tuple[Point, list[ShuffleStatement]]) -> None:
        joint, sts = chain
        stm = sts[1]
        forged = [sts[0], ShuffleStatement(stm.context, stm.deck_in, stm.deck_out[:6], stm.proof)]
        err = rejected(verify_shuffles, joint, forged)
        assert err.seat == 1


# -- wire format and tampering -------------------------------------------------


class TestWire:
    def test_round_trip_and_size(self, case6: Case) -> None:
        data = case6.proof.to_bytes()
        assert len(data) == proof_size(6) == (3 * 6 + 5) * 32 + (2 * 6 + 4) * 32
        assert ShuffleProof.from_bytes(data, 6) == case6.proof
        assert ShuffleProof.from_bytes(bytearray(data), 6) == case6.proof
        assert ShuffleProof.from_bytes(memoryview(data), 6) == case6.proof
        assert "6 cards" in repr(case6.proof)

    def test_generators_come_from_public_labels(self) -> None:
        gens = shuffle_generators(4)
        assert len(gens) == 5
        assert len(set(gens)) == 5
        assert gens[4] == Point.from_hash(
            "shuffle-generators", (4).to_bytes(8, "big"), (4).to_bytes(8, "big")
        )
        with pytest.raises(LocalProtocolError):
            shuffle_generators(0)

    @pytest.mark.parametrize("cards", [0, 5, 7, 5000])
    def test_wrong_size_or_count(self, case6: Case, cards: int) -> None:
        with pytest.raises(InvalidEncoding):
            ShuffleProof.from_bytes(case6.proof.to_bytes(), cards)

    @pytest.mark.parametrize("data", [b"", b"\x00" * 10, "text", None, bytearray(10)])
    def test_non_proof_input(self, data: object) -> None:
        with pytest.raises(InvalidEncoding):
            ShuffleProof.from_bytes(data, 2)  # type: ignore[arg-type]

    def test_every_bit_flip_is_rejected(self, case2: Case) -> None:
        data = case2.proof.to_bytes()
        for k in range(len(data)):
            for bit in (0, 7):
                tampered = bytearray(data)
                tampered[k] ^= 1 << bit
                with pytest.raises(RemoteProtocolError):
                    case2.verify(proof=ShuffleProof.from_bytes(bytes(tampered), 2))

    def test_every_field_replaced_by_a_valid_value_is_rejected(self, case2: Case) -> None:
        data = case2.proof.to_bytes()
        other_point = Point.from_hash("x", b"tamper").data
        other_scalar = Scalar.from_int(12345).data
        split = (3 * 2 + 5) * 32
        for off in range(0, len(data), 32):
            value = other_point if off < split else other_scalar
            tampered = data[:off] + value + data[off + 32:]
            with pytest.raises(BadShuffleProof):
                case2.verify(proof=ShuffleProof.from_bytes(tampered, 2))

    @settings(max_examples=40)
    @given(data=st.data())
    def test_fuzzed_proofs_never_crash(self, case2: Case, data: st.DataObject) -> None:
        raw = bytearray(case2.proof.to_bytes())
        edits = data.draw(
            st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(1, 255)), min_size=1,
                     max_size=4, unique_by=lambda e: e[0])
        )
        for pos, xor in edits:
            raw[pos] ^= xor
        with pytest.raises(RemoteProtocolError):
            case2.verify(proof=ShuffleProof.from_bytes(bytes(raw), 2))

    def test_proof_bytes_in_a_tampered_deck_context(self, case6: Case) -> None:
        # A step's output bytes changed in transit (one card replaced by a copy of another).
        out = (case6.deck_out[1], *case6.deck_out[1:])
        rejected(case6.verify, deck_out=out)


# -- vectors -------------------------------------------------------------------


def _from_file(case: dict[str, Any]) -> tuple[ShuffleContext, Point, tuple[Ciphertext, ...],
                                              tuple[Ciphertext, ...], ShuffleProof]:
    ctx = ShuffleContext(
        HandContext(bytes.fromhex(case["table_id_hex"]), case["hand"]), case["seat"], case["step"]
    )
    joint = Point.fromhex(case["joint_key_hex"])
    n = case["cards"]
    if "deck_in_hex" in case:
        deck_in = decode_deck(bytes.fromhex(case["deck_in_hex"]), n)
    else:
        deck_in = initial_deck(Deck(tuple(case["deck_in_labels"])), joint)
    deck_out = decode_deck(bytes.fromhex(case["deck_out_hex"]), n)
    proof = ShuffleProof.from_bytes(bytes.fromhex(case["proof_hex"]), n)
    return ctx, joint, deck_in, deck_out, proof


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return load("shuffle_proof")


class TestVectors:
    def test_regenerates_byte_for_byte(self, doc: dict[str, Any]) -> None:
        assert (VECTOR_DIR / "shuffle_proof.json").read_text("utf-8") == dumps(
            generate("shuffle_proof")
        )

    def test_labels_cover_the_module(self, doc: dict[str, Any]) -> None:
        source = Path(sp.__file__).read_text("utf-8")
        used = set(re.findall(r'(?:from_hash|hash32|hash64|label)\(\s*"([a-z0-9-]+)"', source))
        assert used == set(doc["labels"])
        for purpose, text in doc["labels"].items():
            assert text == f"p2pkille-protocol/v1/{purpose}"

    @pytest.mark.parametrize("name", ["six_cards", "forty_two_cards"])
    def test_published_proof_verifies_and_a_mutation_fails(
        self, doc: dict[str, Any], name: str
    ) -> None:
        case = doc[name]
        ctx, joint, deck_in, deck_out, proof = _from_file(case)
        verify_shuffle(ctx, joint, deck_in, deck_out, proof)
        assert len(proof.to_bytes()) == case["proof_size"] == proof_size(case["cards"])
        raw = bytearray(proof.to_bytes())
        raw[len(raw) // 2] ^= 0x01
        with pytest.raises(RemoteProtocolError):
            verify_shuffle(ctx, joint, deck_in, deck_out, ShuffleProof.from_bytes(bytes(raw),
                                                                                 case["cards"]))
        with pytest.raises(BadShuffleProof):
            verify_shuffle(ShuffleContext(ctx.hand, ctx.seat, ctx.step + 1), joint, deck_in,
                           deck_out, proof)

    @pytest.mark.parametrize("name", ["six_cards", "forty_two_cards"])
    def test_derived_values_from_the_file(self, doc: dict[str, Any], name: str) -> None:
        # What a second implementation checks step by step: statement digest, witness,
        # nonce seed, generators, u and c, then the proof bytes from the witness.
        case = doc[name]
        ctx, joint, deck_in, deck_out, proof = _from_file(case)
        n = case["cards"]
        stmt = hash32(
            "shuffle-proof-statement", *ctx.parts(), G.data, joint.data, n.to_bytes(8, "big"),
            encode_deck(deck_in), encode_deck(deck_out),
        )
        assert stmt.hex() == case["statement_digest_hex"]
        w = case["witness"]
        witness = ShuffleWitness(
            bytes.fromhex(w["salt_hex"]), tuple(w["permutation"]),
            tuple(Scalar.fromhex(s) for s in w["scalars_hex"]),
        )
        assert apply_witness(deck_in, joint, witness) == deck_out
        rnd = bytes.fromhex(case["prover_random_hex"])
        seed = hash32("shuffle-proof-nonce", witness.to_bytes(), rnd, stmt)
        assert seed.hex() == case["nonce_seed_hex"]
        remade = sp._prove(joint, deck_out, stmt, witness.permutation, witness.scalars, seed)
        assert remade == proof
        blob = b"".join(p.data for p in proof.commitments)
        u = [Scalar.from_hash("shuffle-proof-u", stmt, blob, j.to_bytes(8, "big"))
             for j in range(n)]
        c = Scalar.from_hash(
            "shuffle-proof-c", stmt, blob, b"".join(p.data for p in proof.chain),
            b"".join(p.data for p in proof.t), b"".join(p.data for p in proof.chain_t),
        )
        assert c.hex() == case["challenge_c_hex"]
        gens = [Point.from_hash("shuffle-generators", n.to_bytes(8, "big"), i.to_bytes(8, "big"))
                for i in range(n + 1)]
        if "generators_hex" in case:
            assert [g.hex() for g in gens] == case["generators_hex"]
            assert [x.hex() for x in u] == case["challenges_u_hex"]
            fields = case["proof_fields"]
            assert [p.hex() for p in proof.commitments] == fields["commitments_hex"]
            assert [x.hex() for x in proof.perm_s] == fields["perm_s_hex"]
        else:
            assert hash32("deck", b"".join(g.data for g in gens)).hex() == (
                case["generators_digest_hex"]
            )
            assert hash32("deck", encode_deck(deck_in)).hex() == case["deck_in_digest_hex"]


def test_zero_scalars_and_identity_points_in_a_proof_are_invalid_encodings(case2: Case) -> None:
    data = case2.proof.to_bytes()
    split = (3 * 2 + 5) * 32
    for off in (0, split - 32, split, len(data) - 32):
        with pytest.raises(InvalidEncoding):
            ShuffleProof.from_bytes(data[:off] + bytes(32) + data[off + 32:], 2)
    too_big = (2**255 - 1).to_bytes(32, "little")
    with pytest.raises(InvalidEncoding):
        ShuffleProof.from_bytes(data[:split] + too_big + data[split + 32:], 2)
