"""Checkpoints: every seat signs the same statement of where the table stands.

A :class:`Checkpoint` states (table, hand, members, cut, transcript root, state
digest, previous checkpoint id). Its canonical JSON ::

    {"cut": [int, ...], "hand": int, "members": [b64(32), ...], "prev": b64(32),
     "root": b64(32), "state": b64(1..64), "table": b64(1..64), "v": 1}

is signed by each member with purpose ``"checkpoint"``; its id is
``hash32("checkpoint-id", statement bytes)`` and the next checkpoint's ``prev``
(32 zero bytes for the first), so checkpoints form a chain of their own. A
:class:`CommittedCheckpoint` carries one signature per member, in member order:
anybody who knows the table id and its members can verify it without the
transcript; somebody holding the transcript can also check the root.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from protocol import canonical
from protocol.canonical import JsonObject
from protocol.domain import hash32
from protocol.envelope import MAX_TABLE_ID_SIZE, ZERO_HASH, NotAMember, WrongTable
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.identity import SIGNATURE_SIZE, Identity, PublicKey
from protocol.transcript import Cut, Transcript

VERSION: Final = 1
SIGN_PURPOSE: Final = "checkpoint"
ID_PURPOSE: Final = "checkpoint-id"
MAX_STATE_SIZE: Final = 64
MAX_CHECKPOINT_SIZE: Final = 16384

_FIELDS: Final = ("cut", "hand", "members", "prev", "root", "state", "table", "v")
_WHAT: Final = "checkpoint"


class MalformedCheckpoint(InvalidEncoding):
    """Canonical JSON that is not a checkpoint."""


class WrongMembers(RemoteProtocolError):
    """A checkpoint over another member list (or order) than the table's."""


class WrongRoot(RemoteProtocolError):
    """A checkpoint whose root differs from our transcript's root over its cut."""


