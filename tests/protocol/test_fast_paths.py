"""The faster forms of canonical.py, domain.py and group.py give what the plain definitions give.

Each shortcut taken for speed is checked against the definition it replaces,
written out here the plain way: the same bytes, the same refusals, the same messages.
"""

from __future__ import annotations

import base64
import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import canonical, domain
from protocol.errors import InvalidEncoding
from protocol.group import Point, Scalar


def plain_encode(*parts: bytes) -> bytes:
    return b"".join(len(p).to_bytes(8, "big") + p for p in parts)


@given(st.lists(st.binary(max_size=70), max_size=12))
def test_encode_is_the_length_prefixed_concatenation(parts: list[bytes]) -> None:
    assert domain.encode(*parts) == plain_encode(*parts)


@given(st.sampled_from(["dleq", "pet-claim", "shuffle-proof-u", "x"]),
       st.lists(st.binary(max_size=40), max_size=6))
def test_hashes_cover_the_label_and_the_parts(purpose: str, parts: list[bytes]) -> None:
    data = plain_encode(domain.LABEL_PREFIX + purpose.encode(), *parts)
    for _ in range(2):  # the second call takes the cached label
        assert domain.hash32(purpose, *parts) == hashlib.sha256(data).digest()
        assert domain.hash64(purpose, *parts) == hashlib.sha512(data).digest()


@pytest.mark.parametrize("purpose", ["", "two words", "caf\u00e9"])
def test_a_bad_purpose_is_refused_every_time(purpose: str) -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="bad label purpose"):
            domain.hash64(purpose, b"x")


@given(st.binary(max_size=200))
def test_base64url_is_the_standard_library_s(raw: bytes) -> None:
    text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    assert canonical.b64encode(raw) == text
    assert canonical.b64decode(text) == raw


@pytest.mark.parametrize("text", ["QR", "QUJ", "AB", "A", "QQ==", "a+b", "a/b", "a b", "\u00e9"])
def test_base64url_refusals_name_the_reason(text: str) -> None:
    with pytest.raises(InvalidEncoding) as info:
        canonical.b64decode(text, evidence=b"ev")
    assert info.value.evidence == b"ev"
    reason = str(info.value)
    if text in ("QR", "QUJ", "AB"):
        assert "trailing bits" in reason
    else:
        assert "not unpadded base64url" in reason



_B64_TEXT = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \n.\u00e9\x00",
    max_size=14)


def plain_b64decode(text: str) -> bytes | None:
    """The definition: unpadded base64url whose bytes encode back to the same text."""
    if len(text) % 4 == 1 or any(c not in "-_" and not (c.isascii() and c.isalnum())
                                 for c in text):
        return None
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return raw if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == text else None


@given(_B64_TEXT)
def test_base64url_takes_exactly_the_canonical_texts(text: str) -> None:
    want = plain_b64decode(text)
    if want is None:
        with pytest.raises(InvalidEncoding):
            canonical.b64decode(text)
    else:
        assert canonical.b64decode(text) == want

@pytest.mark.parametrize(("number", "ok"), [
    (2**53 - 1, True), (-(2**53 - 1), True), (2**53, False), (-(2**53), False),
    (10**16, False),
])
def test_decoded_integers_keep_the_range_and_its_message(number: int, ok: bool) -> None:
    data = b'{"a":%d}' % number
    if ok:
        assert canonical.decode(data) == {"a": number}
        return
    with pytest.raises(InvalidEncoding) as info:
        canonical.decode(data)
    assert str(info.value) == f"not canonical JSON: integer {number} outside +-(2**53 - 1)"
    assert info.value.evidence == data


def test_computed_values_are_ordinary_values() -> None:
    # Points and scalars made on the fast path compare, hash and print like constructed ones.
    k = Scalar.from_hash("fast", b"k")
    p = Point.GENERATOR * k
    assert p == Point(p.data)
    assert hash(p) == hash(Point(p.data))
    assert k + k == Scalar(k.data) + Scalar(k.data)
    assert repr(p) == repr(Point.from_bytes(p.data))
    with pytest.raises(AttributeError):
        p.data = bytes(32)  # type: ignore[misc]
