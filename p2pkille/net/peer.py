"""One headless bot peer as an asyncio program: lobby, then a table node over a real transport.

:func:`run_peer` does what ``p2pkille peer`` does:

1. keys: the identity from ``key_file`` (created on first use) or fresh; a fresh delivery
   key pair and node secret every run;
2. the transport on the table name's channel (:func:`~p2pkille.net.lobby.channel_id`): a
   :class:`Mesh` open to any key that proves itself (found through zeroconf and ``peers``),
   or MQTT on a broker;
3. the :class:`Lobby` until the table is formed: a joiner binds to one creator (``creator``,
   or the only one offering the name; with several it stops with :class:`AmbiguousTable`,
   which lists them); a mesh joiner dials only the advertised addresses of the creator it
   may bind to. Then the transport takes only the members, and every peer advertises itself
   for the table (so it outlives its creator);
4. a :class:`TableNode` (wrapped in a ``LoggedNode`` when ``log`` is given) under a
   :class:`Driver` with a :class:`~p2pkille.net.guard.Guard` on the same transport (over
   MQTT, our syncs go signed and only members' signed syncs are answered), until ``hands``
   hands are committed (or the game ends). From then on the node only answers gap fill: it
   plays no further hand, so its log holds the hands reported;
5. it lingers until every other member has announced (in its gap-fill syncs) that it holds
   our last hand's checkpoint signatures, so leaving does not strand a slower peer, or at
   most ``linger`` seconds; then it reports what the guard refused and dropped.

Envelopes that arrive for the node while the lobby still runs (a faster peer's genesis)
wait in a buffer, bounded per sender and in all, and go to the node when it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zeroconf.asyncio import AsyncZeroconf

from p2pkille.bots import make_bot
from p2pkille.engine.view import Decider
from p2pkille.net.discovery import (
    Advertiser,
    Sighting,
    TableAdvert,
    TableBrowser,
    open_zeroconf,
)
from p2pkille.net.driver import Driver
from p2pkille.net.guard import Guard, Inbox
from p2pkille.net.lobby import Lobby, Offer, Terms, channel_id, is_lobby
from p2pkille.net.mesh import Mesh, PeerAddress, peer_name
from p2pkille.net.mqtt import BrokerUrl, MqttTransport
from p2pkille.runtime import gapfill
from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import TableConfig, seat_name
from p2pkille.runtime.io import Node, Output, Send, WakeAt
from p2pkille.runtime.log import LogError, LoggedNode, restart_from_log
from p2pkille.runtime.node import HandOutcome, TableNode, Timing
from protocol.errors import RemoteProtocolError
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair
from protocol.rng import SystemRng

__all__ = ["LEAVE_LINGER", "AmbiguousTable", "KeyFileError", "PeerError", "PeerQuit",
           "PeerResult", "PeerSettings", "load_key", "run_peer"]

log = logging.getLogger(__name__)

#: Builds a peer's table node: (name, identity, delivery keys, config, decider, secret seed,
#: timing), as :class:`TableNode` takes them.
NodeFactory = Callable[[str, Identity, DeliveryKeyPair, TableConfig, Decider, bytes, Timing],
                       TableNode]

LEAVE_LINGER: Final = 3.0
"""Seconds a peer that left waits at most for the others to hold its leave (each
announces what it holds in its syncs, every sync interval); a member that still lacks it
gets it from any other by gap fill."""

MAX_BUFFERED: Final = 16 << 20
"""Bytes of node input kept while the lobby runs; beyond it input is dropped (gap fill
brings it again), so a stranger cannot make us buffer without bound."""
MAX_BUFFERED_PER_SENDER: Final = 2 << 20
"""... and bytes kept from any one sender (an author topic on MQTT)."""
DIAL_ATTEMPTS: Final = 3
"""Failed dials in a row after which an address heard from discovery is given up (until
its advert changes)."""
FEED_EVERY: Final = 1.0
"""Seconds between looks at the adverts even when none changed (a dial given up frees a
slot for another address)."""


class PeerError(Exception):
    """The peer could not play: no table formed in time, or the game did not finish."""


class AmbiguousTable(PeerError):
    """Several creators offer the table name and the joiner named none of them."""

    def __init__(self, name: str, offers: Sequence[Terms]) -> None:
        self.name = name
        self.offers = tuple(offers)
        listed = "; ".join(str(t) for t in self.offers)
        super().__init__(f"{len(self.offers)} creators offer a table called {name!r}: "
                         f"{listed}. Choose one with --creator FINGERPRINT")


class KeyFileError(ValueError):
    """A ``--key`` file that does not hold a key."""


def load_key(path: str | os.PathLike[str]) -> Identity:
    """The identity in ``path`` (64 hex digits of the Ed25519 seed); a missing file is
    created with a fresh key, readable by its owner only."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = p.read_text(encoding="ascii", errors="replace").strip()
        try:
            seed = bytes.fromhex(text)
        except ValueError:
            seed = b""
        if len(seed) != 32:
            raise KeyFileError(f"key file {str(p)!r} does not hold 64 hex digits") from None
        return Identity.from_seed(seed)
    seed = secrets.token_bytes(32)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(seed.hex() + "\n")
    return Identity.from_seed(seed)


