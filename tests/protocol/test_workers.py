"""protocol.group.Workers: sums split between real threads give the sequential bytes and errors."""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    ShuffleWitness,
    apply_witness,
    decode_deck,
    initial_deck,
    mask,
    remask,
    shuffle_step,
)
from protocol.errors import InvalidEncoding, LocalProtocolError
from protocol.group import (
    GROUP_ORDER,
    MIN_PARALLEL_DECODES,
    MIN_PARALLEL_PRODUCTS,
    MIN_PARALLEL_TERMS,
    DegenerateResult,
    Point,
    Scalar,
    Workers,
    _bounds,
    counters,
    differences,
    mult_sum,
    mult_sums,
    products,
)
from protocol.keys import HandContext, JointKey, KeyShare, joint_key
from protocol.pet import BadPet, PetClaim, PetContext, PetShare, pet_matches
from protocol.reveal import BadShare, DecryptionShare, DleqProof, RevealContext, open_card
from protocol.rng import DeterministicRng
from protocol.shuffle_proof import (
    BadShuffleProof,
    ShuffleProof,
    ShuffleStatement,
    prove_shuffle,
    shuffle_with_proof,
    verify_shuffle,
    verify_shuffles,
)
from protocol.vectors import load

G = Point.GENERATOR
ZERO = Scalar.from_int(0)
ONE = Scalar.from_int(1)
HAND = HandContext(b"table-workers", 3)
Terms = list[tuple[Point, Scalar]]


class CountingPool(ThreadPoolExecutor):
    """A real thread pool that also records which threads ran its tasks."""

    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        self.submitted = 0
        self.ran_on: set[int] = set()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1

        def run() -> Any:
            self.ran_on.add(threading.get_ident())
            return fn(*args, **kwargs)

        return super().submit(run)


@pytest.fixture(scope="module", params=[2, 3])
def workers(request: pytest.FixtureRequest) -> Iterator[Workers]:
    with CountingPool(request.param) as pool:
        yield Workers(pool, request.param)


def sequential(terms: Terms) -> Point:
    """The code mult_sum replaces: one product at a time, then Point.sum."""
    return Point.sum([p * k for p, k in terms if not k.is_zero])


def counted(fn: Callable[[], object]) -> tuple[object, dict[str, int]]:
    counters.reset()
    try:
        out = fn()
    except DegenerateResult as exc:
        out = ("raised", str(exc))
    snap = counters.snapshot()
    counters.reset()
    return out, snap


