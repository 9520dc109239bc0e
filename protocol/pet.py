"""Proved answers: a plaintext-inequality test (PET) on one card slot.

A key holder ``p`` that holds the card of slot ``s``, ``ct = (C1, C2)`` with
``C2 = M + x C1`` under the joint key ``H = x G``, claims "``M`` is none of
``B_0 .. B_{m-1}``" without showing ``M``. It does not know ``x``.

Claim (by the prover ``p``, with its key share ``x_p``)::

    z   = a fresh non-zero scalar (the blind)
    A   = z C1,   E_k = z (C2 - B_k)   for k = 0 .. m-1,   D_p = x_p A
    w, v = fresh non-zero nonces
    T_0 = w C1,   T_k+1 = w (C2 - B_k),   U_1 = v G,   U_2 = v A
    c   = Hs("pet-claim", PC, C1, C2, B_0||..||B_m-1, X_p, A, E_0||..||E_m-1, D_p,
             T_0, T_1||..||T_m, U_1, U_2)
    s_z = w + c z,   s_x = v + c x_p

One challenge covers both Chaum-Pedersen proofs: that ``A`` and every ``E_k``
use the same ``z`` (``log_C1 A == log_(C2-B_k) E_k``) and that
``log_G X_p == log_A D_p``. ``PC`` is the claim's context (:class:`PetContext`).

Response by every other key holder ``i``: ``D_i = x_i A`` with a DLEQ proof
``log_G X_i == log_A D_i`` whose challenge binds the claim's digest and ``i``.

Result: ``S = D_p + sum D_i = x A = z x C1``, and ``E_k - S = z (M - B_k)``, so
``E_k == S`` exactly when ``M == B_k`` (``z != 0`` in a prime-order group).
:func:`pet_matches` returns those ``k``; an empty result proves the claim.

A prover that holds no key share (in Kille a buyer, who holds every share of
its card, forwarded by the seller) claims *keyless*: no ``D_p`` and no ``s_x``;
its challenge (``"pet-claim-keyless"``) covers ``A`` and the ``E_k`` only, and
every key holder responds, so ``S = sum D_i`` over all of them. Its context's
``prover`` is not a key holder's seat (p2pkille uses the key-holder count plus
its game seat).

Soundness: the proofs force ``E_k = z (C2 - B_k)`` with ``z = log_C1 A`` (not
zero: ``A`` is never the identity) and every ``D_i = x_i A``; if ``M = B_k`` then
``C2 - B_k = x C1`` and ``E_k = x A = S`` whatever ``z`` the prover picked.
Privacy: others see ``z (M - B_k)`` for an unknown uniform ``z``; telling which
card ``M`` is means deciding whether ``(C1, A, M' - B_k, E_k - S)`` is a DDH
tuple. The prover learns ``x_i A = z (x_i C1)``: a share of its own card it
already holds, which is why the claim is bound to the slot's ciphertext and a
responder MUST verify the claim against its own copy of that ciphertext before
it answers (otherwise the prover could ask for ``x_i C1'`` of any other slot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.deck import Ciphertext
from protocol.domain import hash32
from protocol.errors import InvalidEncoding, InvalidProof, LocalProtocolError
from protocol.group import (
    POINT_BYTES,
    SCALAR_BYTES,
    BytesLike,
    DegenerateResult,
    Point,
    Scalar,
    Workers,
    differences,
    products,
)
from protocol.keys import HandContext, KeyShare, u64
from protocol.reveal import DleqProof
from protocol.rng import Rng

__all__ = [
    "MAX_EXCLUDED",
    "MAX_PURPOSE",
    "BadPet",
    "PetClaim",
    "PetContext",
    "PetShare",
    "pet_matches",
    "verify_pet_shares",
]

G = Point.GENERATOR
#: Most encodings one claim may exclude (Kille needs 12); bounds a peer's claim size.
MAX_EXCLUDED = 64
MAX_PURPOSE = 32


@dataclass(frozen=True, slots=True)
class PetContext:
    """Where a claim belongs: hand, slot, prover, what it is for and a caller's sequence number."""

    hand: HandContext
    slot: int
    prover: int
    purpose: bytes
    sequence: int

    def __post_init__(self) -> None:
        if not isinstance(self.hand, HandContext):
            raise LocalProtocolError(f"hand must be a HandContext, got {self.hand!r}")
        if type(self.purpose) is not bytes or not 1 <= len(self.purpose) <= MAX_PURPOSE:
            raise LocalProtocolError(f"purpose must be 1..{MAX_PURPOSE} bytes: {self.purpose!r}")
        for name in ("slot", "prover", "sequence"):
            value = getattr(self, name)
            if type(value) is not int:
                raise LocalProtocolError(f"{name} must be an int, got {value!r}")
            u64(value)

    def parts(self) -> tuple[bytes, ...]:
        return (
            *self.hand.parts(), u64(self.slot), u64(self.prover), self.purpose,
            u64(self.sequence),
        )


