"""A node's local log: every envelope it accepted, append-only, so it survives a crash.

File format (``docs/protocol.md`` II.12)::

    magic    8 bytes  b"P2PKLOG\\x01"
    record*  u32 n | u32 crc32(n) | n bytes payload | u32 crc32(payload)   (big-endian)

A payload's first byte is its type: ``H`` (the header, first record only) + canonical
JSON ``{"config", "name", "identity", "delivery", "seed", "format"}``; ``E`` + an
accepted envelope's wire bytes; ``Q`` + the canonical bytes of an
:class:`~protocol.transcript.Equivocation` the node saw. Records follow the node's
inputs: per call, what it accepted from others, then any fork it saw, then its own.

The header holds the member's identity key, delivery key and secret seed: what it
takes to restart this member. The file is therefore as secret as those keys: it is
created with mode 0600 and must never be shared before the game is over (after the
last audit the per-hand keys are public anyway, but the identity key never is).

Every record is written with one ``write`` call after the node's call returns and
before its outputs go out, so anything the node sent is in the log first. A crash
mid-write leaves a *torn* tail: fewer bytes than the last record announces, or a run
of zero bytes (a file extended but not yet written). :func:`load_log` drops it;
anything else that does not check is :class:`LogCorrupt`. ``fsync`` runs when a
checkpoint completes, when the node sent a decision (the one kind of envelope the
seed cannot re-derive: a person might decide otherwise after a restart, and two
decisions for one slot are an equivocation), and on :meth:`LoggedNode.close`.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from p2pkille.engine.errors import EngineError
from p2pkille.engine.facts import Decision, Fact, VoteChoice
from p2pkille.engine.view import Decider, DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import ActBody, TimeoutBody
from p2pkille.runtime.config import MODES, Member, TableConfig
from p2pkille.runtime.io import Output
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.runtime.recorded import RecordedDecider
from protocol import canonical
from protocol.envelope import Envelope, decode
from protocol.errors import ProtocolError, RemoteProtocolError
from protocol.identity import Identity, PublicKey
from protocol.keys import DeliveryKeyPair
from protocol.transcript import Equivocation

__all__ = [
    "MAGIC",
    "LoadedLog",
    "LogCorrupt",
    "LogDecider",
    "LogError",
    "LoggedNode",
    "Verdict",
    "load_log",
    "rebuild",
    "restart_from_log",
    "verify_log",
]

MAGIC: Final = b"P2PKLOG\x01"
FORMAT: Final = 1
MAX_RECORD: Final = 1 << 20
HEADER: Final = b"H"
ENVELOPE: Final = b"E"
EVIDENCE: Final = b"Q"
_FRAME = struct.Struct(">II")
_CRC = struct.Struct(">I")


class LogError(RemoteProtocolError):
    """A log that cannot be read: not a log, a bad header, or a corrupt record."""


class LogCorrupt(LogError):
    """A record that is complete but does not check (not a torn tail)."""


@dataclass(frozen=True, slots=True)
class LoadedLog:
    """What a log holds. ``torn`` is how many tail bytes were dropped; ``size`` is the
    length of the good part (where appending resumes)."""

    config: TableConfig
    name: str
    identity: Identity
    delivery: DeliveryKeyPair
    seed: bytes
    envelopes: tuple[bytes, ...]
    evidence: tuple[Equivocation, ...] = ()
    torn: int = 0
    size: int = 0
    order: tuple[str, ...] = field(default=(), repr=False)
    """Record types after the header, in file order (for reporting record numbers)."""


_CHOSEN = frozenset({msg.ACT, msg.TIMEOUT, *msg.AGREEMENT_KINDS})


def _frame(payload: bytes) -> bytes:
    n = len(payload)
    return (_FRAME.pack(n, zlib.crc32(_CRC.pack(n))) + payload
            + _CRC.pack(zlib.crc32(payload)))


def _header(node: TableNode) -> bytes:
    return HEADER + canonical.encode({
        "config": node.config.to_json(),
        "delivery": canonical.b64encode(node.delivery.private),
        "format": FORMAT,
        "identity": canonical.b64encode(node.identity.private_bytes()),
        "name": node.name,
        "seed": canonical.b64encode(node.seed),
    })


def _config_from_json(obj: dict[str, object], path: str) -> TableConfig:
    what = f"{path}: header config"
    try:
        keys = ("chips", "members", "name", "options", "ruleset", "stake", "table")
        canonical.require_keys(obj, (*keys, "mode") if "mode" in obj else keys, what=what)
        mode = obj.get("mode", "audit")
        if mode not in MODES:
            raise LogError(f"{what}: mode {mode!r} is not one of {', '.join(MODES)}")
        members = []
        for raw in canonical.get_list(obj, "members", what=what):
            if not isinstance(raw, dict):
                raise LogError(f"{what}: a member is not an object")
            canonical.require_keys(raw, ("delivery", "identity"), what=what)
            members.append(Member(
                PublicKey.from_bytes(canonical.get_bytes(raw, "identity", what=what, size=32)),
                canonical.get_bytes(raw, "delivery", what=what, size=32)))
        name, ruleset = obj["name"], obj["ruleset"]
        options = canonical.get_object(obj, "options", what=what)
        if not isinstance(name, str) or not isinstance(ruleset, str):
            raise LogError(f"{what}: name and ruleset must be strings")
        config = TableConfig(
            table_id=canonical.get_bytes(obj, "table", what=what, max_size=64),
            name=name, ruleset=ruleset, members=tuple(members),
            stake=canonical.get_int(obj, "stake", lo=1, hi=canonical.MAX_INT, what=what),
            chips=canonical.get_int(obj, "chips", lo=1, hi=canonical.MAX_INT, what=what),
            overrides=dict(options), mode=str(mode))
    except LogError:
        raise
    except (ProtocolError, ValueError, TypeError) as exc:
        raise LogError(f"{what}: {exc}") from exc
    if config.to_json() != obj:
        raise LogError(f"{what}: does not round-trip (members out of order or extra fields)")
    return config


def _parse_header(payload: bytes, path: str) -> tuple[TableConfig, str, Identity,
                                                      DeliveryKeyPair, bytes]:
    what = f"{path}: header"
    try:
        obj = canonical.decode_object(payload[1:], max_size=MAX_RECORD)
        canonical.require_keys(obj, ("config", "delivery", "format", "identity", "name",
                                     "seed"), what=what)
        if obj["format"] != FORMAT:
            raise LogError(f"{what}: format {obj['format']!r}, this reader knows {FORMAT}")
        name = obj["name"]
        if not isinstance(name, str) or not name:
            raise LogError(f"{what}: name must be a non-empty string")
        config = _config_from_json(dict(canonical.get_object(obj, "config", what=what)), path)
        identity = Identity.from_seed(canonical.get_bytes(obj, "identity", what=what, size=32))
        delivery = DeliveryKeyPair.from_private(
            canonical.get_bytes(obj, "delivery", what=what, size=32))
        seed = canonical.get_bytes(obj, "seed", what=what, min_size=16, max_size=64)
    except LogError:
        raise
    except (ProtocolError, ValueError) as exc:
        raise LogError(f"{what}: {exc}") from exc
    if identity.public not in config.identities:
        raise LogError(f"{what}: its identity {identity.public.fingerprint} is not a member")
    member = config.members[config.identities.index(identity.public)]
    if member.delivery != delivery.public:
        raise LogError(f"{what}: its delivery key is not the one the config names")
    return config, name, identity, delivery, seed


def load_log(path: str | os.PathLike[str]) -> LoadedLog:
    """Read a log. Raises :class:`LogError` (or ``OSError`` if it cannot be opened)."""
    where = os.fspath(path)
    data = Path(where).read_bytes()
    if not data.startswith(MAGIC):
        raise LogError(f"{where}: not a p2pkille log (bad magic)")
    pos = len(MAGIC)
    payloads: list[bytes] = []
    torn = 0
    while pos < len(data):
        rest = len(data) - pos
        if rest < _FRAME.size or not any(data[pos:]):
            torn = rest
            break
        n, crc = _FRAME.unpack_from(data, pos)
        if zlib.crc32(_CRC.pack(n)) != crc or n == 0 or n > MAX_RECORD:
            raise LogCorrupt(f"{where}: record {len(payloads)} at offset {pos}: bad length "
                             "field")
        if rest < _FRAME.size + n + _CRC.size:
            torn = rest
            break
        payload = data[pos + _FRAME.size:pos + _FRAME.size + n]
        (want,) = _CRC.unpack_from(data, pos + _FRAME.size + n)
        if zlib.crc32(payload) != want:
            raise LogCorrupt(f"{where}: record {len(payloads)} at offset {pos}: checksum "
                             "mismatch")
        payloads.append(payload)
        pos += _FRAME.size + n + _CRC.size
    if not payloads or payloads[0][:1] != HEADER:
        raise LogError(f"{where}: no header record")
    config, name, identity, delivery, seed = _parse_header(payloads[0], where)
    envelopes: list[bytes] = []
    evidence: list[Equivocation] = []
    order: list[str] = []
    for index, payload in enumerate(payloads[1:], start=1):
        kind = payload[:1]
        if kind == ENVELOPE:
            envelopes.append(payload[1:])
        elif kind == EVIDENCE:
            try:
                evidence.append(Equivocation.from_bytes(payload[1:]))
            except RemoteProtocolError as exc:
                raise LogCorrupt(f"{where}: record {index}: evidence: {exc}") from exc
        else:
            raise LogCorrupt(f"{where}: record {index}: unknown type {kind!r}")
        order.append(kind.decode("latin-1"))
    return LoadedLog(config, name, identity, delivery, seed, tuple(envelopes),
                     tuple(evidence), torn, len(data) - torn, tuple(order))


class LoggedNode:
    """An ``io.Node`` that runs ``node`` and logs what it accepts to ``path``.

    A new log is created (it must not exist); :func:`restart_from_log` reopens one.
    ``durable=False`` skips ``fsync`` (tests and benchmarks on throwaway files).
    """

    def __init__(self, node: TableNode, path: str | os.PathLike[str], *,
                 durable: bool = True, _resume: LoadedLog | None = None) -> None:
        self.node = node
        self.path = os.fspath(path)
        self.durable = durable
        self.records = 0
        self.syncs = 0
        self._pending: list[bytes] = []
        if _resume is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
                               0o600)
            self._write(MAGIC + _frame(_header(node)))
            self._sync(directory=True)
            self._written = 0
        else:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            os.truncate(self._fd, _resume.size)  # drop a torn tail before appending
            self._written = len(_resume.envelopes)
            self._pending = [w for e in _resume.evidence for w in (e.first, e.second)]
        self._evidence = len(node.transcript.equivocations)
        self._outcomes = len(node.outcomes)
        self._closed = False

    # io.Node

    @property
    def name(self) -> str:
        return self.node.name

    def start(self, now: float) -> Sequence[Output]:
        out = list(self.node.start(now))
        for wire in self._pending:
            out += self.node.receive("log", wire, now)
        if self._pending:  # the forks it saw before, already in the log
            self._pending = []
            self._evidence = len(self.node.transcript.equivocations)
        self._flush()
        return out

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        out = self.node.receive(sender, data, now)
        self._flush()
        return out

    def wake(self, now: float) -> Sequence[Output]:
        out = self.node.wake(now)
        self._flush()
        return out

    def leave(self, now: float) -> Sequence[Output]:
        """:meth:`TableNode.leave`, on disk before it is sent: a restart from the log
        has left too, and never signs another envelope at that slot."""
        out = self.node.leave(now)
        self._flush()
        self._sync()
        return out

    # the log

    def _flush(self) -> None:
        if self._closed:
            raise LogError(f"{self.path}: the log is closed")
        transcript = self.node.transcript
        fresh = transcript.accepted[self._written:]
        proofs = transcript.equivocations[self._evidence:]
        if not fresh and not proofs:
            return
        me = self.node.identity.public
        # In the order of cause: within one call the node first accepts what it received
        # (and detects any fork), then makes its own envelopes in answer.
        chunks = [_frame(ENVELOPE + env.wire) for env in fresh if env.author != me]
        chunks += [_frame(EVIDENCE + p.to_bytes()) for p in proofs]
        chunks += [_frame(ENVELOPE + env.wire) for env in fresh if env.author == me]
        self._write(b"".join(chunks))
        self._written += len(fresh)
        self._evidence += len(proofs)
        self.records += len(chunks)
        # On disk before it is sent: what the node's clock or person chose (a decision, a
        # vote), which a restart could not make again, so it must never sign another
        # envelope at that slot.
        decided = any(env.author == me and env.kind in _CHOSEN for env in fresh)
        if decided or len(self.node.outcomes) > self._outcomes:
            self._outcomes = len(self.node.outcomes)
            self._sync()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def _sync(self, *, directory: bool = False) -> None:
        if not self.durable:
            return
        os.fsync(self._fd)
        self.syncs += 1
        if directory:
            # A new file survives a crash only once its directory entry does too.
            dfd = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def close(self) -> None:
        """Write what is left, fsync and close (idempotent)."""
        if self._closed:
            return
        self._flush()
        self._sync()
        os.close(self._fd)
        self._closed = True

    def __enter__(self) -> LoggedNode:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def rebuild(loaded: LoadedLog, decider: Decider, timing: Timing | None = None) -> TableNode:
    """A fresh node for the log's member with every logged envelope replayed (not started).

    Raises :class:`LogError` if an envelope of the log is not taken back in order (a
    log this code did not write, or a tampered one that still has good checksums)."""
    node = TableNode(loaded.name, loaded.identity, loaded.delivery, loaded.config, decider,
                     loaded.seed, timing or Timing())
    node.replay(loaded.envelopes)
    if len(node.transcript.accepted) != len(loaded.envelopes):
        bad = next((i for i, (a, b) in enumerate(zip(node.transcript.accepted,
                                                      loaded.envelopes, strict=False))
                    if a.wire != b), len(node.transcript.accepted))
        raise LogError(f"{loaded.name}: logged envelope {bad} is not accepted on replay")
    # Its own time-out votes stand (its clock's call, made before the crash): without
    # them it would answer a step it voted out with a seen it never made live.
    node.take_own_votes()
    return node


def restart_from_log(path: str | os.PathLike[str], decider: Decider, *,
                     timing: Timing | None = None, durable: bool = True) -> LoggedNode:
    """Rebuild the member from its log and keep logging to the same file.

    The returned node is not started: hand it to the transport (e.g.
    ``SimNetwork.restart``), whose ``start`` re-derives its own envelopes (found
    already sent) and then asks peers for what it missed (gap fill)."""
    loaded = load_log(path)
    return LoggedNode(rebuild(loaded, decider, timing), path, durable=durable,
                      _resume=loaded)


# -- offline verification ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`verify_log` found. ``fault`` is the first fault (``None`` if clean):
    ``{"kind", "accused", "hand", "reason"}`` plus ``"record"`` for a record that is
    not an authentic envelope (kind ``tampered``)."""

    name: str
    seat: str | None
    members: int
    records: int
    torn: int
    complete: bool
    hands: list[dict[str, object]]
    winner: str | None
    fault: dict[str, object] | None
    faults: list[dict[str, object]]

    @property
    def clean(self) -> bool:
        return self.fault is None

    def to_json(self) -> dict[str, object]:
        return {"clean": self.clean, "complete": self.complete, "fault": self.fault,
                "faults": self.faults, "hands": self.hands, "members": self.members,
                "name": self.name, "records": self.records, "seat": self.seat,
                "torn_bytes": self.torn, "winner": self.winner}


