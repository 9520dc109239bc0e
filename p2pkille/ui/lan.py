"""Playing over the LAN: the tables heard through zeroconf, and a table joined or created
exactly as ``p2pkille peer`` does it.

:class:`LanLobby` browses ``_p2pkille._tcp`` on the given interfaces and keeps the list of
tables (:attr:`LanLobby.tables`): one row per table name and creator, each with the
creator's key fingerprint and the terms the creator's own signed advert states. Joining a
row binds the player's peer to that row's creator: a roster signed by anybody else is
refused, so a stranger copying the name seats nobody who picked the real row. A creating
player decides who sits: its own bots are seated as they join; anybody else waits in the
lobby's ``pending`` until the player accepts or refuses it (:meth:`LanSession.accept`).

:meth:`LanLobby.create` and :meth:`LanLobby.join` start a
:class:`LanSession`: the player's own peer runs :func:`~p2pkille.net.peer.run_peer` (the
same lobby protocol, TCP mesh and advertisement as ``p2pkille peer``; a ``p2pkille peer``
process or another ``p2pkille play`` can take a free seat), with a
:class:`~p2pkille.ui.hooknode.HumanTableNode` driven by a
:class:`~p2pkille.ui.human.HumanDecider`. The bots a creator asks for are peers of the
protocol too, each with its own key and mesh listener in this process, joining over the
mesh like any other peer. Once the table is formed, :attr:`LanSession.table` is a
:class:`LanTable`, which the table screen shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import logging
import random
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from p2pkille.bots.tableaware import make_bot
from p2pkille.engine.view import Decider
from p2pkille.net.discovery import TableBrowser, open_zeroconf
from p2pkille.net.driver import Driver
from p2pkille.net.lobby import Lobby, Offer
from p2pkille.net.mesh import PeerAddress
from p2pkille.net.peer import PeerSettings, run_peer
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import HumanDecider
from p2pkille.ui.paced import PacedDecider
from p2pkille.ui.session import BOT_KINDS, BOT_NAMES
from protocol.identity import Identity

__all__ = ["LanLobby", "LanSession", "LanTable", "Listed", "NewTable", "Phase",
           "lan_address"]

log = logging.getLogger(__name__)

#: A person's game has no overall time limit; the node's own time-outs still apply.
NO_LIMIT: Final = 10.0 ** 7


def lan_address() -> str:
    """The address this host uses towards the LAN (the route's source for a private
    address; a UDP ``connect`` sends nothing), or ``127.0.0.1`` without a network."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.255.255.255", 9))
        address = str(s.getsockname()[0])
        if not ipaddress.ip_address(address).is_unspecified:
            return address
    return "127.0.0.1"


@dataclass(frozen=True, slots=True)
class Listed:
    """One table heard on the LAN: a name as one creator offers it (the terms are what the
    creator's own signed advert says; where it listens is a hint, checked at connect)."""

    table: bytes
    name: str
    ruleset: str
    stake: int
    taken: int
    wanted: int
    creator: str
    """The creator's key fingerprint: joining binds to it."""
    peers: int
    creator_heard: bool = True
    """The creator's own advert is heard (else the terms are a member's)."""

    @property
    def full(self) -> bool:
        return self.taken >= self.wanted


@dataclass(frozen=True, slots=True)
class NewTable:
    """What the player asks for when creating a table."""

    name: str
    ruleset: str = "wikipedia"
    stake: int = 1
    chips: int = 10
    seats: int = 4
    bots: int = 3

    def offer(self) -> Offer:
        """The lobby offer (``ValueError`` saying what is wrong)."""
        if not 0 <= self.bots <= self.seats - 1:
            raise ValueError(f"{self.bots} bots at {self.seats} seats: at most "
                             f"{self.seats - 1} (one seat is yours)")
        if self.bots > len(BOT_NAMES):
            raise ValueError(f"{self.bots} bots: at most {len(BOT_NAMES)}")
        return Offer(self.name, self.seats, self.ruleset, self.stake, self.chips)


class Phase(enum.Enum):
    """Where a :class:`LanSession` is."""

    LOBBY = "lobby"
    PLAYING = "playing"
    FAILED = "failed"
    ENDED = "ended"


class LanTable:
    """A table formed over the LAN, as the screen needs it (``model.PlayerTable``)."""

    def __init__(self, human: HumanTableNode, decider: HumanDecider, driver: Driver,
                 names: dict[bytes, str]) -> None:
        self._human = human
        self._decider = decider
        self.driver = driver
        self.names_by_key = names
        """Display names by raw identity key: the player's and its bots'; other peers
        are named by their key's fingerprint."""

    @property
    def human(self) -> HumanTableNode:
        return self._human

    @property
    def decider(self) -> HumanDecider:
        return self._decider

    def seat_names(self) -> list[str]:
        node = self._human
        if not node.member_of:
            return []
        out = []
        for member in node.member_of:
            key = node.members[member]
            out.append(self.names_by_key.get(key.raw, f"peer {key.fingerprint[:6]}"))
        return out

    def decided(self) -> None:
        self.driver.poke()


