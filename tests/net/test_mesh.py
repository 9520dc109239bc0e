"""The TCP mesh on loopback, driven by real nodes through the asyncio driver."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.net import Driver, Mesh, PeerAddress, peer_name
from p2pkille.net.framing import encode_frame
from p2pkille.net.mesh import (
    AUTH_FIELDS,
    HANDSHAKE_PURPOSE,
    HELLO_FIELDS,
    HandshakeError,
    check_hello,
    decode_handshake,
    handshake_transcript,
)
from p2pkille.runtime.io import Send, WakeAt
from protocol import canonical
from protocol.errors import RemoteProtocolError
from protocol.identity import Identity, PublicKey
from tests.net.nodes import Gossip, identity, until

TABLE = b"test-table-mesh"


def run(coro: Coroutine[Any, Any, None], timeout: float = 30.0) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(timeout):
            await coro

    asyncio.run(bounded())


@dataclass
class Peer:
    ident: Identity
    mesh: Mesh
    node: Gossip
    driver: Driver
    task: asyncio.Task[None]


async def start_peer(tg: asyncio.TaskGroup, ident: Identity, members: list[Identity],
                     count: int, port: int = 0) -> Peer:
    mesh = Mesh(ident, TABLE, [m.public for m in members], port=port, backoff_min=0.02,
                backoff_max=0.3, handshake_timeout=2.0)
    node = Gossip(mesh.name, [peer_name(m.public) for m in members], count)
    driver = Driver(node, mesh)
    task = tg.create_task(driver.run(), name=f"peer {mesh.name[:8]}")
    await mesh.wait_ready()
    return Peer(ident, mesh, node, driver, task)


@contextlib.asynccontextmanager
async def cluster(n: int, count: int = 5, extra: int = 0) -> AsyncIterator[list[Peer]]:
    """``n`` running peers that all dial each other; ``extra`` more members that do not run."""
    idents = [identity(i) for i in range(n + extra)]
    async with asyncio.TaskGroup() as tg:
        peers = [await start_peer(tg, ident, idents[:n], count) for ident in idents[:n]]
        for p in peers:
            for q in peers:
                p.mesh.add_peer(q.mesh.address)  # our own address too: discovery lists us
        try:
            yield peers
        finally:
            for p in peers:
                p.driver.stop()


def test_four_peers_exchange_through_the_driver(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        async with cluster(4, count=20) as peers:
            await until(lambda: all(p.node.complete() for p in peers), 15, "gossip")
            names = {p.mesh.name for p in peers}
            # Everybody dialed everybody: the duplicate connections are retired, one remains.
            await until(lambda: all(p.mesh.open_connections == 3 for p in peers), 5, "dedupe")
            for p in peers:
                assert p.mesh.connected == names - {p.mesh.name}
                assert p.driver.received >= 3 * 20

    run(main())
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class Waker:
    """Asks for several wakes at the same instants and counts the calls."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.wakes: list[float] = []
        self.echoes: list[tuple[str, bytes]] = []
        self.t0 = 0.0

    def start(self, now: float) -> list[WakeAt | Send]:
        self.t0 = now
        return [WakeAt(now + 0.05), WakeAt(now + 0.05), WakeAt(now + 0.1), WakeAt(now + 0.05),
                WakeAt(now - 1.0), Send(b"to myself", to=self.name)]

    def receive(self, sender: str, data: bytes, now: float) -> list[WakeAt | Send]:
        self.echoes.append((sender, data))
        return [WakeAt(self.t0 + 0.1)]  # a deadline already asked for: still one wake

    def wake(self, now: float) -> list[WakeAt | Send]:
        self.wakes.append(now)
        return []


def test_driver_wakes_once_per_instant_and_loops_self_sends_back() -> None:
    async def main() -> None:
        ident = identity(0)
        mesh = Mesh(ident, TABLE, [ident.public])
        node = Waker(mesh.name)
        driver = Driver(node, mesh)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(driver.run())
            await until(lambda: len(node.wakes) >= 3, 3, "wakes")
            await asyncio.sleep(0.15)
            driver.stop()
        t0 = node.t0
        # The past deadline fires at once; t0+0.05 (asked three times) once; t0+0.1 once.
        assert len(node.wakes) == 3
        assert node.wakes[0] < t0 + 0.05 <= node.wakes[1] < t0 + 0.1 <= node.wakes[2]
        assert node.echoes == [(mesh.name, b"to myself")]

    run(main())


