"""A recording RNG for the vector generators: the draws are part of each vector, so a
second implementation can feed the same randomness and compare byte for byte."""

from __future__ import annotations

from protocol.rng import DeterministicRng

__all__ = ["Tap"]


class Tap:
    """Passes randomness through and records every draw."""

    def __init__(self, rng: DeterministicRng) -> None:
        self.rng = rng
        self.log: list[bytes] = []

    def randbytes(self, n: int) -> bytes:
        out = self.rng.randbytes(n)
        self.log.append(out)
        return out

    def take(self) -> list[bytes]:
        out, self.log = self.log, []
        return out