class LanSession:
    """One attempt to sit at a LAN table: the player's peer and (creating) its bots."""

    def __init__(self, settings: PeerSettings, player: str, bots: int, pace: float,
                 timing: Timing | None) -> None:
        self.player = player
        self.bots = bots
        # The bots' keys are made now: the lobby seats them without asking the player.
        self.bot_identities = [Identity.from_seed(secrets.token_bytes(32)) for _ in range(bots)]
        if settings.create:
            settings = replace(settings, ask=True, admit=frozenset(
                i.public.fingerprint for i in self.bot_identities))
        self.settings = settings
        self.pace = pace
        self.timing = timing or Timing()
        self.phase = Phase.LOBBY
        self.failure: str | None = None
        self.lobby: Lobby | None = None
        self.bot_lobbies: list[Lobby] = []
        self.table: LanTable | None = None
        self.on_table: Callable[[LanTable], None] | None = None
        self.on_failure: Callable[[str], None] | None = None
        self.decider = HumanDecider()
        self.identity = settings.identity or Identity.from_seed(secrets.token_bytes(32))
        self.names: dict[bytes, str] = {self.identity.public.raw: player}
        self.bot_keys: set[bytes] = {i.public.raw for i in self.bot_identities}
        self._task: asyncio.Task[None] | None = None

    @property
    def creating(self) -> bool:
        return self.settings.create

    def progress(self) -> tuple[int, int, int]:
        """(seats taken, seats wanted, members that accepted the roster) as far as the
        player's own lobby knows."""
        lobby = self.lobby
        wanted = self.settings.offer.seats
        if lobby is None:
            return 0, wanted, 0
        if lobby.roster is not None:
            return lobby.roster.seats, lobby.roster.seats, len(lobby.accepts)
        return (len(lobby.joined) if lobby.creating else 0), wanted, 0

    def bots_seated(self) -> int:
        """How many of our bots the table has seated (as the player's lobby knows)."""
        lobby = self.lobby
        if lobby is None:
            return 0
        seated = lobby.roster.members if lobby.roster is not None else lobby.joined
        return sum(1 for seat in seated if seat.identity.raw in self.bot_keys)

    def waiting(self) -> list[str]:
        """Fingerprints of the joiners waiting for the player's decision, oldest first."""
        lobby = self.lobby
        if lobby is None or not lobby.creating or lobby.roster is not None:
            return []
        return [seat.identity.fingerprint for seat in lobby.pending.values()]

    def accept(self, fingerprint: str) -> None:
        """Seat the waiting joiner with this key fingerprint (the player said yes)."""
        lobby = self.lobby
        if lobby is not None:
            # What the lobby answers (the roster, once full) goes out with its next tick.
            lobby.accept(fingerprint, asyncio.get_running_loop().time())

    def refuse(self, fingerprint: str) -> None:
        """Turn the waiting joiner with this key fingerprint away (the player said no)."""
        if self.lobby is not None:
            self.lobby.refuse(fingerprint)

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="lan session")
        return self._task

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self.table is not None:
            self.table.driver.stop()

    async def wait(self) -> None:
        """Until the session's task has ended (after :meth:`cancel`: at most 3 s)."""
        task = self._task
        if task is None:
            return
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(3):
                await asyncio.shield(task)

    async def _run(self) -> None:
        try:
            async with asyncio.TaskGroup() as tg:
                human = tg.create_task(run_peer(self._human_settings()), name="lan: you")
                if self.bots:
                    await self._start_bots(tg)
                await human
            self.phase = Phase.ENDED
        except asyncio.CancelledError:
            self.phase = Phase.ENDED
            raise
        except Exception as exc:  # shown on screen, never a traceback
            log.error("the LAN table failed", exc_info=exc)
            self.phase = Phase.FAILED
            self.failure = _describe(exc)
            if self.on_failure is not None:
                self.on_failure(self.failure)

    def _human_settings(self) -> PeerSettings:
        def on_lobby(lobby: Lobby) -> None:
            self.lobby = lobby

        def on_node(node: TableNode, driver: Driver) -> None:
            assert isinstance(node, HumanTableNode)
            self.table = LanTable(node, self.decider, driver, self.names)
            self.phase = Phase.PLAYING
            if self.on_table is not None:
                self.on_table(self.table)

        return replace(self.settings, identity=self.identity, limit=self.timing.limit,
                       decide_limit=self.timing.decide_limit, decider=self.decider,
                       node_factory=HumanTableNode, on_lobby=on_lobby, on_node=on_node)

    async def _start_bots(self, tg: asyncio.TaskGroup) -> None:
        """Each bot dials the player's mesh (its address is known once the lobby runs) and
        takes a seat through the lobby like any joiner, bound to the player's key."""
        async with asyncio.timeout(30):
            while self.lobby is None:
                await asyncio.sleep(0.02)
        address = PeerAddress.parse(self.lobby.address)
        rng = random.Random(secrets.randbits(64))
        for i, identity in enumerate(self.bot_identities):
            self.names[identity.public.raw] = BOT_NAMES[i % len(BOT_NAMES)]
            bot: Decider = make_bot(BOT_KINDS[(i + 1) % len(BOT_KINDS)],
                                    random.Random(rng.getrandbits(64)))
            pacer: PacedDecider | None = None
            if self.pace > 0:
                pacer = PacedDecider(bot, self.pace)
                bot = pacer
            settings = PeerSettings(
                offer=self.settings.offer, interface=self.settings.interface, discover=False,
                peers=(address,), identity=identity, timeout=NO_LIMIT, linger=2.0,
                creator=self.identity.public.fingerprint, limit=self.timing.limit,
                decide_limit=self.timing.decide_limit, decider=bot,
                on_lobby=self.bot_lobbies.append, on_node=_pacing(pacer))
            tg.create_task(run_peer(settings), name=f"lan: bot {i + 1}")