@dataclass(frozen=True, slots=True)
class PeerSettings:
    """Everything ``p2pkille peer`` was asked to do (checked by the CLI)."""

    offer: Offer
    create: bool = False
    transport: str = "mesh"
    broker: BrokerUrl | None = None
    peers: tuple[PeerAddress, ...] = ()
    interface: str = "127.0.0.1"
    port: int = 0
    discover: bool = True
    bot: str = "threshold"
    hands: int = 0
    log: Path | None = None
    timeout: float = 300.0
    linger: float = 10.0
    identity: Identity | None = None
    limit: float = Timing().limit
    """Seconds the node waits for a seat's cryptographic step before it votes its time out."""
    decide_limit: float = Timing().decide_limit
    """The same for a seat's decision (which then gets the agreed default)."""
    creator: str | None = None
    """A joiner's pinned creator: the fingerprint whose roster alone it takes."""
    admit: frozenset[str] | None = None
    """A creator's: the key fingerprints it seats (``None``: anybody, first come, unless
    ``ask``)."""
    ask: bool = False
    """A creator's: joiners not in ``admit`` wait until the lobby's ``accept`` seats them
    (a player at a screen decides)."""
    choose: float = 1.5
    """A joiner's without ``creator``: seconds it listens to offers before it binds to the
    only creator (or, hearing several, stops with :class:`AmbiguousTable`)."""
    decider: Decider | None = None
    """Decides for this peer instead of the bot named by ``bot`` (e.g. a person at a
    screen, or a bot that takes its time)."""
    node_factory: NodeFactory | None = None
    """Builds the table node (default :class:`TableNode`), e.g. one that reports to a
    screen."""
    on_lobby: Callable[[Lobby], None] | None = None
    """Told the lobby once it exists (a screen shows its progress; its ``address`` is where
    our mesh listens)."""
    quit: asyncio.Event | None = None
    """Set it to leave: at the table, the node signs its leave (docs/protocol.md II.11.4),
    the peer lingers until the others hold it (at most :data:`LEAVE_LINGER` seconds) and
    returns with :attr:`PeerResult.quit`; before the table is formed, :class:`PeerQuit`."""
    on_node: Callable[[TableNode, Driver], None] | None = None
    """Told the node and its driver once the table is formed, before the driver runs (a
    screen attaches; a decider that answers later pokes the driver)."""
    player: str = ""
    """Our display name, signed in the lobby (``""``: none; others show our fingerprint)."""
    bot_seat: bool | None = None
    """Whether the lobby says a program plays our seat (``None``: exactly when no
    ``decider`` is given, so the bot named by ``bot`` plays)."""
    log_to: Callable[[TableNode], LoggedNode | None] | None = None
    """Without ``log``: wraps the formed table's node in a new game log (``None``: the game
    is not logged), e.g. a file in the user's data directory."""
    on_presence: Callable[[str, bool], None] | None = None
    """Told when a peer's mesh connection comes up (``True``) and when its last one ends
    (the peer's name, as the transport knows it); not over MQTT."""

    @property
    def is_bot(self) -> bool:
        return self.decider is None if self.bot_seat is None else self.bot_seat

    @property
    def timing(self) -> Timing:
        # The wait for an answer to a vote must outlast every limit a peer may have set
        # (docs II.11.3): twice this peer's, and never below the default.
        return Timing(limit=self.limit, decide_limit=self.decide_limit,
                      answer_limit=max(Timing().answer_limit,
                                       2 * max(self.limit, self.decide_limit)))


