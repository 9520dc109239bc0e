"""Versioned domain labels and unambiguous hash inputs (magic-wormhole's hygiene).

Every hash, KDF, challenge and signature in the protocol is computed over
``encode(label(purpose), part, ...)``: each field is prefixed with its length as
8 bytes big-endian, so no two different field lists share an encoding, and the
label names both the protocol version and the purpose.
"""

from __future__ import annotations

import hashlib
import struct

PROTOCOL_NAME = "p2pkille-protocol"
PROTOCOL_VERSION = 1
LABEL_PREFIX = f"{PROTOCOL_NAME}/v{PROTOCOL_VERSION}/".encode()


_U64 = struct.Struct(">Q").pack
# encode(label(purpose)) per purpose: the few dozen purposes are hashed thousands of times a hand.
_HEADS: dict[str, bytes] = {}


def label(purpose: str) -> bytes:
    """The versioned label for one purpose, e.g. ``label("dleq")``."""
    if not purpose or not purpose.isascii() or " " in purpose:
        raise ValueError(f"bad label purpose {purpose!r}")
    return LABEL_PREFIX + purpose.encode("ascii")


def encode(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: ``len(p) as u64 big-endian || p`` for each part."""
    out = []
    for p in parts:
        out.append(_U64(len(p)))
        out.append(p)
    return b"".join(out)


def _head(purpose: str) -> bytes:
    head = _HEADS.get(purpose)
    if head is None:
        head = _HEADS[purpose] = encode(label(purpose))
    return head


def hash32(purpose: str, *parts: bytes) -> bytes:
    """SHA-256 over the labelled, length-prefixed parts."""
    return hashlib.sha256(_head(purpose) + encode(*parts)).digest()


def hash64(purpose: str, *parts: bytes) -> bytes:
    """SHA-512 over the labelled, length-prefixed parts (input to hash-to-group/scalar)."""
    return hashlib.sha512(_head(purpose) + encode(*parts)).digest()
