"""Injected randomness.

Protocol code never calls a global RNG. Production passes :class:`SystemRng`;
tests, vectors and the simulator pass :class:`DeterministicRng` so a run can be
replayed byte for byte from its seed.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Protocol

from protocol.domain import label


class Rng(Protocol):
    """Anything that yields uniformly random bytes.

    Keys, nonces and witnesses come from here, so in play it must be a CSPRNG
    (:class:`SystemRng`); ``random.Random`` has the method but is predictable and
    is fit only for tests that do not care about secrecy.
    """

    def randbytes(self, n: int, /) -> bytes: ...


class SystemRng:
    """The operating system's CSPRNG, for real play."""

    def randbytes(self, n: int, /) -> bytes:
        return secrets.token_bytes(n)


class DeterministicRng:
    """SHA-512 in counter mode over a seed: reproducible, for tests and vectors only."""

    __slots__ = ("_buffer", "_counter", "_seed")

    def __init__(self, seed: bytes) -> None:
        self._seed = hashlib.sha512(label("rng-seed") + seed).digest()
        self._counter = 0
        self._buffer = b""

    def randbytes(self, n: int, /) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha512(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out