class LogDecider(RecordedDecider):
    """Answers the member's decisions from its log, in order (``fallback`` once the log
    runs out or a logged decision does not fit the question): a node fed its log
    again then makes exactly the envelopes it made live."""

    @classmethod
    def of(cls, loaded: LoadedLog, fallback: Decider) -> LogDecider:
        me = loaded.identity.public
        facts: list[Fact] = []
        index = {m.raw: m for m in loaded.config.identities}
        for wire in loaded.envelopes:
            try:
                env = decode(wire, table=loaded.config.table_id, members=index, kinds=msg.KINDS)
                if env.author == me and env.kind == msg.ACT:
                    facts.append(ActBody.parse(env).fact)
            except (ProtocolError, EngineError, ValueError):
                continue  # verify_log reports a bad record; here it is just no answer
        return cls(facts, fallback)


class _Gone:
    """The decider of a member whose log holds its ``leave``: it left instead of making
    the decisions its log does not hold, so none is ever made for it."""

    def _gone(self) -> DecisionPending:
        return DecisionPending("the member left")

    def turn(self, view: SeatView) -> Decision:
        raise self._gone()

    def vote(self, view: SeatView) -> VoteChoice:
        raise self._gone()

    def answer_sale(self, view: SeatView) -> bool:
        raise self._gone()

    def cut(self, view: SeatView) -> int:
        raise self._gone()

    def buyin(self, view: SeatView) -> bool:
        raise self._gone()

    def observe(self, fact: Fact, view: SeatView) -> None:
        return None


