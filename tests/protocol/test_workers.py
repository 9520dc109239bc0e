"""protocol.group.Workers: sums split between real threads give the sequential bytes and errors."""

from __future__ import annotations

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
from protocol.errors import LocalProtocolError
from protocol.group import (
    GROUP_ORDER,
    MIN_PARALLEL_TERMS,
    DegenerateResult,
    Point,
    Scalar,
    Workers,
    counters,
    mult_sum,
    mult_sums,
)
from protocol.keys import HandContext, KeyShare
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
            assert pool.submitted == 3
            assert threading.get_ident() not in pool.ran_on
            mult_sum(terms, Workers(pool, 1))
            assert pool.submitted == 3

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
            assert pool.submitted == 3

    def test_random_scalars_and_points_against_integers(self, workers: Workers) -> None:
        # An independent reference: every point is a known multiple of G.
        rng = DeterministicRng(b"ints")
        logs = [int.from_bytes(rng.randbytes(32), "little") % GROUP_ORDER or 1 for _ in range(90)]
        ks = [int.from_bytes(rng.randbytes(32), "little") % GROUP_ORDER for _ in range(90)]
        terms = [(Point.base_mult(Scalar.from_int(x)), Scalar.from_int(k))
                 for x, k in zip(logs, ks, strict=True)]
        total = sum(x * k for x, k in zip(logs, ks, strict=True)) % GROUP_ORDER
        assert mult_sum(terms, workers) == Point.base_mult(Scalar.from_int(total))


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
