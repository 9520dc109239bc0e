"""A serverless TCP full mesh between the members of one table.

Every peer listens on a TCP port and dials the addresses it knows (from discovery or
``--peer HOST:PORT``). A connection carries length-prefixed frames (``framing``) and starts
with a three-message handshake in which each side proves its key with a signature over the
table id, both keys and both fresh nonces:

1. connector -> acceptor ``mesh-hello``: version, table, connector key, nonce_c;
2. acceptor -> connector ``mesh-welcome``: version, table, acceptor key, nonce_a, and the
   acceptor's signature over :func:`handshake_transcript` with role ``acceptor``;
3. connector -> acceptor ``mesh-auth``: the connector's signature with role ``connector``.

The acceptor signs nothing for a key outside the table, and its fresh nonce makes every
recorded ``mesh-auth`` useless on a later connection (no replay); the role in the transcript
stops a signature from one side being reflected as the other's. The channel is neither
encrypted nor bound to the signatures: everything a node sends is a signed envelope that is
checked on arrival, so the handshake only decides whom we spend a connection on.

After the handshake a frame is one kind byte and its body: ``0`` data for the node, ``1`` a
keepalive. Each side sends a keepalive when it has sent nothing for ``keepalive`` seconds and
drops a connection that has been silent for ``dead_after`` seconds, so a peer that vanished
without closing (power loss, a cable) is noticed. A peer that sends garbage, an oversized
frame, a bad handshake or a key outside the table is logged and cut off; the mesh and the
node go on. Dialers retry with exponential backoff and jitter; an address added with a
number of ``attempts`` (one heard from discovery) is given up after that many failures in a
row, and at most ``max_dials`` such addresses are dialled at once.

A handshake that has not finished holds a slot; slots are few (``max_pending_handshakes``,
and ``max_pending_per_address`` per remote address), and a hello must arrive within
``hello_timeout``. When the slots are full, a new connection takes the slot of the oldest
one that has not even sent its hello (or else of the oldest), so idle connections held
open by a stranger delay an honest peer by one connection at most, never lock it out.

Traffic to a peer goes in two lanes: game frames are written at once; repair frames
(answers to gap-fill syncs, :meth:`Mesh.send_repair`) wait in a bounded queue of the
connection and are written only while less than ``REPAIR_LOW_WATER`` bytes wait to go out,
so game traffic is never queued behind a burst of gap fill.

Two peers that dial each other at once end up with two connections. Both sides keep the one
dialed by the smaller key and retire the other gracefully: they stop sending on it and
half-close it, but read it to its end, so no frame already sent is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from p2pkille.net.framing import MAX_FRAME, FrameError, encode_frame, read_frame
from protocol import canonical
from protocol.domain import encode
from protocol.errors import RemoteProtocolError
from protocol.identity import Identity, PublicKey
from protocol.rng import Rng, SystemRng

__all__ = [
    "HANDSHAKE_PURPOSE",
    "HANDSHAKE_VERSION",
    "HandshakeError",
    "Mesh",
    "PeerAddress",
    "check_hello",
    "decode_handshake",
    "handshake_transcript",
    "peer_name",
]

log = logging.getLogger(__name__)

HANDSHAKE_PURPOSE: Final = "mesh-handshake"
HANDSHAKE_VERSION: Final = 1
NONCE_SIZE: Final = 32
MAX_TABLE_ID_SIZE: Final = 64
MAX_HANDSHAKE_FRAME: Final = 1024
_TYPE = re.compile(r"mesh-(hello|welcome|auth)")
_WHAT = "mesh handshake"
_DATA: Final = b"\x00"
_KEEPALIVE: Final = b"\x01"
REPAIR_LOW_WATER: Final = 64 << 10
"""Bytes waiting to go out on a connection below which a queued repair frame is written."""


def peer_name(key: PublicKey) -> str:
    """A peer's name on a real transport: the text form of its public key."""
    return str(key)


def handshake_transcript(role: bytes, table: bytes, connector: PublicKey, acceptor: PublicKey,
                         nonce_c: bytes, nonce_a: bytes) -> bytes:
    """The bytes each side signs (purpose ``mesh-handshake``); ``role`` names the signer."""
    return encode(b"mesh/v1", role, table, connector.raw, acceptor.raw, nonce_c, nonce_a)


