"""Signed envelopes: sealing, decoding and every check in its documented order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import canonical
from protocol.domain import hash32
from protocol.envelope import (
    MAX_ENVELOPE_SIZE,
    ZERO_HASH,
    Envelope,
    EnvelopeTooLarge,
    MalformedEnvelope,
    NotAMember,
    UnknownKind,
    WrongTable,
    WrongVersion,
    decode,
)
from protocol.errors import InvalidEncoding, InvalidSignature, LocalProtocolError
from protocol.identity import Identity
from protocol.rng import DeterministicRng

TABLE = b"table-A"
KINDS = frozenset({"chat", "deal.step"})
RNG = DeterministicRng(b"test_envelope")
ALICE, BOB, MALLORY = (Identity.generate(RNG) for _ in range(3))
MEMBERS = [ALICE.public, BOB.public]


def _seal(who: Identity = ALICE, seq: int = 1, prev: bytes = ZERO_HASH, kind: str = "chat",
          body: dict[str, Any] | None = None, table: bytes = TABLE) -> Envelope:
    return Envelope.seal(who, table=table, seq=seq, prev=prev, kind=kind,
                         body={"text": "hi"} if body is None else body)


def _decode(data: bytes, **kw: Any) -> Envelope:
    args: dict[str, Any] = {"table": TABLE, "members": MEMBERS, "kinds": KINDS}
    args.update(kw)
    return decode(data, **args)


def _resign(obj: dict[str, Any], who: Identity = ALICE) -> bytes:
    """Re-sign a hand-edited envelope object, as a malicious member could."""
    unsigned = {k: v for k, v in obj.items() if k != "sig"}
    sig = who.sign("envelope", canonical.encode(unsigned))
    return canonical.encode({**unsigned, "sig": canonical.b64encode(sig)})


def test_round_trip() -> None:
    env = _seal(body={"n": 3, "list": [1, "\u00e5"], "none": None})
    back = _decode(env.wire)
    assert back == env
    assert (back.author, back.seq, back.prev, back.kind, back.body) == (
        ALICE.public, 1, ZERO_HASH, "chat", {"n": 3, "list": [1, "\u00e5"], "none": None})
    assert back.id == env.id == hash32("envelope-id", env.signed)
    assert bytes(back) == env.wire
    assert back.key == (ALICE.public, 1)


def test_signed_bytes_are_the_wire_object_without_sig() -> None:
    env = _seal()
    obj = json.loads(env.wire)
    sig = canonical.b64decode(obj.pop("sig"))
    assert canonical.encode(obj) == env.signed
    assert sig == env.signature
    ALICE.public.verify("envelope", env.signed, sig)


# Bodies that try to fool a decoder that cuts "sig" out of the wire: keys and strings
# that spell the member, quotes and escapes, nesting.
_TRICKY = st.sampled_from(['sig', ',"sig":"', '"', '\\', 'table', '"sig":"x",', '\u00e5', ''])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.text(max_size=12) | _TRICKY,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6) | _TRICKY, inner, max_size=4),
    max_leaves=12)


@given(body=st.dictionaries(st.text(max_size=6) | _TRICKY, _JSON, max_size=5),
       kind=st.sampled_from(sorted(KINDS)), seq=st.integers(1, 2**53 - 1))
def test_the_signed_bytes_cut_from_the_wire_are_the_re_encoding_without_sig(
        body: dict[str, Any], kind: str, seq: int) -> None:
    # decode cuts the "sig" member out of the canonical wire instead of re-encoding the
    # object without it; both must give the same bytes for any body.
    prev = ZERO_HASH if seq == 1 else bytes(range(32))
    env = _seal(seq=seq, prev=prev, kind=kind, body=body)
    back = _decode(env.wire)
    obj = json.loads(env.wire)
    del obj["sig"]
    assert back.signed == canonical.encode(obj) == env.signed
    assert back.id == env.id


def test_id_ignores_the_signature_but_the_wire_does_not() -> None:
    env = _seal()
    assert env.id == _seal().id
    assert env.id != _seal(body={"text": "ho"}).id


@given(st.integers(min_value=0))
def test_any_flipped_bit_is_rejected_with_the_bytes(bit_seed: int) -> None:
    wire = _seal(seq=2, prev=b"\x11" * 32).wire
    bit = bit_seed % (len(wire) * 8)
    data = bytearray(wire)
    data[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises((InvalidEncoding, InvalidSignature, WrongTable, WrongVersion,
                        UnknownKind, NotAMember)) as info:
        _decode(bytes(data))
    assert info.value.evidence == bytes(data)


def test_every_single_bit_flip_of_an_envelope_is_rejected() -> None:
    wire = _seal(BOB, seq=3, prev=b"\x22" * 32, body={"n": 1}).wire
    for bit in range(len(wire) * 8):
        data = bytearray(wire)
        data[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises((InvalidEncoding, InvalidSignature, WrongTable, WrongVersion,
                            UnknownKind, NotAMember)) as info:
            _decode(bytes(data))
        assert info.value.evidence == bytes(data)


def test_every_field_is_covered_by_the_signature() -> None:
    env = _seal(seq=2, prev=b"\x11" * 32)
    obj = json.loads(env.wire)
    changes = {"seq": 3, "prev": canonical.b64encode(b"\x12" * 32), "kind": "deal.step",
               "body": {"text": "ho"}, "author": str(BOB.public)}
    for key, value in changes.items():
        forged = canonical.encode({**obj, key: value})
        with pytest.raises(InvalidSignature) as info:
            _decode(forged)
        assert info.value.evidence == forged, key


@pytest.mark.parametrize("cut", [1, 10, 100, -1])
def test_truncated(cut: int) -> None:
    wire = _seal().wire
    with pytest.raises(InvalidEncoding) as info:
        _decode(wire[:-cut] if cut > 0 else wire[:cut])
    assert info.value.evidence


def test_wrong_table_is_a_replay_across_tables() -> None:
    other = _seal(table=b"table-B")
    with pytest.raises(WrongTable) as info:
        _decode(other.wire)
    assert info.value.evidence == other.wire
    assert _decode(other.wire, table=b"table-B") == other


def test_non_member() -> None:
    env = _seal(MALLORY)
    with pytest.raises(NotAMember) as info:
        _decode(env.wire)
    assert info.value.evidence == env.wire


def test_a_member_cannot_sign_as_another() -> None:
    obj = json.loads(_seal().wire)
    obj["author"] = str(BOB.public)
    with pytest.raises(InvalidSignature):
        _decode(_resign(obj, ALICE))


def test_wrong_version_is_checked_before_the_schema() -> None:
    obj = json.loads(_seal().wire)
    for version in (2, 0, True, "1"):
        data = _resign({**obj, "v": version, "extra": 1})
        with pytest.raises(WrongVersion):
            _decode(data)
    data = _resign({k: v for k, v in obj.items() if k != "v"})
    with pytest.raises(MalformedEnvelope, match="version"):
        _decode(data)


def test_unknown_kind_and_any_kind() -> None:
    env = _seal(kind="secret.kind")
    with pytest.raises(UnknownKind):
        _decode(env.wire)
    assert _decode(env.wire, kinds=None) == env


def test_oversized() -> None:
    env = _seal(body={"pad": "x" * 1000})
    with pytest.raises(EnvelopeTooLarge) as info:
        _decode(env.wire, max_size=len(env.wire) - 1)
    assert info.value.evidence == env.wire
    assert _decode(env.wire, max_size=len(env.wire)) == env
    with pytest.raises(LocalProtocolError, match="exceeds"):
        _seal(body={"pad": "x" * MAX_ENVELOPE_SIZE})


@pytest.mark.parametrize(("key", "value"), [
    ("seq", 0), ("seq", -1), ("seq", "1"), ("seq", True),
    ("prev", "AA"), ("prev", 5),
    ("author", canonical.b64encode(bytes(31))),
    ("table", ""), ("table", canonical.b64encode(bytes(65))),
    ("kind", "Chat"), ("kind", ""), ("kind", 7),
    ("body", []), ("body", "text"),
    ("sig", canonical.b64encode(bytes(63))),
    ("extra", 1),
])
def test_schema(key: str, value: object) -> None:
    obj = json.loads(_seal().wire)
    obj[key] = value
    data = _resign(obj) if key != "sig" else canonical.encode(obj)
    with pytest.raises(MalformedEnvelope) as info:
        _decode(data)
    assert info.value.evidence == data


def test_missing_field() -> None:
    obj = json.loads(_seal().wire)
    del obj["kind"]
    with pytest.raises(MalformedEnvelope, match="missing fields"):
        _decode(_resign(obj))


def test_first_and_only_first_envelope_has_zero_prev() -> None:
    obj = json.loads(_seal().wire)
    with pytest.raises(MalformedEnvelope, match="zero prev"):
        _decode(_resign({**obj, "seq": 2}))
    with pytest.raises(MalformedEnvelope, match="zero prev"):
        _decode(_resign({**obj, "prev": canonical.b64encode(b"\x01" * 32)}))


def test_non_canonical_wire_is_refused_even_with_a_valid_signature() -> None:
    env = _seal()
    spaced = json.dumps(json.loads(env.wire), sort_keys=True).encode()
    with pytest.raises(InvalidEncoding, match="canonical"):
        _decode(spaced)


def test_seal_refuses_our_own_mistakes() -> None:
    for kw in ({"seq": 0}, {"seq": 2}, {"prev": b"\x01" * 32}, {"kind": "Bad Kind"},
               {"table": b""}, {"body": {"x": 1.5}}):
        with pytest.raises(LocalProtocolError):
            _seal(**kw)


def test_members_may_be_given_as_an_index() -> None:
    from protocol.envelope import member_index
    env = _seal(BOB)
    assert _decode(env.wire, members=member_index(MEMBERS)) == env


def test_repr_names_the_envelope_not_its_secrets() -> None:
    text = repr(_seal())
    assert "seq=1" in text
    assert "chat" in text
    assert "signature" not in text