@dataclass(slots=True)
class PeerResult:
    """What the peer saw: its seat, the hands it committed, the winner (if the game ended)."""

    seat: str
    hands: list[HandOutcome]
    winner: str | None
    table: bytes
    envelopes: int = 0
    wall_s: float = 0.0
    lobby_s: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)
    spectated_from: int | None = None
    """The first hand this peer followed holding no key after the table eliminated it
    (it came back too late): from then on it only watched. ``None``: it never did."""
    mode: str = "audit"
    """The table's mode: ``audit`` or ``strict``."""
    quit: bool = False
    """We left the table (:attr:`PeerSettings.quit`): our signed leave went out."""
    left: tuple[str, ...] = ()
    """The seats whose signed leave we hold (ours too, if we quit)."""

    def document(self) -> dict[str, object]:
        return {"hands": [h.to_json() for h in self.hands], "left": list(self.left),
                "mode": self.mode, "quit": self.quit, "seat": self.seat,
                "spectated_from": self.spectated_from, "winner": self.winner}


class PeerQuit(PeerError):
    """:attr:`PeerSettings.quit` was set before the table was formed: nothing to leave."""


class _Switchboard:
    """The deliver callback of the transport: lobby messages to the lobby, the rest to the
    node's driver once attached (buffered until then)."""

    def __init__(self) -> None:
        self.on_lobby: Callable[[str, bytes], None] | None = None
        self._node: Callable[[str, bytes], None] | None = None
        self._buffer = Inbox(per_sender=MAX_BUFFERED_PER_SENDER, total=MAX_BUFFERED)

    @property
    def dropped(self) -> int:
        return self._buffer.dropped

    def deliver(self, sender: str, data: bytes) -> None:
        if is_lobby(data):
            if self.on_lobby is not None:
                self.on_lobby(sender, data)
        elif self._node is not None:
            self._node(sender, data)
        else:
            self._buffer.put(sender, data)

    def attach(self, deliver: Callable[[str, bytes], None]) -> None:
        while self._buffer:
            deliver(*self._buffer.pop())
        self._node = deliver


class _Attached:
    """A running transport as the driver's :class:`~p2pkille.net.driver.Transport`."""

    def __init__(self, transport: Mesh | MqttTransport, board: _Switchboard) -> None:
        self._transport = transport
        self._board = board

    @property
    def name(self) -> str:
        return self._transport.name

    def send(self, to: str | None, data: bytes) -> int:
        return self._transport.send(to, data)

    def send_repair(self, to: str | None, data: bytes) -> int:
        return self._transport.send_repair(to, data)

    async def run(self, deliver: Callable[[str, bytes], None]) -> None:
        self._board.attach(deliver)
        await asyncio.Future()

    async def wait_ready(self) -> None:
        await self._transport.wait_ready()


class _Watch:
    """The node as the driver sees it, noting the heads the other members announce.

    Once ``hands`` hands are committed (0: never) the node is *held*: it answers syncs
    (others may still need our envelopes and checkpoint signatures) but takes no envelope
    and no wake, so it plays no further hand; we say what we hold on its timer instead.
    """

    def __init__(self, inner: Node, node: TableNode, hands: int = 0) -> None:
        self.inner = inner
        self.node = node
        self.hands = hands
        self.members = [peer_name(k) for k in node.members]
        self.heads: dict[str, tuple[int, ...]] = {}

    @property
    def held(self) -> bool:
        return bool(self.hands) and len(self.node.outcomes) >= self.hands

    @property
    def name(self) -> str:
        return self.inner.name

    def start(self, now: float) -> Sequence[Output]:
        return self.inner.start(now)

    def leave(self, now: float) -> Sequence[Output]:
        """Our player quits: the node signs its leave (through the log, if we keep one)."""
        inner = self.inner
        return inner.leave(now) if isinstance(inner, LoggedNode) else self.node.leave(now)

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        if data.startswith(gapfill.PREFIX):
            if sender in self.members:
                # Only a hint of when we may leave: a forged one makes us leave early, and
                # any member can fill the others' gaps.
                with contextlib.suppress(RemoteProtocolError):
                    self.heads[sender] = gapfill.decode_sync(data, len(self.members)).heads
        elif self.held:
            return []
        return self.inner.receive(sender, data, now)

    def wake(self, now: float) -> Sequence[Output]:
        if self.held:
            return [Send(self.sync()), WakeAt(now + self.node.timing.sync_interval)]
        out = list(self.inner.wake(now))
        if self.node.done:
            # A finished node stops syncing; we keep saying what we hold until we leave.
            out += [Send(self.sync()), WakeAt(now + self.node.timing.sync_interval)]
        return out

    def sync(self) -> bytes:
        return self.node.sync_message()

    def target(self) -> tuple[int, ...]:
        """Per member, the position of its latest checkpoint signature that we hold; ours
        is our whole chain once we left (the leave is its last envelope)."""
        transcript = self.node.transcript
        out = []
        for member, head in zip(self.node.members, transcript.heads().heads, strict=True):
            if self.node.has_quit and member == self.node.identity.public:
                out.append(head)
                continue
            seq = head
            while seq > 0:
                env = transcript.get(member, seq)
                if env is not None and env.kind == msg.CHECKPOINT:
                    break
                seq -= 1
            out.append(seq)
        return tuple(out)

    def caught_up(self, target: tuple[int, ...]) -> bool:
        me = self.name
        return all(name == me or (name in self.heads and all(
            h >= t for h, t in zip(self.heads[name], target, strict=True)))
            for name in self.members)


