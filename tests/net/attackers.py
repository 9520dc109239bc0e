"""Strangers on the network, as tools: what ``tests/net/test_attacks.py`` does to peers on
127.0.0.1, and how it measures the harm.

Every attacker here sends only to loopback, runs in the test's own event loop, and is
bounded in count and in time. They speak the wire formats directly (lobby messages, TXT
records, MQTT topics), so they run unchanged against older versions of the peers (to show
that a test fails there).

``python -m tests.net.attackers`` prints the figures of issue 25 for the code in the
current directory: gap-fill amplification and peak RSS under forged syncs over mosquitto
(against a quiet game), time to form a table under the half-open attack (against quiet),
and RSS after a 50 MB publish.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiomqtt
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from p2pkille.net.discovery import SERVICE_TYPE
from p2pkille.net.lobby import channel_id, decode_message, encode_message
from p2pkille.net.mesh import Mesh, peer_name
from p2pkille.net.mqtt import BrokerUrl, MqttTransport, topic_prefix
from protocol import canonical
from protocol.errors import RemoteProtocolError
from protocol.identity import Identity

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
FORGED_SYNC = b'S{"heads":[0,0,0,0]}'


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            sock = socket.socket()
            sock.bind((LOOPBACK, 0))
            socks.append(sock)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for sock in socks:
            sock.close()


# -- processes and their memory ------------------------------------------------------------


def status_kib(pid: int, field_name: str) -> int:
    """A ``/proc/PID/status`` field in KiB (``VmHWM``: peak RSS; ``VmRSS``: now); 0 once
    the process is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(rf"^{field_name}:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) if found else 0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Peer:
    """A ``p2pkille peer`` process whose stderr goes to a file (read while it runs)."""

    proc: subprocess.Popen[bytes]
    err_path: Path
    peak_kib: int = 0

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def sample(self) -> None:
        self.peak_kib = max(self.peak_kib, status_kib(self.proc.pid, "VmHWM"))

    def outcome(self) -> dict[str, object]:
        """The peer's JSON document, or (it failed) its exit status and last words."""
        if self.proc.returncode == 0:
            return self.result()
        return {"exit": self.proc.returncode, "hands": [], "stderr": self.stderr()[-500:]}

    def result(self) -> dict[str, object]:
        out = self.proc.stdout.read() if self.proc.stdout is not None else b""
        assert self.proc.returncode == 0, self.stderr()[-3000:]
        doc = json.loads(out)
        assert isinstance(doc, dict)
        return doc


def start_peers(directory: Path, commands: Sequence[Sequence[str]]) -> list[Peer]:
    peers = []
    for i, command in enumerate(commands):
        err_path = directory / f"peer{i}.err"
        err: IO[bytes]
        with err_path.open("wb") as err:
            proc = subprocess.Popen(list(command), cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=err)
        peers.append(Peer(proc, err_path))
    return peers


def stop_peers(peers: Iterable[Peer]) -> None:
    for peer in peers:
        if peer.proc.poll() is None:
            peer.proc.kill()
            peer.proc.wait()


async def wait_peers(peers: Sequence[Peer], timeout: float) -> None:
    """Until every process exits (sampling peak RSS), at most ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while any(p.proc.poll() is None for p in peers):
            for p in peers:
                if p.proc.poll() is None:
                    p.sample()
            await asyncio.sleep(0.1)


async def wait_line(peer: Peer, pattern: str, timeout: float) -> re.Match[str]:
    """The first match of ``pattern`` in the peer's stderr, waiting at most ``timeout``."""
    async with asyncio.timeout(timeout):
        while True:
            found = re.search(pattern, peer.stderr())
            if found is not None:
                return found
            if peer.proc.poll() is not None:
                raise AssertionError(f"peer exited without {pattern!r}: "
                                     f"{peer.stderr()[-2000:]}")
            await asyncio.sleep(0.05)


def peer_command(table: str, seats: int, index: int, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "cli.main", "peer", "--table", table, "--seats",
               str(seats), "--json", *extra]
    if index == 0:
        command += ["--create", "--ruleset", "wikipedia", "--stake", "1", "--chips", "10"]
    return command


# -- MQTT: forged gap-fill syncs --------------------------------------------------------------


@dataclass
class SyncForger:
    """Watches a table's topics on a broker and, once the game is under way, publishes
    ``strangers`` syncs under a name no member has and ``impersonated`` syncs under a
    member's name, each asking for everything from the start (``FORGED_SYNC``). It counts
    the bytes it sent and the bytes they drew: every message to the stranger's topic, and
    every envelope sent to the impersonated member that had been broadcast before the
    attack began (an honest peer never sends a member what it announced it holds)."""

    port: int
    table: str
    strangers: int = 2000
    impersonated: int = 300
    start_after: int = 40
    """Distinct envelopes seen broadcast before the attack starts."""
    stranger: str = "mallory"
    sent: dict[str, int] = field(default_factory=lambda: {"stranger": 0, "member": 0})
    drawn: dict[str, int] = field(default_factory=lambda: {"stranger": 0, "member": 0})
    member: str | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    envelopes: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        prefix = topic_prefix(channel_id(self.table))
        before: set[tuple[str, int]] = set()
        async with aiomqtt.Client(LOOPBACK, self.port, max_inflight_messages=100) as c:
            c.pending_calls_threshold = 200
            await c.subscribe(f"{prefix}/#", qos=0)

            async def watch() -> None:
                async for message in c.messages:
                    levels = message.topic.value[len(prefix) + 1:].split("/")
                    data = bytes(message.payload)
                    if levels[0] == "all" and data.startswith(b"{"):
                        key = _envelope_key(data)
                        if key is not None and not self.started.is_set():
                            before.add(key)
                            self.envelopes = len(before)
                            if self.member is None:
                                self.member = levels[1]
                    elif levels[0] == "to" and len(levels) == 3 and self.started.is_set():
                        if levels[1] == self.stranger:
                            self.drawn["stranger"] += len(data)
                        elif levels[1] == self.member and _envelope_key(data) in before:
                            self.drawn["member"] += len(data)

            watcher = asyncio.create_task(watch())
            try:
                while len(before) < self.start_after:
                    if stop.is_set():
                        return
                    await asyncio.sleep(0.05)
                self.started.set()
                assert self.member is not None
                # Interleaved, at QoS 1 (the broker drops none of them, where QoS 0
                # messages to a busy subscriber may be dropped), 100 in flight at once.
                batch = []
                for n in range(max(self.strangers, self.impersonated)):
                    for who, count, name in (("stranger", self.strangers, self.stranger),
                                             ("member", self.impersonated, self.member)):
                        if n < count:
                            batch.append(c.publish(f"{prefix}/all/{name}", FORGED_SYNC,
                                                   qos=1))
                            self.sent[who] += len(FORGED_SYNC)
                    if len(batch) >= 100:
                        await asyncio.gather(*batch)
                        batch = []
                await asyncio.gather(*batch)
                await stop.wait()
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await watcher


def _envelope_key(data: bytes) -> tuple[str, int] | None:
    try:
        obj = json.loads(data)
        return str(obj["author"]), int(obj["seq"])
    except (ValueError, KeyError, TypeError):
        return None


# -- the mesh: idle connections that hold handshake slots -----------------------------------


@dataclass
class HalfOpen:
    """Holds ``per_port`` idle connections to every port (it sends nothing) and reopens
    each one the peer closes, after ``pause`` seconds, at most ``max_opens`` times in all.
    The default holds more connections than a peer had handshake slots (64, one counter
    for every source), so that every slot stays taken."""

    ports: Sequence[int]
    per_port: int = 80
    pause: float = 0.0
    max_opens: int = 50_000
    opened: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as tg:
            for port in self.ports:
                for _ in range(self.per_port):
                    tg.create_task(self._hold(port, stop))

    async def _hold(self, port: int, stop: asyncio.Event) -> None:
        while not stop.is_set() and self.opened < self.max_opens:
            try:
                reader, writer = await asyncio.open_connection(LOOPBACK, port)
            except OSError:
                await asyncio.sleep(0.05)  # not listening yet
                continue
            self.opened += 1
            closed = asyncio.create_task(reader.read())
            halt = asyncio.create_task(stop.wait())
            await asyncio.wait([closed, halt], return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            halt.cancel()
            writer.transport.abort()
            await asyncio.sleep(self.pause)


# -- a rogue creator --------------------------------------------------------------------------


def low_identity(below: str, tries: int = 4096) -> Identity:
    """An identity whose fingerprint sorts before ``below`` (a few tries suffice)."""
    for i in range(tries):
        ident = Identity.from_seed(i.to_bytes(4, "big") + os.urandom(28))
        if ident.public.fingerprint < below:
            return ident
    raise AssertionError(f"no fingerprint below {below} in {tries} tries")


def advert_txt(identity: Identity, table: bytes, name: str, *, stake: int, taken: int,
               wanted: int, ruleset: str = "wikipedia", creator: str | None = None
               ) -> dict[str, str]:
    """A TXT record as a peer advertises it, signed by ``identity`` (older readers ignore
    the ``cr``, ``key`` and ``sig`` properties)."""
    fields = {"v": "1", "table": canonical.b64encode(table), "name": name,
              "ruleset": ruleset, "stake": str(stake), "taken": str(taken),
              "wanted": str(wanted), "fp": identity.public.fingerprint, "tr": "mesh",
              "cr": creator or identity.public.fingerprint}
    signature = identity.sign("table-advert", canonical.encode(fields))
    return fields | {"key": canonical.b64encode(identity.public.raw),
                     "sig": canonical.b64encode(signature)}


async def advertise(zc: AsyncZeroconf, txt: dict[str, str], port: int) -> None:
    """Register a service with ``txt`` at ``port`` on loopback (no probing)."""
    await advertise_many(zc, [(txt, port)])


async def advertise_many(zc: AsyncZeroconf, adverts: Iterable[tuple[dict[str, str], int]]
                         ) -> None:
    """Register many services at once (each ``(txt, port)``), announcing them together."""
    pending = []
    for txt, port in adverts:
        instance = f"p2pkille-{txt['fp']}-{txt['table'][:16]}"
        info = AsyncServiceInfo(SERVICE_TYPE, f"{instance}.{SERVICE_TYPE}", port=port,
                                properties=txt, parsed_addresses=[LOOPBACK],
                                server=f"{instance}.local.")
        pending.append(await zc.async_register_service(info, cooperating_responders=True))
    await asyncio.gather(*pending)


@dataclass
class Rogue:
    """A stranger that answers every ``join`` for the table name at once with a roster of
    the joiner and its own sybil keys, signed by itself (a member of it), and optionally
    announces itself as a creator (``offers``)."""

    name: str
    seats: int
    identity: Identity = field(default_factory=lambda: Identity.from_seed(os.urandom(32)))
    offers: bool = False
    rosters: int = 0
    sybils: list[Identity] = field(default_factory=list)
    serving: list[asyncio.Task[None]] = field(default_factory=list, repr=False)
    """The running :meth:`on_mesh` and :meth:`on_mqtt` services (held: the loop keeps
    only weak references to tasks)."""

    def __post_init__(self) -> None:
        self.sybils = [Identity.from_seed(os.urandom(32)) for _ in range(self.seats - 2)]

    def answer(self, sender: str, data: bytes) -> list[tuple[str | None, bytes]]:
        try:
            message = decode_message(data)
        except RemoteProtocolError:
            return []
        if message.kind != "join" or message.signer != sender:
            return []
        delivery = str(message.body["delivery"])
        seated = [(message.key, delivery)] + [
            (ident.public, canonical.b64encode(bytes([0x40 + i]) * 32))
            for i, ident in enumerate([self.identity, *self.sybils])]
        seated.sort(key=lambda kv: kv[0].raw)
        roster = encode_message(self.identity, {
            "channel": canonical.b64encode(channel_id(self.name)), "chips": 10**9,
            "members": [{"address": "", "delivery": d, "identity": canonical.b64encode(k.raw)}
                        for k, d in seated],
            "name": self.name, "ruleset": "wikipedia", "seats": self.seats,
            "stake": 1, "table": canonical.b64encode(os.urandom(16)), "type": "roster"})
        self.rosters += 1
        return [(sender, roster)]

    def offer(self) -> bytes:
        return encode_message(self.identity, {
            "channel": canonical.b64encode(channel_id(self.name)), "chips": 10,
            "name": self.name, "ruleset": "wikipedia", "seats": self.seats, "stake": 1,
            "taken": 1, "type": "offer"})

    async def on_mesh(self, stop: asyncio.Event, port: int = 0) -> Mesh:
        """Run on an open mesh on the table's channel until ``stop``; returns the mesh
        (listening once :meth:`Mesh.wait_ready` returns)."""
        mesh = Mesh(self.identity, channel_id(self.name), None, host=LOOPBACK, port=port)
        self.serving.append(asyncio.get_running_loop().create_task(self._serve(mesh, stop)))
        return mesh

    async def on_mqtt(self, stop: asyncio.Event, broker: BrokerUrl) -> MqttTransport:
        """Run on the broker on the table's channel until ``stop``; returns the transport
        (subscribed once :meth:`MqttTransport.wait_ready` returns)."""
        transport = MqttTransport(peer_name(self.identity.public), channel_id(self.name),
                                  broker)
        self.serving.append(asyncio.get_running_loop().create_task(
            self._serve(transport, stop)))
        return transport

    async def _serve(self, transport: Mesh | MqttTransport, stop: asyncio.Event) -> None:
        def deliver(sender: str, data: bytes) -> None:
            for to, out in self.answer(sender, data):
                transport.send(to, out)

        running = asyncio.create_task(transport.run(deliver))
        try:
            while not stop.is_set():
                if self.offers:
                    transport.send(None, self.offer())
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await stop.wait()
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


# -- figures for the report -------------------------------------------------------------------


def _broker(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    import getpass
    port = free_ports(1)[0]
    config = directory / "mosquitto.conf"
    config.write_text(f"listener {port} {LOOPBACK}\nuser {getpass.getuser()}\n"
                      "persistence false\nset_tcp_nodelay true\nmax_queued_messages 100000\n"
                      "allow_anonymous true\n")
    proc = subprocess.Popen(["mosquitto", "-c", str(config)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            socket.create_connection((LOOPBACK, port), timeout=0.2).close()
            return proc, port
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("mosquitto did not start")


@dataclass
class GameFigures:
    """What :func:`forged_sync_game` saw."""

    results: list[dict[str, object]]
    peak_kib: list[int]
    """Each peer's peak RSS over the whole game."""
    reference_kib: list[int]
    """Each peer's peak RSS when the attack began (the quiet game so far)."""
    sent: dict[str, int]
    drawn: dict[str, int]
    traffic: list[str]
    """Each peer's ``traffic:`` report line (empty from versions that print none)."""


async def forged_sync_game(directory: Path, port: int, strangers: int, impersonated: int,
                           hands: int = 3, timeout: float = 150) -> GameFigures:
    """Four peers over the broker at ``port`` play ``hands`` hands while a
    :class:`SyncForger` attacks (counts of 0: a quiet game)."""
    table = f"forged-{os.urandom(3).hex()}"
    commands = [peer_command(table, 4, i, "--transport", "mqtt", "--broker",
                             f"mqtt://{LOOPBACK}:{port}", "--hands", str(hands),
                             "--timeout", str(timeout - 10)) for i in range(4)]
    forger = SyncForger(port, table, strangers, impersonated)
    stop = asyncio.Event()
    peers = start_peers(directory, commands)
    try:
        attack = asyncio.create_task(forger.run(stop))
        reference: list[int] = []

        async def note_reference() -> None:
            await forger.started.wait()
            for p in peers:
                p.sample()
            reference.extend(p.peak_kib for p in peers)

        noting = asyncio.create_task(note_reference())
        with contextlib.suppress(TimeoutError):
            await wait_peers(peers, timeout)
        stop.set()
        await attack
        noting.cancel()
    finally:
        stop.set()
        stop_peers(peers)
    results = [p.outcome() for p in peers]
    return GameFigures(results, [p.peak_kib for p in peers], reference, dict(forger.sent),
                       dict(forger.drawn), [_traffic(p.stderr()) for p in peers])


def _traffic(text: str) -> str:
    found = re.search(r"^peer: traffic: (.*)$", text, re.MULTILINE)
    return found.group(1) if found else ""


async def formation_seconds(directory: Path, attack: bool, seats: int = 4,
                            timeout: float = 90) -> float:
    """Seconds until every one of ``seats`` peers formed the table over the mesh (zeroconf
    on loopback), with or without a :class:`HalfOpen` attack on every peer's port."""
    table = f"halfopen-{os.urandom(3).hex()}"
    ports = free_ports(seats)
    stop = asyncio.Event()
    holder = HalfOpen(ports)
    attacker = asyncio.create_task(holder.run(stop)) if attack else None
    if attack:
        await asyncio.sleep(0.2)
    began = time.monotonic()
    peers = start_peers(directory, [
        peer_command(table, seats, i, "--interface", LOOPBACK, "--port", str(ports[i]),
                     "--hands", "1", "--timeout", str(timeout)) for i in range(seats)])
    try:
        for p in peers:
            await wait_line(p, r"peer: table .* formed in", timeout)
        return time.monotonic() - began
    finally:
        stop.set()
        stop_peers(peers)
        if attacker is not None:
            with contextlib.suppress(Exception):
                await attacker


async def huge_publish_kib(directory: Path, port: int, size: int = 50 << 20) -> list[int]:
    """How much each of two peers' peak RSS rose (KiB) when a stranger published ``size``
    bytes on the table's ``all`` topic (the peers wait in the lobby; each then refuses a
    small lobby message published after it, which says it has read what came before)."""
    table = f"huge-{os.urandom(3).hex()}"
    base = ["--transport", "mqtt", "--broker", f"mqtt://{LOOPBACK}:{port}", "--timeout", "60",
            "--verbose"]
    peers = start_peers(directory, [peer_command(table, 3, 0, *base),
                                    peer_command(table, 3, 1, *base)])
    try:
        for p in peers:
            await wait_line(p, r"mqtt: \S+ connected to", 30)
        await asyncio.sleep(0.5)  # subscribed too: the connection line follows SUBACKs
        before = [status_kib(p.proc.pid, "VmHWM") for p in peers]
        prefix = topic_prefix(channel_id(table))
        async with aiomqtt.Client(LOOPBACK, port) as client:
            await client.publish(f"{prefix}/all/mallory", b"\x00" * size, qos=1)
            await client.publish(f"{prefix}/all/mallory", b"p2pkille-lobby/1\n{}", qos=1)
        for p in peers:
            await wait_line(p, r"refused a message from mallory", 30)
        return [status_kib(p.proc.pid, "VmHWM") - b for p, b in zip(peers, before,
                                                                   strict=True)]
    finally:
        stop_peers(peers)


async def figures(directory: Path) -> dict[str, object]:
    """Every figure; one that could not be taken says why (older versions stall)."""
    out: dict[str, object] = {}

    async def take(what: str, coro: Coroutine[Any, Any, object]) -> object:
        try:
            value = await coro
        except (Exception, TimeoutError) as exc:  # a figure that cannot be taken says why
            out[what] = f"failed: {type(exc).__name__}: {str(exc)[-300:]}"
            return None
        out[what] = value
        return value

    broker, port = _broker(directory)
    try:
        quiet = await take("quiet game", forged_sync_game(directory, port, 0, 0))
        attacked = await take("forged syncs", forged_sync_game(directory, port, 2000, 300,
                                                               timeout=120))
        await take("50 MB publish: peak RSS rise (KiB)", huge_publish_kib(directory, port))
    finally:
        broker.kill()
        broker.wait()
    for what, game in (("quiet game", quiet), ("forged syncs", attacked)):
        if isinstance(game, GameFigures):
            out[what] = {
                "peak RSS (MiB)": [k // 1024 for k in game.peak_kib],
                "RSS when the attack began (MiB)": [k // 1024 for k in game.reference_kib],
                "bytes sent": game.sent, "bytes drawn": game.drawn,
                "hands (voided, eliminated)": [
                    [(h["voided"], h["eliminated"]) for h in r["hands"]]  # type: ignore[attr-defined]
                    for r in game.results],
                "traffic": game.traffic}
    await take("formation quiet (s)", formation_seconds(directory, attack=False))
    await take("formation under half-open attack (s)",
               formation_seconds(directory, attack=True, timeout=120))
    return out


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(figures(Path(tmp))), indent=1, default=str))