class BadPet(InvalidProof):
    """A claim or response that does not verify; ``seat`` is the seat to blame."""

    def __init__(self, seat: int, reason: str, *, evidence: bytes = b"") -> None:
        super().__init__(f"seat {seat}: {reason}", evidence=evidence)
        self.seat = seat


def _check_excluded(excluded: Sequence[Point]) -> tuple[Point, ...]:
    # The set comes from the rules, never from a peer: a bad one is our bug.
    out = tuple(excluded)
    if not 1 <= len(out) <= MAX_EXCLUDED:
        raise LocalProtocolError(f"need 1..{MAX_EXCLUDED} excluded encodings, got {len(out)}")
    if not all(isinstance(b, Point) for b in out):
        raise LocalProtocolError(f"excluded encodings must be points: {out!r}")
    if len({b.data for b in out}) != len(out):
        raise LocalProtocolError("excluded encodings are not distinct")
    return out


def _cat(points: Sequence[Point]) -> bytes:
    return b"".join(p.data for p in points)


def _claim_challenge(
    ctx: PetContext, ct: Ciphertext, excluded: Sequence[Point], prover_public: Point,
    a: Point, e: Sequence[Point], own: Point, commitments: Sequence[Point],
    u1: Point, u2: Point,
) -> Scalar:
    return Scalar.from_hash(
        "pet-claim", *ctx.parts(), ct.c1.data, ct.c2.data, _cat(excluded), prover_public.data,
        a.data, _cat(e), own.data, commitments[0].data, _cat(commitments[1:]), u1.data, u2.data,
    )


def _keyless_challenge(
    ctx: PetContext, ct: Ciphertext, excluded: Sequence[Point], a: Point, e: Sequence[Point],
    commitments: Sequence[Point],
) -> Scalar:
    return Scalar.from_hash(
        "pet-claim-keyless", *ctx.parts(), ct.c1.data, ct.c2.data, _cat(excluded), a.data,
        _cat(e), commitments[0].data, _cat(commitments[1:]),
    )


def _share_challenge(
    digest: bytes, seat: int, public: Point, a: Point, value: Point, u1: Point, u2: Point
) -> Scalar:
    return Scalar.from_hash(
        "pet-share", digest, u64(seat), G.data, public.data, a.data, value.data, u1.data, u2.data
    )


def _raw(data: object, what: str) -> bytes:
    if type(data) is bytes:
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise InvalidEncoding(f"{what} must be bytes, got {type(data).__name__}")


