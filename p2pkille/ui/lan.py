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

Every peer signs its display name into the lobby: the player's own (its
:class:`~p2pkille.ui.identity.Profile`'s, with its key, when given), its bots' (flagged as
bots). The screens take every name from the roster the members accepted, and the
player's :class:`~p2pkille.ui.identity.KnownPlayers` say which of them clash with a name
or key met before (:attr:`LanTable.seated`). A joiner waiting for the creator's decision is
shown with its signed name, its key's fingerprint and what the known players say of it.
The player's game is logged like a game with bots (``log_to``); while the table plays, the
screen learns from the mesh which members' connections have closed
(:meth:`LanTable.gone`).
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
from pathlib import Path
from typing import Final

from p2pkille.bots.tableaware import make_bot
from p2pkille.engine.options import PRESETS
from p2pkille.engine.view import Decider
from p2pkille.net.discovery import TableBrowser, open_zeroconf
from p2pkille.net.driver import Driver
from p2pkille.net.lobby import MAX_SEATS, Lobby, Offer, Seat
from p2pkille.net.mesh import PeerAddress, peer_name
from p2pkille.net.peer import LEAVE_LINGER, PeerQuit, PeerSettings, run_peer
from p2pkille.runtime.config import MODES
from p2pkille.runtime.log import LoggedNode
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import HumanDecider
from p2pkille.ui.i18n import text
from p2pkille.ui.identity import KnownPlayers, Seated, display_names
from p2pkille.ui.paced import PacedDecider
from p2pkille.ui.session import BOT_KINDS, BOT_NAMES
from protocol.identity import Identity

__all__ = ["FormError", "Label", "LanLobby", "LanSession", "LanTable", "Listed", "NewTable",
           "Phase", "lan_address", "most_bots", "seat_range"]

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
class Label:
    """A screen text by key, as a field of another (said in the same language)."""

    key: str


class FormError(ValueError):
    """What makes a :class:`NewTable` no table: a screen text (:mod:`~p2pkille.ui.i18n`)
    and its fields, said in the screen's language (:meth:`say`); ``str()`` is English."""

    def __init__(self, key: str, **fields: object) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields

    def say(self, lang: str) -> str:
        return text(self.key, lang, **{
            name: text(value.key, lang) if isinstance(value, Label) else value
            for name, value in self.fields.items()})

    def __str__(self) -> str:
        return self.say("en")


def seat_range(ruleset: str) -> tuple[int, int]:
    """The seats a table of ``ruleset`` may have over the LAN (the ruleset's player counts,
    at most the lobby's :data:`~p2pkille.net.lobby.MAX_SEATS`)."""
    options = PRESETS[ruleset]
    return options.min_players, min(options.max_players, MAX_SEATS)


def most_bots(seats: int) -> int:
    """Bots a table of ``seats`` may have: one seat is the player's, and each bot needs a
    name of its own."""
    return max(min(seats - 1, len(BOT_NAMES)), 0)


@dataclass(frozen=True, slots=True)
class NewTable:
    """What the player asks for when creating a table."""

    name: str
    ruleset: str = "wikipedia"
    stake: int = 1
    chips: int = 10
    seats: int = 4
    bots: int = 3
    mode: str = "audit"

    def offer(self) -> Offer:
        """The lobby offer (:class:`FormError` saying what is wrong)."""
        name = self.name.strip()
        if not name:
            raise FormError("form_no_name")
        if len(name.encode("utf-8", "surrogatepass")) > 64 or not name.isprintable():
            raise FormError("form_bad_name")
        if self.ruleset not in PRESETS:
            raise FormError("form_bad_ruleset", ruleset=self.ruleset,
                            known=", ".join(PRESETS))
        if self.mode not in MODES:
            raise FormError("form_bad_mode", mode=self.mode)
        if self.stake < 1:
            raise FormError("form_stake_low")
        if self.chips < self.stake:
            raise FormError("form_chips_low", chips=self.chips, stake=self.stake)
        low, high = seat_range(self.ruleset)
        if not low <= self.seats <= high:
            raise FormError("form_seats_range", seats=self.seats, ruleset=self.ruleset,
                            low=low, high=high)
        if not 0 <= self.bots <= most_bots(self.seats):
            raise FormError("form_bots_many", bots=self.bots, seats=self.seats,
                            most=most_bots(self.seats))
        return Offer(name, self.seats, self.ruleset, self.stake, self.chips, self.mode)


