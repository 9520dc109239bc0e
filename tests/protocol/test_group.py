"""protocol.group: validation of outside bytes, arithmetic, counters, fuzzed decoders."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import group
from protocol.deck import Ciphertext, ShuffleWitness, decode_deck
from protocol.domain import encode, label
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.group import (
    GROUP_ORDER,
    DegenerateResult,
    Point,
    Scalar,
    counters,
    ed25519_verify,
    mult_sum,
    products,
)
from protocol.identity import Identity
from protocol.keys import HandContext, PublicKeyShare, SchnorrProof
from protocol.reveal import DecryptionShare, DleqProof, RevealContext
from protocol.rng import DeterministicRng

G = Point.GENERATOR
L = GROUP_ORDER


def s(n: int) -> Scalar:
    return Scalar.from_int(n)


class TestScalar:
    def test_round_trip_and_repr(self) -> None:
        x = Scalar.random(DeterministicRng(b"s"))
        assert Scalar.from_bytes(x.to_bytes()) == x
        assert Scalar.fromhex(x.hex()) == x
        assert eval(repr(x)) == x

    @pytest.mark.parametrize("value", [L, L + 1, 2**255 - 19, 2**256 - 1])
    def test_rejects_unreduced(self, value: int) -> None:
        with pytest.raises(InvalidEncoding, match="not reduced"):
            Scalar.from_bytes(value.to_bytes(32, "little"))

    def test_largest_reduced_is_accepted(self) -> None:
        assert Scalar.from_bytes((L - 1).to_bytes(32, "little")) == -s(1)

    def test_zero_only_where_allowed(self) -> None:
        with pytest.raises(InvalidEncoding, match="zero"):
            Scalar.from_bytes(bytes(32))
        assert Scalar.from_bytes(bytes(32), allow_zero=True).is_zero

    @pytest.mark.parametrize("size", [0, 31, 33, 64])
    def test_rejects_wrong_length(self, size: int) -> None:
        with pytest.raises(InvalidEncoding):
            Scalar.from_bytes(b"\x01" * size)

    def test_bad_hex_is_remote(self) -> None:
        with pytest.raises(InvalidEncoding):
            Scalar.fromhex("zz")

    def test_constructor_checks_length(self) -> None:
        with pytest.raises(LocalProtocolError):
            Scalar(b"\x01" * 31)

    @given(st.integers(0, L - 1), st.integers(0, L - 1))
    def test_arithmetic_matches_integers(self, a: int, b: int) -> None:
        assert s(a) + s(b) == s(a + b)
        assert s(a) - s(b) == s(a - b)
        assert s(a) * s(b) == s(a * b)
        assert -s(a) == s(-a)

    def test_random_skips_zero(self) -> None:
        class ZeroFirst:
            def __init__(self) -> None:
                self.calls = 0

            def randbytes(self, n: int) -> bytes:
                self.calls += 1
                return bytes(n) if self.calls == 1 else b"\x05" + bytes(n - 1)

        rng = ZeroFirst()
        assert Scalar.random(rng) == s(5)
        assert rng.calls == 2

    def test_from_hash_is_labelled(self) -> None:
        assert Scalar.from_hash("a", b"x") == Scalar.from_hash("a", b"x")
        assert Scalar.from_hash("a", b"x") != Scalar.from_hash("b", b"x")
        assert Scalar.from_hash("a", b"x", b"") != Scalar.from_hash("a", b"x")


class TestPoint:
    def test_round_trip_and_repr(self) -> None:
        p = Point.base_mult(s(12345))
        assert Point.from_bytes(p.to_bytes()) == p
        assert Point.fromhex(p.hex()) == p
        assert eval(repr(p)) == p

    def test_rejects_identity(self) -> None:
        with pytest.raises(InvalidEncoding, match="identity"):
            Point.from_bytes(bytes(32))

    @pytest.mark.parametrize("size", [0, 1, 31, 33, 64])
    def test_rejects_wrong_length(self, size: int) -> None:
        with pytest.raises(InvalidEncoding):
            Point.from_bytes(b"\x02" * size)

    def test_rejects_invalid_and_noncanonical(self) -> None:
        # 2^255 - 1 is a non-canonical field encoding; 1 is a "negative" one.
        for raw in (b"\xff" * 31 + b"\x7f", b"\x01" + bytes(31), b"\xff" * 32):
            with pytest.raises(InvalidEncoding):
                Point.from_bytes(raw)

    def test_rbcl_silently_adds_invalid_points(self) -> None:
        # Why validation must come first (libTMCG 1.1.1's missing range check):
        # libsodium's add returns zeros instead of failing on an invalid input.
        import rbcl

        bad = b"\xff" * 31 + b"\x7f"
        assert rbcl.crypto_core_ristretto255_add(G.data, bad) == bytes(32)
        with pytest.raises(InvalidEncoding):
            Point.from_bytes(bad)

    def test_bad_hex_is_remote(self) -> None:
        with pytest.raises(InvalidEncoding):
            Point.fromhex("not hex")

    @given(st.integers(1, L - 1), st.integers(1, L - 1))
    def test_group_laws(self, a: int, b: int) -> None:
        pa, pb = Point.base_mult(s(a)), Point.base_mult(s(b))
        if (a + b) % L:
            assert pa + pb == Point.base_mult(s(a + b))
        if (a - b) % L:
            assert pa - pb == Point.base_mult(s(a - b))
        assert pa * s(b) == Point.base_mult(s(a * b))
        assert -pa == Point.base_mult(s(-a))

    def test_generator_multiplication_uses_base_path(self) -> None:
        counters.reset()
        assert G * s(7) == Point.base_mult(s(7))
        assert counters.base_mults == 2
        assert counters.var_mults == 0

    def test_identity_results_raise_remote_error(self) -> None:
        p = Point.base_mult(s(9))
        with pytest.raises(DegenerateResult):
            _ = p - p
        with pytest.raises(DegenerateResult):
            _ = p + Point.base_mult(s(-9))
        with pytest.raises(DegenerateResult):
            _ = p * Scalar.from_bytes(bytes(32), allow_zero=True)
        with pytest.raises(DegenerateResult):
            Point.base_mult(Scalar.from_bytes(bytes(32), allow_zero=True))
        with pytest.raises(DegenerateResult):
            Point.sum([p, Point.base_mult(s(-9))])
        assert issubclass(DegenerateResult, RemoteProtocolError)

    def test_sum(self) -> None:
        pts = [Point.base_mult(s(i)) for i in (1, 2, 3)]
        assert Point.sum(pts) == Point.base_mult(s(6))
        with pytest.raises(LocalProtocolError):
            Point.sum([])

    def test_hash_to_group_is_labelled(self) -> None:
        assert Point.from_hash("card", b"a") == Point.from_hash("card", b"a")
        assert Point.from_hash("card", b"a") != Point.from_hash("card2", b"a")

    def test_counters(self) -> None:
        counters.reset()
        p = Point.base_mult(s(3))
        q = p * s(5)
        _ = p + q
        Point.from_bytes(q.data)
        assert counters.snapshot() == {
            "base_mults": 1, "var_mults": 1, "adds": 1, "decodes": 1, "hashes_to_group": 0,
        }
        assert counters.scalar_mults == 2
        counters.reset()
        assert counters.snapshot()["base_mults"] == 0


# -- fuzzing: arbitrary bytes into every decoder only raise the remote kind ----

CTX = RevealContext(HandContext(b"t", 1), 0, 0, None)


def _decoders(data: bytes) -> list[Callable[[], object]]:
    return [
        lambda: Point.from_bytes(data),
        lambda: Scalar.from_bytes(data),
        lambda: Ciphertext.from_bytes(data),
        lambda: decode_deck(data, 2),
        lambda: Point.many_from_bytes(data),
        lambda: ShuffleWitness.from_bytes(data, 2),
        lambda: SchnorrProof.from_bytes(data),
        lambda: PublicKeyShare.from_bytes(0, data),
        lambda: DleqProof.from_bytes(data),
        lambda: DecryptionShare.from_bytes(CTX, data),
    ]


@given(st.one_of(st.binary(max_size=200), st.sampled_from([32, 64, 96, 100, 128]).flatmap(
    lambda n: st.binary(min_size=n, max_size=n))))
def test_decoders_raise_only_remote_errors(data: bytes) -> None:
    for decode in _decoders(data):
        with contextlib.suppress(RemoteProtocolError):
            decode()


@given(st.binary(min_size=32, max_size=32))
def test_valid_looking_points_decode_or_fail_remote(data: bytes) -> None:
    try:
        p = Point.from_bytes(data)
    except RemoteProtocolError:
        return
    assert p.data == data
    assert p + p == p * s(2)


def test_bytes_like_input_is_accepted_and_other_types_refused() -> None:
    p = Point.base_mult(s(3))
    assert Point.from_bytes(bytearray(p.data)) == p
    assert Point.from_bytes(memoryview(p.data)) == p
    assert Scalar.from_bytes(bytearray(s(3).data)) == s(3)
    for junk in (None, "00" * 32, 5, [0] * 32):
        with pytest.raises(InvalidEncoding, match="must be bytes"):
            Point.from_bytes(junk)  # type: ignore[arg-type]
        with pytest.raises(InvalidEncoding, match="must be bytes"):
            Scalar.from_bytes(junk)  # type: ignore[arg-type]


def test_local_misuse_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError):
        Scalar.from_wide(bytes(32))
    with pytest.raises(LocalProtocolError):
        Point(b"\x01" * 31)
    with pytest.raises(LocalProtocolError):
        Point.from_uniform(bytes(32))


def test_hash_to_group_of_zeros_is_refused() -> None:
    # The one-way map sends 64 zero bytes to the identity, which no card may be.
    with pytest.raises(DegenerateResult):
        Point.from_uniform(bytes(64))


@given(st.text(max_size=80))
def test_arbitrary_hex_text_raises_only_remote_errors(text: str) -> None:
    for decode in (Point.fromhex, Scalar.fromhex):
        with contextlib.suppress(RemoteProtocolError):
            decode(text)


def test_many_from_bytes() -> None:
    pts = tuple(Point.base_mult(s(i)) for i in (1, 2, 3))
    raw = b"".join(p.data for p in pts)
    counters.reset()
    assert Point.many_from_bytes(raw) == pts
    assert counters.decodes == 3
    assert Point.many_from_bytes(b"") == ()
    with pytest.raises(InvalidEncoding, match="whole number"):
        Point.many_from_bytes(raw[:-1])
    with pytest.raises(InvalidEncoding, match="point 1"):
        Point.many_from_bytes(pts[0].data + bytes(32) + pts[2].data)
    with pytest.raises(InvalidEncoding, match="point 2"):
        Point.many_from_bytes(raw[:64] + b"\xff" * 32)


class TestSharedResults:
    """``share_results``: the peers of one process share raw results; nothing else changes
    (the suite runs with it on, tests/conftest.py)."""

    @pytest.fixture(autouse=True)
    def _restore(self) -> Iterator[None]:
        yield
        group.share_results(True)

    def _work(self) -> tuple[tuple[object, ...], dict[str, int]]:
        rng = DeterministicRng(b"shared results")
        k, j = Scalar.random(rng), Scalar.random(rng)
        p = G * k
        q = p * j
        signer = Identity.generate(rng)
        signature = signer.sign("test", b"a message")
        public = signer.public.raw
        before = counters.snapshot()
        out = (p, q, p + q, q - p, mult_sum([(p, k), (q, j), (G, j)]),
               products([(p, j), (G, k)]), Point.from_bytes(q.to_bytes()),
               [ed25519_verify(signature, encode(label("test"), m), public)
                for m in (b"a message", b"another message", b"a message")])
        return out, _delta(before)

    def test_results_and_counts_are_the_same_with_and_without(self) -> None:
        group.share_results(False)
        alone = self._work()
        group.share_results(True)
        shared = self._work()
        again = self._work()  # every raw result now comes from the table
        assert alone == shared == again
        assert alone[0][-1] == [True, False, True]
        # Whole tables: the golden corpus (recorded without sharing) is byte for byte the
        # same with it, counts included (tests/golden).

    def test_a_failure_is_raised_every_time(self) -> None:
        group.share_results(True)
        p = G * s(5)
        for _ in range(2):
            with pytest.raises(DegenerateResult):
                p - p
            with pytest.raises(InvalidEncoding):
                Point.from_bytes(b"\xff" * 32)
            with pytest.raises(DegenerateResult):
                mult_sum([(p, s(1)), (p, -s(1))])


def _delta(before: dict[str, int]) -> dict[str, int]:
    return {k: v - before[k] for k, v in counters.snapshot().items()}
