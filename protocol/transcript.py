"""The transcript: every member's hash chain of envelopes, checked and ordered.

Sans-I/O: :meth:`Transcript.receive` takes the bytes of one envelope as they
arrived (from any peer, in any order, possibly twice) and returns events; the
caller owns the network and asks peers for what :meth:`Transcript.missing` names.

Rules (``docs/protocol.md``, "10.5 Transcript"):

- an envelope is *accepted* when it is the next in its author's chain: ``seq`` is
  one more than the author's last accepted one and ``prev`` is that one's id;
- an envelope further ahead waits in a bounded reorder buffer and is released as
  soon as its predecessor is accepted;
- an envelope whose id is already known at its slot is a duplicate: dropped,
  counted, no event;
- two validly signed envelopes by one author that cannot both be in one chain are
  an :class:`Equivocation`: the same ``seq`` with different ids, or ``seq`` n+1
  whose ``prev`` is not the id of the author's envelope n. The first one seen stays
  in the chain; the other is dropped and both become evidence a third party can
  check with :meth:`Equivocation.verify`.
- the root over a :class:`Cut` is defined in :func:`root_of`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from protocol import canonical
from protocol.domain import hash32
from protocol.envelope import (
    MAX_ENVELOPE_SIZE,
    ZERO_HASH,
    Envelope,
    decode,
    member_index,
)
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.identity import PublicKey

ROOT_PURPOSE: Final = "transcript-root"
MAX_AHEAD: Final = 128
"""How far past an author's last accepted seq an envelope may be and still be buffered."""
MAX_BUFFERED: Final = 256
"""Envelopes held in the reorder buffer at most, over all authors (16 MiB at the
default envelope size limit)."""


class InvalidEvidence(RemoteProtocolError):
    """A claimed equivocation that does not prove one."""


class TooFarAhead(RemoteProtocolError):
    """An envelope beyond the reorder window. Not proof of dishonesty: the node is
    behind. The envelope is dropped; it will be listed by ``missing`` later."""


class BufferFull(RemoteProtocolError):
    """The reorder buffer is full. Not proof of dishonesty; the envelope is dropped."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A transcript cut: for each member in seat order, the seq of its last envelope
    included (0 for none). Text form: decimal seqs joined by commas, ``"3,0,5"``."""

    heads: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.heads or any(
                not isinstance(h, int) or isinstance(h, bool) or not 0 <= h <= canonical.MAX_INT
                for h in self.heads):
            raise LocalProtocolError(f"bad cut {self.heads!r}")

    @classmethod
    def from_text(cls, text: str) -> Cut:
        parts = text.split(",")
        # The length bound keeps int() below Python's 4300-digit limit (a ValueError).
        if not all(p.isascii() and p.isdigit() and (p == "0" or p[0] != "0")
                   and len(p) <= len(str(canonical.MAX_INT)) for p in parts):
            raise InvalidEncoding(f"bad cut text {text!r:.80}")
        try:
            return cls(tuple(int(p) for p in parts))
        except LocalProtocolError as exc:
            raise InvalidEncoding(str(exc)) from None

    def __str__(self) -> str:
        return ",".join(str(h) for h in self.heads)


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Two envelopes by one author that no honest author signs both of.

    ``first`` and ``second`` are wire bytes, in a canonical order so every peer builds
    the same value: for the same seq, by id; for a broken link, the lower seq first.
    """

    first: bytes
    second: bytes

    @classmethod
    def of(cls, a: Envelope, b: Envelope) -> Equivocation:
        if (a.seq, a.id) > (b.seq, b.id):
            a, b = b, a
        return cls(a.wire, b.wire)

    def verify(self, *, table: bytes,
               members: Mapping[bytes, PublicKey] | Iterable[PublicKey],
               max_size: int = MAX_ENVELOPE_SIZE) -> PublicKey:
        """Check the evidence; return the author it convicts.

        Raises :class:`RemoteProtocolError` (a decode error of either envelope, or
        :class:`InvalidEvidence`) if it proves nothing.
        """
        index = members if isinstance(members, Mapping) else member_index(members)
        a = decode(self.first, table=table, members=index, kinds=None, max_size=max_size)
        b = decode(self.second, table=table, members=index, kinds=None, max_size=max_size)
        evidence = self.to_bytes()
        if a.author != b.author:
            raise InvalidEvidence("the two envelopes have different authors", evidence=evidence)
        if (a.seq, a.id) >= (b.seq, b.id):
            raise InvalidEvidence("envelopes not in canonical order, or the same one",
                                  evidence=evidence)
        if a.seq == b.seq or (b.seq == a.seq + 1 and b.prev != a.id):
            return a.author
        raise InvalidEvidence(f"envelopes {a.seq} and {b.seq} of {a.author.fingerprint} "
                              "can be in one chain", evidence=evidence)

    def to_bytes(self) -> bytes:
        """Canonical JSON ``{"first": b64(wire), "second": b64(wire)}``."""
        return canonical.encode({"first": canonical.b64encode(self.first),
                                 "second": canonical.b64encode(self.second)})

    @classmethod
    def from_bytes(cls, data: bytes, *, max_size: int = 3 * MAX_ENVELOPE_SIZE) -> Equivocation:
        """Parse (not verify) evidence from outside; call :meth:`verify` next."""
        obj = canonical.decode_object(data, max_size=max_size)
        what = "equivocation"
        canonical.require_keys(obj, ("first", "second"), what=what, evidence=data)
        return cls(canonical.get_bytes(obj, "first", what=what, evidence=data),
                   canonical.get_bytes(obj, "second", what=what, evidence=data))


@dataclass(frozen=True, slots=True)
class Accepted:
    """The next envelope of its author's chain, released in chain order."""

    envelope: Envelope