class Phase(enum.Enum):
    """Where a :class:`LanSession` is."""

    LOBBY = "lobby"
    PLAYING = "playing"
    FAILED = "failed"
    ENDED = "ended"


class LanTable:
    """A table formed over the LAN, as the screen needs it (``model.PlayerTable``).

    ``seated`` are the members in the roster's order, keyed by raw identity key (their
    signed names and what the known players say of them); ``present`` maps a member's
    transport name to whether its connection is up (as far as the mesh has told)."""

    def __init__(self, human: HumanTableNode, decider: HumanDecider, driver: Driver,
                 seated: dict[bytes, Seated], *, present: dict[str, bool] | None = None,
                 log_path: Path | None = None, log_problem: str | None = None) -> None:
        self._human = human
        self._decider = decider
        self.driver = driver
        self.by_key = seated
        names = display_names(list(seated.values()))
        self.names_by_key = dict(zip(seated, names, strict=True))
        """Display names by raw identity key, every member's (from the signed roster)."""
        self.present = present if present is not None else {}
        self.log_path = log_path
        """Where the player's node logs the game (``None``: nowhere)."""
        self.log_problem = log_problem
        """Why it does not, if it could not."""

    @property
    def human(self) -> HumanTableNode:
        return self._human

    @property
    def decider(self) -> HumanDecider:
        return self._decider

    def _keys(self) -> list[bytes]:
        node = self._human
        return [node.members[member].raw for member in node.member_of]

    def seat_names(self) -> list[str]:
        return [self.names_by_key.get(k, "?") for k in self._keys()]

    def seated(self) -> list[Seated]:
        """The members in seat order (empty before the genesis seated everyone)."""
        return [self.by_key[k] for k in self._keys() if k in self.by_key]

    def gone(self) -> list[int]:
        """Seats whose mesh connection was up and has closed (the player left, or the
        network between us broke): the table goes on only after their time-out."""
        node = self._human
        out = []
        for seat, member in enumerate(node.member_of):
            name = peer_name(node.members[member])
            if seat != node.my_seat and self.present.get(name) is False:
                out.append(seat)
        return out

    def decided(self) -> None:
        self.driver.poke()


