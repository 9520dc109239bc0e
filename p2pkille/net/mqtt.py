"""The MQTT transport (aiomqtt >= 2.5, < 3): a table's peers meet on a broker.

Topics, under ``p2pkille/v1/<table id in base64url>``:

- ``.../all/<author>``: the author's broadcasts;
- ``.../to/<recipient>/<author>``: the author's messages for one peer;
- ``.../presence/<author>``: ``online`` (published, retained, on connect) or ``offline``
  (the will, sent by the broker when the author's connection is lost; and published by the
  author itself on a clean stop).

Each author publishes on its own topics, so the broker's per-publisher, per-topic ordering
keeps each author's messages in order; nothing orders messages across authors (the node does,
by the authors' hash chains). Publishing is QoS 1, so a message may arrive twice: the node
dedupes by (author, seq); the transport passes duplicates on and never fails on them.

The author named by a topic is only the broker's word: anybody allowed to publish can claim
any name, which is why the node checks every envelope's signature.

MQTT 5 is tried first; a broker that answers "unsupported protocol version" is spoken to in
3.1.1 from then on (or choose with ``?protocol=5`` / ``?protocol=3.1.1`` in the URL). After a
lost connection the transport reconnects with backoff and subscribes again (each session
starts clean). What we send while disconnected waits in a bounded queue and goes out once
connected again; what others published while we were away is for the node's gap fill.

Nothing a peer sends is larger than :data:`MAX_PAYLOAD` (an envelope is at most 64 KiB), so
the client announces an MQTT 5 Maximum Packet Size of :data:`MAX_PACKET`: the broker then
never sends it a larger packet (it drops it for this client), and a stranger's 50 MB
publish costs us nothing. MQTT 3.1.1 has no such field: there the broker must cap
messages itself (mosquitto: ``message_size_limit 67584``), or a peer reads a huge message
whole before it can refuse it.

Outgoing messages wait in two lanes: game traffic, and repair traffic (answers to gap-fill
syncs, :meth:`MqttTransport.send_repair`), which is published only while no game message
waits. Each lane is bounded; a full repair lane drops its oldest message, and a full game
lane drops the new message and says so in the log (peers fetch it by gap fill). Once the
table is formed (:meth:`MqttTransport.set_members`), messages from authors outside it are
dropped on arrival.

Broker settings that matter (measured with mosquitto 2.0 on loopback): ``set_tcp_nodelay
true`` (its default leaves Nagle's algorithm on: 44 ms per round trip instead of 0.7 ms),
``max_queued_messages`` well above 1000 (its default silently drops QoS 1 messages queued for
a subscriber that falls behind, e.g. in a burst from 9 peers), and ``message_size_limit
67584`` (above).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
import ssl
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from protocol import canonical
from protocol.envelope import MAX_ENVELOPE_SIZE

__all__ = ["MAX_PACKET", "MAX_PAYLOAD", "BrokerUrl", "MqttTransport", "topic_prefix"]

log = logging.getLogger(__name__)

ONLINE: Final = b"online"
OFFLINE: Final = b"offline"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_UNSUPPORTED_PROTOCOL: Final = 132  # CONNACK reason (v5), and 3.1.1's code 1 as paho maps it
_PROTOCOLS: Final = {"auto": None, "5": aiomqtt.ProtocolVersion.V5,
                     "3.1.1": aiomqtt.ProtocolVersion.V311}
MAX_PAYLOAD: Final = MAX_ENVELOPE_SIZE + 1024
"""The largest message a peer sends: an envelope (64 KiB), with room for a lobby message's
or a signed sync's framing."""
MAX_PACKET: Final = MAX_PAYLOAD + 1024
"""The MQTT 5 Maximum Packet Size we announce: a payload and its topic and header."""


def topic_prefix(table: bytes) -> str:
    return f"p2pkille/v1/{canonical.b64encode(table)}"