@dataclass(frozen=True, slots=True)
class PetClaim:
    """The prover's claim: ``A``, the ``E_k``, ``D_p`` and one proof ``(c, s_z, s_x)``.

    Wire: ``A || E_0 .. E_m-1 || D_p || c || s_z || s_x``, ``32 m + 160`` bytes. A
    keyless claim (``own`` and ``response_x`` are ``None``) is ``A || E_k.. || c || s_z``,
    ``32 m + 96`` bytes.
    """

    context: PetContext
    a: Point
    e: tuple[Point, ...]
    own: Point | None
    challenge: Scalar
    response_z: Scalar
    response_x: Scalar | None
    _digest: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= len(self.e) <= MAX_EXCLUDED:
            raise LocalProtocolError(f"a claim has 1..{MAX_EXCLUDED} values E_k, got {len(self.e)}")
        if (self.own is None) != (self.response_x is None):
            raise LocalProtocolError("a claim has both D_p and s_x, or neither (keyless)")
        object.__setattr__(
            self, "_digest", hash32("pet-digest", *self.context.parts(), self.to_bytes())
        )

    @property
    def keyless(self) -> bool:
        """Made by a prover that holds no key share: every key holder responds."""
        return self.own is None

    @staticmethod
    def size(count: int, *, keyless: bool = False) -> int:
        """Wire size of a claim excluding ``count`` encodings."""
        if keyless:
            return POINT_BYTES * (count + 1) + 2 * SCALAR_BYTES
        return POINT_BYTES * (count + 2) + 3 * SCALAR_BYTES

    @classmethod
    def make(
        cls, ctx: PetContext, ct: Ciphertext, excluded: Sequence[Point], key: KeyShare | None,
        rng: Rng, *, workers: Workers | None = None,
    ) -> PetClaim:
        """Claim that ``ct`` (slot ``ctx.slot``) holds none of ``excluded``, as ``key.seat``,
        or keyless with ``key=None`` (``ctx.prover`` then names no key holder).

        Making a claim does not check it: a false claim is made like a true one
        and caught by :func:`pet_matches`. Raises :class:`DegenerateResult` if
        ``C2`` equals an excluded encoding (such a claim cannot be made, and a
        deck that holds such a ciphertext is broken). ``workers`` splits the
        products between threads; the claim is the same bytes without.
        """
        if key is not None and key.seat != ctx.prover:
            raise LocalProtocolError(f"seat {key.seat} cannot claim as seat {ctx.prover}")
        bs = _check_excluded(excluded)
        for k, b in enumerate(bs):
            if ct.c2 == b:
                raise DegenerateResult(f"C2 of slot {ctx.slot} is excluded encoding {k}")
        diffs = [ct.c2 - b for b in bs]
        if key is None:
            return cls._make_keyless(ctx, ct, bs, diffs, rng, workers)
        x = key.secret
        statement = (*ctx.parts(), ct.c1.data, ct.c2.data, _cat(bs))
        # Hedged: with a broken RNG the secret x_p alone keeps z and the nonces unpredictable.
        z = Scalar.from_hash("pet-blind", x.data, rng.randbytes(32), *statement)
        fresh = rng.randbytes(32)
        w = Scalar.from_hash("pet-claim-nonce", x.data, z.data, fresh, *statement, b"z")
        v = Scalar.from_hash("pet-claim-nonce", x.data, z.data, fresh, *statement, b"x")
        m = len(diffs)
        # D_p = x A = (z x) C1 and U_2 = v A = (z v) C1: the same points, with no product
        # waiting for A, so every product of the claim is independent.
        out = products([
            (ct.c1, z), *((d, z) for d in diffs), (ct.c1, z * x),
            (ct.c1, w), *((d, w) for d in diffs), (G, v), (ct.c1, z * v),
        ], workers)
        a, e, own = out[0], tuple(out[1:m + 1]), out[m + 1]
        commitments = out[m + 2:2 * m + 3]
        u1, u2 = out[2 * m + 3], out[2 * m + 4]
        c = _claim_challenge(ctx, ct, bs, key.public, a, e, own, commitments, u1, u2)
        return cls(ctx, a, e, own, c, w + c * z, v + c * x)

    @classmethod
    def _make_keyless(
        cls, ctx: PetContext, ct: Ciphertext, bs: tuple[Point, ...], diffs: list[Point],
        rng: Rng, workers: Workers | None,
    ) -> PetClaim:
        statement = (*ctx.parts(), ct.c1.data, ct.c2.data, _cat(bs))
        # No key share to hedge with: the RNG alone keeps z secret, so it must be a good one.
        z = Scalar.from_hash("pet-blind", rng.randbytes(32), *statement)
        w = Scalar.from_hash("pet-claim-nonce", z.data, rng.randbytes(32), *statement, b"z")
        m = len(diffs)
        out = products([
            (ct.c1, z), *((d, z) for d in diffs), (ct.c1, w), *((d, w) for d in diffs),
        ], workers)
        a, e, commitments = out[0], tuple(out[1:m + 1]), out[m + 1:]
        c = _keyless_challenge(ctx, ct, bs, a, e, commitments)
        return cls(ctx, a, e, None, c, w + c * z, None)

    def verify(
        self, ct: Ciphertext, excluded: Sequence[Point], prover_public: Point | None,
        *, workers: Workers | None = None,
    ) -> None:
        """Raise :class:`BadPet` (blaming the prover) unless the claim's proof holds for
        ``ct``, ``excluded`` and ``prover_public``, all from the verifier's own state.
        ``prover_public`` is ``None`` for a prover without a key, whose claim must be
        keyless (and only then).

        A valid claim may still be false: only :func:`pet_matches` over every
        holder's share tells. ``workers`` splits the products between threads;
        the verdict is the same without.
        """
        bs = _check_excluded(excluded)
        if len(bs) != len(self.e):
            raise LocalProtocolError(f"claim has {len(self.e)} values E_k, {len(bs)} excluded")
        seat = self.context.prover
        for k, b in enumerate(bs):
            if ct.c2 == b:
                raise BadPet(
                    seat, f"C2 is excluded encoding {k}: the claim cannot hold",
                    evidence=self.to_bytes(),
                )
        if (prover_public is None) != self.keyless:
            raise LocalProtocolError(
                f"a {'keyless' if self.keyless else 'keyed'} claim checked as the other kind")
        c, sz, sx = self.challenge, self.response_z, self.response_x
        if prover_public is None or self.own is None or sx is None:
            self._verify_keyless(ct, bs, workers)
            return
        try:
            diffs = [ct.c2 - b for b in bs]
            *commitments, u1, u2 = differences([
                (ct.c1, sz, self.a, c),
                *((d, sz, ek, c) for d, ek in zip(diffs, self.e, strict=True)),
                (G, sx, prover_public, c), (self.a, sx, self.own, c),
            ], workers)
        except DegenerateResult as exc:
            raise BadPet(seat, "degenerate claim proof", evidence=self.to_bytes()) from exc
        got = _claim_challenge(
            self.context, ct, bs, prover_public, self.a, self.e, self.own, commitments, u1, u2
        )
        if got != c:
            raise BadPet(seat, "claim proof does not verify", evidence=self.to_bytes())

    def _verify_keyless(
        self, ct: Ciphertext, bs: tuple[Point, ...], workers: Workers | None
    ) -> None:
        seat, c, sz = self.context.prover, self.challenge, self.response_z
        try:
            commitments = differences([
                (ct.c1, sz, self.a, c),
                *((ct.c2 - b, sz, ek, c) for b, ek in zip(bs, self.e, strict=True)),
            ], workers)
        except DegenerateResult as exc:
            raise BadPet(seat, "degenerate claim proof", evidence=self.to_bytes()) from exc
        if _keyless_challenge(self.context, ct, bs, self.a, self.e, commitments) != c:
            raise BadPet(seat, "claim proof does not verify", evidence=self.to_bytes())

    def digest(self) -> bytes:
        """``hash32("pet-digest", PC, claim bytes)``: what every response binds."""
        return self._digest

    def to_bytes(self) -> bytes:
        if self.own is None or self.response_x is None:
            return self.a.data + _cat(self.e) + self.challenge.data + self.response_z.data
        return (
            self.a.data + _cat(self.e) + self.own.data
            + self.challenge.data + self.response_z.data + self.response_x.data
        )

    @classmethod
    def from_bytes(
        cls, ctx: PetContext, data: BytesLike, count: int, *, keyless: bool = False
    ) -> PetClaim:
        """Parse a claim excluding ``count`` encodings (``count`` comes from the rules;
        ``keyless``, from whether the prover holds a key)."""
        if type(count) is not int or not 1 <= count <= MAX_EXCLUDED:
            raise LocalProtocolError(f"count must be 1..{MAX_EXCLUDED}, got {count!r}")
        raw = _raw(data, "claim")
        size = cls.size(count, keyless=keyless)
        if len(raw) != size:
            what = "keyless claim" if keyless else "claim"
            raise InvalidEncoding(
                f"{what} excluding {count} must be {size} bytes, got {len(raw)}", evidence=raw
            )
        if keyless:
            end = POINT_BYTES * (count + 1)
            points = Point.many_from_bytes(raw[:end])
            c = Scalar.from_bytes(raw[end:end + 32], allow_zero=True)
            sz = Scalar.from_bytes(raw[end + 32:])
            return cls(ctx, points[0], points[1:], None, c, sz, None)
        end = POINT_BYTES * (count + 2)
        points = Point.many_from_bytes(raw[:end])
        c = Scalar.from_bytes(raw[end:end + 32], allow_zero=True)
        sz = Scalar.from_bytes(raw[end + 32:end + 64])
        sx = Scalar.from_bytes(raw[end + 64:])
        return cls(ctx, points[0], points[1:-1], points[-1], c, sz, sx)