class HandshakeError(RemoteProtocolError):
    """A peer failed the handshake: wrong table or version, key outside the table, bad
    signature, or a message out of place."""


@dataclass(frozen=True, slots=True)
class PeerAddress:
    """Where to dial a peer. Text form ``HOST:PORT``, with ``[v6addr]:PORT`` for IPv6."""

    host: str
    port: int

    def __post_init__(self) -> None:
        if not self.host or not 0 < self.port < 65536:
            raise ValueError(f"peer address {self.host!r}:{self.port!r}: need a host and a port")

    @classmethod
    def parse(cls, text: str) -> PeerAddress:
        host, sep, port = text.rpartition(":")
        bracketed = host.startswith("[") and host.endswith("]")
        if bracketed:
            host = host[1:-1]
        if not sep or not port.isdigit() or not host or (":" in host and not bracketed):
            raise ValueError(f"peer address {text!r}: expected HOST:PORT or [V6ADDR]:PORT")
        return cls(host, int(port))

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


class _Session:
    """One authenticated connection to a peer."""

    __slots__ = ("draining", "key", "last_rx", "last_tx", "name", "outbound", "preferred_rank",
                 "reader", "repair", "repair_bytes", "retired", "writer")

    def __init__(self, key: PublicKey, own: PublicKey, outbound: bool,
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.key = key
        self.name = peer_name(key)
        self.outbound = outbound
        self.reader = reader
        self.writer = writer
        self.retired = False
        self.repair: deque[bytes] = deque()
        self.repair_bytes = 0
        self.draining = False
        self.last_rx = self.last_tx = asyncio.get_running_loop().time()
        connector, acceptor = (own, key) if outbound else (key, own)
        # Both ends compute the same rank for the same connection, so they retire the same one.
        self.preferred_rank = 0 if connector.raw < acceptor.raw else 1

    def write(self, frame: bytes) -> bool:
        if self.retired or self.writer.is_closing():
            return False
        self.writer.write(frame)
        self.last_tx = asyncio.get_running_loop().time()
        return True

    def buffered(self) -> int:
        return self.writer.transport.get_write_buffer_size()

    def retire(self) -> None:
        """Stop sending here and half-close; reading goes on until the peer closes too."""
        self.retired = True
        if not self.writer.is_closing() and self.writer.can_write_eof():
            with contextlib.suppress(OSError):
                self.writer.write_eof()


@dataclass(slots=True, eq=False)
class _Pending:
    """An inbound connection whose handshake has not finished."""

    writer: asyncio.StreamWriter
    host: str
    since: float
    heard: bool = False
    """Its hello arrived: it is a peer talking, not a socket held open."""
    evicted: bool = False


@dataclass(slots=True, eq=False)
class _Dial:
    address: PeerAddress
    attempts: int | None
    task: asyncio.Task[None] | None = field(default=None)


class Mesh:
    """The TCP mesh transport of one peer at one table; run it with :meth:`run` (or a driver).

    ``members`` are the keys allowed to connect (our own key among them or not); change them
    with :meth:`set_members`. ``None`` opens the mesh to any key that proves itself in the
    handshake (a lobby, before the table's members are known); naming members closes it.
    ``on_presence(name, up)`` is told when a peer's first connection
    is established and when its last one ends.
    """

    def __init__(
        self,
        identity: Identity,
        table: bytes,
        members: Iterable[PublicKey] | None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        peers: Iterable[PeerAddress] = (),
        max_frame: int = MAX_FRAME,
        handshake_timeout: float = 5.0,
        backoff_min: float = 0.05,
        backoff_max: float = 5.0,
        max_write_buffer: int = 16 << 20,
        max_repair_buffer: int = 4 << 20,
        max_pending_handshakes: int = 64,
        max_pending_per_address: int = 16,
        hello_timeout: float = 2.0,
        max_dials: int = 32,
        keepalive: float = 5.0,
        dead_after: float = 15.0,
        on_presence: Callable[[str, bool], None] | None = None,
        rng: Rng | None = None,
    ) -> None:
        if not 1 <= len(table) <= MAX_TABLE_ID_SIZE:
            raise ValueError(f"table id of {len(table)} bytes: need 1..{MAX_TABLE_ID_SIZE}")
        if not 0 < backoff_min <= backoff_max:
            raise ValueError(f"backoff {backoff_min!r}..{backoff_max!r}: need 0 < min <= max")
        if not 0 < keepalive < dead_after:
            raise ValueError(f"keepalive {keepalive!r}, dead_after {dead_after!r}: need "
                             "0 < keepalive < dead_after")
        self.keepalive = keepalive
        self.dead_after = dead_after
        self.identity = identity
        self.table = bytes(table)
        self.host = host
        self.max_frame = max_frame
        self.handshake_timeout = handshake_timeout
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.max_write_buffer = max_write_buffer
        self.max_repair_buffer = max_repair_buffer
        self.max_pending_handshakes = max_pending_handshakes
        self.max_pending_per_address = max_pending_per_address
        self.hello_timeout = min(hello_timeout, handshake_timeout)
        self.max_dials = max_dials
        self.on_presence = on_presence
        self._rng: Rng = rng if rng is not None else SystemRng()
        self._jitter = random.Random()  # spreads retries only; nothing secret depends on it
        self._requested_port = port
        self._port: int | None = None
        self._sessions: set[_Session] = set()
        self._members: dict[bytes, PublicKey] = {}
        self._open = False
        self.set_members(members)
        self._dials: dict[PeerAddress, _Dial] = {}
        self._address_key: dict[PeerAddress, str] = {}
        self._current: dict[str, _Session] = {}
        self._down: dict[str, asyncio.Event] = {}
        self._pending: list[_Pending] = []
        self.duplicates_retired = 0
        self.evicted = 0
        """Unfinished inbound handshakes closed to make room for a newer connection."""
        self.dial_attempts = 0
        """Connections we tried to open (each dial of each address)."""
        self.repair_dropped = 0
        """Repair frames dropped because a connection's repair queue was full."""
        self._tg: asyncio.TaskGroup | None = None
        self._ready = asyncio.Event()
        self._deliver: Callable[[str, bytes], None] | None = None
        for address in peers:
            self.add_peer(address)

    # -- state --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return peer_name(self.identity.public)

    @property
    def port(self) -> int:
        """The port we listen on; known once :meth:`wait_ready` has returned."""
        if self._port is None:
            raise RuntimeError("mesh: not listening yet; await wait_ready() first")
        return self._port

    @property
    def address(self) -> PeerAddress:
        return PeerAddress(self.host, self.port)

    @property
    def connected(self) -> frozenset[str]:
        """Names of the peers we have an authenticated connection to now."""
        return frozenset(self._current)

    @property
    def open_connections(self) -> int:
        """Authenticated connections open now, retired duplicates included."""
        return len(self._sessions)

    @property
    def is_open(self) -> bool:
        """Whether any key that proves itself may connect (``members`` was ``None``)."""
        return self._open

    def set_members(self, members: Iterable[PublicKey] | None) -> None:
        """Replace the table's keys (``None``: admit any key); connections of peers no
        longer admitted are closed."""
        self._open = members is None
        self._members = {} if members is None else {key.raw: key for key in members}
        for session in list(self._sessions):
            if not self._admits(session.key):
                log.warning("mesh: %s left the table; closing its connection", session.name)
                session.writer.close()

    @property
    def dialling(self) -> frozenset[PeerAddress]:
        """The addresses we dial (or stay connected to) now."""
        return frozenset(self._dials)

    @property
    def pending_handshakes(self) -> int:
        return len(self._pending)

    def add_peer(self, address: PeerAddress, *, attempts: int | None = None) -> bool:
        """Dial ``address`` from now on (now, or when :meth:`run` starts); idempotent.

        ``attempts``: give the address up after that many failed dials in a row (an address
        heard from discovery); ``None``: dial it for as long as the mesh runs (an address
        the user or the roster gave). At most ``max_dials`` addresses with ``attempts`` are
        dialled at once; beyond that the call returns ``False`` and dials nothing.
        """
        known = self._dials.get(address)
        if known is not None:
            if attempts is None:
                known.attempts = None  # given by the user or the roster: dialled for good
            return True
        if attempts is not None and sum(
                d.attempts is not None for d in self._dials.values()) >= self.max_dials:
            log.info("mesh: not dialling %s: %d discovered addresses dialled already",
                     address, self.max_dials)
            return False
        dial = _Dial(address, attempts)
        self._dials[address] = dial
        if self._tg is not None:
            self._start_dial(dial)
        return True

    def remove_peer(self, address: PeerAddress) -> None:
        """Stop dialling ``address``, if it was added with ``attempts`` (an address added
        without is dialled for good). A connection it made is cut too."""
        dial = self._dials.get(address)
        if dial is None or dial.attempts is None:
            return
        del self._dials[address]
        if dial.task is not None:
            dial.task.cancel()

    def _start_dial(self, dial: _Dial) -> None:
        assert self._tg is not None
        loop = self._dial_loop(dial)
        try:
            dial.task = self._tg.create_task(loop, name=f"mesh:dial {dial.address}")
        except RuntimeError:
            # The mesh is closing: nothing more is dialled (as _on_inbound refuses).
            loop.close()

    async def wait_ready(self) -> None:
        """Return once :meth:`run` is listening."""
        await self._ready.wait()

    # -- sending ------------------------------------------------------------------------

    def send(self, to: str | None, data: bytes) -> int:
        """Queue ``data`` for one peer or (``to=None``) every connected peer.

        Returns how many connections took it: a peer that is not connected misses it (the
        node's gap fill repairs that). A peer that lets more than ``max_write_buffer`` bytes
        pile up is cut off.
        """
        frame = self._frame(data)
        sent = 0
        for session in self._targets(to):
            if session.write(frame):
                sent += 1
                self._check_buffer(session)
        return sent

    def send_repair(self, to: str | None, data: bytes) -> int:
        """Queue repair traffic (an answer to a gap-fill sync) behind game traffic: it is
        written only while the connection has less than ``REPAIR_LOW_WATER`` bytes to send;
        a full repair queue (``max_repair_buffer``) drops its oldest frame."""
        frame = self._frame(data)
        sent = 0
        for session in self._targets(to):
            if session.retired or session.writer.is_closing():
                continue
            sent += 1
            if not session.repair and session.buffered() < REPAIR_LOW_WATER:
                session.write(frame)
                continue
            session.repair.append(frame)
            session.repair_bytes += len(frame)
            while session.repair_bytes > self.max_repair_buffer:
                session.repair_bytes -= len(session.repair.popleft())
                self.repair_dropped += 1
            if not session.draining and self._tg is not None:
                session.draining = True
                try:
                    self._tg.create_task(self._drain_repair(session),
                                         name=f"mesh:repair {session.name[:12]}")
                except RuntimeError:
                    session.draining = False
        return sent

    def _frame(self, data: bytes) -> bytes:
        if len(data) > self.max_frame:
            raise ValueError(f"message of {len(data)} bytes exceeds the maximum {self.max_frame}")
        return encode_frame(_DATA + data, self.max_frame + 1)

    def _targets(self, to: str | None) -> list[_Session]:
        if to is None:
            return list(self._current.values())
        session = self._current.get(to)
        return [] if session is None else [session]

    def _check_buffer(self, session: _Session) -> None:
        if session.buffered() > self.max_write_buffer:
            log.warning("mesh: %s is not reading (%d bytes queued); cutting it off",
                        session.name, session.buffered())
            session.writer.transport.abort()

    async def _drain_repair(self, session: _Session) -> None:
        try:
            while session.repair and not session.retired and not session.writer.is_closing():
                if session.buffered() >= REPAIR_LOW_WATER:
                    # Game frames written meanwhile go out first; we wait for the buffer to
                    # empty below the mark (drain() returns early when the transport is
                    # not paused).
                    await session.writer.drain()
                    if session.buffered() >= REPAIR_LOW_WATER:
                        await asyncio.sleep(0.005)
                    continue
                frame = session.repair.popleft()
                session.repair_bytes -= len(frame)
                session.write(frame)
        except (OSError, ConnectionError):
            pass
        finally:
            session.draining = False
            if session.writer.is_closing() or session.retired:
                session.repair.clear()
                session.repair_bytes = 0

    # -- running ------------------------------------------------------------------------

    async def run(self, deliver: Callable[[str, bytes], None]) -> None:
        """Listen, dial, and hand every data frame to ``deliver(name, data)`` until cancelled."""
        if self._tg is not None:
            raise RuntimeError("mesh: already running")
        self._deliver = deliver
        self._pending = []
        server = await asyncio.start_server(self._on_inbound, self.host, self._requested_port)
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                self._port = int(server.sockets[0].getsockname()[1])
                log.info("mesh: %s listening on %s", self.name, self.address)
                for dial in list(self._dials.values()):
                    self._start_dial(dial)
                tg.create_task(self._keepalive(), name="mesh:keepalive")
                self._ready.set()
                await asyncio.Future()  # until cancelled
        finally:
            self._tg = None
            self._ready.clear()
            server.close()
            for session in list(self._sessions):
                session.writer.transport.abort()
            await server.wait_closed()

    def _on_inbound(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        where = _peer_text(writer)
        if self._tg is None:
            writer.transport.abort()
            return
        host = _peer_host(writer)
        same = [p for p in self._pending if p.host == host]
        if len(same) >= self.max_pending_per_address:
            self._evict(same, where, f"{len(same)} handshakes pending from {host}")
        elif len(self._pending) >= self.max_pending_handshakes:
            self._evict(self._pending, where, f"{len(self._pending)} handshakes pending")
        pending = _Pending(writer, host, asyncio.get_running_loop().time())
        accept = self._accept(reader, writer, where, pending)
        try:
            self._tg.create_task(accept, name=f"mesh:in {where}")
        except RuntimeError:
            # The task group is shutting down (the mesh is closing): refuse the
            # connection, and close the coroutine rather than leave it never awaited.
            accept.close()
            writer.transport.abort()
            return
        self._pending.append(pending)  # counted at once: a burst of connections meets the limit

    def _evict(self, among: list[_Pending], where: str, why: str) -> None:
        """Close the oldest of ``among`` that has not sent its hello (else the oldest)."""
        silent = [p for p in among if not p.heard]
        victim = min(silent or among, key=lambda p: p.since)
        self.evicted += 1
        if self.evicted & (self.evicted - 1) == 0:  # 1, 2, 4, ...: said, not flooded
            log.warning("mesh: %s; closing the oldest unfinished one (%s) for %s "
                        "(%d closed so far)", why, _peer_text(victim.writer), where,
                        self.evicted)
        victim.evicted = True
        victim.writer.transport.abort()
        if victim in self._pending:
            self._pending.remove(victim)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      where: str, pending: _Pending) -> None:
        try:
            async with asyncio.timeout(self.handshake_timeout):
                key = await self._handshake_acceptor(reader, writer, pending)
        except _SelfDial:
            log.debug("mesh: %s is ourselves", where)
            writer.transport.abort()
            return
        except (RemoteProtocolError, OSError, TimeoutError) as exc:
            # A connection we closed for a newer one, or one that stayed silent, is said
            # once in the counters, not once a connection in the log.
            level = logging.DEBUG if pending.evicted else (
                logging.INFO if isinstance(exc, TimeoutError) else logging.WARNING)
            log.log(level, "mesh: refused connection from %s: %s", where, _reason(exc))
            writer.transport.abort()
            return
        finally:
            if pending in self._pending:
                self._pending.remove(pending)
        await self._serve(_Session(key, self.identity.public, False, reader, writer), where)

    async def _dial_loop(self, dial: _Dial) -> None:
        address = dial.address
        delay = self.backoff_min
        failures = 0
        try:
            while dial.attempts is None or failures < dial.attempts:
                known = self._address_key.get(address)
                if known == self.name:
                    return  # our own listening address, e.g. from our own advertisement
                if known is not None and known in self._current:
                    await self._down[known].wait()
                failures += 1
                self.dial_attempts += 1
                try:
                    async with asyncio.timeout(self.handshake_timeout):
                        reader, writer = await asyncio.open_connection(address.host,
                                                                       address.port)
                except (OSError, TimeoutError) as exc:
                    log.debug("mesh: dialing %s failed: %s", address, _reason(exc))
                else:
                    try:
                        async with asyncio.timeout(self.handshake_timeout):
                            key = await self._handshake_connector(reader, writer)
                    except _SelfDial:
                        self._address_key[address] = self.name
                        writer.transport.abort()
                        return
                    except (RemoteProtocolError, OSError, TimeoutError) as exc:
                        log.warning("mesh: handshake with %s failed: %s", address,
                                    _reason(exc))
                        writer.transport.abort()
                    else:
                        delay = self.backoff_min
                        failures = 0
                        self._address_key[address] = peer_name(key)
                        session = _Session(key, self.identity.public, True, reader, writer)
                        await self._serve(session, str(address))
                await asyncio.sleep(delay * (0.5 + self._jitter.random()))
                delay = min(delay * 2, self.backoff_max)
            log.info("mesh: gave up dialling %s after %d failures", address, failures)
        finally:
            if self._dials.get(address) is dial:
                del self._dials[address]

    async def _serve(self, session: _Session, where: str) -> None:
        deliver = self._deliver
        assert deliver is not None
        self._register(session)
        loop = asyncio.get_running_loop()
        try:
            while True:
                frame = await read_frame(session.reader, self.max_frame + 1)
                if frame is None or not self._admits(session.key):
                    break
                session.last_rx = loop.time()
                kind = frame[:1]
                if kind == _DATA:
                    deliver(session.name, frame[1:])
                elif kind != _KEEPALIVE:
                    raise FrameError(f"unknown frame kind {kind.hex() or '(empty frame)'}",
                                     evidence=frame[:16])
        except FrameError as exc:
            log.warning("mesh: cutting off %s at %s: %s", session.name, where, exc)
        except OSError as exc:
            log.info("mesh: connection to %s at %s lost: %s", session.name, where, _reason(exc))
        finally:
            self._unregister(session)
            if session.retired:
                session.writer.close()  # what we queued before retiring still goes out
            else:
                session.writer.transport.abort()

    async def _keepalive(self) -> None:
        ping = encode_frame(_KEEPALIVE)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.keepalive / 2)
            now = loop.time()
            for session in list(self._sessions):
                if now - session.last_rx > self.dead_after:
                    log.warning("mesh: %s has been silent for %.1f s; dropping it",
                                session.name, now - session.last_rx)
                    session.writer.transport.abort()
                elif now - session.last_tx >= self.keepalive:
                    session.write(ping)

    def _register(self, session: _Session) -> None:
        self._sessions.add(session)
        current = self._current.get(session.name)
        if current is None:
            self._current[session.name] = session
            self._down[session.name] = asyncio.Event()
            log.info("mesh: connected to %s (%s)", session.name,
                     "outbound" if session.outbound else "inbound")
            if self.on_presence is not None:
                self.on_presence(session.name, True)
        elif session.preferred_rank <= current.preferred_rank:
            self._current[session.name] = session
            current.retire()
            self.duplicates_retired += 1
        else:
            session.retire()
            self.duplicates_retired += 1

    def _unregister(self, session: _Session) -> None:
        self._sessions.discard(session)
        if self._current.get(session.name) is not session:
            return
        del self._current[session.name]
        others = [s for s in self._sessions if s.name == session.name and not s.retired]
        if others:
            self._current[session.name] = others[-1]
            return
        self._down[session.name].set()
        log.info("mesh: disconnected from %s", session.name)
        if self.on_presence is not None:
            self.on_presence(session.name, False)

    # -- handshake ----------------------------------------------------------------------

    async def _handshake_connector(self, reader: asyncio.StreamReader,
                                   writer: asyncio.StreamWriter) -> PublicKey:
        own = self.identity.public
        nonce_c = self._rng.randbytes(NONCE_SIZE)
        writer.write(encode_frame(canonical.encode({
            "key": canonical.b64encode(own.raw), "nonce": canonical.b64encode(nonce_c),
            "table": canonical.b64encode(self.table), "type": "mesh-hello",
            "v": HANDSHAKE_VERSION})))
        welcome = await self._read_message(reader, "mesh-welcome", WELCOME_FIELDS)
        key, nonce_a = self._check_hello(welcome)
        if key == own:
            raise _SelfDial
        signature = canonical.get_bytes(welcome, "sig", what=_WHAT, size=64)
        key.verify(HANDSHAKE_PURPOSE,
                   handshake_transcript(b"acceptor", self.table, own, key, nonce_c, nonce_a),
                   signature)
        writer.write(encode_frame(canonical.encode({
            "sig": canonical.b64encode(self.identity.sign(
                HANDSHAKE_PURPOSE,
                handshake_transcript(b"connector", self.table, own, key, nonce_c, nonce_a))),
            "type": "mesh-auth"})))
        await writer.drain()
        return key

    async def _handshake_acceptor(self, reader: asyncio.StreamReader,
                                  writer: asyncio.StreamWriter,
                                  pending: _Pending | None = None) -> PublicKey:
        own = self.identity.public
        async with asyncio.timeout(self.hello_timeout):
            hello = await self._read_message(reader, "mesh-hello", HELLO_FIELDS)
        if pending is not None:
            pending.heard = True
        key, nonce_c = self._check_hello(hello)
        nonce_a = self._rng.randbytes(NONCE_SIZE)
        signature = self.identity.sign(
            HANDSHAKE_PURPOSE,
            handshake_transcript(b"acceptor", self.table, key, own, nonce_c, nonce_a))
        writer.write(encode_frame(canonical.encode({
            "key": canonical.b64encode(own.raw), "nonce": canonical.b64encode(nonce_a),
            "sig": canonical.b64encode(signature), "table": canonical.b64encode(self.table),
            "type": "mesh-welcome", "v": HANDSHAKE_VERSION})))
        await writer.drain()
        try:
            auth = await self._read_message(reader, "mesh-auth", AUTH_FIELDS)
            key.verify(HANDSHAKE_PURPOSE,
                       handshake_transcript(b"connector", self.table, key, own, nonce_c, nonce_a),
                       canonical.get_bytes(auth, "sig", what=_WHAT, size=64))
        except (RemoteProtocolError, OSError):
            if key == own:  # we dialed ourselves, and our connector side hung up on seeing it
                raise _SelfDial from None
            raise
        if key == own:
            raise _SelfDial
        return key

    async def _read_message(self, reader: asyncio.StreamReader, kind: str,
                            fields: tuple[str, ...]) -> canonical.JsonObject:
        data = await read_frame(reader, MAX_HANDSHAKE_FRAME)
        if data is None:
            raise HandshakeError(f"connection closed while waiting for {kind}")
        return decode_handshake(data, kind, fields)

    def _check_hello(self, message: canonical.JsonObject) -> tuple[PublicKey, bytes]:
        own = self.identity.public
        return check_hello(message, self.table, lambda key: self._admits(key) or key == own)

    def _admits(self, key: PublicKey) -> bool:
        return self._open or key.raw in self._members


