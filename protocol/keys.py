"""Per-hand masking keys with proofs of knowledge, the joint key, and X25519 delivery keys.

Each seat i draws a fresh masking share ``x_i`` per hand and publishes
``X_i = x_i G`` with a Schnorr proof of knowledge of ``x_i`` bound to the
table, the hand and the seat. The joint key ``H = sum X_i`` is formed only
from shares whose proofs verify: without that check the last seat to speak
could publish ``X = x G - sum(others)``, make ``H = x G`` and decrypt every
card alone (the rogue-key attack).

A Schnorr proof is ``(c, z)``: ``w`` a nonce, ``A = w G``,
``c = Hs("key-share-pok", table, hand, seat, G, X, A)``, ``z = w + c x``.
The verifier recomputes ``A' = z G - c X`` and accepts iff the challenge over
``A'`` equals ``c``. The nonce is hedged: derived from the secret, fresh
randomness and the statement, so a weak RNG alone cannot leak ``x``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from protocol.errors import InvalidEncoding, InvalidProof, LocalProtocolError
from protocol.group import DegenerateResult, Point, Scalar
from protocol.rng import Rng

__all__ = [
    "BadKeyShare",
    "DeliveryKeyPair",
    "HandContext",
    "JointKey",
    "KeyShare",
    "PublicKeyShare",
    "SchnorrProof",
    "check_delivery_key",
    "delivery_public_key",
    "joint_key",
    "u64",
]

G = Point.GENERATOR
MAX_TABLE_ID = 64


def u64(value: int) -> bytes:
    """An unsigned integer as 8 bytes big-endian (how every number enters a hash)."""
    if not 0 <= value < 2**64:
        raise LocalProtocolError(f"{value} does not fit in an unsigned 64-bit field")
    return value.to_bytes(8, "big")


@dataclass(frozen=True, slots=True)
class HandContext:
    """Which table and which hand a key, deck or share belongs to."""

    table_id: bytes
    hand: int

    def __post_init__(self) -> None:
        if type(self.table_id) is not bytes or not 1 <= len(self.table_id) <= MAX_TABLE_ID:
            raise LocalProtocolError(f"table id must be 1..{MAX_TABLE_ID} bytes: {self.table_id!r}")
        u64(self.hand)

    def parts(self) -> tuple[bytes, bytes]:
        return (self.table_id, u64(self.hand))


class BadKeyShare(InvalidProof):
    """A seat's key-share proof does not verify; ``seat`` names the seat to blame."""

    def __init__(self, seat: int, reason: str, *, evidence: bytes = b"") -> None:
        super().__init__(f"seat {seat}: {reason}", evidence=evidence)
        self.seat = seat


@dataclass(frozen=True, slots=True)
class SchnorrProof:
    """A proof of knowledge of a discrete log, as (challenge, response)."""

    challenge: Scalar
    response: Scalar

    SIZE = 64

    def to_bytes(self) -> bytes:
        return self.challenge.data + self.response.data

    @classmethod
    def from_bytes(cls, data: bytes) -> SchnorrProof:
        if len(data) != cls.SIZE:
            raise InvalidEncoding(f"Schnorr proof must be {cls.SIZE} bytes", evidence=data)
        return cls(
            Scalar.from_bytes(data[:32], allow_zero=True), Scalar.from_bytes(data[32:])
        )


def _pok_challenge(ctx: HandContext, seat: int, public: Point, commitment: Point) -> Scalar:
    return Scalar.from_hash(
        "key-share-pok", *ctx.parts(), u64(seat), G.data, public.data, commitment.data
    )


@dataclass(frozen=True, slots=True)
class PublicKeyShare:
    """What a seat publishes for a hand: ``X_i`` and its proof of knowledge."""

    seat: int
    public: Point
    proof: SchnorrProof

    SIZE = 96

    def verify(self, ctx: HandContext) -> None:
        """Raise :class:`BadKeyShare` unless the proof verifies for this table, hand and seat."""
        c, z = self.proof.challenge, self.proof.response
        try:
            commitment = Point.base_mult(z) - self.public * c
        except DegenerateResult as exc:
            raise BadKeyShare(self.seat, "degenerate proof", evidence=self.to_bytes()) from exc
        if _pok_challenge(ctx, self.seat, self.public, commitment) != c:
            raise BadKeyShare(
                self.seat, "key-share proof does not verify", evidence=self.to_bytes()
            )

    def to_bytes(self) -> bytes:
        return self.public.data + self.proof.to_bytes()

    @classmethod
    def from_bytes(cls, seat: int, data: bytes) -> PublicKeyShare:
        if len(data) != cls.SIZE:
            raise InvalidEncoding(f"key share must be {cls.SIZE} bytes", evidence=data)
        return cls(seat, Point.from_bytes(data[:32]), SchnorrProof.from_bytes(data[32:]))