def random_terms(size: int, seed: bytes) -> Terms:
    """Random points and scalars, with repeated points, generator terms and zero scalars."""
    rng = DeterministicRng(seed)
    pool = [Point.from_hash("workers-test", seed, bytes([i])) for i in range(max(1, size // 3))]
    out: Terms = []
    for i in range(size):
        k = ZERO if i % 11 == 5 else Scalar.random(rng)
        p = G if i % 7 == 3 else pool[rng.randbytes(1)[0] % len(pool)]
        out.append((p, k))
    return out


class TestWorkers:
    @pytest.mark.parametrize("count", [0, -1, True, 1.5])
    def test_count_below_one_or_not_an_int_is_refused(self, count: Any) -> None:
        with ThreadPoolExecutor(1) as pool, pytest.raises(LocalProtocolError, match="count"):
            Workers(pool, count)

    def test_pool_must_be_an_executor(self) -> None:
        with pytest.raises(LocalProtocolError, match="Executor"):
            Workers(object(), 2)  # type: ignore[arg-type]

    def test_is_a_frozen_value(self) -> None:
        with ThreadPoolExecutor(1) as pool:
            w = Workers(pool, 1)
            with pytest.raises(AttributeError):
                w.count = 2  # type: ignore[misc]


class TestMultSum:
    @pytest.mark.parametrize("size", [1, 2, 63, 64, 65, 500])
    def test_equals_the_sequential_sum_and_counts(self, workers: Workers, size: int) -> None:
        terms = random_terms(size, b"size-%d" % size)
        expected, expected_counts = counted(lambda: sequential(terms))
        assert isinstance(expected, Point)
        for w in (None, workers):
            got, got_counts = counted(lambda w=w: mult_sum(terms, w))  # type: ignore[misc]
            assert got == expected
            assert got_counts == expected_counts

    def test_pool_is_used_from_the_threshold_on(self) -> None:
        with CountingPool(3) as pool:
            w = Workers(pool, 3)
            mult_sum(random_terms(MIN_PARALLEL_TERMS - 1, b"below"), w)
            assert pool.submitted == 0
            # Zero scalars do not count towards the threshold: only real work is split.
            terms = [(Point.from_hash("t", bytes([i])), Scalar.from_int(i + 1))
                     for i in range(MIN_PARALLEL_TERMS)]
            mult_sum([*terms[:-1], (terms[-1][0], ZERO)], w)
            assert pool.submitted == 0
            mult_sum(terms, w)
            # Three chunks: the calling thread runs the first, the pool the other two.
            assert pool.submitted == 2
            assert threading.get_ident() not in pool.ran_on
            mult_sum(terms, Workers(pool, 1))
            assert pool.submitted == 2

    def test_more_chunks_than_terms_is_fine(self) -> None:
        with ThreadPoolExecutor(2) as pool:
            terms = random_terms(70, b"many")
            assert mult_sum(terms, Workers(pool, 500)) == sequential(terms)

    @pytest.mark.parametrize("size", [0, 1, 64])
    def test_all_zero_scalars_are_the_identity(self, workers: Workers, size: int) -> None:
        terms = [(Point.from_hash("z", bytes([i % 256])), ZERO) for i in range(size)]
        for w in (None, workers):
            with pytest.raises(DegenerateResult, match="identity"):
                mult_sum(terms, w)

    def test_identity_total_raises_in_both(self, workers: Workers) -> None:
        base = random_terms(40, b"cancel")
        terms = [*base, *((p, -k) for p, k in base)]
        with pytest.raises(DegenerateResult, match="identity"):
            sequential(terms)
        for w in (None, workers):
            with pytest.raises(DegenerateResult, match="sum of points is the identity"):
                mult_sum(terms, w)

    def test_a_partial_sum_may_be_the_identity(self, workers: Workers) -> None:
        # The first chunk cancels to the identity, the total does not: only the total counts.
        base = random_terms(48, b"half")
        cancelled = [*base, *((p, -k) for p, k in base)]
        terms = [*cancelled, *random_terms(96, b"rest")]
        assert mult_sum(terms, workers) == sequential(terms) == mult_sum(terms)

    def test_an_error_in_a_pool_thread_is_the_sequential_one(self) -> None:
        # Point() trusts its bytes; rbcl refuses these, as it would a crafted point.
        bad1, bad2 = Point(b"\xff" * 32), Point(b"\xfe" * 32)
        terms = random_terms(120, b"bad")
        terms[50] = (bad1, Scalar.from_int(3))
        terms[100] = (bad2, Scalar.from_int(3))
        with pytest.raises(DegenerateResult) as first:
            sequential(terms)
        assert bad1.hex() in str(first.value)
        with CountingPool(3) as pool:
            for w in (None, Workers(pool, 3)):
                with pytest.raises(DegenerateResult) as got:
                    mult_sum(terms, w)
                assert str(got.value) == str(first.value)
            assert pool.submitted == 2

    def test_random_scalars_and_points_against_integers(self, workers: Workers) -> None:
        # An independent reference: every point is a known multiple of G.
        rng = DeterministicRng(b"ints")
        logs = [int.from_bytes(rng.randbytes(32), "little") % GROUP_ORDER or 1 for _ in range(90)]
        ks = [int.from_bytes(rng.randbytes(32), "little") % GROUP_ORDER for _ in range(90)]
        terms = [(Point.base_mult(Scalar.from_int(x)), Scalar.from_int(k))
                 for x, k in zip(logs, ks, strict=True)]
        total = sum(x * k for x, k in zip(logs, ks, strict=True)) % GROUP_ORDER
        assert mult_sum(terms, workers) == Point.base_mult(Scalar.from_int(total))


class TestBusyPool:
    def test_work_the_pool_has_not_started_is_taken_back(self) -> None:
        # The pool's only thread is busy: the caller does every chunk itself instead of waiting.
        release = threading.Event()
        with CountingPool(1) as pool:
            # Submitted around the count, so that ran_on only records the sums' chunks.
            blocker = ThreadPoolExecutor.submit(pool, release.wait, 30)
            try:
                w = Workers(pool, 3)
                terms = random_terms(300, b"busy")
                assert mult_sum(terms, w) == sequential(terms)
                pairs = random_pairs(12, b"busy")
                assert products(pairs, w) == [p * k for p, k in pairs]
                assert not blocker.done()
                assert pool.ran_on == set()
            finally:
                release.set()
            assert blocker.result() is True

    def test_an_error_cancels_what_has_not_started(self) -> None:
        release = threading.Event()
        with CountingPool(1) as pool:
            blocker = ThreadPoolExecutor.submit(pool, release.wait, 30)
            try:
                terms = random_terms(300, b"busy-bad")
                terms[10] = (Point(b"\xff" * 32), Scalar.from_int(3))
                with pytest.raises(DegenerateResult, match="ff" * 32):
                    mult_sum(terms, Workers(pool, 3))
                assert pool.ran_on == set()
            finally:
                release.set()
            assert blocker.result() is True


class TestMultSums:
    def test_equals_one_sum_at_a_time(self, workers: Workers) -> None:
        rng = DeterministicRng(b"sums")
        sums = [random_terms(3 + i % 4, b"s%d" % i) for i in range(40)]
        sums[7] = [(Point.from_hash("one", b"x"), ONE), (G, Scalar.random(rng))]
        expected = [sequential(t) for t in sums]
        for w in (None, workers):
            assert mult_sums(sums, w) == expected
            assert mult_sums([], w) == []

    def test_a_one_is_added_without_multiplying(self, workers: Workers) -> None:
        rng = DeterministicRng(b"ones")
        deck = [mask(Point.from_hash("m", bytes([i])), Scalar.random(rng), G + G)
                for i in range(40)]
        joint = Point.from_hash("joint", b"")
        rs = [Scalar.random(rng) for _ in deck]
        sums = [s for ct, r in zip(deck, rs, strict=True)
                for s in ([(ct.c1, ONE), (G, r)], [(ct.c2, ONE), (joint, r)])]
        plain, plain_counts = counted(
            lambda: [remask(ct, r, joint) for ct, r in zip(deck, rs, strict=True)]
        )
        assert isinstance(plain, list)
        flat = [p for ct in plain for p in (ct.c1, ct.c2)]
        for w in (None, workers):
            got, got_counts = counted(lambda w=w: mult_sums(sums, w))  # type: ignore[misc]
            assert got == flat
            assert got_counts == plain_counts == {
                "base_mults": 40, "var_mults": 40, "adds": 80, "decodes": 0,
                "hashes_to_group": 0,
            }

    def test_the_first_failing_sum_raises(self, workers: Workers) -> None:
        p = Point.from_hash("cancel", b"")
        k = Scalar.from_int(5)
        ok = [[(Point.from_hash("ok", bytes([i])), k)] for i in range(70)]
        bad_point = Point(b"\xff" * 32)
        for broken, message in (
            ([(p, k), (p, -k)], "sum of points is the identity"),
            ([(p, ZERO)], "every scalar is zero"),
        ):
            sums = [*ok[:40], broken, *ok[40:60], [(bad_point, k)], *ok[60:]]
            for w in (None, workers):
                with pytest.raises(DegenerateResult, match=message):
                    mult_sums(sums, w)
        sums = [*ok[:40], [(bad_point, k)], *ok[40:60], [(p, ZERO)]]
        for w in (None, workers):
            with pytest.raises(DegenerateResult, match=bad_point.hex()):
                mult_sums(sums, w)


# -- the callers -----------------------------------------------------------------


def joint_of(rng: DeterministicRng) -> Point:
    return Point.sum([KeyShare.generate(s, rng).public for s in range(3)])


@pytest.fixture(scope="module")
def chain() -> tuple[Point, list[ShuffleStatement], list[ShuffleWitness]]:
    rng = DeterministicRng(b"workers-chain")
    joint = joint_of(rng)
    deck = initial_deck(Deck(tuple(f"c{i}" for i in range(42))), joint)
    out, witnesses = [], []
    for seat in range(3):
        ctx = ShuffleContext(HAND, seat, seat)
        step, witness, proof = shuffle_with_proof(deck, joint, ctx, rng)
        out.append(ShuffleStatement(ctx, deck, step.deck, proof))
        witnesses.append(witness)
        deck = step.deck
    return joint, out, witnesses


class TestShuffleCallers:
    def test_shuffle_step_and_proof_are_the_same_bytes(self, workers: Workers) -> None:
        joint = joint_of(DeterministicRng(b"j"))
        deck = initial_deck(Deck(tuple(f"c{i}" for i in range(42))), joint)
        ctx = ShuffleContext(HAND, 0, 0)
        plain = shuffle_with_proof(deck, joint, ctx, DeterministicRng(b"same"))
        threaded = shuffle_with_proof(deck, joint, ctx, DeterministicRng(b"same"),
                                      workers=workers)
        assert plain[0] == threaded[0]
        assert plain[1].to_bytes() == threaded[1].to_bytes()
        assert plain[2].to_bytes() == threaded[2].to_bytes()
        assert shuffle_step(deck, joint, ctx, DeterministicRng(b"s"))[0] == shuffle_step(
            deck, joint, ctx, DeterministicRng(b"s"), workers=workers)[0]

    def test_apply_witness_equals_remask_slot_by_slot(
        self, workers: Workers, chain: tuple[Point, list[ShuffleStatement], list[ShuffleWitness]]
    ) -> None:
        joint, sts, witnesses = chain
        st, wit = sts[1], witnesses[1]
        by_hand = tuple(remask(st.deck_in[j], r, joint)
                        for j, r in zip(wit.permutation, wit.scalars, strict=True))
        assert apply_witness(st.deck_in, joint, wit) == by_hand == st.deck_out
        assert apply_witness(st.deck_in, joint, wit, workers=workers) == by_hand

    def test_prove_with_workers_is_the_same_proof(
        self, workers: Workers, chain: tuple[Point, list[ShuffleStatement], list[ShuffleWitness]]
    ) -> None:
        joint, sts, witnesses = chain
        st = sts[2]
        plain, plain_counts = counted(lambda: prove_shuffle(
            st.context, joint, st.deck_in, st.deck_out, witnesses[2], DeterministicRng(b"p")))
        threaded, threaded_counts = counted(lambda: prove_shuffle(
            st.context, joint, st.deck_in, st.deck_out, witnesses[2], DeterministicRng(b"p"),
            workers=workers))
        assert isinstance(plain, ShuffleProof)
        assert isinstance(threaded, ShuffleProof)
        assert plain.to_bytes() == threaded.to_bytes()
        assert plain_counts == threaded_counts

    def test_verify_with_workers_same_verdict_and_counts(
        self, workers: Workers, chain: tuple[Point, list[ShuffleStatement], list[ShuffleWitness]]
    ) -> None:
        joint, sts, _ = chain
        pool = workers.pool
        assert isinstance(pool, CountingPool)
        before = pool.submitted
        for st in sts:
            _, plain = counted(lambda st=st: verify_shuffle(  # type: ignore[misc]
                st.context, joint, st.deck_in, st.deck_out, st.proof))
            _, threaded = counted(lambda st=st: verify_shuffle(  # type: ignore[misc]
                st.context, joint, st.deck_in, st.deck_out, st.proof, workers=workers))
            assert plain == threaded
        _, plain = counted(lambda: verify_shuffles(joint, sts))
        _, threaded = counted(lambda: verify_shuffles(joint, sts, workers=workers))
        assert plain == threaded
        assert pool.submitted > before

    @pytest.mark.parametrize("bad", [0, 1, 2])
    def test_a_tampered_proof_fails_with_the_same_named_step(
        self, workers: Workers, chain: tuple[Point, list[ShuffleStatement], list[ShuffleWitness]],
        bad: int,
    ) -> None:
        joint, sts, _ = chain
        st = sts[bad]
        p = st.proof
        forged_proof = ShuffleProof(p.commitments, p.chain, p.t, p.chain_t, p.s,
                                    (p.chain_s[0] + ONE, *p.chain_s[1:]), p.perm_s)
        swapped = (st.deck_out[1], st.deck_out[0], *st.deck_out[2:])
        for forged, check in (
            (ShuffleStatement(st.context, st.deck_in, st.deck_out, forged_proof), "chain link 0"),
            (ShuffleStatement(st.context, st.deck_in, swapped, st.proof), "E1"),
        ):
            errors = []
            for w in (None, workers):
                with pytest.raises(BadShuffleProof) as one:
                    verify_shuffle(forged.context, joint, forged.deck_in, forged.deck_out,
                                   forged.proof, workers=w)
                batch = [*sts[:bad], forged, *sts[bad + 1:]]
                with pytest.raises(BadShuffleProof) as many:
                    verify_shuffles(joint, batch, workers=w)
                errors.append((str(one.value), str(many.value), many.value.seat,
                               many.value.step))
            assert errors[0] == errors[1]
            assert errors[0][2:] == (bad, bad)
            assert f"step {bad} does not verify: {check}" in errors[0][0]

    @pytest.mark.parametrize("name", ["six_cards", "forty_two_cards"])
    def test_published_vectors_verify_with_workers(self, workers: Workers, name: str) -> None:
        case = load("shuffle_proof")[name]
        ctx = ShuffleContext(HandContext(bytes.fromhex(case["table_id_hex"]), case["hand"]),
                             case["seat"], case["step"])
        joint = Point.fromhex(case["joint_key_hex"])
        n = case["cards"]
        deck_in: tuple[Ciphertext, ...]
        if "deck_in_hex" in case:
            deck_in = decode_deck(bytes.fromhex(case["deck_in_hex"]), n)
        else:
            deck_in = initial_deck(Deck(tuple(case["deck_in_labels"])), joint)
        deck_out = decode_deck(bytes.fromhex(case["deck_out_hex"]), n)
        proof = ShuffleProof.from_bytes(bytes.fromhex(case["proof_hex"]), n)
        verify_shuffle(ctx, joint, deck_in, deck_out, proof, workers=workers)
        with pytest.raises(BadShuffleProof) as plain:
            verify_shuffle(ShuffleContext(ctx.hand, ctx.seat, ctx.step + 1), joint, deck_in,
                           deck_out, proof)
        with pytest.raises(BadShuffleProof) as threaded:
            verify_shuffle(ShuffleContext(ctx.hand, ctx.seat, ctx.step + 1), joint, deck_in,
                           deck_out, proof, workers=workers)
        assert str(plain.value) == str(threaded.value)


# -- single products and the proofs of answers and shares -----------------------------------


class TestBounds:
    @pytest.mark.parametrize("weights", [[1] * 10, [4, 4, 4, 1, 1, 1], [100, 1, 1], [1, 1, 100],
                                         [0, 0, 0], [5], [3, 0, 0, 0, 3]])
    @pytest.mark.parametrize("parts", [1, 2, 3])
    def test_contiguous_non_empty_ranges_covering_all(self, weights: list[int],
                                                       parts: int) -> None:
        parts = min(parts, len(weights))
        ranges = _bounds(weights, parts)
        assert len(ranges) == parts
        assert ranges[0][0] == 0
        assert ranges[-1][1] == len(weights)
        assert all(a < b for a, b in ranges)
        assert all(ranges[i][1] == ranges[i + 1][0] for i in range(parts - 1))

    def test_sums_are_near_equal(self) -> None:
        assert _bounds([1] * 10, 2) == [(0, 5), (5, 10)]
        assert _bounds([4] * 3 + [1] * 12, 2) == [(0, 3), (3, 15)]
        # A proof check's products (base-point first): the item across the middle goes to
        # the pool, so the calling thread, which also hands the work over, gets 4 of 10.
        assert _bounds([1, 3, 3, 3], 2) == [(0, 2), (2, 4)]


def random_pairs(size: int, seed: bytes) -> Terms:
    rng = DeterministicRng(seed)
    return [(G if i % 5 == 2 else Point.from_hash("products", seed, bytes([i])),
             Scalar.random(rng)) for i in range(size)]


class TestProducts:
    @pytest.mark.parametrize("size", [0, 1, 2, 4, 13, 40])
    def test_equals_the_comprehension_and_counts(self, workers: Workers, size: int) -> None:
        pairs = random_pairs(size, b"p%d" % size)
        expected, expected_counts = counted(lambda: [p * k for p, k in pairs])
        for w in (None, workers):
            got, got_counts = counted(lambda w=w: products(pairs, w))  # type: ignore[misc]
            assert got == expected
            assert got_counts == expected_counts

    def test_pool_is_used_from_the_threshold_on(self) -> None:
        # A variable-base product weighs 3, a base-point one 1 (see group._cost).
        var = [(Point.from_hash("t", bytes([i])), Scalar.from_int(i + 2)) for i in range(20)]
        below = [*var[:MIN_PARALLEL_PRODUCTS // 3 - 1], (G, ONE), (G, ONE)]
        assert 3 * (len(below) - 2) + 2 < MIN_PARALLEL_PRODUCTS
        with CountingPool(2) as pool:
            w = Workers(pool, 2)
            assert products(below, w) == [p * k for p, k in below]
            assert pool.submitted == 0
            at = var[:math.ceil(MIN_PARALLEL_PRODUCTS / 3)]
            assert products(at, w) == [p * k for p, k in at]
            # Two chunks: the calling thread multiplies the first, one pool thread the other.
            assert pool.submitted == 1
            assert threading.get_ident() not in pool.ran_on
            products(at, Workers(pool, 1))
            assert pool.submitted == 1

    @pytest.mark.parametrize("where", [0, 7, 19])
    def test_the_first_failing_product_raises_what_mul_raises(self, workers: Workers,
                                                              where: int) -> None:
        bad = Point(b"\xff" * 32)  # rbcl refuses it, as it would a crafted point
        for broken in ((bad, Scalar.from_int(3)), (G, ZERO),
                       (Point.from_hash("zero", b""), ZERO)):
            pairs = random_pairs(20, b"bad")
            pairs[where] = broken
            pairs[19 if where < 19 else 0] = (Point(b"\xfe" * 32), Scalar.from_int(5))
            with pytest.raises(DegenerateResult) as first:
                [p * k for p, k in pairs]
            for w in (None, workers):
                with pytest.raises(DegenerateResult) as got:
                    products(pairs, w)
                assert str(got.value) == str(first.value)
                assert got.value.evidence == first.value.evidence


Quads = list[tuple[Point, Scalar, Point, Scalar]]


def random_quads(size: int, seed: bytes) -> Quads:
    pairs = random_pairs(2 * size, seed)
    return [(*pairs[2 * i], *pairs[2 * i + 1]) for i in range(size)]


class TestDifferences:
    @pytest.mark.parametrize("size", [0, 1, 2, 3, 15])
    def test_equals_the_comprehension_and_counts(self, workers: Workers, size: int) -> None:
        quads = random_quads(size, b"d%d" % size)
        expected, expected_counts = counted(lambda: [p * a - q * b for p, a, q, b in quads])
        for w in (None, workers):
            got, got_counts = counted(lambda w=w: differences(quads, w))  # type: ignore[misc]
            assert got == expected
            assert got_counts == expected_counts

    def test_a_claim_check_is_split_a_share_check_is_not(self) -> None:
        # A share's check has two commitments, z G - c X and z C1 - c D (weight 10); a PET
        # claim's excluding 12 encodings has 15 (weight 85).
        rng = DeterministicRng(b"split")
        x, c1, d = (Point.from_hash("split", bytes([i])) for i in range(3))
        z, c = Scalar.random(rng), Scalar.random(rng)
        share = [(G, z, x, c), (c1, z, d, c)]
        claim = [*share, *random_quads(13, b"claim")]
        with CountingPool(2) as pool:
            assert differences(share, Workers(pool, 2)) == differences(share)
            assert pool.submitted == 0
            assert differences(claim, Workers(pool, 2)) == differences(claim)
            assert pool.submitted == 1

    @pytest.mark.parametrize("where", [0, 2, 4])
    def test_the_first_failure_raises_what_the_comprehension_raises(
        self, workers: Workers, where: int
    ) -> None:
        p = Point.from_hash("same", b"")
        k = Scalar.from_int(7)
        for broken in ((p, k, p, k),  # the difference is the identity
                       (Point(b"\xff" * 32), k, p, k), (p, k, G, ZERO), (G, ZERO, p, k)):
            quads = random_quads(5, b"bad")
            quads[where] = broken
            quads[4 if where < 4 else 0] = (p, k, p, k)
            with pytest.raises(DegenerateResult) as first:
                [p * a - q * b for p, a, q, b in quads]
            for w in (None, workers):
                with pytest.raises(DegenerateResult) as got:
                    differences(quads, w)
                assert str(got.value) == str(first.value)
                assert got.value.evidence == first.value.evidence


class TestDecodes:
    def test_the_same_points_and_the_first_invalid_one(self) -> None:
        points = [Point.from_hash("decode", bytes([i])) for i in range(131)]
        data = b"".join(p.data for p in points)
        with CountingPool(2) as pool:
            w = Workers(pool, 2)
            got, counts = counted(lambda: Point.many_from_bytes(data, workers=w))
            assert got == tuple(points)
            assert counts["decodes"] == 131
            assert pool.submitted == 1
            short = data[:32 * (MIN_PARALLEL_DECODES - 1)]
            assert Point.many_from_bytes(short, workers=w) == tuple(points[:len(short) // 32])
            assert pool.submitted == 1
            for first, second in ((10, 100), (70, 120), (0, 130)):
                bad = bytearray(data)
                bad[32 * first:32 * first + 32] = b"\xff" * 32
                bad[32 * second:32 * second + 32] = bytes(32)
                errors = []
                for ww in (None, w):
                    with pytest.raises(InvalidEncoding) as info:
                        Point.many_from_bytes(bytes(bad), workers=ww)
                    errors.append((str(info.value), info.value.evidence))
                assert errors[0] == errors[1] == (f"point {first} is invalid", b"\xff" * 32)

    def test_decks_and_proofs_parse_the_same(
        self, workers: Workers, chain: tuple[Point, list[ShuffleStatement], list[ShuffleWitness]]
    ) -> None:
        _, sts, _ = chain
        st = sts[1]
        wire = st.proof.to_bytes()
        deck = b"".join(ct.c1.data + ct.c2.data for ct in st.deck_out)
        assert decode_deck(deck, 42, workers=workers) == st.deck_out
        parsed = ShuffleProof.from_bytes(wire, 42, workers=workers)
        assert parsed.to_bytes() == wire


def pet_table(holders: int, seed: bytes) -> tuple[list[KeyShare], JointKey, DeterministicRng]:
    rng = DeterministicRng(seed)
    keys = [KeyShare.generate(i, rng) for i in range(holders)]
    return keys, joint_key(HAND, [k.announce(HAND, rng) for k in keys]), rng


CARDS = Deck(tuple(f"card-{i:02d}" for i in range(20)))


@pytest.fixture(scope="module")
def answer() -> tuple[list[KeyShare], JointKey, Ciphertext, PetContext]:
    keys, joint, rng = pet_table(4, b"workers-pet")
    ct = remask(mask(CARDS.encodings[3], Scalar.random(rng), joint.public),
                Scalar.random(rng), joint.public)
    return keys, joint, ct, PetContext(HAND, 5, 1, b"answer", 9)


class TestProofCallers:
    def test_a_claim_and_its_shares_are_the_same_bytes_verdicts_and_counts(
        self, workers: Workers,
        answer: tuple[list[KeyShare], JointKey, Ciphertext, PetContext],
    ) -> None:
        keys, joint, ct, ctx = answer
        excluded = CARDS.encodings[8:20]
        outcome = []
        for w in (None, workers):
            rng = DeterministicRng(b"same claim")
            claim, made = counted(
                lambda w=w, rng=rng: PetClaim.make(  # type: ignore[misc]
                    ctx, ct, excluded, keys[1], rng, workers=w))
            assert isinstance(claim, PetClaim)
            _, checked = counted(lambda w=w, claim=claim: claim.verify(  # type: ignore[misc]
                ct, excluded, joint.share_of(1), workers=w))
            shares = [PetShare.make(claim, k, rng, workers=w) for k in keys if k.seat != 1]
            _, share_checks = counted(lambda w=w, claim=claim, shares=shares: [  # type: ignore[misc]
                s.verify(claim, joint.share_of(s.seat), workers=w) for s in shares])
            matches = pet_matches(claim, shares, holders=joint.seats)
            outcome.append((claim.to_bytes(), made, checked,
                            [s.to_bytes() for s in shares], share_checks, matches))
        assert outcome[0] == outcome[1]
        assert outcome[0][5] == ()

    def test_a_forged_claim_or_share_is_found_with_workers(
        self, workers: Workers,
        answer: tuple[list[KeyShare], JointKey, Ciphertext, PetContext],
    ) -> None:
        keys, joint, ct, ctx = answer
        excluded = CARDS.encodings[8:20]
        rng = DeterministicRng(b"forged")
        claim = PetClaim.make(ctx, ct, excluded, keys[1], rng)
        e = list(claim.e)
        e[4] = e[4] + G
        forged = PetClaim(ctx, claim.a, tuple(e), claim.own, claim.challenge,
                          claim.response_z, claim.response_x)
        zero_c = PetClaim(ctx, claim.a, claim.e, claim.own, ZERO, claim.response_z,
                          claim.response_x)
        share = PetShare.make(claim, keys[2], rng)
        bad_share = PetShare(share.claim_digest, 2, share.value + G, share.proof)
        for bad, message in ((forged, "claim proof does not verify"),
                             (zero_c, "degenerate claim proof")):
            errors = []
            for w in (None, workers):
                with pytest.raises(BadPet) as got:
                    bad.verify(ct, excluded, joint.share_of(1), workers=w)
                errors.append((str(got.value), got.value.seat, got.value.evidence))
            assert errors[0] == errors[1]
            assert errors[0][1] == 1
            assert message in errors[0][0]
        share_errors = []
        for w in (None, workers):
            with pytest.raises(BadPet) as got:
                bad_share.verify(claim, joint.share_of(2), workers=w)
            share_errors.append((str(got.value), got.value.seat))
        assert share_errors[0] == share_errors[1]
        assert share_errors[0][1] == 2
        assert "response proof does not verify" in share_errors[0][0]

    def test_decryption_shares_with_workers(
        self, workers: Workers,
        answer: tuple[list[KeyShare], JointKey, Ciphertext, PetContext],
    ) -> None:
        keys, joint, ct, _ = answer
        made = []
        for w in (None, workers):
            rng = DeterministicRng(b"dleq")
            shares = [DecryptionShare.make(k, ct, RevealContext(HAND, 5, k.seat, None), rng,
                                           workers=w) for k in keys]
            _, checks = counted(lambda w=w, shares=shares: [  # type: ignore[misc]
                s.verify(joint.share_of(s.context.sender), ct, workers=w) for s in shares])
            made.append(([s.to_bytes() for s in shares], checks))
        assert made[0] == made[1]
        shares = [DecryptionShare.make(k, ct, RevealContext(HAND, 5, k.seat, None),
                                       DeterministicRng(b"o")) for k in keys]
        assert open_card(ct, shares, joint, CARDS) == 3
        good = shares[2]
        forged = DecryptionShare(good.context, good.value,
                                 DleqProof(good.proof.challenge, good.proof.response + ONE))
        degenerate = DecryptionShare(good.context, good.value,
                                     DleqProof(ZERO, good.proof.response))
        for bad, message in ((forged, "does not verify"), (degenerate, "degenerate proof")):
            errors = []
            for w in (None, workers):
                with pytest.raises(BadShare) as got:
                    bad.verify(joint.share_of(2), ct, workers=w)
                errors.append((str(got.value), got.value.sender))
            assert errors[0] == errors[1]
            assert errors[0][1] == 2
            assert message in errors[0][0]


def test_proofs_are_the_bytes_of_the_code_before_workers() -> None:
    """Three proved shuffle steps, a claim, a response and a decryption share from one seed:
    their SHA-256 was computed with the code before products() and the parallel prover
    (commit 34dc5ff), where every product ran one after another."""
    rng = DeterministicRng(b"same-bytes")
    keys = [KeyShare.generate(i, rng) for i in range(3)]
    joint = Point.sum([k.public for k in keys])
    deck = initial_deck(Deck(tuple(f"c{i}" for i in range(42))), joint)
    digest = hashlib.sha256()
    hand = HandContext(b"t", 1)
    with ThreadPoolExecutor(1) as pool:
        w = Workers(pool, 2)
        for seat in range(3):
            step, _, proof = shuffle_with_proof(deck, joint, ShuffleContext(hand, seat, seat),
                                                rng, workers=w)
            digest.update(proof.to_bytes())
            deck = step.deck
        ct = deck[5]
        claim = PetClaim.make(PetContext(hand, 5, 0, b"x", 1), ct,
                              [deck[i].c2 for i in range(6, 18)], keys[0], rng, workers=w)
        digest.update(claim.to_bytes())
        digest.update(PetShare.make(claim, keys[1], rng, workers=w).to_bytes())
        digest.update(DecryptionShare.make(keys[2], ct, RevealContext(hand, 5, 2, None), rng,
                                           workers=w).to_bytes())
    assert digest.hexdigest() == (
        "9124e0a6a406949ebd04798ce23aa5365bb1cb14b7c7188841e6065784b76f7f"
    )
