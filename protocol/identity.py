"""Long-term Ed25519 identities: who wrote a message, and a short name for it.

Every signature is over ``domain.encode(label(purpose), message)``, never over raw
bytes, so a signature made for one purpose (an envelope) can never be replayed as
another (a checkpoint).

Public keys from outside are validated beyond what OpenSSL does: the encoding
must be canonical (y < p) and the point must lie in the prime-order subgroup and
not be the identity. OpenSSL accepts the identity as a public key, and with it
anybody can forge a signature on anything (R = identity, S = 0), which would let a
player deny its own messages; torsion components would let implementations that
verify with and without the cofactor disagree.

Signatures are made by ``cryptography`` (OpenSSL) and checked by libsodium
(:func:`protocol.group.ed25519_verify`, twice as fast, and on every message's
path), whose rule also refuses a signature whose ``R`` is a point of small
order: only the key's owner can make one (``S = k a``), never by signing honestly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from protocol import canonical
from protocol.domain import encode, hash32, label
from protocol.errors import InvalidEncoding, InvalidSignature, LocalProtocolError
from protocol.group import ed25519_verify
from protocol.rng import Rng

PUBLIC_KEY_SIZE: Final = 32
SIGNATURE_SIZE: Final = 64
FINGERPRINT_SIZE: Final = 8
"""Bytes of the labelled key hash shown to people (16 hex digits)."""

# Edwards25519 (RFC 8032 section 5.1), used only to validate public keys.
_P: Final = 2**255 - 19
_L: Final = 2**252 + 27742317777372353535851937790883648493
_D: Final = -121665 * pow(121666, -1, _P) % _P
_SQRT_M1: Final = pow(2, (_P - 1) // 4, _P)


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key that passed :meth:`from_bytes`'s checks.

    Text form: unpadded base64url of the 32 bytes (``str(key)``, :meth:`from_text`).
    """

    raw: bytes

    def __post_init__(self) -> None:
        # A constructed key is as strict as a decoded one: no bypassing validation.
        _check_point(self.raw)

    @classmethod
    def from_bytes(cls, raw: bytes) -> PublicKey:
        """Validate 32 bytes from outside; raises :class:`InvalidEncoding`."""
        return cls(bytes(raw))

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        return cls(canonical.b64decode(text))

    def __str__(self) -> str:
        return canonical.b64encode(self.raw)

    def __repr__(self) -> str:
        return f"PublicKey.from_text({str(self)!r})"

    @property
    def fingerprint(self) -> str:
        """A short, labelled hash of the key for people and service names."""
        return fingerprint(self.raw)

    def verify(self, purpose: str, message: bytes, signature: bytes, *,
               evidence: bytes = b"") -> None:
        """Check a signature made by :meth:`Identity.sign`; fail closed.

        Raises :class:`InvalidSignature` (carrying ``evidence``) on any mismatch,
        including a signature of the wrong length.
        """
        if len(signature) != SIGNATURE_SIZE:
            raise InvalidSignature(
                f"signature of {len(signature)} bytes by {self.fingerprint} for {purpose!r}",
                evidence=evidence)
        if not ed25519_verify(bytes(signature), encode(label(purpose), message), self.raw):
            raise InvalidSignature(
                f"bad {purpose!r} signature claimed by {self.fingerprint}",
                evidence=evidence)


class Identity:
    """An Ed25519 key pair. The private half never leaves this object except by
    :meth:`private_bytes` (for the caller's key store)."""

    __slots__ = ("_key", "public")

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._key = private
        self.public = PublicKey(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    @classmethod
    def generate(cls, rng: Rng) -> Identity:
        """A fresh identity from injected randomness (32 bytes of seed)."""
        return cls.from_seed(rng.randbytes(32))

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """The RFC 8032 private key ``seed`` (32 bytes)."""
        if len(seed) != 32:
            raise LocalProtocolError(f"an Ed25519 seed has 32 bytes, got {len(seed)}")
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def private_bytes(self) -> bytes:
        return self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    def sign(self, purpose: str, message: bytes) -> bytes:
        """Ed25519 over ``encode(label(purpose), message)``."""
        return self._key.sign(encode(label(purpose), message))

    def __repr__(self) -> str:
        return f"<Identity {self.public.fingerprint}>"


def fingerprint(raw: bytes) -> str:
    """``hash32("identity-fingerprint", key)[:8]`` in lowercase hex."""
    return hash32("identity-fingerprint", raw)[:FINGERPRINT_SIZE].hex()


def _check_point(raw: bytes) -> None:
    if not isinstance(raw, bytes) or len(raw) != PUBLIC_KEY_SIZE:
        size = len(raw) if isinstance(raw, bytes | bytearray) else type(raw).__name__
        raise InvalidEncoding(f"an Ed25519 public key has 32 bytes, got {size}",
                              evidence=raw if isinstance(raw, bytes) else b"")
    point = _decompress(raw)
    if point is None:
        raise InvalidEncoding("not a canonical Ed25519 point", evidence=raw)
    if _is_identity(point):
        raise InvalidEncoding("the identity point is not a public key", evidence=raw)
    if not _is_identity(_mul(_L, point)):
        raise InvalidEncoding("public key has a small-order component", evidence=raw)


_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T)


def _decompress(raw: bytes) -> _Point | None:
    """RFC 8032 section 5.1.3, rejecting y >= p and x = 0 with the sign bit set."""
    y = int.from_bytes(raw, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    if y >= _P:
        return None
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    vxx = v * x * x % _P
    if vxx == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif vxx != u:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = _P - x
    return (x, y, 1, x * y % _P)


def _add(a: _Point, b: _Point) -> _Point:
    """RFC 8032 section 5.1.4 addition (complete: also doubles)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = 2 * t1 * t2 * _D % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(k: int, point: _Point) -> _Point:
    result: _Point = (0, 1, 1, 0)
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def _is_identity(point: _Point) -> bool:
    x, y, z, _ = point
    return x % _P == 0 and (y - z) % _P == 0