# -- bad traffic --------------------------------------------------------------------------


async def raw_handshake(port: int, ident: Identity, table: bytes = TABLE,
                        ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, list[bytes]]:
    """Do the connector's side by hand; returns the stream and the frames we sent."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    nonce_c = bytes(range(32))
    hello = encode_frame(canonical.encode({
        "key": canonical.b64encode(ident.public.raw), "nonce": canonical.b64encode(nonce_c),
        "table": canonical.b64encode(table), "type": "mesh-hello", "v": 1}))
    writer.write(hello)
    (size,) = struct.unpack(">I", await reader.readexactly(4))
    welcome = canonical.decode_object(await reader.readexactly(size))
    acceptor = PublicKey.from_text(str(welcome["key"]))
    nonce_a = canonical.b64decode(str(welcome["nonce"]))
    sig = ident.sign(HANDSHAKE_PURPOSE, handshake_transcript(
        b"connector", table, ident.public, acceptor, nonce_c, nonce_a))
    auth = encode_frame(canonical.encode({"sig": canonical.b64encode(sig), "type": "mesh-auth"}))
    writer.write(auth)
    await writer.drain()
    return reader, writer, [hello, auth]


async def closed_by_peer(reader: asyncio.StreamReader) -> bool:
    """Whether the other side closes the stream (reading everything it still sends)."""
    try:
        async with asyncio.timeout(3):
            while await reader.read(65536):
                pass
    except ConnectionResetError:
        pass
    return True


def test_bad_traffic_is_refused_and_the_node_keeps_working(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="p2pkille.net")

    async def main() -> None:
        # Peer index 2 is a member that does not run: the attacker holds its key for the
        # oversized-frame and replay cases; index 9 is a stranger.
        async with cluster(2, count=3, extra=1) as peers:
            a, b = peers
            await until(lambda: a.node.complete() and b.node.complete(), 10, "first gossip")
            member, stranger = identity(2), identity(9)
            a.mesh.set_members([identity(i).public for i in range(3)])
            port = a.mesh.port

            # 1. Garbage: an HTTP request reads as a 1.2 GB frame length.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert await closed_by_peer(reader)
            # 2. A small frame that is not a handshake message.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(encode_frame(b"\x00\xffnot json"))
            assert await closed_by_peer(reader)
            # 3. A stranger's key: no welcome, no signature, just a closed socket.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(encode_frame(canonical.encode({
                "key": canonical.b64encode(stranger.public.raw),
                "nonce": canonical.b64encode(bytes(32)), "table": canonical.b64encode(TABLE),
                "type": "mesh-hello", "v": 1})))
            assert await reader.read() == b""
            # 4. Another table's id, from a member.
            with pytest.raises(asyncio.IncompleteReadError):
                await raw_handshake(port, member, table=b"another-table")
            # 5. A member's valid handshake, then an oversized frame: cut off.
            reader, writer, frames = await raw_handshake(port, member)
            await until(lambda: peer_name(member.public) in a.mesh.connected, 3, "member in")
            writer.write(struct.pack(">I", a.mesh.max_frame + 2))  # + 1 is the kind byte
            assert await closed_by_peer(reader)
            await until(lambda: peer_name(member.public) not in a.mesh.connected, 3, "cut")
            # 6. The same handshake replayed on a new connection: the new nonce defeats it.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(frames[0])
            (size,) = struct.unpack(">I", await reader.readexactly(4))
            await reader.readexactly(size)
            writer.write(frames[1])
            assert await closed_by_peer(reader)
            assert peer_name(member.public) not in a.mesh.connected
            # 7. A silent connection is dropped at the handshake timeout.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            assert await closed_by_peer(reader)

            # The node lived through it all and still talks to b.
            assert a.mesh.connected == {b.mesh.name}
            before = b.driver.received
            assert b.mesh.send(a.mesh.name, b"M|probe|7") == 1
            await until(lambda: ("probe", 7) in a.node.first_seen
                        and b.driver.received > before, 5, "a round trip after the attacks")

    run(main())
    refusals = [r.getMessage() for r in caplog.records if "refused connection" in r.getMessage()]
    assert any("not a member" in m for m in refusals), refusals
    assert any("is not ours" in m for m in refusals), refusals
    assert any("bad 'mesh-handshake' signature" in m for m in refusals), refusals
    assert any("timed out" in m for m in refusals), refusals
    assert sum("frame of" in m for m in refusals) >= 1, refusals
    assert any("cutting off" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_peer_that_listens_with_a_strangers_key_is_refused() -> None:
    async def main() -> None:
        async with cluster(1, count=0) as peers:
            (a,) = peers
            stranger = identity(9)
            async with asyncio.TaskGroup() as tg:
                # The stranger thinks it belongs; a dials it and must refuse its welcome.
                s = await start_peer(tg, stranger, [stranger, a.ident], count=1)
                a.mesh.add_peer(s.mesh.address)
                s.mesh.add_peer(a.mesh.address)
                await asyncio.sleep(0.5)
                assert a.mesh.connected == frozenset()
                assert s.mesh.connected == frozenset()
                assert a.driver.received == 0
                s.driver.stop()

    run(main())


def test_reconnect_after_a_peer_restarts() -> None:
    async def main() -> None:
        idents = [identity(i) for i in range(3)]
        async with cluster(3, count=3) as peers:
            await until(lambda: all(p.node.complete() for p in peers), 10, "gossip")
            gone = peers[2]
            port = gone.mesh.port
            gone.driver.stop()
            await gone.task
            await until(lambda: all(gone.mesh.name not in p.mesh.connected for p in peers[:2]),
                        5, "disconnect seen")
            await asyncio.sleep(0.3)  # the others' dialers are now backing off
            async with asyncio.TaskGroup() as tg:
                back = await start_peer(tg, idents[2], idents, count=3, port=port)
                # It knows nobody's address: the others reconnect to it.
                copies = [p.node.copies for p in peers[:2]]
                await until(lambda: back.mesh.connected == {p.mesh.name for p in peers[:2]},
                            5, "reconnected")
                await until(lambda: not back.node.unacked, 5, "restarted node acked")
                assert [p.node.copies for p in peers[:2]] >= [c + 3 for c in copies]
                back.driver.stop()

    run(main())


def test_removing_a_member_closes_its_connection() -> None:
    async def main() -> None:
        async with cluster(2, count=1) as (a, b):
            await until(lambda: a.mesh.connected == {b.mesh.name}, 5, "connected")
            a.mesh.set_members([a.ident.public])
            await until(lambda: not a.mesh.connected and not b.mesh.connected, 5, "closed")
            # b keeps dialing; a keeps refusing while b is outside the table.
            await asyncio.sleep(0.3)
            assert not a.mesh.connected

    run(main())


@pytest.mark.parametrize(("text", "host", "port"), [
    ("127.0.0.1:4000", "127.0.0.1", 4000), ("[::1]:5", "::1", 5), ("host.lan:65535", "host.lan",
                                                                      65535)])
def test_peer_address_round_trip(text: str, host: str, port: int) -> None:
    address = PeerAddress.parse(text)
    assert address == PeerAddress(host, port)
    assert str(address) == text
    assert eval(repr(address)) == address


@pytest.mark.parametrize("text", ["", "host", "host:", ":80", "::1:80", "h:0", "h:70000", "h:x"])
def test_bad_peer_addresses(text: str) -> None:
    with pytest.raises(ValueError, match="peer address"):
        PeerAddress.parse(text)


# -- handshake parsing, offline --------------------------------------------------------------

VALID_HELLO = canonical.encode({
    "key": canonical.b64encode(identity(0).public.raw), "nonce": canonical.b64encode(bytes(32)),
    "table": canonical.b64encode(TABLE), "type": "mesh-hello", "v": 1})


@given(st.binary(max_size=300) | st.builds(
    lambda cut, junk: VALID_HELLO[:cut] + junk + VALID_HELLO[cut + len(junk):],
    st.integers(0, len(VALID_HELLO)), st.binary(min_size=1, max_size=4)))
def test_handshake_parsing_only_ever_raises_the_remote_kind(data: bytes) -> None:
    try:
        message = decode_handshake(data, "mesh-hello", HELLO_FIELDS)
        key, nonce = check_hello(message, TABLE, lambda key: True)
    except RemoteProtocolError:
        return
    assert len(nonce) == 32
    # Junk may turn the key into another valid one (every test key is a member here).
    assert key == identity(0).public or data != VALID_HELLO


def test_a_valid_hello_parses_and_a_non_member_is_named() -> None:
    message = decode_handshake(VALID_HELLO, "mesh-hello", HELLO_FIELDS)
    assert check_hello(message, TABLE, lambda key: True) == (identity(0).public, bytes(32))
    with pytest.raises(HandshakeError, match=f"key {identity(0).public.fingerprint} is not"):
        check_hello(message, TABLE, lambda key: False)
    with pytest.raises(HandshakeError, match="expected mesh-auth"):
        decode_handshake(VALID_HELLO, "mesh-auth", AUTH_FIELDS)


# -- connection management -----------------------------------------------------------------


async def stream_on_connect(count: int) -> int:
    """Two peers dial each other at once and each sends ``count`` frames the moment it sees
    the other; returns how many duplicate connections they retired."""
    idents = [identity(0), identity(1)]
    members = [i.public for i in idents]
    got: list[list[bytes]] = [[], []]
    meshes: list[Mesh] = []

    def on_presence(index: int) -> Callable[[str, bool], None]:
        def seen(name: str, up: bool) -> None:
            if up:  # at once, on whatever connection is current now
                for n in range(count):
                    meshes[index].send(name, b"%d" % n)
        return seen

    def receiver(index: int) -> Callable[[str, bytes], None]:
        def deliver(name: str, data: bytes) -> None:
            got[index].append(data)
        return deliver

    meshes = [Mesh(ident, TABLE, members, on_presence=on_presence(i))
              for i, ident in enumerate(idents)]
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(m.run(receiver(i))) for i, m in enumerate(meshes)]
        for m in meshes:
            await m.wait_ready()
        meshes[0].add_peer(meshes[1].address)
        meshes[1].add_peer(meshes[0].address)
        await until(lambda: all(len(g) >= count for g in got), 10, "frames")
        await until(lambda: all(m.open_connections == 1 for m in meshes), 5, "dedupe")
        await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
    for g in got:
        assert sorted(g, key=int) == [b"%d" % n for n in range(count)]
    return sum(m.duplicates_retired for m in meshes)


def test_no_frame_is_lost_while_duplicate_connections_are_retired() -> None:
    """The losing connection is read to its end, so every frame arrives exactly once."""
    retired: list[int] = []

    async def main() -> None:
        for _ in range(5):
            retired.append(await stream_on_connect(300))

    run(main())
    assert any(retired), f"no round raced into duplicate connections: {retired}"


def test_a_peer_that_does_not_read_is_cut_off(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        idents = [identity(0), identity(1)]
        mesh = Mesh(idents[0], TABLE, [i.public for i in idents], max_write_buffer=1 << 20)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(mesh.run(lambda who, data: None))
            await mesh.wait_ready()
            _, writer, _ = await raw_handshake(mesh.port, idents[1])
            name = peer_name(idents[1].public)
            await until(lambda: name in mesh.connected, 3, "connected")
            chunk = bytes(1 << 19)
            for _ in range(400):  # 200 MiB if it were all accepted; it never reads
                if not mesh.send(name, chunk):
                    break
                await asyncio.sleep(0)
            await until(lambda: name not in mesh.connected, 5, "cut off")
            task.cancel()
            writer.close()

    run(main())
    assert any("is not reading" in r.getMessage() for r in caplog.records)


def test_handshakes_in_progress_are_limited_and_the_oldest_silent_one_makes_room(
        caplog: pytest.LogCaptureFixture) -> None:
    """A full table of unfinished handshakes never refuses a newcomer: the oldest connection
    that has not sent its hello is closed instead."""
    async def main() -> None:
        ident = identity(0)
        mesh = Mesh(ident, TABLE, [ident.public], max_pending_handshakes=3,
                    handshake_timeout=5.0, hello_timeout=5.0)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(mesh.run(lambda who, data: None))
            await mesh.wait_ready()
            silent = []
            for _ in range(3):
                silent.append(await asyncio.open_connection("127.0.0.1", mesh.port))
                await until(lambda: mesh.pending_handshakes == len(silent), 3, "pending")
            newcomer = await asyncio.open_connection("127.0.0.1", mesh.port)
            async with asyncio.timeout(1):  # at once, long before the 5 s timeouts
                assert await closed_by_peer(silent[0][0])
            assert mesh.pending_handshakes == 3
            assert mesh.evicted == 1
            for _, writer in [*silent, newcomer]:
                writer.close()
            task.cancel()

    run(main())
    assert any("3 handshakes pending; closing the oldest unfinished one" in r.getMessage()
               for r in caplog.records)


def test_a_connection_arriving_as_the_mesh_closes_is_refused_without_a_stray_coroutine(
        recwarn: pytest.WarningsRecorder) -> None:
    # The server can hand over a connection after the mesh's task group began to close;
    # creating the handshake task then raises, and the handshake coroutine used to be
    # left never awaited (a RuntimeWarning at garbage collection).
    class Transport:
        aborted = False

        def abort(self) -> None:
            self.aborted = True

    class Writer:
        transport = Transport()

        def get_extra_info(self, name: str) -> object:
            return ("127.0.0.1", 4242) if name == "peername" else None

    async def main() -> None:
        mesh = Mesh(identity(0), TABLE, [identity(0).public])
        async with asyncio.TaskGroup() as tg:
            pass
        mesh._tg = tg  # finished: create_task raises RuntimeError
        writer = Writer()
        mesh._on_inbound(asyncio.StreamReader(), writer)  # type: ignore[arg-type]
        assert writer.transport.aborted
        assert mesh.pending_handshakes == 0

    run(main())
    assert not [w for w in recwarn.list if "never awaited" in str(w.message)]


def test_a_peer_found_as_the_mesh_closes_is_not_dialled_and_nothing_is_left_unawaited(
        recwarn: pytest.WarningsRecorder) -> None:
    # Discovery may hand over an address while the mesh's task group is closing.
    async def main() -> None:
        mesh = Mesh(identity(0), TABLE, [identity(0).public])
        async with asyncio.TaskGroup() as tg:
            pass
        mesh._tg = tg  # finished: create_task raises RuntimeError
        mesh.add_peer(PeerAddress("127.0.0.1", 4242))  # neither raises nor leaks

    run(main())
    assert not [w for w in recwarn.list if "never awaited" in str(w.message)]


def test_idle_peers_keep_alive_and_a_silent_one_is_dropped(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        idents = [identity(i) for i in range(3)]
        members = [i.public for i in idents]
        meshes = [Mesh(i, TABLE, members, keepalive=0.05, dead_after=0.3) for i in idents[:2]]
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(m.run(lambda who, data: None)) for m in meshes]
            for m in meshes:
                await m.wait_ready()
            meshes[0].add_peer(meshes[1].address)
            await until(lambda: len(meshes[1].connected) == 1, 3, "connected")
            # A member that completes the handshake and then says nothing at all.
            _, writer, _ = await raw_handshake(meshes[1].port, idents[2])
            silent = peer_name(idents[2].public)
            await until(lambda: silent in meshes[1].connected, 3, "silent one in")
            await asyncio.sleep(1.0)  # more than three times dead_after, nothing to send
            assert meshes[1].connected == {meshes[0].name}
            assert meshes[0].connected == {meshes[1].name}
            writer.close()
            for task in tasks:
                task.cancel()

    run(main())
    assert any(f"{peer_name(identity(2).public)} has been silent" in r.getMessage()
               for r in caplog.records)


def test_an_unknown_frame_kind_cuts_the_peer_off(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        ident, member = identity(0), identity(1)
        mesh = Mesh(ident, TABLE, [ident.public, member.public])
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(mesh.run(lambda who, data: None))
            await mesh.wait_ready()
            for frame in (b"", b"\x07hello"):
                reader, writer, _ = await raw_handshake(mesh.port, member)
                writer.write(encode_frame(frame))
                assert await closed_by_peer(reader)
            task.cancel()

    run(main())
    cut = [r.getMessage() for r in caplog.records if "unknown frame kind" in r.getMessage()]
    assert len(cut) == 2, cut
