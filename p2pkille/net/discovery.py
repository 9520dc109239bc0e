"""Finding tables on the LAN with multicast DNS-SD (python-zeroconf, asyncio API).

Every peer of a table advertises one ``_p2pkille._tcp.local.`` service, so a table outlives
whoever created it. The instance name carries the peer's key fingerprint and the start of
the table id, so two peers never clash (``NonUniqueNameException``). The TXT record
(:class:`TableAdvert`) says what the table is and who created it (``cr``, the creator's key
fingerprint); the SRV/A records say where the peer's mesh listens.

The TXT record is signed by the advertising peer (``key``, ``sig``: purpose
``table-advert`` over the other properties in canonical JSON), so what an advert says of a
table is that key's word: a stranger cannot advertise terms under another peer's
fingerprint, only replay that peer's own record. Listings (:meth:`TableBrowser.listings`)
have one row per table name and creator, with the terms the creator itself advertises. Where
the mesh listens is still only a hint (a peer proves its key when it connects), and a record
that does not parse or verify is logged and ignored.

What a browser keeps is bounded (:data:`MAX_SIGHTINGS` services, :data:`MAX_RESOLVING`
look-ups at once), so a flood of adverts costs a stranger more than it costs us.

Browse handlers only start tasks: resolving a name (``AsyncServiceInfo.async_request``)
waits on the network and must never run inside zeroconf's callback. Bind zeroconf to chosen
interfaces with :func:`open_zeroconf` (tests use ``["127.0.0.1"]`` only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType, TracebackType
from typing import Any, Final

from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from p2pkille.net.mesh import MAX_TABLE_ID_SIZE, PeerAddress
from protocol import canonical
from protocol.domain import PROTOCOL_VERSION
from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.identity import Identity, PublicKey

__all__ = [
    "MAX_SIGHTINGS",
    "SERVICE_TYPE",
    "Advertiser",
    "BadAdvert",
    "Listing",
    "Sighting",
    "TableAdvert",
    "TableBrowser",
    "feed_peers",
    "open_zeroconf",
]

log = logging.getLogger(__name__)

SERVICE_TYPE: Final = "_p2pkille._tcp.local."
MAX_TABLE_NAME: Final = 64
"""Bytes of UTF-8 in a table name, so every TXT item stays far below 255 bytes."""
MAX_SEATS: Final = 32
MAX_STAKE: Final = 10**12
TRANSPORTS: Final = frozenset({"mesh", "mqtt"})
PURPOSE: Final = "table-advert"
MAX_SIGHTINGS: Final = 256
"""Services a browser keeps; adverts beyond them are ignored (and counted)."""
MAX_RESOLVING: Final = 64
"""Services a browser looks up at once; more wait their turn (as many as it keeps)."""

_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_RULESET = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
_TOKEN = re.compile(r"[a-z0-9-]{1,16}")
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,15}")
_KEYS: Final = ("v", "table", "name", "ruleset", "stake", "taken", "wanted", "fp", "tr",
                 "cr", "key", "sig")


class BadAdvert(RemoteProtocolError):
    """A service record that does not describe a table: it is ignored, never trusted."""


@dataclass(frozen=True, slots=True)
class TableAdvert:
    """What one peer says about its table, as TXT properties (:meth:`to_txt`/:meth:`from_txt`).

    ``transports`` lists what the peer accepts (``mesh``, ``mqtt``); unknown names from newer
    peers are kept so a listing can show them. ``creator`` is the fingerprint of the table's
    creator (``""``: the advertising peer itself). ``key`` and ``signature`` are set by
    :meth:`signed` (and always, on an advert read by :meth:`from_txt`).
    """

    table: bytes
    name: str
    ruleset: str
    stake: int
    seats_taken: int
    seats_wanted: int
    fingerprint: str
    transports: tuple[str, ...] = ("mesh",)
    protocol: int = PROTOCOL_VERSION
    creator: str = ""
    key: bytes = b""
    signature: bytes = b""

    def __post_init__(self) -> None:
        if not self.creator:
            object.__setattr__(self, "creator", self.fingerprint)
        problem = _problem(self)
        if problem:
            raise ValueError(f"table advert {problem}")

    @property
    def by_creator(self) -> bool:
        """Advertised by the table's creator itself."""
        return self.creator == self.fingerprint

    def signed(self, identity: Identity) -> TableAdvert:
        """This advert signed by ``identity``, whose fingerprint it must carry."""
        if identity.public.fingerprint != self.fingerprint:
            raise ValueError(f"advert of {self.fingerprint} signed by "
                             f"{identity.public.fingerprint}")
        unsigned = replace(self, key=b"", signature=b"")
        return replace(unsigned, key=identity.public.raw,
                       signature=identity.sign(PURPOSE, canonical.encode(unsigned._fields())))

    def _fields(self) -> dict[str, str]:
        return {
            "v": str(self.protocol),
            "table": canonical.b64encode(self.table),
            "name": self.name,
            "ruleset": self.ruleset,
            "stake": str(self.stake),
            "taken": str(self.seats_taken),
            "wanted": str(self.seats_wanted),
            "fp": self.fingerprint,
            "tr": ",".join(self.transports),
            "cr": self.creator,
        }

    @property
    def instance(self) -> str:
        """The DNS-SD instance label: the fingerprint, then the start of the table id."""
        return f"p2pkille-{self.fingerprint}-{canonical.b64encode(self.table)[:16]}"

    @property
    def service_name(self) -> str:
        return f"{self.instance}.{SERVICE_TYPE}"

    def to_txt(self) -> dict[str, str]:
        """The TXT properties (of a :meth:`signed` advert: an unsigned one is refused by
        every reader)."""
        txt = self._fields()
        if self.key:
            txt["key"] = canonical.b64encode(self.key)
            txt["sig"] = canonical.b64encode(self.signature)
        return txt

    @classmethod
    def from_txt(cls, properties: Mapping[bytes, bytes | None]) -> TableAdvert:
        """Parse TXT properties from the network; anything malformed, or not signed by the
        key whose fingerprint it carries, raises :class:`BadAdvert`.

        Unknown keys are ignored (newer peers may add some).
        """
        text: dict[str, str] = {}
        for name in _KEYS:
            value = properties.get(name.encode())
            if value is None:
                raise BadAdvert(f"TXT property {name!r} missing or empty")
            try:
                text[name] = value.decode("utf-8")
            except UnicodeDecodeError:
                raise BadAdvert(f"TXT property {name!r} is not UTF-8", evidence=value) \
                    from None
        numbers = {}
        for name in ("v", "stake", "taken", "wanted"):
            if _DECIMAL.fullmatch(text[name]) is None:
                raise BadAdvert(f"TXT property {name!r}={text[name]!r:.40} is not a number")
            numbers[name] = int(text[name])
        raw: dict[str, bytes] = {}
        for name in ("table", "key", "sig"):
            try:
                raw[name] = canonical.b64decode(text[name])
            except InvalidEncoding as exc:
                raise BadAdvert(f"TXT property {name!r}: {exc}") from None
        try:
            advert = cls(raw["table"], text["name"], text["ruleset"], numbers["stake"],
                         numbers["taken"], numbers["wanted"], text["fp"],
                         tuple(text["tr"].split(",")), numbers["v"], text["cr"], raw["key"],
                         raw["sig"])
        except ValueError as exc:
            raise BadAdvert(f"TXT record: {exc}") from None
        try:
            key = PublicKey.from_bytes(raw["key"])
        except RemoteProtocolError as exc:
            raise BadAdvert(f"TXT property 'key': {exc.reason}") from None
        if key.fingerprint != advert.fingerprint:
            raise BadAdvert(f"TXT record of {advert.fingerprint} carries the key of "
                            f"{key.fingerprint}")
        try:
            key.verify(PURPOSE, canonical.encode(advert._fields()), advert.signature)
        except RemoteProtocolError:
            raise BadAdvert(f"TXT record of {advert.fingerprint}: bad signature") from None
        return advert


