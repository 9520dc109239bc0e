"""Ristretto255 through rbcl: the one module that touches the group.

Two value types, :class:`Scalar` and :class:`Point`, each holding its 32
canonical bytes. Everything read from outside goes through ``from_bytes``,
which validates (canonical, in the group, not the identity, reduced); values
computed here are trusted and never re-validated, which keeps a 42-card
shuffle close to the bare cost of its multiplications.

Invariant: a :class:`Point` is never the identity. The identity has no use in
this protocol (ElGamal ciphertexts, keys and card encodings are all
non-identity) and is exactly what a crafted input would aim for (a zero key,
a ciphertext that decrypts to whatever the next share says). An operation
whose result would be the identity raises :class:`DegenerateResult`, a
:class:`RemoteProtocolError`, because only peer-chosen inputs can produce it.

rbcl raises a bare ``RuntimeError`` for a zero scalar or an identity result
and silently returns zeros for some invalid inputs; both are caught here so a
peer's bytes can only ever raise the remote error type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import rbcl

from protocol.domain import hash64
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.rng import Rng

__all__ = [
    "GROUP_ORDER",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "BytesLike",
    "DegenerateResult",
    "OpCounter",
    "Point",
    "Scalar",
    "counters",
]

#: l, the prime order of ristretto255 (RFC 9496, section 4).
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
_IDENTITY = bytes(32)
BytesLike = bytes | bytearray | memoryview

_base_mult = rbcl.crypto_scalarmult_ristretto255_base
_var_mult = rbcl.crypto_scalarmult_ristretto255
_add = rbcl.crypto_core_ristretto255_add
_sub = rbcl.crypto_core_ristretto255_sub
_is_valid = rbcl.crypto_core_ristretto255_is_valid_point
_from_hash = rbcl.crypto_core_ristretto255_from_hash
_reduce = rbcl.crypto_core_ristretto255_scalar_reduce
_s_add = rbcl.crypto_core_ristretto255_scalar_add
_s_sub = rbcl.crypto_core_ristretto255_scalar_sub
_s_mul = rbcl.crypto_core_ristretto255_scalar_mul
_s_neg = rbcl.crypto_core_ristretto255_scalar_negate


def _as_bytes(data: object, what: str) -> bytes:
    # Decoders take what a transport hands over; anything not bytes-like is refused as remote.
    if type(data) is bytes:
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise InvalidEncoding(f"{what} must be bytes, got {type(data).__name__}")


class DegenerateResult(RemoteProtocolError):
    """A group operation on peer-supplied values gave the identity or used a zero scalar."""


@dataclass(slots=True)
class OpCounter:
    """How many group operations ran since the last :meth:`reset` (for cost reports)."""

    base_mults: int = 0
    var_mults: int = 0
    adds: int = 0
    decodes: int = 0
    hashes_to_group: int = 0

    @property
    def scalar_mults(self) -> int:
        return self.base_mults + self.var_mults

    def reset(self) -> None:
        self.base_mults = self.var_mults = self.adds = self.decodes = 0
        self.hashes_to_group = 0

    def snapshot(self) -> dict[str, int]:
        return {
            "base_mults": self.base_mults,
            "var_mults": self.var_mults,
            "adds": self.adds,
            "decodes": self.decodes,
            "hashes_to_group": self.hashes_to_group,
        }


#: The module's counter; callers read and reset it around the work they measure.
counters = OpCounter()


@dataclass(frozen=True, slots=True)
class Scalar:
    """An integer modulo the group order, as 32 little-endian canonical bytes."""

    data: bytes

    def __post_init__(self) -> None:
        if type(self.data) is not bytes or len(self.data) != SCALAR_BYTES:
            raise LocalProtocolError(f"Scalar needs {SCALAR_BYTES} bytes, got {self.data!r}")

    # -- construction -------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: BytesLike, *, allow_zero: bool = False) -> Scalar:
        """Validate a scalar from outside: 32 bytes, reduced, and non-zero unless allowed."""
        data = _as_bytes(data, "scalar")
        if len(data) != SCALAR_BYTES:
            raise InvalidEncoding(
                f"scalar must be {SCALAR_BYTES} bytes, got {len(data)}", evidence=data
            )
        value = int.from_bytes(data, "little")
        if value >= GROUP_ORDER:
            raise InvalidEncoding("scalar is not reduced modulo the group order", evidence=data)
        if value == 0 and not allow_zero:
            raise InvalidEncoding("scalar is zero where zero is meaningless", evidence=data)
        return cls(data)

    @classmethod
    def fromhex(cls, text: str, *, allow_zero: bool = False) -> Scalar:
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise InvalidEncoding(f"scalar hex {text!r} is not hex") from exc
        return cls.from_bytes(raw, allow_zero=allow_zero)

    @classmethod
    def from_int(cls, value: int) -> Scalar:
        """The scalar ``value mod l`` (for constants and tests)."""
        return cls((value % GROUP_ORDER).to_bytes(SCALAR_BYTES, "little"))

    @classmethod
    def from_wide(cls, data: bytes) -> Scalar:
        """Reduce 64 uniform bytes modulo l (negligible bias)."""
        if len(data) != 64:
            raise LocalProtocolError(f"wide reduction needs 64 bytes, got {len(data)}")
        return cls(_reduce(data))

    @classmethod
    def from_hash(cls, purpose: str, *parts: bytes) -> Scalar:
        """``SHA-512(encode(label(purpose), *parts))`` reduced modulo l."""
        return cls(_reduce(hash64(purpose, *parts)))

    @classmethod
    def random(cls, rng: Rng) -> Scalar:
        """A uniform non-zero scalar from 64 bytes of ``rng``."""
        while True:
            raw = _reduce(rng.randbytes(64))
            if raw != _IDENTITY:
                return cls(raw)

    # -- arithmetic (all in libsodium) --------------------------------------
    def __add__(self, other: Scalar) -> Scalar:
        return Scalar(_s_add(self.data, other.data))

    def __sub__(self, other: Scalar) -> Scalar:
        return Scalar(_s_sub(self.data, other.data))

    def __mul__(self, other: Scalar) -> Scalar:
        return Scalar(_s_mul(self.data, other.data))

    def __neg__(self) -> Scalar:
        return Scalar(_s_neg(self.data))

    @property
    def is_zero(self) -> bool:
        return self.data == _IDENTITY

    def to_bytes(self) -> bytes:
        return self.data

    def hex(self) -> str:
        return self.data.hex()

    def __repr__(self) -> str:
        return f"Scalar.fromhex({self.data.hex()!r}, allow_zero=True)"


@dataclass(frozen=True, slots=True)
class Point:
    """A non-identity ristretto255 element, as its 32-byte canonical encoding.

    ``Point(data)`` trusts ``data`` (it only checks the length); bytes from
    outside must go through :meth:`from_bytes`.
    """

    data: bytes

    GENERATOR: ClassVar[Point]

    def __post_init__(self) -> None:
        if type(self.data) is not bytes or len(self.data) != POINT_BYTES:
            raise LocalProtocolError(f"Point needs {POINT_BYTES} bytes, got {self.data!r}")

    # -- construction -------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: BytesLike) -> Point:
        """Validate an encoding from outside: length, canonical, in the group, not identity."""
        data = _as_bytes(data, "point")
        if len(data) != POINT_BYTES:
            raise InvalidEncoding(
                f"point must be {POINT_BYTES} bytes, got {len(data)}", evidence=data
            )
        counters.decodes += 1
        if data == _IDENTITY:
            raise InvalidEncoding("point is the identity", evidence=data)
        if not _is_valid(data):
            raise InvalidEncoding("bytes are not a canonical ristretto255 encoding", evidence=data)
        return cls(data)

    @classmethod
    def many_from_bytes(cls, data: BytesLike) -> tuple[Point, ...]:
        """Validate a concatenation of point encodings (a deck) in one tight loop."""
        data = _as_bytes(data, "points")
        if len(data) % POINT_BYTES:
            raise InvalidEncoding(
                f"{len(data)} bytes are not a whole number of points", evidence=data[:256]
            )
        out = []
        for i in range(0, len(data), POINT_BYTES):
            chunk = data[i:i + POINT_BYTES]
            if chunk == _IDENTITY or not _is_valid(chunk):
                raise InvalidEncoding(f"point {i // POINT_BYTES} is invalid", evidence=chunk)
            out.append(cls(chunk))
        counters.decodes += len(out)
        return tuple(out)

    @classmethod
    def fromhex(cls, text: str) -> Point:
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise InvalidEncoding(f"point hex {text!r} is not hex") from exc
        return cls.from_bytes(raw)

    @classmethod
    def from_uniform(cls, data: bytes) -> Point:
        """RFC 9496's one-way map from 64 uniform bytes (``from_hash`` in libsodium)."""
        if len(data) != 64:
            raise LocalProtocolError(f"hash-to-group needs 64 bytes, got {len(data)}")
        counters.hashes_to_group += 1
        out = _from_hash(data)
        if out == _IDENTITY:
            raise DegenerateResult("hash-to-group gave the identity", evidence=data)
        return cls(out)

    @classmethod
    def from_hash(cls, purpose: str, *parts: bytes) -> Point:
        """Hash-to-group: the one-way map of ``hash64(purpose, *parts)``."""
        return cls.from_uniform(hash64(purpose, *parts))

    @classmethod
    def base_mult(cls, scalar: Scalar) -> Point:
        """``scalar * G``, the generator's fast path."""
        counters.base_mults += 1
        try:
            return cls(_base_mult(scalar.data))
        except RuntimeError as exc:
            raise DegenerateResult("base multiplication by a zero scalar") from exc

    # -- arithmetic ---------------------------------------------------------
    def __mul__(self, scalar: Scalar) -> Point:
        if self.data == _GENERATOR_BYTES:
            return Point.base_mult(scalar)
        counters.var_mults += 1
        try:
            return Point(_var_mult(scalar.data, self.data))
        except RuntimeError as exc:
            raise DegenerateResult(
                f"scalar multiplication of {self.data.hex()} gave the identity",
                evidence=self.data,
            ) from exc

    def __add__(self, other: Point) -> Point:
        counters.adds += 1
        out = _add(self.data, other.data)
        if out == _IDENTITY:
            raise DegenerateResult(
                f"{self.data.hex()} + {other.data.hex()} is the identity", evidence=other.data
            )
        return Point(out)

    def __sub__(self, other: Point) -> Point:
        counters.adds += 1
        out = _sub(self.data, other.data)
        if out == _IDENTITY:
            raise DegenerateResult(
                f"{self.data.hex()} - {other.data.hex()} is the identity", evidence=other.data
            )
        return Point(out)

    def __neg__(self) -> Point:
        # -P = (l - 1) * P would cost a multiplication; P - 2P costs two additions.
        return self - (self + self)

    @staticmethod
    def sum(points: list[Point] | tuple[Point, ...]) -> Point:
        """The sum of one or more points."""
        if not points:
            raise LocalProtocolError("sum of no points is the identity")
        acc = points[0].data
        for p in points[1:]:
            counters.adds += 1
            acc = _add(acc, p.data)
        if acc == _IDENTITY:
            raise DegenerateResult("sum of points is the identity")
        return Point(acc)

    def to_bytes(self) -> bytes:
        return self.data

    def hex(self) -> str:
        return self.data.hex()

    def __repr__(self) -> str:
        return f"Point.fromhex({self.data.hex()!r})"


_GENERATOR_BYTES = _base_mult((1).to_bytes(32, "little"))
Point.GENERATOR = Point(_GENERATOR_BYTES)
