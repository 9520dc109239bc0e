"""Signed envelopes: the only form in which a message travels.

Wire form: the canonical JSON (``protocol.canonical``) of ::

    {"author": b64(32), "body": {...}, "kind": str, "prev": b64(32), "seq": int,
     "sig": b64(64), "table": b64(1..64), "v": 1}

The *signed bytes* are the canonical JSON of the same object without ``"sig"``;
``sig`` is :meth:`Identity.sign` with purpose ``"envelope"`` over them. The
envelope id is ``hash32("envelope-id", signed bytes)``: it does not cover the
signature, so two signatures over one content (Ed25519 allows a signer to make
many) are one envelope, not a fork. ``prev`` is the id of the author's previous
envelope (32 zero bytes before the first, whose ``seq`` is 1).

:func:`decode` checks everything that needs no history, in this order: size,
canonical JSON, version, schema, table, kind, membership, signature. The chain
(``seq`` and ``prev`` against the author's previous envelope) is checked by
:class:`protocol.transcript.Transcript`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from protocol import canonical
from protocol.canonical import JsonObject
from protocol.domain import hash32
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.identity import SIGNATURE_SIZE, Identity, PublicKey

VERSION: Final = 1
SIGN_PURPOSE: Final = "envelope"
ID_PURPOSE: Final = "envelope-id"
MAX_ENVELOPE_SIZE: Final = 65536
"""Default limit on an envelope's wire size; a game may pass a smaller one."""
ZERO_HASH: Final = bytes(32)
MAX_TABLE_ID_SIZE: Final = 64
KIND_PATTERN: Final = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
"""Kinds are short lowercase ASCII names, e.g. ``"deal.step"``."""

_FIELDS: Final = ("author", "body", "kind", "prev", "seq", "sig", "table", "v")
_WHAT: Final = "envelope"


class EnvelopeTooLarge(InvalidEncoding):
    """The envelope exceeds the size limit; not even parsed."""


class MalformedEnvelope(InvalidEncoding):
    """Canonical JSON, but not an envelope: missing, extra or mistyped fields."""


class WrongVersion(RemoteProtocolError):
    """An envelope of a protocol version this implementation does not speak."""


class WrongTable(RemoteProtocolError):
    """A valid-looking envelope for another table (a replay across tables)."""


class UnknownKind(RemoteProtocolError):
    """A kind outside the set the caller accepts."""


class NotAMember(RemoteProtocolError):
    """An author that is not one of the table's members."""


@dataclass(frozen=True, slots=True, eq=False)
class Envelope:
    """A decoded, signature-checked envelope. Equality and hash are by wire bytes."""

    version: int
    table: bytes
    author: PublicKey
    seq: int
    prev: bytes = field(repr=False)
    kind: str
    body: JsonObject = field(repr=False)
    signature: bytes = field(repr=False)
    signed: bytes = field(repr=False)
    """The canonical bytes the signature covers (the wire object without ``sig``)."""
    wire: bytes = field(repr=False)
    """The canonical bytes as sent."""
    id: bytes = field(repr=False)

    @classmethod
    def seal(cls, identity: Identity, *, table: bytes, seq: int, prev: bytes, kind: str,
             body: Mapping[str, object], version: int = VERSION,
             max_size: int = MAX_ENVELOPE_SIZE) -> Envelope:
        """Make and sign an envelope. Our own mistakes raise :class:`LocalProtocolError`."""
        if not 1 <= len(table) <= MAX_TABLE_ID_SIZE:
            raise LocalProtocolError(f"table id of {len(table)} bytes")
        if not 1 <= seq <= canonical.MAX_INT:
            raise LocalProtocolError(f"seq {seq} out of range")
        if len(prev) != 32 or (seq == 1) != (prev == ZERO_HASH):
            raise LocalProtocolError(f"prev {prev.hex()} does not fit seq {seq}")
        if KIND_PATTERN.fullmatch(kind) is None:
            raise LocalProtocolError(f"bad kind {kind!r}")
        unsigned: dict[str, object] = {
            "author": canonical.b64encode(identity.public.raw),
            "body": dict(body),
            "kind": kind,
            "prev": canonical.b64encode(prev),
            "seq": seq,
            "table": canonical.b64encode(table),
            "v": version,
        }
        signed = canonical.encode(unsigned)
        signature = identity.sign(SIGN_PURPOSE, signed)
        wire = canonical.encode({**unsigned, "sig": canonical.b64encode(signature)})
        if len(wire) > max_size:
            raise LocalProtocolError(f"{kind} envelope of {len(wire)} bytes exceeds {max_size}")
        # Round-trip the body so the value holds exactly what a receiver decodes.
        decoded_body = canonical.decode_object(canonical.encode(unsigned["body"]),
                                               max_size=len(wire))
        return cls(version, bytes(table), identity.public, seq, bytes(prev), kind,
                   decoded_body, signature, signed, wire, hash32(ID_PURPOSE, signed))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Envelope) and other.wire == self.wire

    def __repr__(self) -> str:
        return (f"<Envelope {self.kind!r} seq={self.seq} by {self.author.fingerprint} "
                f"id={self.id.hex()[:16]}>")

    def __hash__(self) -> int:
        return hash(self.wire)

    def __bytes__(self) -> bytes:
        return self.wire

    @property
    def key(self) -> tuple[PublicKey, int]:
        """``(author, seq)``: the slot in the author's chain this envelope claims."""
        return (self.author, self.seq)