@dataclass(frozen=True, slots=True, repr=False)
class KeyShare:
    """A seat's secret masking share for one hand (repr hides the secret)."""

    seat: int
    secret: Scalar
    public: Point

    @classmethod
    def generate(cls, seat: int, rng: Rng) -> KeyShare:
        x = Scalar.random(rng)
        return cls(seat, x, Point.base_mult(x))

    @classmethod
    def from_secret(cls, seat: int, secret: Scalar) -> KeyShare:
        return cls(seat, secret, Point.base_mult(secret))

    def announce(self, ctx: HandContext, rng: Rng) -> PublicKeyShare:
        """``X_i`` with a Schnorr proof bound to ``ctx`` and this seat."""
        w = Scalar.from_hash(
            "key-share-pok-nonce", self.secret.data, rng.randbytes(32), *ctx.parts(),
            u64(self.seat), self.public.data,
        )
        commitment = Point.base_mult(w)
        c = _pok_challenge(ctx, self.seat, self.public, commitment)
        return PublicKeyShare(self.seat, self.public, SchnorrProof(c, w + c * self.secret))

    def __repr__(self) -> str:
        return f"KeyShare(seat={self.seat}, public={self.public!r}, secret=<hidden>)"


@dataclass(frozen=True, slots=True)
class JointKey:
    """``H = sum X_i`` over every seat, with the per-seat ``X_i`` kept for share checks."""

    public: Point
    shares: tuple[Point, ...]

    def __post_init__(self) -> None:
        # The audit takes H to be x G for x = sum x_i (it checks each x_i G = X_i), and a
        # record whose H is not the sum of its X_i would be judged differently by an
        # audit that re-masks with H: so no joint key exists that is not that sum.
        if not self.shares or Point.sum(self.shares) != self.public:
            raise LocalProtocolError(
                f"a joint key is the sum of its {len(self.shares)} share(s), and it is not")

    def share_of(self, seat: int) -> Point:
        if not 0 <= seat < len(self.shares):
            raise LocalProtocolError(f"no seat {seat} among {len(self.shares)} key holders")
        return self.shares[seat]

    @property
    def seats(self) -> int:
        return len(self.shares)


def joint_key(ctx: HandContext, announcements: Sequence[PublicKeyShare]) -> JointKey:
    """Verify every seat's proof, then sum. Seats must be exactly ``0..n-1``.

    Raises :class:`BadKeyShare` naming the first seat whose proof fails: no
    share enters the sum unproven.
    """
    ordered = sorted(announcements, key=lambda a: a.seat)
    if [a.seat for a in ordered] != list(range(len(ordered))) or not ordered:
        raise LocalProtocolError(
            f"need one key share per seat 0..n-1, got seats {[a.seat for a in announcements]}"
        )
    for a in ordered:
        a.verify(ctx)
    points = tuple(a.public for a in ordered)
    return JointKey(Point.sum(points), points)


# -- X25519 delivery keys ------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class DeliveryKeyPair:
    """A per-game X25519 key pair for sealed delivery; the identity key signs ``public``."""

    private: bytes
    public: bytes
    # Loading a private key derives its public key (a base-point product, about 60 us):
    # the loaded key is kept for every sealed box the pair opens. Only a key loaded from
    # ``private`` is kept (``dataclasses.replace`` copies this field too).
    _key: X25519PrivateKey | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self._key is not None and self._key.private_bytes_raw() != self.private:
            object.__setattr__(self, "_key", None)

    def __reduce__(self) -> tuple[type[DeliveryKeyPair], tuple[bytes, bytes]]:
        return (type(self), (self.private, self.public))  # the loaded key does not pickle

    @classmethod
    def generate(cls, rng: Rng) -> DeliveryKeyPair:
        return cls.from_private(rng.randbytes(32))

    @classmethod
    def from_private(cls, private: bytes) -> DeliveryKeyPair:
        if len(private) != 32:
            raise LocalProtocolError("X25519 private key must be 32 bytes")
        key = X25519PrivateKey.from_private_bytes(private)
        return cls(private, key.public_key().public_bytes_raw(), key)

    def private_key(self) -> X25519PrivateKey:
        key = self._key
        if key is None:
            key = X25519PrivateKey.from_private_bytes(self.private)
            object.__setattr__(self, "_key", key)
        return key

    def __repr__(self) -> str:
        return f"DeliveryKeyPair(public={self.public.hex()!r}, private=<hidden>)"


def delivery_public_key(data: bytes) -> X25519PublicKey:
    """Parse a peer's X25519 public key (32 bytes); low-order keys fail at use."""
    if type(data) is not bytes or len(data) != 32:
        raise InvalidEncoding("X25519 public key must be 32 bytes", evidence=bytes(data))
    return X25519PublicKey.from_public_bytes(data)


# Any clamped scalar is a multiple of 8, so it maps every low-order point (in any
# encoding) to zero, which the exchange refuses: one exchange tells them apart.
_PROBE = X25519PrivateKey.from_private_bytes(bytes(range(32)))


def check_delivery_key(data: bytes) -> bytes:
    """Validate a member's announced X25519 key before anything is sealed to it.

    A low-order key would make every seal to it fail (or, worse, make the shared
    secret public), so it is refused where it is announced, as peer input.
    """
    key = delivery_public_key(data)
    try:
        _PROBE.exchange(key)
    except ValueError as exc:
        raise InvalidEncoding("X25519 public key is a low-order point", evidence=data) from exc
    return data