class BrokenCheckpointChain(RemoteProtocolError):
    """A checkpoint that does not follow the previous committed one."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The statement every member signs."""

    table: bytes
    hand: int
    members: tuple[PublicKey, ...]
    cut: Cut
    root: bytes
    state: bytes
    prev: bytes = ZERO_HASH

    def __post_init__(self) -> None:
        if not 1 <= len(self.table) <= MAX_TABLE_ID_SIZE:
            raise LocalProtocolError(f"table id of {len(self.table)} bytes")
        if not 0 <= self.hand <= canonical.MAX_INT:
            raise LocalProtocolError(f"hand {self.hand} out of range")
        if len(self.members) != len(self.cut.heads) or len(set(self.members)) != len(
                self.members):
            raise LocalProtocolError("members and cut disagree, or members repeat")
        if len(self.root) != 32 or len(self.prev) != 32:
            raise LocalProtocolError("root and prev are 32-byte hashes")
        if not 1 <= len(self.state) <= MAX_STATE_SIZE:
            raise LocalProtocolError(f"state digest of {len(self.state)} bytes")

    @classmethod
    def of(cls, transcript: Transcript, *, hand: int, state: bytes, prev: bytes = ZERO_HASH,
           cut: Cut | None = None) -> Checkpoint:
        """The statement for ``transcript`` over ``cut`` (default: its heads)."""
        cut = transcript.heads() if cut is None else cut
        return cls(transcript.table, hand, transcript.members, cut, transcript.root(cut),
                   state, prev)

    def to_json(self) -> JsonObject:
        return {
            "cut": list(self.cut.heads),
            "hand": self.hand,
            "members": [canonical.b64encode(m.raw) for m in self.members],
            "prev": canonical.b64encode(self.prev),
            "root": canonical.b64encode(self.root),
            "state": canonical.b64encode(self.state),
            "table": canonical.b64encode(self.table),
            "v": VERSION,
        }

    def encode(self) -> bytes:
        return canonical.encode(self.to_json())

    @property
    def id(self) -> bytes:
        return hash32(ID_PURPOSE, self.encode())

    @classmethod
    def from_json(cls, obj: JsonObject, *, table: bytes, members: Sequence[PublicKey],
                  evidence: bytes = b"") -> Checkpoint:
        """Parse a statement from outside; it must be for ``table`` and ``members``."""
        try:
            canonical.require_keys(obj, _FIELDS, what=_WHAT, evidence=evidence)
            canonical.get_int(obj, "v", lo=VERSION, hi=VERSION, what=_WHAT,
                                        evidence=evidence)
            table_id = canonical.get_bytes(obj, "table", what=_WHAT, min_size=1,
                                           max_size=MAX_TABLE_ID_SIZE, evidence=evidence)
            hand = canonical.get_int(obj, "hand", lo=0, hi=canonical.MAX_INT, what=_WHAT,
                                     evidence=evidence)
            raw_members = canonical.get_list(obj, "members", what=_WHAT, evidence=evidence)
            raw_cut = canonical.get_list(obj, "cut", what=_WHAT, evidence=evidence)
            listed = [canonical.get_bytes({"member": m}, "member", what=_WHAT, size=32,
                                          evidence=evidence) for m in raw_members]
            heads = tuple(canonical.get_int({"cut": h}, "cut", lo=0, hi=canonical.MAX_INT,
                                            what=_WHAT, evidence=evidence) for h in raw_cut)
            root = canonical.get_bytes(obj, "root", what=_WHAT, size=32, evidence=evidence)
            state = canonical.get_bytes(obj, "state", what=_WHAT, min_size=1,
                                        max_size=MAX_STATE_SIZE, evidence=evidence)
            prev = canonical.get_bytes(obj, "prev", what=_WHAT, size=32, evidence=evidence)
        except InvalidEncoding as exc:
            raise MalformedCheckpoint(exc.reason, evidence=evidence) from None
        if table_id != table:
            raise WrongTable(f"checkpoint for table {table_id.hex()}, expected {table.hex()}",
                             evidence=evidence)
        if listed != [m.raw for m in members]:
            raise WrongMembers("checkpoint members differ from the table's", evidence=evidence)
        if len(heads) != len(listed):
            raise MalformedCheckpoint(f"cut of {len(heads)} heads for {len(listed)} members",
                                      evidence=evidence)
        return cls(table_id, hand, tuple(members), Cut(heads), root, state, prev)

    @classmethod
    def decode(cls, data: bytes, *, table: bytes, members: Sequence[PublicKey],
               max_size: int = MAX_CHECKPOINT_SIZE) -> Checkpoint:
        data = bytes(data)
        obj = canonical.decode_object(data, max_size=max_size)
        return cls.from_json(obj, table=table, members=members, evidence=data)

    def sign(self, identity: Identity) -> bytes:
        if identity.public not in self.members:
            raise LocalProtocolError(f"{identity} is not a member of this checkpoint")
        return identity.sign(SIGN_PURPOSE, self.encode())

    def verify_signature(self, signer: PublicKey, signature: bytes, *,
                         evidence: bytes = b"") -> None:
        """Raises :class:`NotAMember` or :class:`InvalidSignature`."""
        if signer not in self.members:
            raise NotAMember(f"checkpoint signature by non-member {signer.fingerprint}",
                             evidence=evidence)
        signer.verify(SIGN_PURPOSE, self.encode(), signature, evidence=evidence)

    def check_root(self, transcript: Transcript) -> None:
        """Compare with our own transcript before signing. A cut we do not cover (a
        peer's statement, we may be behind) is :class:`WrongRoot` too: fetch what
        ``transcript.missing`` names and check again."""
        if not transcript.covers(self.cut):
            raise WrongRoot(f"cut {self.cut} not covered by our heads {transcript.heads()}",
                            evidence=self.encode())
        mine = transcript.root(self.cut)
        if mine != self.root:
            raise WrongRoot(f"root {self.root.hex()[:16]}... over cut {self.cut}, ours is "
                            f"{mine.hex()[:16]}...", evidence=self.encode())

    def check_follows(self, previous: Checkpoint) -> None:
        """This checkpoint extends ``previous``: same table and members, ``prev`` is its
        id, the hand does not go back and no member's head goes back."""
        ok = (self.table == previous.table and self.members == previous.members
              and self.prev == previous.id and self.hand >= previous.hand
              and all(a >= b for a, b in zip(self.cut.heads, previous.cut.heads, strict=True)))
        if not ok:
            raise BrokenCheckpointChain(
                f"checkpoint of hand {self.hand} at {self.cut} does not follow hand "
                f"{previous.hand} at {previous.cut}", evidence=self.encode())