async def run_peer(settings: PeerSettings,
                   progress: Callable[[str], None] = lambda _: None) -> PeerResult:
    """Run one peer to the end (see the module doc); raises :class:`PeerError` on time-out."""
    where = ["starting"]
    try:
        async with asyncio.timeout(settings.timeout):
            return await _run(settings, progress, where)
    except TimeoutError:
        raise PeerError(f"gave up after {settings.timeout:g} s (--timeout) {where[0]}") \
            from None
    except BaseExceptionGroup as group:
        # The task group wraps what one task raised; the caller wants that exception.
        leaves = _leaves(group)
        if len(leaves) == 1 and isinstance(leaves[0], Exception):
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out += _leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return out


async def _run(settings: PeerSettings, progress: Callable[[str], None],
               where: list[str]) -> PeerResult:
    """The peer; keeps ``where[0]`` saying what it is waiting for (for a time-out)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    decider = settings.decider if settings.decider is not None else make_bot(
        settings.bot, random.Random(secrets.randbits(64)))
    resumed = _resume(settings, decider)
    try:
        identity = resumed.node.identity if resumed is not None \
            else settings.identity or Identity.from_seed(secrets.token_bytes(32))
        delivery = DeliveryKeyPair.generate(SystemRng())
        board = _Switchboard()
        transport = _transport(settings, identity, resumed)
        table = secrets.token_bytes(16) if settings.create and resumed is None else None
        run = _Run(settings, progress, where, loop, started, identity, transport, board,
                   logged=resumed)
    except BaseException:
        if resumed is not None:
            resumed.close()  # the log reopened for the restart: nothing was added to it
        raise
    try:
        async with asyncio.TaskGroup() as tg:
            carrier = tg.create_task(transport.run(board.deliver), name="peer:transport")
            quitting = tg.create_task(run.quit_in_lobby(), name="peer:quit")
            try:
                return await run.play(tg, resumed, delivery, decider, table)
            finally:
                await run.stop()
                carrier.cancel()
                quitting.cancel()
    finally:
        # Closed once every task is over, whatever ended the game (a player who quits
        # cancels us): what the node accepted is on disk for `p2pkille verify`.
        if run.logged is not None:
            run.logged.close()


def _resume(settings: PeerSettings, decider: Decider) -> LoggedNode | None:
    """The node of a restart after a crash (the log holds the table, our keys and our
    secret seed), or ``None`` when there is no log to resume from."""
    if settings.log is None or not settings.log.exists():
        return None
    offer = settings.offer
    try:
        resumed = restart_from_log(settings.log, decider, timing=settings.timing)
    except LogError as exc:
        raise PeerError(f"cannot resume from {str(settings.log)!r}: {exc}") from None
    problem = None
    if resumed.node.config.name != offer.name:
        problem = f"is of table {resumed.node.config.name!r}, not {offer.name!r}"
    elif resumed.name != peer_name(resumed.node.identity.public):
        problem = f"is of node {resumed.name!r}, not of a network peer (named by its key)"
    if problem is not None:
        resumed.close()
        raise PeerError(f"the log {str(settings.log)!r} {problem}")
    return resumed


def _transport(settings: PeerSettings, identity: Identity,
               resumed: LoggedNode | None) -> Mesh | MqttTransport:
    """The transport on the table name's channel (a resumed mesh takes only the members)."""
    channel = channel_id(settings.offer.name)
    if settings.transport == "mesh":
        members = resumed.node.config.identities if resumed is not None else None
        return Mesh(identity, channel, members, host=settings.interface,
                    port=settings.port, peers=settings.peers, backoff_max=1.0,
                    on_presence=settings.on_presence)
    if settings.broker is None:
        raise ValueError("the mqtt transport needs a broker")
    return MqttTransport(peer_name(identity.public), channel, settings.broker)