@dataclass(frozen=True, slots=True)
class BrokerUrl:
    """``mqtt://[USER[:PASSWORD]@]HOST[:PORT][/?cafile=PATH&protocol=5|3.1.1]``; ``mqtts`` is
    TLS (default port 8883) verified against the system's CAs or ``cafile``. ``str`` leaves the
    password out; so does ``repr``."""

    host: str
    port: int = 1883
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    cafile: str | None = None
    protocol: str = "auto"

    def __post_init__(self) -> None:
        if not self.host or not 0 < self.port < 65536:
            raise ValueError(f"broker {self.host!r}:{self.port!r}: need a host and a port")
        if self.protocol not in _PROTOCOLS:
            raise ValueError(f"broker protocol {self.protocol!r}: choose from "
                             f"{sorted(_PROTOCOLS)}")

    @classmethod
    def parse(cls, text: str) -> BrokerUrl:
        parts = urllib.parse.urlsplit(text)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"broker URL {_redact(text)!r}: the scheme must be mqtt or mqtts")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"broker URL {_redact(text)!r}: bad port") from None
        query = urllib.parse.parse_qs(parts.query, strict_parsing=False)
        unknown = set(query) - {"cafile", "protocol"}
        if unknown or any(len(v) != 1 for v in query.values()) or parts.path not in ("", "/"):
            raise ValueError(f"broker URL {_redact(text)!r}: only ?cafile= and ?protocol= "
                             "may follow the host")
        tls = parts.scheme == "mqtts"
        return cls(
            host=parts.hostname or "",
            port=port if port is not None else (8883 if tls else 1883),
            tls=tls,
            username=urllib.parse.unquote(parts.username) if parts.username else None,
            password=urllib.parse.unquote(parts.password) if parts.password else None,
            cafile=query["cafile"][0] if "cafile" in query else None,
            protocol=query["protocol"][0] if "protocol" in query else "auto",
        )

    def __str__(self) -> str:
        user = f"{urllib.parse.quote(self.username, safe='')}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = urllib.parse.urlencode(
            {k: v for k, v in (("cafile", self.cafile), ("protocol", self.protocol))
             if v is not None and v != "auto"})
        return (f"{'mqtts' if self.tls else 'mqtt'}://{user}{host}:{self.port}"
                + (f"/?{query}" if query else ""))

    def tls_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        return ssl.create_default_context(cafile=self.cafile)


def _redact(text: str) -> str:
    return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", text)