HELLO_FIELDS: Final = ("key", "nonce", "table", "type", "v")
WELCOME_FIELDS: Final = ("key", "nonce", "sig", "table", "type", "v")
AUTH_FIELDS: Final = ("sig", "type")


def decode_handshake(data: bytes, kind: str, fields: tuple[str, ...]) -> canonical.JsonObject:
    """One handshake message of type ``kind`` with exactly ``fields``, from a peer's frame.

    Raises only :class:`RemoteProtocolError` kinds (:class:`HandshakeError`,
    ``InvalidEncoding``).
    """
    message = canonical.decode_object(data, max_size=MAX_HANDSHAKE_FRAME)
    if message.get("type") != kind:
        raise HandshakeError(f"expected {kind}, got type {message.get('type')!r:.40}",
                             evidence=data)
    canonical.require_keys(message, fields, what=kind, evidence=data)
    return message


def check_hello(message: canonical.JsonObject, table: bytes,
                admit: Callable[[PublicKey], bool]) -> tuple[PublicKey, bytes]:
    """The key and nonce of a decoded hello or welcome, once its version, table and key
    pass; ``admit`` says whether a valid key may connect."""
    version = canonical.get_int(message, "v", lo=0, hi=2**31, what=_WHAT)
    if version != HANDSHAKE_VERSION:
        raise HandshakeError(f"handshake version {version}; we speak {HANDSHAKE_VERSION}")
    theirs = canonical.get_bytes(message, "table", what=_WHAT, min_size=1,
                                 max_size=MAX_TABLE_ID_SIZE)
    if theirs != table:
        raise HandshakeError(f"table {theirs.hex()} is not ours ({table.hex()})")
    key = PublicKey.from_bytes(canonical.get_bytes(message, "key", what=_WHAT, size=32))
    nonce = canonical.get_bytes(message, "nonce", what=_WHAT, size=NONCE_SIZE)
    if not admit(key):
        raise HandshakeError(f"key {key.fingerprint} is not a member of the table")
    return key, nonce


class _SelfDial(Exception):
    """We dialed our own listening address."""


def _peer_host(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return repr(peer)


def _peer_text(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return str(PeerAddress(str(peer[0]), int(peer[1])))
    return repr(peer)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return f"{type(exc).__name__}: {exc}"
