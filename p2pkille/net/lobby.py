"""Forming a table over the network: a sans-I/O lobby that every peer runs before its node.

Peers that want the same table name meet on one *channel*: the mesh handshake id and MQTT
topic prefix :func:`channel_id` derived from the name, so a joiner that knows only the name
(and, without discovery, one ``--peer HOST:PORT``) can find the creator. The table's own id
is the creator's random choice and comes with the roster.

Lobby messages travel on the same transport as the node's envelopes, marked by
:data:`PREFIX`; each is canonical JSON ``{"body", "key", "sig"}`` signed by ``key`` (purpose
``table-lobby``) over ``canonical.encode(body)``. Nothing unsigned is believed; a ``join``
or ``need`` must come from its signer (the transport's sender name), while rosters and
acceptances may be relayed by anybody. Bodies (``type``):

- ``offer`` {channel, name, ruleset, stake, chips, seats, taken[, mode][, player][, bot]}:
  a creator says, every ``resend`` seconds until its table is formed, that it seats
  players at this name (the signer is the creator). ``taken`` counts the seats held for
  keys it admits without asking (its player's bots) as taken.
- ``join`` {channel, creator, delivery, address[, player][, bot]}: a joiner offers its
  identity (the signer), its delivery key and a hint of where its mesh listens to the
  creator whose key fingerprint is ``creator``. Sent to everybody until a roster arrives;
  only that creator acts on it, and it decides who sits: anybody, first come
  (``admit=None``), only the keys it names (``admit``), or each one as its player accepts
  it (``ask``).
- ``roster`` {channel, table, name, ruleset, stake, chips, seats, members[, mode]}: the
  creator's signed list of members ({identity, delivery, address[, player][, bot]}), once
  every seat is taken.
- ``accept`` {channel, table, roster}: a member checked that the roster holds its own keys
  and what it asked for, and signs the roster's digest.
- ``need`` {channel, table}: a member that holds the roster but not every acceptance asks
  for what the others know.

``player`` is the signer's display name (absent: it gave none, and screens show its key's
fingerprint) and ``bot: true`` says a program plays the seat (absent: a person). A name is
1..16 printable characters without spaces at either end and not a pronoun that other
screens would read as their own player (:func:`player_name_problem`); a message carrying
another is refused, the reason naming it. The roster repeats each joiner's name and flag
from its join, and every member checks its own entry before it accepts the roster, so each
name the table shows was signed by its owner (in its join and, through the roster's digest,
in its acceptance). A name is only what its key says it is called: screens show it beside
the key's fingerprint where trust matters, and warn when a name known for another key
comes back (:mod:`p2pkille.ui.identity`).

A joiner is bound to one creator and takes a roster signed by that creator only. It names
the creator (``--creator``, or the row it picked in a listing), or it listens to the offers
for the name for ``choose`` seconds after the first one: with one creator it binds to it;
with more it binds to none and lists them (:attr:`Lobby.ambiguous`), for its user to pick.
A stranger that answers every join with a roster of its own making therefore seats nobody
who did not pick it.

A peer that holds the roster answers a member's ``join`` or ``need`` with the roster and
every acceptance it holds (all signed, so anybody may relay them), at most once per
``resend`` seconds per member. That is why a table does not depend on its creator once
formed: any member can bring a late one up to date. The table is *formed* for a peer once
it holds an acceptance from every member; :meth:`Roster.config` then builds the same
:class:`TableConfig` on every peer, and the node's genesis runs on the same transport.

Input from the network never raises out of :meth:`Lobby.receive`: a message that fails a
check is counted in :attr:`Lobby.refused` with the reason and logged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from p2pkille.engine.options import PRESETS
from p2pkille.net.mesh import PeerAddress, peer_name
from p2pkille.runtime.config import MODES, Member, TableConfig
from p2pkille.runtime.io import Send
from protocol import canonical
from protocol.domain import hash32
from protocol.errors import ProtocolError, RemoteProtocolError
from protocol.identity import Identity, PublicKey
from protocol.keys import check_delivery_key

__all__ = [
    "MAX_PLAYER_NAME",
    "PREFIX",
    "Lobby",
    "LobbyError",
    "LobbyMessage",
    "Offer",
    "Roster",
    "Seat",
    "Terms",
    "channel_id",
    "decode_message",
    "encode_message",
    "is_lobby",
    "player_name_problem",
]

log = logging.getLogger(__name__)

PREFIX: Final = b"p2pkille-lobby/1\n"
"""Marks a lobby message on a transport (envelopes start with ``{``, gap fill with ``S``)."""
PURPOSE: Final = "table-lobby"
MAX_MESSAGE: Final = 32 * 1024
MAX_SEATS: Final = 32
MAX_ADDRESS: Final = 80
TABLE_ID_SIZE: Final = 16
MAX_REFUSED: Final = 256
MAX_OFFERS: Final = 16
"""Creators a joiner remembers for one name (the first ones heard)."""
MAX_PENDING: Final = 64
"""Joiners waiting for a creator's decision; beyond it the oldest request is forgotten (it
comes again while its joiner waits)."""
MAX_PLAYER_NAME: Final = 16
"""Characters in a player's display name (and at most 64 bytes of UTF-8)."""
_KINDS: Final = {
    "offer": ("channel", "chips", "name", "ruleset", "seats", "stake", "taken", "type"),
    "join": ("address", "channel", "creator", "delivery", "type"),
    "roster": ("channel", "chips", "members", "name", "ruleset", "seats", "stake", "table",
               "type"),
    "accept": ("channel", "roster", "table", "type"),
    "need": ("channel", "table", "type"),
}
#: Fields a body of the kind may carry besides its own (absent: the default).
_OPTIONAL: Final = {"offer": ("bot", "mode", "player"), "join": ("bot", "player"),
                    "roster": ("mode",), "accept": (), "need": ()}