class LanSession:
    """One attempt to sit at a LAN table: the player's peer and (creating) its bots.

    ``settings.identity`` is the player's key (default: a fresh one) and ``player`` its
    display name; ``known`` the names met before (``None``: none are checked or kept);
    ``log_to`` names a new game log from the table id (``None``: not logged)."""

    def __init__(self, settings: PeerSettings, player: str, bots: int, pace: float,
                 timing: Timing | None, *, known: KnownPlayers | None = None,
                 log_to: Callable[[bytes], Path] | None = None) -> None:
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
        self.known = known
        self._log_to = log_to
        self.log_path: Path | None = None
        self.log_problem: str | None = None
        self.phase = Phase.LOBBY
        self.failure: str | None = None
        self.lobby: Lobby | None = None
        self.bot_lobbies: list[Lobby] = []
        self.table: LanTable | None = None
        self.on_table: Callable[[LanTable], None] | None = None
        self.on_failure: Callable[[str], None] | None = None
        self.decider = HumanDecider()
        self.identity = settings.identity or Identity.from_seed(secrets.token_bytes(32))
        self.bot_keys: set[bytes] = {i.public.raw for i in self.bot_identities}
        self.present: dict[str, bool] = {}
        """Whether each peer's mesh connection is up, by its transport name."""
        self._task: asyncio.Task[None] | None = None
        self._quit = asyncio.Event()
        """Set by :meth:`cancel` at the table: our peers sign their leaves and end."""

    @property
    def creating(self) -> bool:
        return self.settings.create

    def progress(self) -> tuple[int, int, int]:
        """(seats taken, seats wanted, members that accepted the roster) as far as the
        player's own lobby knows; a creator's bots hold their seats from the start."""
        lobby = self.lobby
        wanted = self.settings.offer.seats
        if lobby is None:
            return (1 + self.bots if self.creating else 0), wanted, 0
        if lobby.roster is not None:
            return lobby.roster.seats, lobby.roster.seats, len(lobby.accepts)
        return (lobby.taken if lobby.creating else 0), wanted, 0

    def bots_seated(self) -> int:
        """How many of our bots the table has seated (as the player's lobby knows)."""
        lobby = self.lobby
        if lobby is None:
            return 0
        seated = lobby.roster.members if lobby.roster is not None else lobby.joined
        return sum(1 for seat in seated if seat.identity.raw in self.bot_keys)

    def seated(self, seat: Seat) -> Seated:
        """A lobby seat as the screens show it, with what the known players say of it."""
        met = None
        if self.known is not None and seat.identity != self.identity.public:
            met = self.known.check(seat.identity, seat.player, seat.bot)
        return Seated(seat.identity, seat.player, seat.bot, met)

    def waiting(self) -> list[Seated]:
        """The joiners waiting for the player's decision, oldest first."""
        lobby = self.lobby
        if lobby is None or not lobby.creating or lobby.roster is not None:
            return []
        return [self.seated(seat) for seat in lobby.pending.values()]

    def members(self) -> list[Seated]:
        """Who sits at the table as far as we know: the roster's members once it came,
        else (a creator's) those seated so far."""
        lobby = self.lobby
        if lobby is None:
            return []
        seats = lobby.roster.members if lobby.roster is not None else (
            lobby.joined if lobby.creating else ())
        return [self.seated(seat) for seat in seats]

    def creator(self) -> Seated | None:
        """The creator we are bound to, as its offer names it (a joiner's, once the offer
        came)."""
        lobby = self.lobby
        if lobby is None or lobby.creating or lobby.creator is None:
            return None
        terms = lobby.offers.get(lobby.creator)
        if terms is None:
            return None
        return self.seated(Seat(terms.creator, bytes(32), "", terms.player, terms.bot))

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
        """Leave. At the table, the player's peer and its bots each sign a leave
        (docs/protocol.md II.11.4), so the others settle their seats at once, and end
        once the others hold it (:meth:`wait`); before the table is formed, the session
        just stops."""
        if self._task is None or self._task.done():
            return
        if self.table is not None and self.phase is Phase.PLAYING:
            self._quit.set()
            return
        self._task.cancel()
        if self.table is not None:
            self.table.driver.stop()

    async def wait(self) -> None:
        """Until the session's task has ended (after :meth:`cancel`: at most a few
        seconds, the peers' linger for their leaves; then it is cancelled)."""
        task = self._task
        if task is None:
            return
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(LEAVE_LINGER + 2):
                await asyncio.shield(task)
        if not task.done():
            task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task

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
            lobby = self.lobby
            assert lobby is not None
            assert lobby.roster is not None
            seated = {seat.identity.raw: self.seated(seat) for seat in lobby.roster.members}
            if self.known is not None:
                # Trust on first use: the people we sat with are known from now on (bots
                # have a new key every game and are never kept).
                self.known.remember((s.key, s.name) for s in seated.values() if not s.bot)
            self.table = LanTable(node, self.decider, driver, seated, present=self.present,
                                  log_path=self.log_path, log_problem=self.log_problem)
            self.phase = Phase.PLAYING
            if self.on_table is not None:
                self.on_table(self.table)

        def on_presence(name: str, up: bool) -> None:
            self.present[name] = up

        return replace(self.settings, identity=self.identity, limit=self.timing.limit,
                       decide_limit=self.timing.decide_limit, decider=self.decider,
                       node_factory=HumanTableNode, on_lobby=on_lobby, on_node=on_node,
                       quit=self._quit,
                       player=self.player, bot_seat=False, on_presence=on_presence,
                       log_to=self._logged if self._log_to is not None else None)

    def _logged(self, node: TableNode) -> LoggedNode | None:
        """The player's node logging to a new file (``None``, and the reason kept, if the
        file cannot be made: the game goes on unlogged, and the end screen says why)."""
        assert self._log_to is not None
        path: Path | None = None
        try:
            path = self._log_to(node.config.table_id)
            logged = LoggedNode(node, path)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            self.log_problem = f"{exc.strerror or exc}{where}"
            log.warning("the game is not logged: %s", self.log_problem)
            return None
        self.log_path = path
        return logged

    async def _start_bots(self, tg: asyncio.TaskGroup) -> None:
        """Each bot dials the player's mesh (its address is known once the lobby runs) and
        takes a seat through the lobby like any joiner, bound to the player's key, under
        its own name, flagged as a bot."""
        async with asyncio.timeout(30):
            while self.lobby is None:
                await asyncio.sleep(0.02)
        address = PeerAddress.parse(self.lobby.address)
        rng = random.Random(secrets.randbits(64))
        for i, identity in enumerate(self.bot_identities):
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
                on_lobby=self.bot_lobbies.append, on_node=_pacing(pacer),
                player=BOT_NAMES[i % len(BOT_NAMES)], bot_seat=True, quit=self._quit)
            tg.create_task(_bot(settings), name=f"lan: bot {i + 1}")