@dataclass(frozen=True, slots=True)
class PetShare:
    """Key holder ``seat``'s response ``D_i = x_i A`` with its DLEQ proof.

    Wire: ``D_i || c || s`` (96 bytes). ``claim_digest`` says which claim it answers.
    """

    claim_digest: bytes
    seat: int
    value: Point
    proof: DleqProof

    SIZE = 96

    @classmethod
    def make(
        cls, claim: PetClaim, key: KeyShare, rng: Rng, *, workers: Workers | None = None
    ) -> PetShare:
        """``key.seat``'s response to ``claim``.

        The caller MUST have verified ``claim`` against its own copy of the slot's
        ciphertext first: a response to an unchecked claim can hand the prover
        this seat's share of any card. ``workers`` splits the products between
        threads; the response is the same bytes without.
        """
        if key.seat == claim.context.prover:
            raise LocalProtocolError(f"seat {key.seat} is the prover: its share is in the claim")
        digest = claim.digest()
        x = key.secret
        value = claim.a * x
        v = Scalar.from_hash(
            "pet-share-nonce", x.data, rng.randbytes(32), digest, u64(key.seat), value.data
        )
        u1, u2 = products([(G, v), (claim.a, v)], workers)
        c = _share_challenge(digest, key.seat, key.public, claim.a, value, u1, u2)
        return cls(digest, key.seat, value, DleqProof(c, v + c * x))

    def verify(
        self, claim: PetClaim, responder_public: Point, *, workers: Workers | None = None
    ) -> None:
        """Raise :class:`BadPet` (blaming ``seat``) unless this is ``log_G(public) * A``
        bound to ``claim`` and ``seat``. ``workers`` splits the products between
        threads; the verdict is the same without."""
        if self.claim_digest != claim.digest():
            raise LocalProtocolError(f"share of seat {self.seat} answers another claim")
        c, s = self.proof.challenge, self.proof.response
        try:
            u1, u2 = differences(
                [(G, s, responder_public, c), (claim.a, s, self.value, c)], workers
            )
        except DegenerateResult as exc:
            raise BadPet(self.seat, "degenerate response proof", evidence=self.to_bytes()) from exc
        got = _share_challenge(
            claim.digest(), self.seat, responder_public, claim.a, self.value, u1, u2
        )
        if got != c:
            raise BadPet(self.seat, "response proof does not verify", evidence=self.to_bytes())

    def to_bytes(self) -> bytes:
        return self.value.data + self.proof.to_bytes()

    @classmethod
    def from_bytes(cls, claim: PetClaim, seat: int, data: BytesLike) -> PetShare:
        """Parse ``seat``'s response to ``claim`` (``seat`` from the carrying message's author).

        The prover sends no response (its share is in the claim): one from it is refused.
        """
        u64(seat)
        raw = _raw(data, "response")
        if seat == claim.context.prover:
            raise BadPet(seat, "the prover responded to its own claim", evidence=raw)
        if len(raw) != cls.SIZE:
            raise InvalidEncoding(
                f"response must be {cls.SIZE} bytes, got {len(raw)}", evidence=raw
            )
        value = Point.from_bytes(raw[:32])
        return cls(claim.digest(), seat, value, DleqProof.from_bytes(raw[32:]))