@dataclass(eq=False)
class _Run:
    """One run of a peer, phase by phase (lobby or resume, play, linger), and what it
    started that must be stopped however the run ends: tasks, advert, zeroconf, log."""

    settings: PeerSettings
    progress: Callable[[str], None]
    where: list[str]
    loop: asyncio.AbstractEventLoop
    started: float
    identity: Identity
    transport: Mesh | MqttTransport
    board: _Switchboard
    logged: LoggedNode | None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    advertiser: Advertiser | None = None
    zc: AsyncZeroconf | None = None
    state: dict[str, object] = field(default_factory=dict)
    """What the discovery feed dials: see :func:`_wanted`."""
    playing: bool = False
    """The table is formed and its node runs: a quit is a signed leave from then on."""

    async def quit_in_lobby(self) -> None:
        """Raise :class:`PeerQuit` if :attr:`PeerSettings.quit` is set before we play."""
        quit = self.settings.quit
        if quit is None:
            return
        await quit.wait()
        if not self.playing:
            raise PeerQuit("left before the table was formed")

    async def play(self, tg: asyncio.TaskGroup, resumed: LoggedNode | None,
                   delivery: DeliveryKeyPair, decider: Decider,
                   table: bytes | None) -> PeerResult:
        transport = self.transport
        await transport.wait_ready()
        address = str(transport.address) if isinstance(transport, Mesh) else ""
        if isinstance(transport, Mesh) and self.settings.discover:
            self.zc = open_zeroconf([self.settings.interface])
            name, identity, state = self.settings.offer.name, self.identity, self.state
            self.tasks.append(tg.create_task(
                _feed(self.zc, transport, lambda s: _wanted(s, name, identity, state)),
                name="peer:discover"))
        if resumed is not None:
            node, config, lobby_s = self._resumed(tg, resumed), resumed.node.config, 0.0
        else:
            node, config, lobby_s = await self._form(tg, delivery, decider, table, address)
        inner: Node = self.logged if self.logged is not None else node
        if isinstance(transport, MqttTransport):
            transport.set_members(peer_name(k) for k in config.identities)
        return await self._hands(tg, node, inner, config, lobby_s)

    def _resumed(self, tg: asyncio.TaskGroup, resumed: LoggedNode) -> TableNode:
        node = resumed.node
        config = node.config
        self.state["members"] = {k.fingerprint for k in config.identities}
        self.progress(f"resuming table {config.name!r} from {str(self.settings.log)!r}: "
                      f"{len(node.transcript.accepted)} envelopes logged")
        if self.zc is not None and isinstance(self.transport, Mesh):
            # The log does not say who created the table: a resumed peer
            # advertises itself as the creator of its row.
            self.advertiser = Advertiser(self.zc, TableAdvert(
                config.table_id, config.name, config.ruleset, config.stake,
                len(config.members), len(config.members),
                self.identity.public.fingerprint), self.transport.port,
                [self.settings.interface], self.identity)
            self.tasks.append(tg.create_task(_advertise(self.advertiser),
                                             name="peer:advertise"))
        return node

    async def _form(self, tg: asyncio.TaskGroup, delivery: DeliveryKeyPair,
                    decider: Decider, table: bytes | None,
                    address: str) -> tuple[TableNode, TableConfig, float]:
        """The lobby until the table is formed, then its node (and log)."""
        lobby = self._lobby(tg, delivery, table, address)
        updating = await self._wait_formed(tg, lobby, table)
        config = lobby.config()
        self.state["members"] = {k.fingerprint for k in config.identities}
        lobby_s = self.loop.time() - self.started
        self._seated(tg, lobby, config, updating)
        factory = self.settings.node_factory or TableNode
        node = factory(peer_name(self.identity.public), self.identity, delivery, config,
                       decider, secrets.token_bytes(32), self.settings.timing)
        if self.settings.log is not None:
            self.logged = LoggedNode(node, self.settings.log)
        elif self.settings.log_to is not None:
            self.logged = self.settings.log_to(node)
        self.progress(f"table {config.name!r} formed in {lobby_s:.1f} s: "
                      f"{len(config.members)} members")
        return node, config, lobby_s

    def _lobby(self, tg: asyncio.TaskGroup, delivery: DeliveryKeyPair, table: bytes | None,
               address: str) -> Lobby:
        settings, identity, transport = self.settings, self.identity, self.transport
        lobby = Lobby(identity, delivery.public, settings.offer, table=table, address=address,
                      creator=None if table is not None else settings.creator,
                      admit=settings.admit, ask=settings.ask, choose=settings.choose,
                      player=settings.player, bot=settings.is_bot)
        self.state["lobby"] = lobby
        if settings.on_lobby is not None:
            settings.on_lobby(lobby)
        loop = self.loop

        def on_lobby(sender: str, data: bytes) -> None:
            for out in lobby.receive(sender, data, loop.time()):
                transport.send(out.to, out.data)

        self.board.on_lobby = on_lobby
        if self.zc is not None and table is not None and isinstance(transport, Mesh):
            self.advertiser = Advertiser(self.zc, _advert(lobby, table, identity),
                                         transport.port, [settings.interface], identity)
            self.tasks.append(tg.create_task(_advertise(self.advertiser),
                                             name="peer:advertise"))
        self.progress(f"looking for table {settings.offer.name!r} ({settings.offer.seats} "
                      f"seats) as {identity.public.fingerprint}"
                      + (f" on {address}" if address else f" via {settings.broker}"))
        return lobby

    async def _wait_formed(self, tg: asyncio.TaskGroup, lobby: Lobby,
                           table: bytes | None) -> asyncio.Task[None] | None:
        """Runs the lobby until the table is formed; returns the advert update under way."""
        creator = self.settings.creator
        told, said = 0, set[str]()
        advertised = lobby.taken
        updating: asyncio.Task[None] | None = None
        while not lobby.formed:
            self.where[0] = _lobby_state(lobby)
            told = _tell_refused(lobby, told, said, creator, self.progress)
            for out in lobby.tick(self.loop.time()):
                self.transport.send(out.to, out.data)
            if lobby.ambiguous:
                raise AmbiguousTable(self.settings.offer.name, lobby.ambiguous)
            if self.advertiser is not None and table is not None \
                    and lobby.taken != advertised \
                    and (updating is None or updating.done()):
                # The listing counts the seats as the creator does.
                advertised = lobby.taken
                updating = tg.create_task(
                    _update(self.advertiser, _advert(lobby, table, self.identity)),
                    name="peer:advertise")
                self.tasks.append(updating)
            await asyncio.sleep(0.02)
        _tell_refused(lobby, told, said, creator, self.progress)
        return updating

    def _seated(self, tg: asyncio.TaskGroup, lobby: Lobby, config: TableConfig,
                updating: asyncio.Task[None] | None) -> None:
        """The formed table: the mesh takes only its members, and we advertise it."""
        transport = self.transport
        if isinstance(transport, Mesh):
            transport.set_members(config.identities)
            for peer in lobby.peers():
                transport.add_peer(peer)
        if self.zc is not None and isinstance(transport, Mesh):
            formed = _advert(lobby, config.table_id, self.identity)
            if self.advertiser is None:
                self.advertiser = Advertiser(self.zc, formed, transport.port,
                                             [self.settings.interface], self.identity)
                self.tasks.append(tg.create_task(_advertise(self.advertiser),
                                                 name="peer:advertise"))
            else:
                if updating is not None:
                    updating.cancel()  # the formed table's advert comes last
                self.tasks.append(tg.create_task(_update(self.advertiser, formed),
                                                 name="peer:advertise"))

    async def _hands(self, tg: asyncio.TaskGroup, node: TableNode, inner: Node,
                     config: TableConfig, lobby_s: float) -> PeerResult:
        """The hands asked for (or the game), then the linger until the others hold them."""
        settings, transport = self.settings, self.transport
        watch = _Watch(inner, node, settings.hands)
        # Over MQTT a topic names its author only on the broker's word: syncs go signed.
        guard = Guard(self.identity, config.table_id, config.identities,
                      signed=isinstance(transport, MqttTransport))
        driver = Driver(watch, _Attached(transport, self.board), guard=guard)
        if settings.on_node is not None:
            settings.on_node(node, driver)
        driving = tg.create_task(driver.run(), name="peer:driver")
        reported = 0
        want = settings.hands
        quit = settings.quit
        self.playing = True
        told_left: set[int] = set()
        while not (node.done or (want and len(node.outcomes) >= want)):
            if node.has_quit:  # we left (below), or were rebuilt from a log that holds it
                break
            self.where[0] = f"{'watching' if _spectated_from(node) else 'playing'} hand " \
                f"{len(node.outcomes) + 1}"
            reported = _report(node, reported, self.progress)
            for seat in sorted(set(node.left) - told_left):
                told_left.add(seat)
                self.progress(f"{seat_name(seat)} left the table (signed)")
            if driving.done():
                driving.result()
                raise PeerError("the driver stopped")
            if quit is not None and quit.is_set():
                # Nothing until the driver has started: asked again on the next pass.
                driver.act(watch.leave, "leave")
            await asyncio.sleep(0.02)
        if node.has_quit:
            self.progress("left the table: our signed leave is out")
        _report(node, reported, self.progress)
        finished = self.loop.time()
        target = watch.target()
        linger_until = finished + (min(settings.linger, LEAVE_LINGER) if node.has_quit
                                   else settings.linger)
        self.where[0] = "waiting for the others to hold our leave" if node.has_quit \
            else "waiting for the others to hold our last hand"
        while not watch.caught_up(target) and self.loop.time() < linger_until:
            if quit is not None and quit.is_set() and not node.has_quit:
                break  # told to stop after the game: no more lingering
            await asyncio.sleep(0.05)
        # Say what we hold once more, so peers waiting on us can leave too.
        driver.send(None, watch.sync())
        await asyncio.sleep(0.2)
        driver.stop()
        await driving
        self.progress(f"traffic: {_traffic(guard, driver, transport, self.board)}")
        if self.logged is not None:
            self.logged.close()
        return _result(node, config, driver, want, finished - self.started - lobby_s,
                       lobby_s, self.loop.time() - finished)

    async def stop(self) -> None:
        self.board.on_lobby = None
        for task in self.tasks:
            task.cancel()
        if self.advertiser is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await self.advertiser.stop()
        if self.zc is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await self.zc.async_close()