_MEMBER: Final = ("address", "delivery", "identity")
_MEMBER_OPTIONAL: Final = ("bot", "player")
#: Names that other screens would read as their own player ("you", "du").
_PRONOUNS: Final = frozenset({"you", "du"})
_RULESET = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
_ADDRESS = re.compile(r"[!-~]{0,80}")
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_MODE = re.compile("|".join(MODES))


class LobbyError(RemoteProtocolError):
    """A lobby message that is malformed, unsigned, or not for this table."""


def player_name_problem(name: object) -> str:  # noqa: PLR0911  one return per rule a name can break
    """Why ``name`` cannot be a player's display name, or ``""``: it must be 1 to
    :data:`MAX_PLAYER_NAME` printable characters (no control or format character, which
    could move the cursor or reorder what a screen shows), at most 64 bytes of UTF-8,
    without spaces at either end, and not "you" or "du" (another screen would read it as
    its own player)."""
    if not isinstance(name, str):
        return f"a name must be text, not {type(name).__name__}"
    if not name:
        return "a name cannot be empty"
    if len(name) > MAX_PLAYER_NAME or len(name.encode("utf-8", "surrogatepass")) > 64:
        return f"{name!r:.40} is longer than {MAX_PLAYER_NAME} characters"
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        return f"{name!r:.40} holds the control or format character U+{ord(bad):04X}"
    if name != name.strip():
        return f"{name!r:.40} has spaces at either end"
    if name.casefold() in _PRONOUNS:
        return f"{name!r} is a pronoun: other screens would read it as their own player"
    return ""


def _player(body: canonical.JsonObject, what: str, wire: bytes) -> tuple[str, bool]:
    """The optional ``player`` and ``bot`` of a body or roster entry (checked)."""
    player = body.get("player", "")
    if "player" in body:
        problem = player_name_problem(player)
        if problem:
            raise LobbyError(f"{what}: the player's name {problem}", evidence=wire[:64])
    bot = body.get("bot", False)
    if "bot" in body and bot is not True:
        raise LobbyError(f"{what}: bot is {bot!r:.20}, not true (absent for a person)",
                         evidence=wire[:64])
    assert isinstance(player, str)
    return player, bot is True


def _put_player(body: dict[str, object], player: str, bot: bool) -> dict[str, object]:
    if player:
        body["player"] = player
    if bot:
        body["bot"] = True
    return body


def _require(obj: canonical.JsonObject, keys: tuple[str, ...], optional: tuple[str, ...],
             what: str, wire: bytes) -> None:
    """``obj`` has ``keys`` and, of ``optional``, any."""
    canonical.require_keys(obj, (*keys, *(k for k in optional if k in obj)), what=what,
                           evidence=wire)


def channel_id(name: str) -> bytes:
    """Where peers wanting the table ``name`` meet (mesh handshake id, MQTT topics)."""
    return hash32("table-channel", name.encode("utf-8"))[:TABLE_ID_SIZE]


@dataclass(frozen=True, slots=True)
class LobbyMessage:
    """A decoded lobby message whose signature checked."""

    kind: str
    body: canonical.JsonObject
    key: PublicKey
    wire: bytes

    @property
    def signer(self) -> str:
        return peer_name(self.key)