def verify_pet_shares(
    claim: PetClaim, items: Sequence[tuple[PetShare, Point]], *, workers: Workers | None = None,
) -> None:
    """``share.verify(claim, public)`` for each ``(share, public)``, in one batch.

    The responses' products form one list, which ``workers`` can split between
    threads (one response's check alone is too small to split). The verdict is the
    loop's: if any check fails, they are run again one by one in order, so the error
    is the one the first failing share raises.
    """
    if len(items) < 2:
        for share, public in items:
            share.verify(claim, public, workers=workers)
        return
    digest = claim.digest()
    terms: list[tuple[Point, Scalar, Point, Scalar]] = []
    for share, public in items:
        c, z = share.proof.challenge, share.proof.response
        terms += [(G, z, public, c), (claim.a, z, share.value, c)]
    try:
        ok = all(share.claim_digest == digest for share, _ in items)
        if ok:
            points = differences(terms, workers)
            ok = all(
                _share_challenge(digest, share.seat, public, claim.a, share.value,
                                 points[2 * k], points[2 * k + 1]) == share.proof.challenge
                for k, (share, public) in enumerate(items)
            )
    except DegenerateResult:
        ok = False
    if not ok:
        for share, public in items:
            share.verify(claim, public)
        raise LocalProtocolError("a batch of test responses failed but each one verifies")