def member_index(members: Iterable[PublicKey]) -> dict[bytes, PublicKey]:
    """Raw key bytes to key, for :func:`decode`'s ``members``."""
    return {m.raw: m for m in members}


def decode(data: bytes, *, table: bytes, members: Mapping[bytes, PublicKey] | Iterable[PublicKey],
           kinds: Collection[str] | None, max_size: int = MAX_ENVELOPE_SIZE) -> Envelope:
    """Parse and check one envelope from outside.

    ``kinds=None`` accepts any well-formed kind (for third parties checking
    evidence). Every failure raises a :class:`RemoteProtocolError` subclass whose
    ``evidence`` is ``data``.
    """
    data = bytes(data)
    if len(data) > max_size:
        raise EnvelopeTooLarge(f"envelope of {len(data)} bytes exceeds {max_size}",
                               evidence=data)
    obj = canonical.decode_object(data, max_size=max_size)
    if "v" not in obj:
        raise MalformedEnvelope("envelope without a version field 'v'", evidence=data)
    version = obj["v"]
    if version != VERSION or isinstance(version, bool):
        raise WrongVersion(f"envelope version {version!r:.20}, this implementation speaks "
                           f"{VERSION}", evidence=data)
    try:
        canonical.require_keys(obj, _FIELDS, what=_WHAT, evidence=data)
        author_raw = canonical.get_bytes(obj, "author", what=_WHAT, size=32, evidence=data)
        table_id = canonical.get_bytes(obj, "table", what=_WHAT, min_size=1,
                                       max_size=MAX_TABLE_ID_SIZE, evidence=data)
        seq = canonical.get_int(obj, "seq", lo=1, hi=canonical.MAX_INT, what=_WHAT,
                                evidence=data)
        prev = canonical.get_bytes(obj, "prev", what=_WHAT, size=32, evidence=data)
        kind = canonical.get_str(obj, "kind", what=_WHAT, pattern=KIND_PATTERN, evidence=data)
        body = canonical.get_object(obj, "body", what=_WHAT, evidence=data)
        signature = canonical.get_bytes(obj, "sig", what=_WHAT, size=SIGNATURE_SIZE,
                                        evidence=data)
    except InvalidEncoding as exc:
        raise MalformedEnvelope(exc.reason, evidence=data) from None
    if (seq == 1) != (prev == ZERO_HASH):
        raise MalformedEnvelope(f"seq {seq} with prev {prev.hex()[:16]}...: the first "
                                "envelope and only it has the zero prev", evidence=data)
    if table_id != table:
        raise WrongTable(f"envelope for table {table_id.hex()}, expected {table.hex()}",
                         evidence=data)
    if kinds is not None and kind not in kinds:
        raise UnknownKind(f"kind {kind!r} not accepted here", evidence=data)
    index = members if isinstance(members, Mapping) else member_index(members)
    author = index.get(author_raw)
    if author is None:
        raise NotAMember(f"author {canonical.b64encode(author_raw)} is not a member",
                         evidence=data)
    # The signed bytes are the canonical encoding of the wire object without "sig".
    # The wire is canonical (checked above) and holds exactly _FIELDS, in key order, so
    # that encoding is the wire with the member ',"sig":"..."' cut out: "sig" is never
    # first, and only "table" (base64url) and "v" (an integer) follow it, so the last
    # ',"sig":"' is its start, and its base64url value holds no quote. The same bytes as
    # re-encoding (tests/protocol/test_envelope.py), a fifteenth of the cost.
    start = data.rindex(b',"sig":"')
    signed = data[:start] + data[data.index(b'"', start + 8) + 1:]
    author.verify(SIGN_PURPOSE, signed, signature, evidence=data)
    return Envelope(VERSION, table_id, author, seq, prev, kind, body, signature, signed, data,
                    hash32(ID_PURPOSE, signed))
