"""Length-prefixed framing, offline: every way a stream can end or lie."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.net.framing import FrameError, encode_frame, read_frame


def frames(data: bytes, max_size: int = 64) -> list[bytes | None] | FrameError:
    async def main() -> list[bytes | None] | FrameError:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        out: list[bytes | None] = []
        try:
            while (frame := await read_frame(reader, max_size)) is not None:
                out.append(frame)
        except FrameError as exc:
            return exc
        return out

    return asyncio.run(main())


def test_frames_round_trip_and_a_clean_end_is_none() -> None:
    assert frames(encode_frame(b"") + encode_frame(b"abc") + encode_frame(bytes(64))) == [
        b"", b"abc", bytes(64)]
    assert frames(b"") == []


@pytest.mark.parametrize(("data", "message"), [
    (b"\x00\x00", "inside a frame header after 2 bytes"),
    (b"\x00\x00\x00\x05abc", "after 3 of 5 payload bytes"),
    (b"\x00\x00\x00\x41" + bytes(65), "frame of 65 bytes announced; the maximum is 64"),
])
def test_broken_streams_raise_frame_error(data: bytes, message: str) -> None:
    error = frames(data)
    assert isinstance(error, FrameError)
    assert message in str(error)


def test_our_own_oversized_frame_is_a_local_error() -> None:
    with pytest.raises(ValueError, match="exceeds the maximum of 3"):
        encode_frame(b"abcd", max_size=3)


@given(st.binary(max_size=200))
def test_any_bytes_give_frames_or_a_frame_error(data: bytes) -> None:
    result = frames(data)
    if not isinstance(result, FrameError):
        assert b"".join(encode_frame(f) for f in result if f is not None) == data