@dataclass(frozen=True, slots=True)
class Buffered:
    """An envelope held until ``seq - 1`` of its author is accepted."""

    author: PublicKey
    seq: int


@dataclass(frozen=True, slots=True)
class Equivocated:
    """An author forked its chain; the evidence names it."""

    evidence: Equivocation
    author: PublicKey


TranscriptEvent = Accepted | Buffered | Equivocated


def root_of(table: bytes, members: Sequence[PublicKey], heads: Sequence[int],
            ids: Sequence[bytes]) -> bytes:
    """The transcript root over a cut.

    ``hash32("transcript-root", table, u64(n), key_1, u64(head_1), id_1, ..., key_n,
    u64(head_n), id_n)`` where members are in seat order, ``head_i`` is the cut's seq
    for member i and ``id_i`` the id of its envelope at that seq (32 zero bytes when
    ``head_i`` is 0); every part is length-prefixed by :func:`protocol.domain.encode`.
    As ids chain through ``prev``, the root commits to every envelope in the cut.
    """
    if not len(members) == len(heads) == len(ids):
        raise LocalProtocolError("members, heads and ids differ in length")
    parts: list[bytes] = [table, len(members).to_bytes(8, "big")]
    for member, head, id_ in zip(members, heads, ids, strict=True):
        parts += [member.raw, head.to_bytes(8, "big"), id_]
    return hash32(ROOT_PURPOSE, *parts)


class _Chain:
    __slots__ = ("accepted", "buffer")

    def __init__(self) -> None:
        self.accepted: list[Envelope] = []
        self.buffer: dict[int, Envelope] = {}

    @property
    def head_id(self) -> bytes:
        return self.accepted[-1].id if self.accepted else ZERO_HASH