# One return per advert field that can be wrong.
def _problem(advert: TableAdvert) -> str:  # noqa: PLR0911
    """What is wrong with an advert's fields, or ``""``."""
    if not 1 <= len(advert.table) <= MAX_TABLE_ID_SIZE:
        return f"table id of {len(advert.table)} bytes"
    name = advert.name
    if not name or len(name.encode("utf-8", "surrogatepass")) > MAX_TABLE_NAME \
            or not name.isprintable():
        return f"table name {name!r:.80} (need 1..{MAX_TABLE_NAME} bytes of printable text)"
    if _RULESET.fullmatch(advert.ruleset) is None:
        return f"ruleset {advert.ruleset!r:.40}"
    if not 0 <= advert.stake <= MAX_STAKE:
        return f"stake {advert.stake}"
    if not 2 <= advert.seats_wanted <= MAX_SEATS or not 0 <= advert.seats_taken \
            <= advert.seats_wanted:
        return f"seats {advert.seats_taken}/{advert.seats_wanted}"
    if _FINGERPRINT.fullmatch(advert.fingerprint) is None:
        return f"fingerprint {advert.fingerprint!r:.40}"
    if _FINGERPRINT.fullmatch(advert.creator) is None:
        return f"creator {advert.creator!r:.40}"
    if (len(advert.key), len(advert.signature)) not in ((0, 0), (32, 64)):
        return "key and signature: 32 and 64 bytes, or neither"
    if not advert.transports or len(advert.transports) > 8 \
            or any(_TOKEN.fullmatch(t) is None for t in advert.transports):
        return f"transports {advert.transports!r:.80}"
    if not 0 < advert.protocol < 2**31:
        return f"protocol version {advert.protocol}"
    return ""