def encode_message(identity: Identity, body: dict[str, object]) -> bytes:
    """``body`` signed by ``identity``, ready to send."""
    raw = canonical.encode(body)
    return PREFIX + canonical.encode({
        "body": body, "key": canonical.b64encode(identity.public.raw),
        "sig": canonical.b64encode(identity.sign(PURPOSE, raw))})


def decode_message(data: bytes) -> LobbyMessage:
    """A lobby message from the network; raises only :class:`RemoteProtocolError` kinds."""
    if not data.startswith(PREFIX):
        raise LobbyError("not a lobby message", evidence=data[:64])
    outer = canonical.decode_object(data[len(PREFIX):], max_size=MAX_MESSAGE)
    canonical.require_keys(outer, ("body", "key", "sig"), what="lobby", evidence=data)
    body = canonical.get_object(outer, "body", what="lobby", evidence=data)
    key = PublicKey.from_bytes(canonical.get_bytes(outer, "key", what="lobby", size=32,
                                                   evidence=data))
    kind = body.get("type")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise LobbyError(f"lobby message of type {kind!r:.40}", evidence=data)
    # A strict table's roster and offer also name its mode (absent: an audit table); a
    # join or offer may name its signer and say it is a bot.
    _require(body, _KINDS[kind], _OPTIONAL[kind], f"lobby {kind}", data)
    key.verify(PURPOSE, canonical.encode(body),
               canonical.get_bytes(outer, "sig", what="lobby", size=64, evidence=data),
               evidence=data)
    return LobbyMessage(kind, body, key, data)


@dataclass(frozen=True, slots=True)
class Offer:
    """What a creator offers, or (fields left ``None``) what a joiner insists on."""

    name: str
    seats: int
    ruleset: str | None = None
    stake: int | None = None
    chips: int | None = None
    mode: str | None = None
    """``audit`` or ``strict`` (a creator's; ``None``: a creator means ``audit``, a
    joiner takes either)."""

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r}: expected one of {', '.join(MODES)}")
        if _NAME.fullmatch(self.name) is None or not self.name.isprintable() \
                or len(self.name.encode()) > 64:
            raise ValueError(f"table name {self.name!r:.80}: 1..64 bytes of printable text")
        if not 2 <= self.seats <= MAX_SEATS:
            raise ValueError(f"seats {self.seats}: need 2..{MAX_SEATS}")
        if self.ruleset is not None:
            if self.ruleset not in PRESETS:
                raise ValueError(f"unknown ruleset {self.ruleset!r}: expected one of "
                                 f"{', '.join(PRESETS)}")
            opts = PRESETS[self.ruleset]
            if not opts.min_players <= self.seats <= opts.max_players:
                raise ValueError(f"{self.seats} seats: {self.ruleset} plays with "
                                 f"{opts.min_players}..{opts.max_players} players")
        if self.stake is not None and self.stake < 1:
            raise ValueError(f"stake {self.stake}: need at least 1")
        if self.chips is not None and self.chips < (self.stake or 1):
            raise ValueError(f"chips {self.chips}: need at least the stake")

    def admits(self, roster: Roster) -> str:
        """Why ``roster`` is not what this offer asks for, or ``""``."""
        for what, want, got in (("name", self.name, roster.name),
                                ("seats", self.seats, roster.seats),
                                ("ruleset", self.ruleset, roster.ruleset),
                                ("stake", self.stake, roster.stake),
                                ("chips", self.chips, roster.chips),
                                ("mode", self.mode, roster.mode)):
            if want is not None and want != got:
                return f"{what} {got!r} where we asked for {want!r}"
        return ""