def _result(node: TableNode, config: TableConfig, driver: Driver, want: int, wall_s: float,
            lobby_s: float, linger_s: float) -> PeerResult:
    hands = node.outcomes[:want] if want else list(node.outcomes)
    view = node.view
    winner = None
    # A winner only if the game ended within the hands we report (we may have
    # played on while lingering).
    if view is not None and view.game.winner is not None and node.done \
            and not (want and len(node.outcomes) > want):
        winner = node.names[view.game.winner]
    seat = node.my_seat
    return PeerResult(
        seat=seat_name(seat) if seat is not None else "",
        hands=hands, winner=winner, table=config.table_id,
        envelopes=driver.received, wall_s=wall_s, lobby_s=lobby_s,
        extra={"sent": node.sent_envelopes, "linger_s": linger_s},
        spectated_from=_spectated_from(node, hands), mode=config.mode, quit=node.has_quit,
        left=tuple(seat_name(s) for s in node.left))


async def _advertise(advertiser: Advertiser) -> None:
    # Advertising helps others find us; failing to must not stop the game.
    try:
        await advertiser.start()
    except Exception as exc:  # zeroconf raises several kinds (name clash, closed socket)
        log.warning("peer: could not advertise: %s", exc)


def _tell_refused(lobby: Lobby, told: int, said: set[str], creator: str | None,
                  progress: Callable[[str], None]) -> int:
    """Say on the progress line, once per reason, why a roster was refused while we are
    pinned to a creator (the user asked for that key; another one trying to seat us is
    news). Returns how many refusals are now told."""
    if creator is None:
        return lobby.refusals
    new = lobby.refusals - told
    for reason in lobby.refused[len(lobby.refused) - min(new, len(lobby.refused)):]:
        if reason.startswith("a roster signed by") and reason not in said:
            said.add(reason)
            progress(f"refused {reason} (--creator)")
    return lobby.refusals