def pet_matches(
    claim: PetClaim, shares: Sequence[PetShare], *, holders: int | None = None
) -> tuple[int, ...]:
    """The indices ``k`` where the card equals ``B_k``; empty means the claim holds.

    ``claim`` and every share must have been verified. The key holders are seats
    ``0 .. n-1``; ``n`` is ``holders`` when given (callers SHOULD pass the joint
    key's seat count), otherwise ``len(shares) + 1``. There must be exactly one
    share from every seat other than the prover (from every seat for a keyless
    claim, whose prover must be no seat below ``n``; ``LocalProtocolError`` otherwise):
    a missing share would make a false claim look true. Without ``holders`` a
    missing highest seat cannot be told from a smaller table.
    """
    prover = claim.context.prover
    seats = sorted(s.seat for s in shares)
    if claim.own is None:
        n = len(shares) if holders is None else holders
        if prover < n or seats != list(range(n)):
            raise LocalProtocolError(
                f"need one share from every seat of 0..{n - 1} for a keyless claim "
                f"(prover {prover}), have seats {seats}"
            )
    else:
        n = len(shares) + 1 if holders is None else holders
        wanted = [i for i in range(n) if i != prover]
        if prover >= n or seats != wanted:
            raise LocalProtocolError(
                f"need one share from every seat of 0..{n - 1} but the prover {prover}, "
                f"have seats {seats}"
            )
    digest = claim.digest()
    if any(s.claim_digest != digest for s in shares):
        raise LocalProtocolError("a share answers another claim")
    own = [] if claim.own is None else [claim.own]
    total = Point.sum([*own, *(s.value for s in shares)])
    return tuple(k for k, ek in enumerate(claim.e) if ek.data == total.data)