def _pacing(pacer: PacedDecider | None) -> Callable[[TableNode, Driver], None] | None:
    if pacer is None:
        return None

    def on_node(node: TableNode, driver: Driver) -> None:
        pacer.poke = driver.poke

    return on_node


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc or 'no details'}"


class LanLobby:
    """The tables heard on ``interfaces`` (``None``: every interface), and the player's
    session at one of them. Peers listen and advertise on ``address``."""

    def __init__(self, interfaces: Sequence[str] | None, address: str, player: str, *,
                 pace: float = 0.0, timing: Timing | None = None, port: int = 0) -> None:
        self.interfaces = None if interfaces is None else list(interfaces)
        self.address = address
        self.port = port
        """Where the player's own peer listens (0: any free port)."""
        self.player = player
        self.pace = pace
        self.timing = timing
        self.tables: list[Listed] = []
        self.session: LanSession | None = None
        self.failure: str | None = None
        """Why the LAN could not be browsed (shown instead of the list)."""
        self.changed = 0
        self._stop = asyncio.Event()

    async def run(self) -> None:
        """Browse until :meth:`stop`; then end the session."""
        try:
            zc = open_zeroconf(self.interfaces)
        except OSError as exc:
            self.failure = _describe(exc)
            await self._stop.wait()
            return
        try:
            async with TableBrowser(zc) as browser:
                while not self._stop.is_set():
                    changed = browser.changed()
                    self.tables = _listing(browser)
                    self.changed += 1
                    stop = asyncio.ensure_future(self._stop.wait())
                    change = asyncio.ensure_future(changed)
                    await asyncio.wait([stop, change], return_when=asyncio.FIRST_COMPLETED)
                    for waiter in (stop, change):
                        waiter.cancel()
        except OSError as exc:
            self.failure = _describe(exc)
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await zc.async_close()
            if self.session is not None:
                self.session.cancel()
                await self.session.wait()

    def stop(self) -> None:
        self._stop.set()

    def create(self, new: NewTable) -> LanSession:
        """Create ``new`` (``ValueError`` if it makes no table) and seat its bots."""
        offer = new.offer()
        settings = PeerSettings(offer=offer, create=True, interface=self.address,
                                port=self.port, timeout=NO_LIMIT, linger=2.0)
        return self._begin(LanSession(settings, self.player, new.bots, self.pace, self.timing))

    def join(self, listed: Listed) -> LanSession:
        """Ask for a seat at ``listed``, bound to the key that advertised it."""
        offer = Offer(listed.name, listed.wanted, listed.ruleset, listed.stake)
        settings = PeerSettings(offer=offer, interface=self.address, port=self.port,
                                timeout=NO_LIMIT, linger=2.0, creator=listed.creator)
        return self._begin(LanSession(settings, self.player, 0, self.pace, self.timing))

    def _begin(self, session: LanSession) -> LanSession:
        if self.session is not None:
            self.session.cancel()
        self.session = session
        session.start()
        return session

    def leave(self) -> None:
        """Give up the current session (back to the list)."""
        if self.session is not None:
            self.session.cancel()
            self.session = None


def _listing(browser: TableBrowser) -> list[Listed]:
    return [Listed(row.table, row.name, row.advert.ruleset, row.advert.stake, row.taken,
                   row.advert.seats_wanted, row.creator, len(row.sightings), row.by_creator)
            for row in browser.listings()]