def _lobby_state(lobby: Lobby) -> str:
    if lobby.roster is None:
        if lobby.creating:
            pending = f"; {len(lobby.pending)} waiting to be accepted" if lobby.pending else ""
            return (f"in the lobby: {lobby.taken} of {lobby.offer.seats} seats "
                    f"taken{pending}")
        if lobby.creator is not None:
            refused = sum(r.startswith("a roster signed by") for r in lobby.refused)
            return (f"in the lobby: no table by creator {lobby.creator} has seated us"
                    + (f" (refused {refused} roster(s) signed by other keys)"
                       if refused else ""))
        heard = f" ({len(lobby.offers)} creator(s) heard)" if lobby.offers else ""
        return f"in the lobby: no creator of {lobby.offer.name!r} chosen yet{heard}"
    return (f"in the lobby: {len(lobby.accepts)} of {lobby.roster.seats} members "
            "accepted the roster")


def _advert(lobby: Lobby, table: bytes, identity: Identity) -> TableAdvert:
    offer = lobby.offer
    roster = lobby.roster
    creator = roster.creator.fingerprint if roster is not None else identity.public.fingerprint
    return TableAdvert(table, offer.name, roster.ruleset if roster else offer.ruleset or "",
                       roster.stake if roster else offer.stake or 1, lobby.taken, offer.seats,
                       identity.public.fingerprint, ("mesh",), creator=creator)


