"""The boundary between a sans-I/O node and whatever carries its bytes and keeps its time.

A node never touches sockets or clocks: a transport (the simulator in ``p2pkille.sim`` or a
real network) calls ``start``, ``receive`` and ``wake`` with the current time and carries out
the outputs they return. The same node therefore runs unchanged under both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias


@dataclass(frozen=True, slots=True)
class Send:
    """An output of a node: ``data`` to the peer named ``to``, or to all others when ``None``."""

    data: bytes
    to: str | None = None


@dataclass(frozen=True, slots=True)
class WakeAt:
    """An output of a node: call ``node.wake(now)`` once the clock reaches ``at`` (seconds)."""

    at: float


Output: TypeAlias = Send | WakeAt


class Node(Protocol):
    """A peer as a transport sees it: bytes and time in, outputs out.

    ``sender`` in ``receive`` is the transport's name for where the bytes came from; a node
    never trusts it for authorship, because envelopes carry their own signatures.
    """

    @property
    def name(self) -> str: ...

    def start(self, now: float) -> Sequence[Output]: ...

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]: ...

    def wake(self, now: float) -> Sequence[Output]: ...