async def _bot(settings: PeerSettings) -> None:
    """A bot's peer; told to leave before its table formed, it just ends."""
    with contextlib.suppress(PeerQuit):
        await run_peer(settings)


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
    session at one of them. Peers listen and advertise on ``address``.

    ``player`` is the player's display name and ``identity`` its key (default: a fresh one
    each session); ``known`` the names met before, ``log_to`` where each game is logged."""

    def __init__(self, interfaces: Sequence[str] | None, address: str, player: str, *,
                 pace: float = 0.0, timing: Timing | None = None, port: int = 0,
                 identity: Identity | None = None, known: KnownPlayers | None = None,
                 log_to: Callable[[bytes], Path] | None = None) -> None:
        self.interfaces = None if interfaces is None else list(interfaces)
        self.address = address
        self.port = port
        """Where the player's own peer listens (0: any free port)."""
        self.player = player
        self.identity = identity
        self.known = known
        self.log_to = log_to
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
        """Create ``new`` (:class:`FormError` if it makes no table) and seat its bots."""
        offer = new.offer()
        settings = PeerSettings(offer=offer, create=True, interface=self.address,
                                port=self.port, timeout=NO_LIMIT, linger=2.0,
                                identity=self.identity)
        return self._begin(self._session(settings, new.bots))

    def join(self, listed: Listed) -> LanSession:
        """Ask for a seat at ``listed``, bound to the key that advertised it
        (:class:`FormError` if this program cannot play the table it lists)."""
        if listed.ruleset not in PRESETS:
            raise FormError("lan_unknown_ruleset", ruleset=listed.ruleset)
        low, high = seat_range(listed.ruleset)
        if not low <= listed.wanted <= high:
            raise FormError("form_seats_range", seats=listed.wanted, ruleset=listed.ruleset,
                            low=low, high=high)
        offer = Offer(listed.name, listed.wanted, listed.ruleset, listed.stake)
        settings = PeerSettings(offer=offer, interface=self.address, port=self.port,
                                timeout=NO_LIMIT, linger=2.0, creator=listed.creator,
                                identity=self.identity)
        return self._begin(self._session(settings, 0))

    def _session(self, settings: PeerSettings, bots: int) -> LanSession:
        return LanSession(settings, self.player, bots, self.pace, self.timing,
                          known=self.known, log_to=self.log_to)

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