def _traffic(guard: Guard, driver: Driver, transport: Mesh | MqttTransport,
             board: _Switchboard) -> str:
    """What the guard and the transport refused or dropped (a line of the report)."""
    parts = [guard.stats.text()]
    if isinstance(transport, MqttTransport):
        parts.append(f"{transport.strangers} messages from non-members ignored, "
                     f"{transport.dropped} game and {transport.repair_dropped} repair "
                     "messages dropped at a full queue")
    else:
        parts.append(f"{transport.evicted} unfinished handshakes closed for newer ones, "
                     f"{transport.repair_dropped} repair frames dropped at a full queue")
    if board.dropped or driver.inbox.dropped:
        parts.append(f"{board.dropped + driver.inbox.dropped} inbound messages over a "
                     "sender's bound dropped")
    return "; ".join(parts)


async def _update(advertiser: Advertiser, advert: TableAdvert) -> None:
    # The first registration may still be probing; an update needs it done.
    for _ in range(40):
        try:
            await advertiser.update(advert)
            return
        except Exception:  # zeroconf raises several kinds while a registration is under way
            await asyncio.sleep(0.1)


def _wanted(sighting: Sighting, name: str, identity: Identity,
            state: dict[str, object]) -> bool:
    """Whether to dial an advertised peer (a hint: the mesh handshake proves who answers):
    once the table is formed, its members; in the lobby, a joiner bound to a creator dials
    the adverts naming that creator, an unbound one the creators of ``name`` (to hear their
    offers); a creator dials nobody (joiners dial it)."""
    advert = sighting.advert
    if advert.fingerprint == identity.public.fingerprint:
        return False
    members = state.get("members")
    if isinstance(members, set):
        return advert.fingerprint in members
    lobby = state.get("lobby")
    if not isinstance(lobby, Lobby) or lobby.creating or advert.name != name:
        return False
    if lobby.creator is not None:
        return advert.creator == lobby.creator
    return advert.by_creator and not lobby.ambiguous


async def _feed(zc: AsyncZeroconf, mesh: Mesh, wanted: Callable[[Sighting], bool]) -> None:
    """Dial the advertised peers that are ``wanted`` (asked again at every change and every
    :data:`FEED_EVERY` seconds); stop dialling those no longer wanted or advertised. An
    address is dialled at most :data:`DIAL_ATTEMPTS` times in a row in vain, then not
    again until its advert changes; what is remembered is bounded by the browser's
    sightings."""
    async with TableBrowser(zc) as browser:
        await feed(browser, mesh, wanted)


async def feed(browser: TableBrowser, mesh: Mesh, wanted: Callable[[Sighting], bool]) -> None:
    """:func:`_feed` on a running browser (anything with ``sightings`` and ``changed``)."""
    added: dict[PeerAddress, Sighting] = {}
    while True:
        changed = browser.changed()
        want = {address: sighting for sighting in browser.sightings.values()
                if wanted(sighting) for address in sighting.peers}
        for address in [a for a in added if a not in want]:
            mesh.remove_peer(address)
            del added[address]
        for address, sighting in want.items():
            if address in added and (added[address] == sighting
                                     or address in mesh.dialling):
                continue
            if mesh.add_peer(address, attempts=DIAL_ATTEMPTS):
                added[address] = sighting
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FEED_EVERY):
                await changed


def _spectated_from(node: TableNode, hands: Sequence[HandOutcome] | None = None
                   ) -> int | None:
    """The hand after the voided one that eliminated our seat: from it on we hold no key
    and only watch. ``None`` if the table never eliminated us (within ``hands``)."""
    seat = node.my_seat
    if seat is None:
        return None
    me = seat_name(seat)
    for outcome in node.outcomes if hands is None else hands:
        if me in outcome.eliminated:
            return outcome.hand + 1
    return None


def _report(node: TableNode, reported: int, progress: Callable[[str], None]) -> int:
    outcomes = node.outcomes
    me = seat_name(node.my_seat) if node.my_seat is not None else ""
    while reported < len(outcomes):
        o = outcomes[reported]
        died = ", ".join(o.died) or "nobody"
        progress(f"hand {o.hand}: died {died}; pot {o.pot}; checkpoint {o.checkpoint[:16]} "
                 f"agreed by {len(o.agreed_by)}" + (" (voided)" if o.voided else "")
                 + (f"; eliminated {', '.join(o.eliminated)}" if o.eliminated else ""))
        if me in o.eliminated:
            progress(f"the table eliminated us ({me}): watching the rest of the game as a "
                     "spectator")
        reported += 1
    return reported
