"""Canonical JSON: one byte form per value; everything else is refused with evidence."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import canonical
from protocol.errors import InvalidEncoding, LocalProtocolError
from protocol.vectors.gen_messages import CANONICAL_INVALID, CANONICAL_VALID

json_values = st.recursive(
    st.none() | st.booleans()
    | st.integers(-canonical.MAX_INT, canonical.MAX_INT)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"]), max_size=5), inner,
                      max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize(("value", "text"), CANONICAL_VALID)
def test_known_encodings(value: Any, text: str) -> None:
    assert canonical.encode(value) == text.encode()
    assert canonical.decode(text.encode()) == value


@pytest.mark.parametrize(("data", "reason"), CANONICAL_INVALID)
def test_known_rejections_carry_the_bytes(data: bytes, reason: str) -> None:
    with pytest.raises(InvalidEncoding) as info:
        canonical.decode(data)
    assert info.value.evidence == data, reason


@given(json_values)
def test_round_trip_and_uniqueness(value: Any) -> None:
    data = canonical.encode(value)
    assert canonical.decode(data) == value
    # The canonical form is what a plain JSON parser reads back too.
    assert json.loads(data) == value
    assert canonical.encode(json.loads(data)) == data


@given(st.dictionaries(st.text(max_size=3), st.integers(0, 9), min_size=2, max_size=6))
def test_key_order_is_by_code_point_whatever_the_insertion_order(d: dict[str, int]) -> None:
    forward = canonical.encode(d)
    backward = canonical.encode(dict(reversed(list(d.items()))))
    assert forward == backward
    keys = list(json.loads(forward, object_pairs_hook=lambda p: [k for k, _ in p]))
    assert keys == sorted(keys, key=lambda k: [ord(c) for c in k])


@given(json_values)
def test_whitespace_is_not_canonical(value: Any) -> None:
    pretty = json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True).encode()
    if pretty != canonical.encode(value):
        with pytest.raises(InvalidEncoding):
            canonical.decode(pretty)


@pytest.mark.parametrize("value", [1.5, float("nan"), {1: 2}, b"raw", 2**53, -(2**53),
                                   "\ud800", {"a": {"b": object()}}])
def test_encoding_a_bad_value_is_our_mistake(value: object) -> None:
    with pytest.raises(LocalProtocolError):
        canonical.encode(value)


def test_nesting_limit_is_the_same_both_ways() -> None:
    ok: Any = 0
    for _ in range(canonical.MAX_DEPTH):
        ok = [ok]
    assert canonical.decode(canonical.encode(ok)) == ok
    with pytest.raises(LocalProtocolError):
        canonical.encode([ok])
    with pytest.raises(InvalidEncoding, match="depth 33"):
        canonical.decode(b"[" + canonical.encode(ok) + b"]")
    # Brackets inside strings do not count.
    assert canonical.decode(b'["' + b"[" * 100 + b'"]') == ["[" * 100]


def test_deep_nesting_far_beyond_the_recursion_limit_is_refused_not_crashed() -> None:
    data = b"[" * 50000 + b"]" * 50000
    with pytest.raises(InvalidEncoding):
        canonical.decode(data, max_size=len(data))


def test_size_limit() -> None:
    data = canonical.encode({"a": "x" * 100})
    assert canonical.decode(data, max_size=len(data)) == {"a": "x" * 100}
    with pytest.raises(InvalidEncoding, match="exceeds") as info:
        canonical.decode(data, max_size=len(data) - 1)
    assert info.value.evidence == data


def test_decode_object_wants_an_object() -> None:
    assert canonical.decode_object(b'{"a":[]}') == {"a": []}
    with pytest.raises(InvalidEncoding, match="object"):
        canonical.decode_object(b"[]")


def test_strings_are_not_normalised() -> None:
    nfc, nfd = "\u00e9", "e\u0301"
    assert canonical.encode(nfc) != canonical.encode(nfd)
    assert canonical.decode(canonical.encode(nfd)) == nfd


@given(st.binary(max_size=70))
def test_base64url_round_trip(raw: bytes) -> None:
    text = canonical.b64encode(raw)
    assert not set(text) & set("=+/")
    assert canonical.b64decode(text) == raw


@pytest.mark.parametrize("text", ["A", "AB=", "AB==", "A+B/", "AB C", "AQ=", "AR", "AAB",
                                  "\u00e9A"])
def test_base64url_rejects_padding_other_alphabets_and_trailing_bits(text: str) -> None:
    # "AR" and "AAB" decode in lax decoders but have non-zero unused bits.
    with pytest.raises(InvalidEncoding):
        canonical.b64decode(text, evidence=b"E")


def test_field_readers_name_the_field() -> None:
    obj: dict[str, Any] = {"n": True, "s": "Abc", "b": "AAEC", "o": [], "l": {}}
    with pytest.raises(InvalidEncoding, match=r"m\.n: expected an integer"):
        canonical.get_int(obj, "n", lo=0, hi=9, what="m")
    with pytest.raises(InvalidEncoding, match=r"m\.s"):
        canonical.get_str(obj, "s", what="m", pattern=re.compile("[a-z]+"))
    with pytest.raises(InvalidEncoding, match=r"m\.b: 3 bytes, expected 4"):
        canonical.get_bytes(obj, "b", what="m", size=4)
    assert canonical.get_bytes(obj, "b", what="m", min_size=1, max_size=3) == b"\x00\x01\x02"
    with pytest.raises(InvalidEncoding, match=r"m\.o: expected an object"):
        canonical.get_object(obj, "o", what="m")
    with pytest.raises(InvalidEncoding, match=r"m\.l: expected an array"):
        canonical.get_list(obj, "l", what="m")
    with pytest.raises(InvalidEncoding, match=r"missing fields \['z'\], unexpected fields"):
        canonical.require_keys(obj, ["n", "s", "b", "o", "z"], what="m")


def test_a_missing_field_is_the_senders_encoding_error_not_a_key_error() -> None:
    # A peer's body with a field left out must raise the remote kind of error, like a
    # field of the wrong type: a bare KeyError would escape a node's peer-input guard.
    for read in (
            lambda: canonical.get_int({}, "n", lo=0, hi=9, what="m", evidence=b"E"),
            lambda: canonical.get_str({}, "n", what="m", pattern=re.compile("x"), evidence=b"E"),
            lambda: canonical.get_bytes({}, "n", what="m", evidence=b"E"),
            lambda: canonical.get_object({}, "n", what="m", evidence=b"E"),
            lambda: canonical.get_list({}, "n", what="m", evidence=b"E")):
        with pytest.raises(InvalidEncoding, match=r"m\.n: missing") as caught:
            read()
        assert caught.value.evidence == b"E"
