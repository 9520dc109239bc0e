"""Small real nodes of the ``Node`` interface for the transport tests, and async helpers.

``Gossip`` sends ``count`` numbered messages to each peer and resends the unacknowledged ones
every ``retry`` seconds, so it completes over any transport that eventually delivers; it
records when each message first arrived and how long each took from its first send.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence

from p2pkille.runtime.io import Output, Send, WakeAt
from protocol.identity import Identity


def identity(index: int) -> Identity:
    return Identity.from_seed(bytes([index + 1]) * 32)


class Gossip:
    def __init__(self, name: str, peers: Sequence[str], count: int = 5,
                 retry: float = 0.2) -> None:
        self.name = name
        self.peers = [p for p in peers if p != name]
        self.count = count
        self.retry = retry
        self.unacked = {(peer, n) for peer in self.peers for n in range(count)}
        self.first_seen: dict[tuple[str, int], float] = {}
        self.copies = 0
        self.acks: dict[tuple[str, int], int] = {}  # (origin, number) -> acks received
        self.garbage = 0
        self.started: float | None = None

    def start(self, now: float) -> Sequence[Output]:
        self.started = now
        return self._resend(now)

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        try:
            kind, origin, number = data.decode().split("|")
            n = int(number)
        except ValueError:
            self.garbage += 1  # the node judges what peers send; it must not crash
            return []
        if kind == "A":
            self.unacked.discard((sender, n))
            self.acks[(origin, n)] = self.acks.get((origin, n), 0) + 1
            return []
        self.copies += 1
        self.first_seen.setdefault((origin, n), now)
        return [Send(f"A|{origin}|{n}".encode(), to=sender)]

    def wake(self, now: float) -> Sequence[Output]:
        return self._resend(now)

    def _resend(self, now: float) -> list[Output]:
        out: list[Output] = [
            Send(f"M|{self.name}|{n}".encode(), to=peer) for peer, n in sorted(self.unacked)
        ]
        if self.unacked:
            out.append(WakeAt(now + self.retry))
        return out

    def complete(self) -> bool:
        want = {(p, n) for p in self.peers for n in range(self.count)}
        return set(self.first_seen) == want and not self.unacked


#: A wait's bound only ends a test that is stuck: it is stretched this many times, so that
#: a machine busy with other work (CI, a second suite) does not fail a test that would pass.
SLACK = float(os.environ.get("P2PKILLE_TEST_SLACK", "8"))


async def until(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Poll ``predicate`` every 10 ms; fail the test after ``timeout`` seconds (times
    :data:`SLACK`)."""
    deadline = time.monotonic() + timeout * SLACK
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        await asyncio.sleep(0.01)