@dataclass(frozen=True, slots=True)
class Sighting:
    """One peer's advertisement as resolved: where its mesh listens and what it says."""

    service: str
    advert: TableAdvert
    addresses: tuple[str, ...]
    port: int

    @property
    def peers(self) -> tuple[PeerAddress, ...]:
        return tuple(PeerAddress(address, self.port) for address in self.addresses)


@dataclass(frozen=True, slots=True)
class Listing:
    """One row of a listing: a table name as one creator offers it.

    ``advert`` holds the terms: the creator's own advert when it is heard (``by_creator``),
    else the advert of the member with the lowest fingerprint. ``sightings`` are every
    advert naming this creator for this name and table (the creator's and its members').
    """

    name: str
    creator: str
    advert: TableAdvert
    sightings: tuple[Sighting, ...]

    @property
    def table(self) -> bytes:
        return self.advert.table

    @property
    def by_creator(self) -> bool:
        return self.advert.by_creator

    @property
    def taken(self) -> int:
        if self.advert.by_creator:
            return self.advert.seats_taken
        return max(s.advert.seats_taken for s in self.sightings)

    @property
    def peers(self) -> tuple[PeerAddress, ...]:
        return tuple(p for s in self.sightings for p in s.peers)


def listings(sightings: Iterable[Sighting]) -> list[Listing]:
    """The rows for ``sightings``: one per (table name, creator), sorted by both."""
    groups: dict[tuple[str, str], list[Sighting]] = {}
    for sighting in sorted(sightings, key=lambda s: s.advert.fingerprint):
        groups.setdefault((sighting.advert.name, sighting.advert.creator), []).append(sighting)
    out = []
    for (name, creator), group in sorted(groups.items()):
        own = [s for s in group if s.advert.by_creator]
        terms = (own or group)[0].advert
        out.append(Listing(name, creator, terms,
                           tuple(s for s in group if s.advert.table == terms.table)))
    return out


def open_zeroconf(interfaces: Sequence[str] | None = None) -> AsyncZeroconf:
    """An ``AsyncZeroconf`` on ``interfaces`` (IP addresses), or on every interface if None.

    Call it inside the running loop; close with ``await zc.async_close()``.
    """
    if interfaces is None:
        return AsyncZeroconf()
    v6 = [i for i in interfaces if ":" in i]
    version = IPVersion.All if v6 and len(v6) < len(interfaces) else (
        IPVersion.V6Only if v6 else IPVersion.V4Only)
    return AsyncZeroconf(interfaces=list(interfaces), ip_version=version)