class MqttTransport:
    """The MQTT transport of peer ``name`` at ``table``; run it with :meth:`run` (or a driver).

    ``on_presence(name, online)`` hears the other peers' presence announcements and wills.
    """

    def __init__(
        self,
        name: str,
        table: bytes,
        broker: BrokerUrl,
        *,
        keepalive: int = 10,
        max_frame: int = MAX_PAYLOAD,
        max_queue: int = 100_000,
        max_repair: int = 10_000,
        inflight: int = 100,
        backoff_min: float = 0.1,
        backoff_max: float = 5.0,
        on_presence: Callable[[str, bool], None] | None = None,
    ) -> None:
        if _NAME.fullmatch(name) is None:
            raise ValueError(f"peer name {name!r}: a topic level needs [A-Za-z0-9_-]{{1,64}}")
        if not 0 < backoff_min <= backoff_max:
            raise ValueError(f"backoff {backoff_min!r}..{backoff_max!r}: need 0 < min <= max")
        self._name = name
        self.table = bytes(table)
        self.broker = broker
        self.keepalive = keepalive
        self.max_frame = max_frame
        self.inflight = inflight
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.on_presence = on_presence
        self.prefix = topic_prefix(self.table)
        self.protocol = _PROTOCOLS[broker.protocol]
        self.max_queue = max_queue
        self.max_repair = max_repair
        self._game: deque[tuple[str, bytes]] = deque()
        self._repair: deque[tuple[str, bytes]] = deque()
        self._queued = asyncio.Event()
        self._members: frozenset[str] | None = None
        self._ready = asyncio.Event()
        self._deliver: Callable[[str, bytes], None] | None = None
        self._online: set[str] = set()
        self._jitter = random.Random()  # spreads retries only
        self._was_up = False
        self.connections = 0
        self.dropped = 0
        """Game messages dropped because the game lane was full (said in the log)."""
        self.repair_dropped = 0
        """Repair messages dropped because the repair lane was full."""
        self.strangers = 0
        """Messages dropped on arrival because their author is not a member."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def online(self) -> frozenset[str]:
        """The peers whose latest presence message says ``online`` (as last heard: while we
        are disconnected it is not updated)."""
        return frozenset(self._online)

    @property
    def connected(self) -> bool:
        return self._ready.is_set()

    async def wait_ready(self) -> None:
        """Return once connected and subscribed (the first time, or again after a loss)."""
        await self._ready.wait()

    def set_members(self, names: Iterable[str] | None) -> None:
        """From now on take messages only from these authors (``None``: from anybody, as in
        the lobby); presence is still heard from everybody."""
        self._members = None if names is None else frozenset(names)

    def send(self, to: str | None, data: bytes) -> int:
        """Queue ``data`` for publishing (to everybody when ``to`` is None); returns 1, or 0
        when the game lane is full (logged and counted) or ``to`` cannot name a topic
        level."""
        topic = self._topic(to, data)
        if topic is None:
            return 0
        if len(self._game) >= self.max_queue:
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:
                log.warning("mqtt: %d game messages wait for the broker; dropped one (%d so "
                            "far): the peers will fetch what they miss by gap fill",
                            len(self._game), self.dropped)
            return 0
        self._game.append((topic, data))
        self._queued.set()
        return 1

    def send_repair(self, to: str | None, data: bytes) -> int:
        """Queue repair traffic: published only while no game message waits; a full repair
        lane drops its oldest message (the peer asks again with its next sync)."""
        topic = self._topic(to, data)
        if topic is None:
            return 0
        if len(self._repair) >= self.max_repair:
            self._repair.popleft()
            self.repair_dropped += 1
        self._repair.append((topic, data))
        self._queued.set()
        return 1

    def _topic(self, to: str | None, data: bytes) -> str | None:
        if len(data) > self.max_frame:
            raise ValueError(f"message of {len(data)} bytes exceeds the maximum {self.max_frame}")
        if to is None:
            return f"{self.prefix}/all/{self._name}"
        if _NAME.fullmatch(to) is not None:
            return f"{self.prefix}/to/{to}/{self._name}"
        log.warning("mqtt: no topic for recipient %r; message dropped", to)
        return None

    @property
    def queued(self) -> tuple[int, int]:
        """Messages waiting for the broker: (game, repair)."""
        return len(self._game), len(self._repair)

    async def run(self, deliver: Callable[[str, bytes], None]) -> None:
        """Connect, subscribe and pass every message to ``deliver(author, data)`` until
        cancelled; reconnect with backoff after any loss."""
        self._deliver = deliver
        delay = self.backoff_min
        while True:
            retry_now = False
            try:
                await self._session()
            except* MqttConnectError as group:
                exc = group.exceptions[0]
                rc = getattr(exc, "rc", None)
                if self.protocol is None and getattr(rc, "value", rc) == _UNSUPPORTED_PROTOCOL:
                    log.info("mqtt: %s does not speak MQTT 5; using 3.1.1", self.broker)
                    self.protocol = aiomqtt.ProtocolVersion.V311
                    retry_now = True
                else:
                    log.warning("mqtt: %s refused us: %s", self.broker, exc)
            except* aiomqtt.MqttError as group:
                log.warning("mqtt: connection to %s failed or lost: %s", self.broker,
                            group.exceptions[0])
            self._ready.clear()
            if retry_now:
                continue
            if self._was_up:
                delay = self.backoff_min
            await asyncio.sleep(delay * (0.5 + self._jitter.random()))
            delay = min(delay * 2, self.backoff_max)

    async def _session(self) -> None:
        broker = self.broker
        protocol = self.protocol or aiomqtt.ProtocolVersion.V5
        presence = f"{self.prefix}/presence/{self._name}"
        self._was_up = False
        properties = None
        if protocol is aiomqtt.ProtocolVersion.V5:
            # The broker sends us nothing larger (it drops it for us): a huge publish by a
            # stranger is never read into memory here.
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            properties.MaximumPacketSize = max(MAX_PACKET, self.max_frame + 1024)
        client = aiomqtt.Client(
            broker.host, broker.port, username=broker.username, password=broker.password,
            protocol=protocol, keepalive=self.keepalive, tls_context=broker.tls_context(),
            will=aiomqtt.Will(presence, OFFLINE, qos=1, retain=True),
            max_inflight_messages=self.inflight, timeout=10,
            logger=log.getChild("client"), properties=properties,
            # Without it Nagle's algorithm holds small messages back for a delayed ACK
            # (measured: 88 ms per round trip on loopback, against a few ms with it).
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        # aiomqtt warns from 10 pending publishes on; we allow `inflight` on purpose.
        client.pending_calls_threshold = self.inflight
        async with client:
            subscriptions = [f"{self.prefix}/all/+", f"{self.prefix}/to/{self._name}/+",
                             f"{self.prefix}/presence/+"]
            for topic in subscriptions:
                if protocol is aiomqtt.ProtocolVersion.V5:
                    await client.subscribe(topic, options=SubscribeOptions(qos=1, noLocal=True))
                else:
                    await client.subscribe(topic, qos=1)
            await client.publish(presence, ONLINE, qos=1, retain=True)
            self.connections += 1
            self._was_up = True
            log.info("mqtt: %s connected to %s (MQTT %s)", self._name[:12], broker,
                     "5" if protocol is aiomqtt.ProtocolVersion.V5 else "3.1.1")
            self._ready.set()
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(self._publisher(client, tg), name="mqtt:publish")
                    async for message in client.messages:
                        self._on_message(message)
            except asyncio.CancelledError:
                # A clean stop sends no will: say it ourselves, briefly.
                with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                    async with asyncio.timeout(1):
                        await client.publish(presence, OFFLINE, qos=1, retain=True)
                raise

    async def _publisher(self, client: aiomqtt.Client, tg: asyncio.TaskGroup) -> None:
        # Publishes start in queue order (paho sends in call order), while up to `inflight`
        # wait for their PUBACK at once.
        slots = asyncio.Semaphore(self.inflight)
        while True:
            await slots.acquire()
            while not (self._game or self._repair):
                self._queued.clear()
                await self._queued.wait()
            # Chosen only once a slot is free: game traffic that arrived meanwhile goes first.
            topic, data = self._game.popleft() if self._game else self._repair.popleft()
            tg.create_task(self._publish(client, topic, data, slots))

    async def _publish(self, client: aiomqtt.Client, topic: str, data: bytes,
                       slots: asyncio.Semaphore) -> None:
        try:
            await client.publish(topic, data, qos=1)
        except aiomqtt.MqttError as exc:
            log.debug("mqtt: publishing on %s failed: %s", topic, exc)
        finally:
            slots.release()

    def _on_message(self, message: aiomqtt.Message) -> None:
        topic = message.topic.value
        levels = topic[len(self.prefix) + 1:].split("/") if topic.startswith(
            self.prefix + "/") else []
        data = bytes(message.payload)  # received payloads are always bytes
        if len(levels) == 2 and levels[0] == "presence":
            self._on_presence(levels[1], data)
            return
        if len(levels) == 2 and levels[0] == "all":
            author = levels[1]
        elif len(levels) == 3 and levels[0] == "to" and levels[1] == self._name:
            author = levels[2]
        else:
            log.warning("mqtt: ignoring a message on unexpected topic %r", topic[:200])
            return
        if author == self._name and levels[0] == "all":
            return  # our own broadcast echoed by a 3.1.1 broker (MQTT 5 uses no-local)
        if len(data) > self.max_frame:
            log.warning("mqtt: ignoring %d bytes from %s: over the maximum %d", len(data),
                        author, self.max_frame)
            return
        if self._members is not None and author not in self._members:
            self.strangers += 1
            if self.strangers & (self.strangers - 1) == 0:
                log.warning("mqtt: ignoring a message from %.16s, not a member (%d so far)",
                            author, self.strangers)
            return
        assert self._deliver is not None
        self._deliver(author, data)

    def _on_presence(self, author: str, data: bytes) -> None:
        if author == self._name:
            return
        if data not in (ONLINE, OFFLINE):
            log.warning("mqtt: ignoring presence %r of %s", data[:40], author)
            return
        up = data == ONLINE
        if up == (author in self._online):
            return
        if up:
            self._online.add(author)
        else:
            self._online.discard(author)
            log.info("mqtt: %s is gone", author)
        if self.on_presence is not None:
            self.on_presence(author, up)
