"""Gap fill: an unsigned transport message outside the chains.

``sync`` = ``b"S"`` + canonical JSON ``{"heads": [seq per member, member order]}``, plus
``"open": n`` while the sender's hand ``n`` is neither committed nor voided. A node that
receives it sends back (to that peer only) the envelopes it holds beyond those heads, at
most :data:`MAX_REPLY` per sync, leaving out the ones it took in too recently to tell a
gap from an envelope still on its way; and, if it committed hand ``n``, every key holder's
checkpoint envelope of it (a signer may have sent that peer a different one: II.7).
Every node sends ``sync`` on a timer while its game is not finished. Anything malformed
is ignored and counted by the caller.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from protocol import canonical
from protocol.errors import InvalidEncoding
from protocol.transcript import Transcript

__all__ = ["MAX_REPLY", "PREFIX", "Sync", "decode_sync", "encode_sync", "reply"]

PREFIX: Final = b"S"
MAX_REPLY: Final = 64


@dataclass(frozen=True, slots=True)
class Sync:
    """What a peer holds (``heads``) and the hand it is still in (``open``), if any."""

    heads: tuple[int, ...]
    open: int | None = None


@functools.lru_cache(maxsize=1024)
def encode_sync(heads: tuple[int, ...], open_hand: int | None = None) -> bytes:
    """``sync`` for ``heads`` and ``open_hand``. Cached: a node sends the same sync on
    every timer while nothing moves."""
    body: dict[str, object] = {"heads": list(heads)}
    if open_hand is not None:
        body["open"] = open_hand
    return PREFIX + canonical.encode(body)


@functools.lru_cache(maxsize=4096)
def decode_sync(data: bytes, members: int) -> Sync:
    """The heads (and open hand) a peer announced; raises :class:`InvalidEncoding`.
    A pure function of its input, so it is cached: a table's peers send one another the
    same sync many times while nothing moves (only results are kept, never an error)."""
    if not data.startswith(PREFIX):
        raise InvalidEncoding("not a sync message", evidence=data[:64])
    obj = canonical.decode_object(data[1:], max_size=96 + 24 * members)
    canonical.require_keys(obj, ("heads", "open") if "open" in obj else ("heads",),
                           what="sync", evidence=data)
    raw = canonical.get_list(obj, "heads", what="sync", evidence=data)
    if len(raw) != members:
        raise InvalidEncoding(f"sync with {len(raw)} heads for {members} members",
                              evidence=data)
    heads = tuple(canonical.get_int({"h": h}, "h", lo=0, hi=canonical.MAX_INT, what="sync",
                                    evidence=data) for h in raw)
    open_hand = (canonical.get_int(obj, "open", lo=1, hi=canonical.MAX_INT, what="sync",
                                   evidence=data) if "open" in obj else None)
    return Sync(heads, open_hand)


def reply(transcript: Transcript, heads: tuple[int, ...],
          fresh: Callable[[int, int], bool] | None = None) -> list[bytes]:
    """Envelopes we hold past ``heads``, oldest first per member, at most MAX_REPLY.

    ``fresh(member, seq)``: taken in so recently that the peer may simply not have it
    yet; it and the rest of that member's chain wait for a later sync (re-sending what
    is in flight cost 2.7x the bytes under 200 ms of delay)."""
    out: list[bytes] = []
    for m, (member, theirs) in enumerate(zip(transcript.members, heads, strict=True)):
        seq = theirs + 1
        while len(out) < MAX_REPLY:
            env = transcript.get(member, seq)
            if env is None or (fresh is not None and fresh(m, seq)):
                break
            out.append(env.wire)
            seq += 1
    return out