@dataclass(frozen=True, slots=True)
class Terms:
    """A creator's ``offer`` as a joiner heard it: who, and what it seats players at."""

    creator: PublicKey
    name: str
    ruleset: str
    stake: int
    chips: int
    seats: int
    taken: int
    mode: str = "audit"
    player: str = ""
    """The creator's display name (``""``: it gave none)."""
    bot: bool = False

    @property
    def fingerprint(self) -> str:
        return self.creator.fingerprint

    def __str__(self) -> str:
        who = f" {self.player}" + (" (bot)" if self.bot else "") if self.player else ""
        return (f"{self.fingerprint}{who} ({self.ruleset}, stake {self.stake}, chips "
                f"{self.chips}, {self.taken}/{self.seats} seats"
                + (", strict" if self.mode == "strict" else "") + ")")

    @classmethod
    def from_message(cls, message: LobbyMessage) -> Terms:
        body, wire, what = message.body, message.wire, "lobby offer"
        seats = canonical.get_int(body, "seats", lo=2, hi=MAX_SEATS, what=what, evidence=wire)
        player, bot = _player(body, what, wire)
        return cls(
            player=player, bot=bot, creator=message.key,
            name=canonical.get_str(body, "name", what=what, pattern=_NAME, evidence=wire),
            ruleset=canonical.get_str(body, "ruleset", what=what, pattern=_RULESET,
                                      evidence=wire),
            stake=canonical.get_int(body, "stake", lo=1, hi=10**12, what=what, evidence=wire),
            chips=canonical.get_int(body, "chips", lo=1, hi=10**12, what=what, evidence=wire),
            seats=seats,
            taken=canonical.get_int(body, "taken", lo=1, hi=seats, what=what, evidence=wire),
            mode=canonical.get_str(body, "mode", what=what, pattern=_MODE, evidence=wire)
            if "mode" in body else "audit")

    def problem(self, offer: Offer) -> str:
        """Why these terms are not what ``offer`` (a joiner's) asks for, or ``""``."""
        for what, want, got in (("name", offer.name, self.name),
                                ("seats", offer.seats, self.seats),
                                ("ruleset", offer.ruleset, self.ruleset),
                                ("stake", offer.stake, self.stake),
                                ("chips", offer.chips, self.chips),
                                ("mode", offer.mode, self.mode)):
            if want is not None and want != got:
                return f"{what} {got!r} where we asked for {want!r}"
        return ""


@dataclass(frozen=True, slots=True)
class Seat:
    """A member as the roster lists it; ``address`` is only a hint where its mesh listens."""

    identity: PublicKey
    delivery: bytes
    address: str = ""
    player: str = ""
    """The display name its join gave (``""``: none)."""
    bot: bool = False
    """Its join said a program plays the seat."""

    @property
    def name(self) -> str:
        return peer_name(self.identity)

    @property
    def fingerprint(self) -> str:
        return self.identity.fingerprint

    def entry(self) -> dict[str, object]:
        """The seat as a roster lists it."""
        return _put_player({"address": self.address,
                            "delivery": canonical.b64encode(self.delivery),
                            "identity": canonical.b64encode(self.identity.raw)},
                           self.player, self.bot)

    @property
    def peer(self) -> PeerAddress | None:
        try:
            return PeerAddress.parse(self.address) if self.address else None
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Roster:
    """The creator's signed list of members of table ``table``."""

    channel: bytes
    table: bytes
    name: str
    ruleset: str
    stake: int
    chips: int
    members: tuple[Seat, ...]
    creator: PublicKey
    wire: bytes = field(default=b"", compare=False)
    mode: str = "audit"

    @property
    def seats(self) -> int:
        return len(self.members)

    @property
    def digest(self) -> bytes:
        """What acceptances sign: the hash of the roster's body."""
        return hash32("table-roster", canonical.encode(self.body()))

    def body(self) -> dict[str, object]:
        body: dict[str, object] = {
            "channel": canonical.b64encode(self.channel), "chips": self.chips,
            "members": [s.entry() for s in self.members],
            "name": self.name, "ruleset": self.ruleset, "seats": len(self.members),
            "stake": self.stake, "table": canonical.b64encode(self.table), "type": "roster",
        }
        if self.mode != "audit":
            body["mode"] = self.mode  # absent for audit tables, as in the genesis
        return body

    def config(self) -> TableConfig:
        """The table every member builds from this roster (identical on every peer)."""
        return TableConfig(table_id=self.table, name=self.name, ruleset=self.ruleset,
                           members=tuple(Member(s.identity, s.delivery) for s in self.members),
                           stake=self.stake, chips=self.chips, mode=self.mode)

    def seat_of(self, key: PublicKey) -> Seat | None:
        return next((s for s in self.members if s.identity == key), None)

    @classmethod
    def from_message(cls, message: LobbyMessage) -> Roster:
        """Check a ``roster`` message fully: fields, members, a valid table config."""
        body, wire = message.body, message.wire
        what = "lobby roster"
        seats = canonical.get_int(body, "seats", lo=2, hi=MAX_SEATS, what=what, evidence=wire)
        raw = canonical.get_list(body, "members", what=what, evidence=wire)
        if len(raw) != seats:
            raise LobbyError(f"roster lists {len(raw)} members for {seats} seats",
                             evidence=wire)
        members = []
        for entry in raw:
            if not isinstance(entry, dict):
                raise LobbyError("roster member is not an object", evidence=wire)
            _require(entry, _MEMBER, _MEMBER_OPTIONAL, what, wire)
            player, bot = _player(entry, "lobby roster member", wire)
            members.append(Seat(
                PublicKey.from_bytes(canonical.get_bytes(entry, "identity", what=what, size=32,
                                                         evidence=wire)),
                check_delivery_key(canonical.get_bytes(entry, "delivery", what=what, size=32,
                                                       evidence=wire)),
                canonical.get_str(entry, "address", what=what, pattern=_ADDRESS,
                                  evidence=wire), player, bot))
        if [s.identity.raw for s in members] != sorted({s.identity.raw for s in members}):
            raise LobbyError("roster members are not distinct and in key order", evidence=wire)
        roster = cls(
            channel=canonical.get_bytes(body, "channel", what=what, size=TABLE_ID_SIZE,
                                        evidence=wire),
            table=canonical.get_bytes(body, "table", what=what, size=TABLE_ID_SIZE,
                                      evidence=wire),
            name=canonical.get_str(body, "name", what=what, pattern=_NAME, evidence=wire),
            ruleset=canonical.get_str(body, "ruleset", what=what, pattern=_RULESET,
                                      evidence=wire),
            stake=canonical.get_int(body, "stake", lo=1, hi=10**12, what=what, evidence=wire),
            chips=canonical.get_int(body, "chips", lo=1, hi=10**12, what=what, evidence=wire),
            members=tuple(members), creator=message.key, wire=wire,
            mode=canonical.get_str(body, "mode", what=what, pattern=_MODE, evidence=wire)
            if "mode" in body else "audit")
        if roster.seat_of(message.key) is None:
            raise LobbyError("the roster's signer is not one of its members", evidence=wire)
        try:
            roster.config()
        except (ProtocolError, ValueError) as exc:
            raise LobbyError(f"roster makes no valid table: {exc}", evidence=wire) from None
        return roster


