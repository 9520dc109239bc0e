"""Versioned domain labels and unambiguous hash inputs (magic-wormhole's hygiene).

Every hash, KDF, challenge and signature in the protocol is computed over
``encode(label(purpose), part, ...)``: each field is prefixed with its length as
8 bytes big-endian, so no two different field lists share an encoding, and the
label names both the protocol version and the purpose.
"""

from __future__ import annotations

import hashlib

PROTOCOL_NAME = "p2pkille-protocol"
PROTOCOL_VERSION = 1
LABEL_PREFIX = f"{PROTOCOL_NAME}/v{PROTOCOL_VERSION}/".encode()


def label(purpose: str) -> bytes:
    """The versioned label for one purpose, e.g. ``label("dleq")``."""
    if not purpose or not purpose.isascii() or " " in purpose:
        raise ValueError(f"bad label purpose {purpose!r}")
    return LABEL_PREFIX + purpose.encode("ascii")


def encode(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: ``len(p) as u64 big-endian || p`` for each part."""
    return b"".join(len(p).to_bytes(8, "big") + p for p in parts)


def hash32(purpose: str, *parts: bytes) -> bytes:
    """SHA-256 over the labelled, length-prefixed parts."""
    return hashlib.sha256(encode(label(purpose), *parts)).digest()


def hash64(purpose: str, *parts: bytes) -> bytes:
    """SHA-512 over the labelled, length-prefixed parts (input to hash-to-group/scalar)."""
    return hashlib.sha512(encode(label(purpose), *parts)).digest()