@dataclass(frozen=True, slots=True)
class CommittedCheckpoint:
    """A checkpoint with a valid signature from every member, in member order.

    Wire form: canonical JSON ``{"checkpoint": {...}, "sigs": [b64(64), ...]}``.
    """

    checkpoint: Checkpoint
    signatures: tuple[bytes, ...]

    def verify(self) -> None:
        """Check every signature (raises :class:`InvalidSignature` naming the signer)."""
        if len(self.signatures) != len(self.checkpoint.members):
            raise MalformedCheckpoint(
                f"{len(self.signatures)} signatures for {len(self.checkpoint.members)} members",
                evidence=self.encode())
        for member, sig in zip(self.checkpoint.members, self.signatures, strict=True):
            self.checkpoint.verify_signature(member, sig, evidence=self.encode())

    def encode(self) -> bytes:
        return canonical.encode({"checkpoint": self.checkpoint.to_json(),
                                 "sigs": [canonical.b64encode(s) for s in self.signatures]})

    @classmethod
    def decode(cls, data: bytes, *, table: bytes, members: Sequence[PublicKey],
               max_size: int = MAX_CHECKPOINT_SIZE) -> CommittedCheckpoint:
        """Parse and fully verify a committed checkpoint from outside."""
        data = bytes(data)
        obj = canonical.decode_object(data, max_size=max_size)
        what = "committed checkpoint"
        try:
            canonical.require_keys(obj, ("checkpoint", "sigs"), what=what, evidence=data)
            inner = canonical.get_object(obj, "checkpoint", what=what, evidence=data)
            raw_sigs = canonical.get_list(obj, "sigs", what=what, evidence=data)
            sigs = tuple(canonical.get_bytes({"sig": s}, "sig", what=what, size=SIGNATURE_SIZE,
                                             evidence=data) for s in raw_sigs)
        except InvalidEncoding as exc:
            raise MalformedCheckpoint(exc.reason, evidence=data) from None
        checkpoint = Checkpoint.from_json(inner, table=table, members=members, evidence=data)
        if len(sigs) != len(members):
            raise MalformedCheckpoint(f"{len(sigs)} signatures for {len(members)} members",
                                      evidence=data)
        for member, sig in zip(members, sigs, strict=True):
            checkpoint.verify_signature(member, sig, evidence=data)
        return cls(checkpoint, sigs)


class SignatureCollector:
    """Gathers members' signatures on one checkpoint until every seat has signed."""

    __slots__ = ("_sigs", "checkpoint")

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint
        self._sigs: dict[PublicKey, bytes] = {}

    def add(self, signer: PublicKey, signature: bytes, *,
            evidence: bytes = b"") -> CommittedCheckpoint | None:
        """Verify and keep one signature; return the committed checkpoint once complete.

        Raises :class:`NotAMember` or :class:`InvalidSignature` (with ``evidence``,
        e.g. the envelope that carried the signature).
        """
        self.checkpoint.verify_signature(signer, signature, evidence=evidence)
        self._sigs.setdefault(signer, signature)
        return self.committed()

    def committed(self) -> CommittedCheckpoint | None:
        if len(self._sigs) < len(self.checkpoint.members):
            return None
        return CommittedCheckpoint(self.checkpoint,
                                   tuple(self._sigs[m] for m in self.checkpoint.members))

    @property
    def waiting_for(self) -> tuple[PublicKey, ...]:
        """Members whose signature is still missing, in member order."""
        return tuple(m for m in self.checkpoint.members if m not in self._sigs)