def verify_log(loaded: LoadedLog, decider: Decider) -> Verdict:
    """Replay a whole log offline with the member's own keys and the node's own checks.

    Every record must be an authentic envelope of the table (signature, schema,
    membership). A fresh node for the member is then fed the records in the order it
    accepted them live: it re-derives its own envelopes from its seed (its decisions
    come from the log through :class:`LogDecider`), so the logged copies are found
    already held, and it checks every proof, shuffle, seal, rule and checkpoint as it
    did live. A logged own envelope it would not have made shows as its own
    equivocation; only its own ``timeout`` votes, a call of its clock, and its own
    ``accuse`` (what it had taken when it wrote it) stand as logged (:func:`_own_timeout`).
    Outputs are discarded; ``decider`` answers only past the log's end, and never for a
    member whose log holds its ``leave`` (it left instead of deciding)."""
    config = loaded.config

    def verdict(faults: list[dict[str, object]], node: TableNode | None = None) -> Verdict:
        seat = winner = None
        hands: list[dict[str, object]] = []
        if node is not None:
            names = node.names
            hands = [o.to_json() for o in node.outcomes]
            if node.my_seat is not None:
                seat = names[node.my_seat]
            if node.view is not None and node.view.game.winner is not None:
                winner = names[node.view.game.winner]
        return Verdict(loaded.name, seat, len(config.members), len(loaded.order), loaded.torn,
                       node is not None and node.done, hands, winner,
                       faults[0] if faults else None, faults)

    decoded = []
    for index, wire in enumerate(loaded.envelopes):
        try:
            decoded.append(decode(wire, table=config.table_id, members=config.identities,
                                  kinds=msg.KINDS))
        except RemoteProtocolError as exc:
            record = _record_number(loaded, index)
            return verdict([{"accused": None, "hand": None, "kind": "tampered",
                             "reason": f"record {record} is not an authentic envelope: {exc}",
                             "record": record}])
    left = any(env.author == loaded.identity.public and env.kind == msg.LEAVE
               for env in decoded)
    node = TableNode(loaded.name, loaded.identity, loaded.delivery, config,
                     LogDecider.of(loaded, _Gone() if left else decider), loaded.seed,
                     Timing())
    # An accuse says what its author had taken when it wrote it, which after a restart
    # the one-by-one replay does not reproduce: the logged one stands (as a timeout vote).
    # Its own agreement votes likewise were its clock's call: they stand as logged, and
    # the replay decides on the certificates the log holds.
    node.agreement_learner = True
    node.logged_accuses = {number for env in decoded
                           if env.author == loaded.identity.public and env.kind == msg.ACCUSE
                           and (number := msg.hand_of(env)) is not None}
    node.start(0.0)
    envelopes, proofs = iter(decoded), iter(loaded.evidence)
    for kind in loaded.order:
        if kind == "E":
            env = next(envelopes)
            # Known as voted before the vote is taken: taking it may complete the time-out
            # and pass the step, and a step passed that I did not vote I answer with a
            # seen, which I never made live (I had voted).
            _own_timeout(node, env)
            node.receive("log", env.wire, 0.0)
        else:
            proof = next(proofs)
            node.receive("log", proof.first, 0.0)
            node.receive("log", proof.second, 0.0)
    held = {env.wire for env in node.transcript.accepted}
    missing = [i for i, wire in enumerate(loaded.envelopes) if wire not in held]
    faults = [f.to_json(node.names) for f in node.faults]
    if missing:
        record = _record_number(loaded, missing[0])
        faults.append({"accused": None, "hand": None, "kind": "tampered", "record": record,
                       "reason": f"record {record} is never taken into the chains (a gap, or "
                                 "a log not written in acceptance order)"})
    return verdict(faults, node)


def _own_timeout(node: TableNode, env: Envelope) -> None:
    """Take the member's own logged ``timeout`` vote as its own, as if it had made it.

    Offline there is no clock, so the node never votes a seat's time out itself; yet it
    must know it voted (it then answers no ``seen`` and waits for that seat only through a
    ``seen`` of another holder), or it re-derives envelopes it never made live, and its
    own chain shows as forked. Whether the time had run out was the member's clock's
    call, which no replay can check, so the vote stands as logged."""
    hand = node.status()
    if hand is None:
        return
    if (env.author != node.identity.public or env.kind != msg.TIMEOUT
            or msg.hand_of(env) != hand.number):
        return
    node.take_own_vote(hand.number, TimeoutBody.parse(env).step)


def _record_number(loaded: LoadedLog, envelope: int) -> int:
    """The record number (header = 0) of the ``envelope``-th envelope record."""
    seen = -1
    for number, kind in enumerate(loaded.order, start=1):
        seen += kind == "E"
        if seen == envelope:
            return number
    return len(loaded.order)