class Transcript:
    """All members' chains for one table. See the module doc for the rules."""

    def __init__(self, *, table: bytes, members: Sequence[PublicKey],
                 kinds: Collection[str] | None, max_size: int = MAX_ENVELOPE_SIZE,
                 max_ahead: int = MAX_AHEAD, max_buffered: int = MAX_BUFFERED) -> None:
        if not members or len(set(members)) != len(members):
            raise LocalProtocolError("members must be non-empty and distinct")
        self.table = bytes(table)
        self.members: tuple[PublicKey, ...] = tuple(members)
        self.kinds = kinds
        self.max_size = max_size
        self.max_ahead = max_ahead
        self.max_buffered = max_buffered
        self._index = member_index(self.members)
        self._chains: dict[PublicKey, _Chain] = {m: _Chain() for m in self.members}
        self._buffered = 0
        self._evidence_slots: set[tuple[PublicKey, int]] = set()
        self.duplicates = 0
        """Envelopes dropped because their content was already held."""
        # The exact bytes of every held envelope: gap fill re-sends a lot, and a byte
        # duplicate needs no second decode and signature check.
        self._wires: set[bytes] = set()
        self.equivocations: list[Equivocation] = []
        self.accepted: list[Envelope] = []
        """Every accepted envelope, in the order this node accepted them."""
        # heads() is asked on every sync and wake; only an accept or an adopt changes it.
        self._heads: Cut | None = None

    def receive(self, data: bytes) -> list[TranscriptEvent]:
        """Take one envelope's bytes; return what happened.

        Raises a :class:`RemoteProtocolError` if the bytes are not a valid envelope
        for this table (see :func:`protocol.envelope.decode`), or
        :class:`TooFarAhead` / :class:`BufferFull` when it cannot be held yet.
        """
        if type(data) is bytes and data in self._wires:
            self.duplicates += 1
            return []
        return self._take(decode(data, table=self.table, members=self._index,
                                 kinds=self.kinds, max_size=self.max_size))

    def receive_own(self, env: Envelope) -> list[TranscriptEvent]:
        """:meth:`receive` for an envelope this node has just sealed: its signature and
        encoding are not checked again (a node that re-verified every envelope it wrote
        spent a ninth of its signature checks on them)."""
        if (env.table != self.table or env.author not in self._chains
                or (self.kinds is not None and env.kind not in self.kinds)):
            raise LocalProtocolError(f"{env!r} is not an envelope of this table")
        if env.wire in self._wires:
            self.duplicates += 1
            return []
        return self._take(env)

    def adopt(self, env: Envelope) -> list[TranscriptEvent]:
        """Hold ``env`` at its slot instead of the envelope held there, dropping that one
        and the rest of its branch: the caller has settled which branch of a fork counts
        (its author signed both). ``env`` must come from :meth:`receive` (checked) and
        link to the envelope before it; envelopes buffered after it follow it in."""
        chain = self._chains.get(env.author)
        if chain is None or not 1 <= env.seq <= len(chain.accepted):
            raise LocalProtocolError(f"adopt: nothing held at seq {env.seq} of {env.author}")
        before = chain.accepted[env.seq - 2].id if env.seq > 1 else ZERO_HASH
        if env.prev != before:
            raise LocalProtocolError(f"adopt: seq {env.seq} of {env.author} does not link "
                                     "to the envelope held before it")
        if chain.accepted[env.seq - 1].id == env.id:
            return []
        self._heads = None
        del chain.accepted[env.seq - 1:]
        return self._append(chain, env)

    def _take(self, env: Envelope) -> list[TranscriptEvent]:
        chain = self._chains[env.author]
        held = len(chain.accepted)
        if env.seq <= held:
            return self._conflict(chain.accepted[env.seq - 1], env)
        if env.seq == held + 1:
            return self._append(chain, env)
        waiting = chain.buffer.get(env.seq)
        if waiting is not None:
            return self._conflict(waiting, env)
        if env.seq - held > self.max_ahead:
            raise TooFarAhead(f"seq {env.seq} of {env.author.fingerprint} is more than "
                              f"{self.max_ahead} past its head {held}", evidence=env.wire)
        if self._buffered >= self.max_buffered:
            raise BufferFull(f"reorder buffer full ({self.max_buffered}); dropped seq "
                             f"{env.seq} of {env.author.fingerprint}", evidence=env.wire)
        chain.buffer[env.seq] = env
        self._wires.add(env.wire)
        self._buffered += 1
        return [Buffered(env.author, env.seq)]

    def missing(
        self, targets: Mapping[PublicKey, int] | None = None
    ) -> list[tuple[PublicKey, int]]:
        """The ``(author, seq)`` slots to ask peers for, in seat order.

        For each member: every seq after its accepted head up to its highest
        buffered seq, or up to ``targets[member]`` if that is higher (a head a peer
        or a checkpoint announced), that is not already buffered.
        """
        out: list[tuple[PublicKey, int]] = []
        for member in self.members:
            chain = self._chains[member]
            top = max([*chain.buffer, (targets or {}).get(member, 0)])
            held = len(chain.accepted)
            top = min(top, held + self.max_ahead)
            out += [(member, s) for s in range(held + 1, top + 1) if s not in chain.buffer]
        return out

    def next_slot(self, author: PublicKey) -> tuple[int, bytes]:
        """``(seq, prev)`` for ``author``'s next envelope: what to pass to
        :meth:`Envelope.seal` when this node writes (then ``receive`` its bytes)."""
        chain = self._chains.get(author)
        if chain is None:
            raise LocalProtocolError(f"{author.fingerprint} is not a member")
        return len(chain.accepted) + 1, chain.head_id

    def heads(self) -> Cut:
        """The cut of everything accepted so far."""
        if self._heads is None:
            self._heads = Cut(tuple(len(self._chains[m].accepted) for m in self.members))
        return self._heads

    def covers(self, cut: Cut) -> bool:
        """Whether every envelope of ``cut`` has been accepted here."""
        return len(cut.heads) == len(self.members) and all(
            h <= len(self._chains[m].accepted) for m, h in zip(self.members, cut.heads,
                                                               strict=True))

    def root(self, cut: Cut | None = None) -> bytes:
        """:func:`root_of` over ``cut`` (default: :meth:`heads`); the cut must be covered."""
        cut = self.heads() if cut is None else cut
        if not self.covers(cut):
            raise LocalProtocolError(f"cut {cut} not covered by heads {self.heads()}")
        ids = [self._chains[m].accepted[h - 1].id if h else ZERO_HASH
               for m, h in zip(self.members, cut.heads, strict=True)]
        return root_of(self.table, self.members, cut.heads, ids)

    def chain(self, author: PublicKey) -> tuple[Envelope, ...]:
        """The author's accepted envelopes, seq 1 first."""
        return tuple(self._chains[author].accepted)

    def get(self, author: PublicKey, seq: int) -> Envelope | None:
        """The accepted envelope at ``(author, seq)``, to answer a peer's request."""
        chain = self._chains.get(author)
        if chain is None or not 1 <= seq <= len(chain.accepted):
            return None
        return chain.accepted[seq - 1]

    @property
    def buffered(self) -> int:
        return self._buffered

    def _conflict(self, held: Envelope, env: Envelope) -> list[TranscriptEvent]:
        if held.id == env.id:
            self.duplicates += 1
            return []
        return self._evidence(held, env)

    def _evidence(self, held: Envelope, env: Envelope) -> list[TranscriptEvent]:
        slot = (env.author, max(held.seq, env.seq))
        if slot in self._evidence_slots:
            return []
        self._evidence_slots.add(slot)
        proof = Equivocation.of(held, env)
        self.equivocations.append(proof)
        return [Equivocated(proof, env.author)]

    def _append(self, chain: _Chain, env: Envelope) -> list[TranscriptEvent]:
        self._heads = None
        events: list[TranscriptEvent] = []
        nxt: Envelope | None = env
        while nxt is not None:
            if nxt.prev != chain.head_id:
                # seq n+1 that does not link to our n: the author signed two chains.
                events += self._evidence(chain.accepted[-1], nxt)
                break
            chain.accepted.append(nxt)
            self.accepted.append(nxt)
            self._wires.add(nxt.wire)
            events.append(Accepted(nxt))
            nxt = chain.buffer.pop(nxt.seq + 1, None)
            if nxt is not None:
                self._buffered -= 1
        return events
