"""Gap fill: an unsigned transport message outside the chains.

``sync`` = ``b"S"`` + canonical JSON ``{"heads": [seq per member, member order]}``: what
the sender has accepted. A node that receives it sends back (to that peer only) the
envelopes it holds beyond those heads, at most :data:`MAX_REPLY` per sync. Every node
sends ``sync`` on a timer while its game is not finished. Anything malformed is
ignored and counted by the caller.
"""

from __future__ import annotations

from typing import Final

from protocol import canonical
from protocol.errors import InvalidEncoding
from protocol.transcript import Transcript

__all__ = ["MAX_REPLY", "PREFIX", "decode_sync", "encode_sync", "reply"]

PREFIX: Final = b"S"
MAX_REPLY: Final = 64


def encode_sync(heads: tuple[int, ...]) -> bytes:
    return PREFIX + canonical.encode({"heads": list(heads)})


def decode_sync(data: bytes, members: int) -> tuple[int, ...]:
    """The heads a peer announced; raises :class:`InvalidEncoding`."""
    if not data.startswith(PREFIX):
        raise InvalidEncoding("not a sync message", evidence=data[:64])
    obj = canonical.decode_object(data[1:], max_size=64 + 24 * members)
    canonical.require_keys(obj, ("heads",), what="sync", evidence=data)
    raw = canonical.get_list(obj, "heads", what="sync", evidence=data)
    if len(raw) != members:
        raise InvalidEncoding(f"sync with {len(raw)} heads for {members} members",
                              evidence=data)
    return tuple(canonical.get_int({"h": h}, "h", lo=0, hi=canonical.MAX_INT, what="sync",
                                   evidence=data) for h in raw)


def reply(transcript: Transcript, heads: tuple[int, ...]) -> list[bytes]:
    """Envelopes we hold past ``heads``, oldest first per member, at most MAX_REPLY."""
    out: list[bytes] = []
    for member, theirs in zip(transcript.members, heads, strict=True):
        seq = theirs + 1
        while len(out) < MAX_REPLY:
            env = transcript.get(member, seq)
            if env is None:
                break
            out.append(env.wire)
            seq += 1
    return out