class Advertiser:
    """Advertises this peer at one table, its advert signed by ``identity``:
    ``async with Advertiser(zc, advert, port, [ip], identity)``.

    Registration takes about 1.6 s (probing, then announcing).
    """

    def __init__(self, zc: AsyncZeroconf, advert: TableAdvert, port: int,
                 addresses: Iterable[str], identity: Identity) -> None:
        self.zc = zc
        self.identity = identity
        self.advert = advert.signed(identity)
        self.port = port
        self.addresses = list(addresses)
        if not self.addresses:
            raise ValueError("advertiser: give at least one address to advertise")
        self._info: AsyncServiceInfo | None = None

    def _build(self) -> AsyncServiceInfo:
        return AsyncServiceInfo(SERVICE_TYPE, self.advert.service_name, port=self.port,
                                properties=self.advert.to_txt(),
                                parsed_addresses=self.addresses,
                                server=f"{self.advert.instance}.local.")

    async def start(self) -> None:
        self._info = self._build()
        await (await self.zc.async_register_service(self._info))

    async def update(self, advert: TableAdvert) -> None:
        """Announce changed TXT contents (e.g. a seat taken); the instance must stay."""
        if advert.instance != self.advert.instance:
            raise ValueError(f"update: instance {advert.instance!r} differs from "
                             f"{self.advert.instance!r}; stop and start a new advertiser")
        self.advert = advert.signed(self.identity)
        self._info = self._build()
        await (await self.zc.async_update_service(self._info))

    async def stop(self) -> None:
        if self._info is not None:
            info, self._info = self._info, None
            await (await self.zc.async_unregister_service(info))

    async def __aenter__(self) -> Advertiser:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()


