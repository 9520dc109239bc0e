"""Length-prefixed frames on a byte stream: a 4-byte big-endian length, then the payload.

The length is checked against a maximum before anything is read, so a peer cannot make us
buffer more than ``max_size`` bytes for one frame; a declared length over it is the peer's
fault (:class:`FrameError`), and the connection is closed without reading on.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Final

from protocol.errors import RemoteProtocolError

__all__ = ["HEADER_SIZE", "MAX_FRAME", "FrameError", "encode_frame", "read_frame"]

HEADER_SIZE: Final = 4
MAX_FRAME: Final = 1 << 20
"""Default largest payload, in bytes (1 MiB; a protocol message is at most 64 KiB)."""

_HEADER: Final = struct.Struct(">I")


class FrameError(RemoteProtocolError):
    """A frame from a peer that breaks the framing: too large, or cut short."""


def encode_frame(payload: bytes, max_size: int = MAX_FRAME) -> bytes:
    """The frame carrying ``payload``; a payload over ``max_size`` is our own bug."""
    if len(payload) > max_size:
        raise ValueError(f"frame of {len(payload)} bytes exceeds the maximum of {max_size}")
    return _HEADER.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader, max_size: int = MAX_FRAME) -> bytes | None:
    """The next payload, or ``None`` at a clean end of stream (between frames).

    Raises :class:`FrameError` for a declared length over ``max_size`` (``evidence`` holds
    the header) or a stream that ends inside a frame.
    """
    try:
        header = await reader.readexactly(HEADER_SIZE)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError(f"stream ended inside a frame header after {len(exc.partial)} bytes",
                         evidence=exc.partial) from None
    (size,) = _HEADER.unpack(header)
    if size > max_size:
        raise FrameError(f"frame of {size} bytes announced; the maximum is {max_size}",
                         evidence=header)
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(f"stream ended after {len(exc.partial)} of {size} payload bytes",
                         evidence=header + exc.partial) from None