class Lobby:
    """One peer's side of forming a table (sans-I/O: feed :meth:`receive` and :meth:`tick`,
    send what they return).

    A creator passes a complete ``offer`` and a fresh ``table`` id; a joiner passes an offer
    with only what it insists on (``name`` and ``seats`` at least) and ``table=None``.
    ``address`` is the hint of where our mesh listens (``""`` on MQTT).

    ``creator`` (a joiner's: the key, or its fingerprint as a discovery advert shows it) is
    the creator the joiner chose; only a roster it signed is taken. A joiner that does not
    know it binds to the only creator whose offer fits what it asked for, ``choose``
    seconds after the first offer; with several it binds to none and lists them in
    :attr:`ambiguous` (a stranger must not seat us at a table of its own making).

    A creator's ``admit`` (fingerprints) are seated as they join; with ``admit=None`` and
    ``ask=False`` anybody is, first come. With ``ask=True`` any other joiner waits in
    :attr:`pending` until :meth:`accept` or :meth:`refuse` decides (a player at a screen).
    Seats held for ``admit`` keys that have not joined yet count as taken (:attr:`taken`):
    nobody else may have them.

    ``player`` is our display name (``""``: none) and ``bot`` says a program plays our seat;
    both go into our join (or offer) and must come back in the roster.
    """

    def __init__(self, identity: Identity, delivery: bytes, offer: Offer, *,
                 table: bytes | None = None, address: str = "", resend: float = 0.5,
                 creator: PublicKey | str | None = None, choose: float = 1.5,
                 admit: Iterable[str] | None = None, ask: bool = False, player: str = "",
                 bot: bool = False) -> None:
        if player and player_name_problem(player):
            raise ValueError(f"player name: {player_name_problem(player)}")
        if table is not None and (len(table) != TABLE_ID_SIZE or None in (
                offer.ruleset, offer.stake, offer.chips)):
            raise ValueError("a creator needs a 16-byte table id and a complete offer")
        if len(delivery) != 32 or _ADDRESS.fullmatch(address) is None:
            raise ValueError("delivery key of 32 bytes and a printable address needed")
        if isinstance(creator, PublicKey):
            creator = creator.fingerprint
        if creator is not None and _FINGERPRINT.fullmatch(creator) is None:
            raise ValueError(f"creator {creator!r:.40}: a key or its 16-hex-digit fingerprint")
        self.identity = identity
        self.delivery = bytes(delivery)
        self.creator: str | None = identity.public.fingerprint if table is not None \
            else creator
        self.offer = offer
        self.channel = channel_id(offer.name)
        self.table = table
        self.address = address
        self.resend = resend
        self.creating = table is not None
        self.player = player
        self.bot = bot
        self.joined: list[Seat] = [Seat(identity.public, self.delivery, address, player, bot)] \
            if self.creating else []
        self.choose = choose
        self.admit = None if admit is None else frozenset(admit)
        self.ask = ask
        self.pending: dict[bytes, Seat] = {}
        """Joiners waiting for the creator's decision (``ask``), oldest first."""
        self._turned_away: dict[bytes, None] = {}  # keys refused by the creator, bounded
        self.offers: dict[str, Terms] = {}
        """The creators heard offering this name (a joiner's), by fingerprint."""
        self._first_offer: float | None = None
        self.ambiguous: tuple[Terms, ...] = ()
        """The creators a joiner that named none could not choose between."""
        self.roster: Roster | None = None
        self.accepts: dict[bytes, bytes] = {}  # member key -> its accept message
        self.refused: list[str] = []
        """Why messages were refused: the latest :data:`MAX_REFUSED` reasons."""
        self.refusals = 0
        """Messages refused in all."""
        self._answered: dict[str, float] = {}
        self._last_tick = -1e18

    @property
    def name(self) -> str:
        return peer_name(self.identity.public)

    @property
    def formed(self) -> bool:
        """Every member accepted the roster we hold."""
        return self.roster is not None and len(self.accepts) == self.roster.seats

    @property
    def taken(self) -> int:
        """Seats taken as far as we know (for an advertisement and the offer): the members
        seated, and (a creator's) the seats held for admitted keys that have not joined
        yet, such as its player's bots."""
        if self.roster is not None:
            return self.roster.seats
        joined = {s.fingerprint for s in self.joined}
        held = sum(1 for fp in self.admit or () if fp not in joined) if self.creating else 0
        return min(max(len(self.joined), 1) + held, self.offer.seats)

    def config(self) -> TableConfig:
        if self.roster is None or not self.formed:
            raise RuntimeError("lobby: the table is not formed yet")
        return self.roster.config()

    # -- input --------------------------------------------------------------------------

    def receive(self, sender: str, data: bytes, now: float) -> list[Send]:
        """Judge one message from ``sender`` (the transport's name for it)."""
        try:
            message = decode_message(data)
            # Rosters and acceptances are relayed by anybody; a join or a request speaks
            # for its sender.
            if message.kind in ("join", "need") and message.signer != sender:
                raise LobbyError(f"signed by {message.key.fingerprint} but sent by "
                                 f"{sender[:16]!r}", evidence=data[:64])
            if canonical.get_bytes(message.body, "channel", what="lobby", size=TABLE_ID_SIZE,
                                   evidence=data) != self.channel:
                raise LobbyError("for another table name", evidence=data[:64])
            handler = {"offer": self._on_offer, "join": self._on_join,
                       "roster": self._on_roster, "accept": self._on_accept,
                       "need": self._on_need}[message.kind]
            return handler(message, now)
        except RemoteProtocolError as exc:
            self.refusals += 1
            self.refused.append(exc.reason)
            if len(self.refused) > 2 * MAX_REFUSED:
                del self.refused[:MAX_REFUSED]
            log.warning("lobby: refused a message from %.16s: %s", sender, exc.reason)
            return []

    def _on_offer(self, message: LobbyMessage, now: float) -> list[Send]:
        terms = Terms.from_message(message)
        if self.creating or self.roster is not None or terms.fingerprint in self.offers:
            if terms.fingerprint in self.offers:
                self.offers[terms.fingerprint] = terms  # seats taken may have changed
            return []
        if len(self.offers) >= MAX_OFFERS:
            return []
        self.offers[terms.fingerprint] = terms
        if self._first_offer is None:
            self._first_offer = now
        log.info("lobby: %s offers %s", terms.fingerprint, terms)
        return []

    # One branch per join case: another table's, a repeat, admitted, asked.
    def _on_join(self, message: LobbyMessage, now: float) -> list[Send]:  # noqa: PLR0911, PLR0912
        body, wire = message.body, message.wire
        delivery = check_delivery_key(canonical.get_bytes(
            body, "delivery", what="lobby join", size=32, evidence=wire))
        address = canonical.get_str(body, "address", what="lobby join", pattern=_ADDRESS,
                                    evidence=wire)
        creator = canonical.get_str(body, "creator", what="lobby join", pattern=_FINGERPRINT,
                                    evidence=wire)
        player, bot = _player(body, f"a join by {message.key.fingerprint}", wire)
        if self.roster is not None:
            if self.roster.seat_of(message.key) is None:
                if not self.creating or creator != self.creator:
                    return []  # another table's joiner, or one we did not seat
                raise LobbyError("a join after the table was filled", evidence=wire[:64])
            return self._answer(message.signer, now)
        if not self.creating or creator != self.creator:
            return []  # joins are their creator's business
        known = next((s for s in self.joined if s.identity == message.key), None)
        if known is not None:
            if known.delivery != delivery:
                raise LobbyError("a second join with another delivery key", evidence=wire[:64])
            if (known.player, known.bot) != (player, bot):
                raise LobbyError("a second join under another name", evidence=wire[:64])
            return []
        if message.key.raw in self._turned_away:
            return []
        seat = Seat(message.key, delivery, address, player, bot)
        fingerprint = message.key.fingerprint
        if self.admit is not None and fingerprint in self.admit:
            return self._seat(seat, now)
        if not self.ask:
            if self.admit is not None:
                self._turn_away(message.key)
                raise LobbyError(f"a join by {fingerprint}, not one of the keys we admit",
                                 evidence=wire[:64])
            return self._seat(seat, now) if self._room() else []
        if message.key.raw not in self.pending:
            if len(self.pending) >= MAX_PENDING:
                del self.pending[next(iter(self.pending))]
            log.info("lobby: %s asks for a seat", fingerprint)
        self.pending[message.key.raw] = seat
        return []

    def accept(self, fingerprint: str, now: float) -> list[Send]:
        """Seat the pending joiner with this key fingerprint (a creator's, with ``ask``)."""
        seat = next((s for s in self.pending.values() if s.identity.fingerprint == fingerprint),
                    None)
        if seat is None or self.roster is not None or not self._room():
            return []
        del self.pending[seat.identity.raw]
        return self._seat(seat, now)

    def _room(self) -> bool:
        """Whether a seat is free for a key we do not admit: the seats held for admitted
        keys (the player's bots) are nobody else's."""
        return self.taken < self.offer.seats

    def refuse(self, fingerprint: str) -> None:
        """Turn the pending joiner with this fingerprint away; its joins are ignored."""
        seat = next((s for s in self.pending.values() if s.identity.fingerprint == fingerprint),
                    None)
        if seat is None:
            return
        del self.pending[seat.identity.raw]
        self._turn_away(seat.identity)

    def _turn_away(self, key: PublicKey) -> None:
        self._turned_away[key.raw] = None
        if len(self._turned_away) > 4 * MAX_PENDING:
            del self._turned_away[next(iter(self._turned_away))]

    def _seat(self, seat: Seat, now: float) -> list[Send]:
        self.joined.append(seat)
        self.pending.pop(seat.identity.raw, None)
        log.info("lobby: %s joined (%d of %d seats)", seat.identity.fingerprint,
                 len(self.joined), self.offer.seats)
        if len(self.joined) < self.offer.seats:
            return []
        self.pending.clear()
        return self._fill(now)

    def _fill(self, now: float) -> list[Send]:
        offer = self.offer
        assert self.table is not None
        assert offer.ruleset is not None
        assert offer.stake is not None
        assert offer.chips is not None
        members = tuple(sorted(self.joined, key=lambda s: s.identity.raw))
        roster = Roster(self.channel, self.table, offer.name, offer.ruleset, offer.stake,
                        offer.chips, members, self.identity.public, mode=offer.mode or "audit")
        wire = encode_message(self.identity, roster.body())
        self.roster = Roster.from_message(decode_message(wire))
        return self._accept(now)

    def _on_roster(self, message: LobbyMessage, now: float) -> list[Send]:
        roster = Roster.from_message(message)
        if self.creator is None:
            raise LobbyError(f"a roster signed by {roster.creator.fingerprint} before we "
                             "chose a creator", evidence=message.wire[:64])
        if roster.creator.fingerprint != self.creator:
            raise LobbyError(f"a roster signed by {roster.creator.fingerprint}, not the "
                             f"creator {self.creator}", evidence=message.wire[:64])
        if self.roster is not None:
            if roster.digest != self.roster.digest:
                raise LobbyError("a second, different roster", evidence=message.wire[:64])
            return []
        if self.creating:
            raise LobbyError("a roster for a table we create", evidence=message.wire[:64])
        mine = roster.seat_of(self.identity.public)
        if mine is None or mine.delivery != self.delivery:
            raise LobbyError("a roster that does not seat us with our keys",
                             evidence=message.wire[:64])
        if (mine.player, mine.bot) != (self.player, self.bot):
            raise LobbyError(f"a roster that seats us as {mine.player or 'nameless'!r}"
                             + (" (bot)" if mine.bot else "") + f", not as "
                             f"{self.player or 'nameless'!r}" + (" (bot)" if self.bot else ""),
                             evidence=message.wire[:64])
        problem = self.offer.admits(roster)
        if problem:
            raise LobbyError(f"a roster with {problem}", evidence=message.wire[:64])
        self.roster = roster
        log.info("lobby: seated at %s by %s", canonical.b64encode(roster.table),
                 roster.creator.fingerprint)
        return self._accept(now)

    def _accept(self, now: float) -> list[Send]:
        roster = self.roster
        assert roster is not None
        wire = encode_message(self.identity, {
            "channel": canonical.b64encode(self.channel), "roster": canonical.b64encode(
                roster.digest), "table": canonical.b64encode(roster.table), "type": "accept"})
        self.accepts[self.identity.public.raw] = wire
        # The roster goes along: a member that has only us to ask gets it from us.
        return [Send(roster.wire), Send(wire)]

    def _on_accept(self, message: LobbyMessage, now: float) -> list[Send]:
        roster, wire = self.roster, message.wire
        if roster is None:
            return []  # it will come again once we hold the roster
        if roster.seat_of(message.key) is None:
            raise LobbyError("an acceptance from outside the roster", evidence=wire[:64])
        if canonical.get_bytes(message.body, "roster", what="lobby accept", size=32,
                               evidence=wire) != roster.digest \
                or canonical.get_bytes(message.body, "table", what="lobby accept",
                                       size=TABLE_ID_SIZE, evidence=wire) != roster.table:
            raise LobbyError("an acceptance of another roster", evidence=wire[:64])
        if message.key.raw not in self.accepts:
            self.accepts[message.key.raw] = wire
            if self.formed:
                log.info("lobby: table %s formed", canonical.b64encode(roster.table))
        return []

    def _on_need(self, message: LobbyMessage, now: float) -> list[Send]:
        if self.roster is None:
            return []
        if self.roster.seat_of(message.key) is None:
            raise LobbyError("a request from outside the roster", evidence=message.wire[:64])
        return self._answer(message.signer, now)

    def _answer(self, member: str, now: float) -> list[Send]:
        """The roster and every acceptance we hold, to one member, rate-limited."""
        assert self.roster is not None
        if now - self._answered.get(member, -1e18) < self.resend:
            return []
        self._answered[member] = now
        return [Send(self.roster.wire, member)] + [
            Send(wire, member) for key, wire in sorted(self.accepts.items())]

    # -- time ---------------------------------------------------------------------------

    def tick(self, now: float) -> list[Send]:
        """What to (re)send now: call it often; it acts every ``resend`` seconds."""
        if self.formed or now - self._last_tick < self.resend:
            return []
        self._last_tick = now
        if self.roster is None:
            if self.creating:
                return [Send(self._offer_message())]
            if self.creator is None:
                self._choose(now)
            if self.creator is None:
                return []
            return [Send(encode_message(self.identity, _put_player({
                "address": self.address, "channel": canonical.b64encode(self.channel),
                "creator": self.creator, "delivery": canonical.b64encode(self.delivery),
                "type": "join"}, self.player, self.bot)))]
        need = encode_message(self.identity, {
            "channel": canonical.b64encode(self.channel),
            "table": canonical.b64encode(self.roster.table), "type": "need"})
        return [Send(self.roster.wire), Send(self.accepts[self.identity.public.raw]),
                Send(need)]

    def _offer_message(self) -> bytes:
        offer = self.offer
        body: dict[str, object] = {
            "channel": canonical.b64encode(self.channel), "chips": offer.chips,
            "name": offer.name, "ruleset": offer.ruleset, "seats": offer.seats,
            "stake": offer.stake, "taken": self.taken, "type": "offer"}
        if offer.mode not in (None, "audit"):
            body["mode"] = offer.mode
        return encode_message(self.identity, _put_player(body, self.player, self.bot))

    def _choose(self, now: float) -> None:
        """Bind to the one creator that offers what we ask, once offers had ``choose``
        seconds to come in; with several, bind to none and say so."""
        if self._first_offer is None or now - self._first_offer < self.choose \
                or self.ambiguous:
            return
        fitting = sorted((t for t in self.offers.values() if not t.problem(self.offer)),
                         key=lambda t: t.fingerprint)
        if len(fitting) == 1:
            self.creator = fitting[0].fingerprint
            log.info("lobby: chose the only creator offering %r: %s", self.offer.name,
                     fitting[0])
        elif fitting:
            self.ambiguous = tuple(fitting)
            log.warning("lobby: %d creators offer %r; not choosing", len(fitting),
                        self.offer.name)

    def peers(self) -> Sequence[PeerAddress]:
        """Mesh address hints of the other members, once seated."""
        if self.roster is None:
            return ()
        return tuple(p for s in self.roster.members
                     if s.identity != self.identity.public and (p := s.peer) is not None)


def is_lobby(data: bytes) -> bool:
    """Whether transport input is for the lobby (rather than the node)."""
    return data.startswith(PREFIX)