class TableBrowser:
    """Lists the tables it hears, live: ``async with TableBrowser(zc) as browser``.

    :attr:`sightings` maps service names to what they advertise; :meth:`changed` waits for
    the next change (of :attr:`sightings` or :attr:`rejected`). Records that do not parse
    are logged (warning), listed in :attr:`rejected`, and left out of :attr:`sightings`.
    At most ``max_sightings`` services are kept (and as many rejections remembered); more
    are counted in :attr:`overflow` and ignored.
    """

    def __init__(self, zc: AsyncZeroconf, *, request_timeout: float = 3.0,
                 max_sightings: int = MAX_SIGHTINGS) -> None:
        self.zc = zc
        self.request_timeout = request_timeout
        self.max_sightings = max_sightings
        self._sightings: dict[str, Sighting] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._queued: dict[str, None] = {}  # names to look up once a look-up slot is free
        self._event = asyncio.Event()
        self._browser: AsyncServiceBrowser | None = None
        self.rejected: dict[str, str] = {}
        """Service names whose latest record did not parse, with the reason."""
        self.overflow = 0
        """Adverts ignored because the browser already kept as many as it may."""

    @property
    def sightings(self) -> Mapping[str, Sighting]:
        return MappingProxyType(self._sightings)

    def tables(self) -> dict[bytes, list[Sighting]]:
        """The sightings grouped by table id, each group sorted by fingerprint."""
        grouped: dict[bytes, list[Sighting]] = {}
        for sighting in sorted(self._sightings.values(), key=lambda s: s.advert.fingerprint):
            grouped.setdefault(sighting.advert.table, []).append(sighting)
        return grouped

    def listings(self) -> list[Listing]:
        """One row per (table name, creator): see :class:`Listing`."""
        return listings(self._sightings.values())

    def changed(self) -> Change:
        """An awaitable that completes at the next change after this call (taken at once,
        so a change between the call and the ``await`` is not missed). It need not be
        awaited: unlike a coroutine, leaving it alone warns about nothing."""
        return Change(self._event)

    async def wait_for(self, predicate: Callable[[TableBrowser], bool],
                       timeout: float | None = None) -> None:
        async with asyncio.timeout(timeout):
            while not predicate(self):
                await self.changed()

    def _full(self, name: str) -> bool:
        if name in self._sightings or len(self._sightings) < self.max_sightings:
            return False
        self.overflow += 1
        if self.overflow & (self.overflow - 1) == 0:
            log.warning("discovery: %d adverts kept already; ignoring %s (%d ignored so far)",
                        len(self._sightings), name, self.overflow)
        return True

    async def __aenter__(self) -> TableBrowser:
        self._browser = AsyncServiceBrowser(self.zc.zeroconf, SERVICE_TYPE,
                                            handlers=[self._on_state_change])
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._browser is not None:
            await self._browser.async_cancel()
            self._browser = None
        self._queued.clear()
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _on_state_change(self, zeroconf: Zeroconf, service_type: str, name: str,
                         state_change: ServiceStateChange) -> None:
        # Called by zeroconf on the loop: never wait here.
        if state_change is ServiceStateChange.Removed:
            self.rejected.pop(name, None)
            if self._sightings.pop(name, None) is not None:
                self._notify()
            return
        if name in self._tasks or name in self._queued or self._full(name):
            return
        if len(self._tasks) < MAX_RESOLVING:
            self._start(name)
        elif len(self._queued) < self.max_sightings:
            self._queued[name] = None
        else:
            self.overflow += 1

    def _start(self, name: str) -> None:
        task = asyncio.get_running_loop().create_task(self._resolve(name),
                                                      name=f"zeroconf:resolve {name}")
        self._tasks[name] = task
        task.add_done_callback(lambda _t: self._resolved(name))

    def _resolved(self, name: str) -> None:
        self._tasks.pop(name, None)
        while self._queued and len(self._tasks) < MAX_RESOLVING and self._browser is not None:
            waiting = next(iter(self._queued))
            del self._queued[waiting]
            self._start(waiting)

    async def _resolve(self, name: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(self.zc.zeroconf, self.request_timeout * 1000):
            log.debug("discovery: %s did not resolve", name)
            return
        try:
            sighting = _sighting(name, info)
        except BadAdvert as exc:
            self.rejected[name] = exc.reason
            while len(self.rejected) > self.max_sightings:
                del self.rejected[next(iter(self.rejected))]
            log.warning("discovery: ignoring %s: %s", name, exc)
            self._sightings.pop(name, None)
            self._notify()
            return
        self.rejected.pop(name, None)
        if self._full(name):
            return
        if self._sightings.get(name) != sighting:
            self._sightings[name] = sighting
            self._notify()

    def _notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()


class Change:
    """The next change of a browser's listing, as an awaitable (:meth:`TableBrowser.changed`)."""

    __slots__ = ("_event",)

    def __init__(self, event: asyncio.Event) -> None:
        self._event = event

    def __await__(self) -> Generator[Any, None, bool]:
        return self._event.wait().__await__()


def _sighting(name: str, info: AsyncServiceInfo) -> Sighting:
    advert = TableAdvert.from_txt(info.properties)
    if not name.startswith(f"p2pkille-{advert.fingerprint}-"):
        raise BadAdvert(f"instance name does not carry the fingerprint {advert.fingerprint}")
    addresses = tuple(info.parsed_addresses())
    if not addresses or not info.port:
        raise BadAdvert(f"no address or port (port {info.port!r})")
    return Sighting(name, advert, addresses, info.port)


async def feed_peers(browser: TableBrowser, table: bytes,
                     add_peer: Callable[[PeerAddress], object], *, exclude: str = "") -> None:
    """Until cancelled, pass every address advertised for ``table`` to ``add_peer``
    (e.g. ``Mesh.add_peer``), skipping the fingerprint ``exclude`` (ourselves)."""
    seen: set[PeerAddress] = set()
    while True:
        changed = browser.changed()  # made before reading, so no change is missed
        for sighting in browser.tables().get(table, []):
            if sighting.advert.fingerprint == exclude:
                continue
            for address in sighting.peers:
                if address not in seen:
                    seen.add(address)
                    add_peer(address)
        await changed
