"""Strangers on the network (issue 25): each attack on real peers on 127.0.0.1, with the
figure that says it did no harm asserted against a generous bound.

The attackers (``tests/net/attackers.py``) send only to loopback and are bounded in count
and time; mosquitto runs on a free port on 127.0.0.1 (the ``mosquitto`` fixture) and
zeroconf is bound to 127.0.0.1. The other attacks (garbage, oversized
and slow frames, bad handshakes, junk and floods, forged and replayed envelopes, malformed
adverts) are the regression tests in ``test_mesh.py``, ``test_mqtt.py``,
``test_discovery.py`` and ``test_lobby.py``; replays of real envelopes and junk ride along
with the forged syncs here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from p2pkille.net.discovery import TableBrowser, open_zeroconf
from p2pkille.net.lobby import Lobby, Offer, channel_id
from p2pkille.net.mqtt import BrokerUrl, topic_prefix
from p2pkille.net.peer import PeerError, PeerSettings, run_peer
from p2pkille.ui.lan import LanLobby
from protocol import canonical
from protocol.identity import Identity
from tests.net.attackers import (
    LOOPBACK,
    ROOT,
    Rogue,
    advert_txt,
    advertise,
    advertise_many,
    forged_sync_game,
    formation_seconds,
    free_ports,
    huge_publish_kib,
    low_identity,
    peer_command,
    start_peers,
    stop_peers,
)
from tests.net.conftest import Broker
from tests.net.nodes import SLACK

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads memory and CPU figures from /proc")


def run(coro: Coroutine[Any, Any, None], timeout: float) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(timeout):
            await coro

    asyncio.run(bounded())


# -- 1. forged gap-fill syncs over MQTT ------------------------------------------------------


@pytest.mark.broker
@pytest.mark.multiprocess
@pytest.mark.slow
def test_forged_syncs_draw_no_reply_and_the_game_goes_on(mosquitto: Broker,
                                                         tmp_path: Path) -> None:
    """2,000 syncs under a name no member has and 300 under a member's name, each asking
    for everything, during a 4-peer game over mosquitto: every hand finishes, no seat is
    voided or eliminated, no peer's peak RSS doubles, and the syncs draw fewer bytes than
    they cost the attacker."""
    async def main() -> None:
        game = await forged_sync_game(tmp_path, mosquitto.port, 2000, 300, hands=2,
                                      timeout=80)
        for result in game.results:
            assert result.get("exit") is None, result
            hands = result["hands"]
            assert isinstance(hands, list)
            assert len(hands) == 2
            assert all(not h["voided"] and not h["eliminated"] for h in hands), hands
        assert len({json.dumps(r["hands"], sort_keys=True) for r in game.results}) == 1
        assert game.sent == {"stranger": 40_000, "member": 6_000}
        for who in ("stranger", "member"):
            assert game.drawn[who] <= game.sent[who], game.drawn
        for peak, reference in zip(game.peak_kib, game.reference_kib, strict=True):
            assert 0 < reference <= peak <= 2 * reference, (game.peak_kib,
                                                             game.reference_kib)
        # The peers say what they refused: the stranger's messages at the transport (it is
        # no member), the unsigned syncs under the member's name at the guard. (Not all of
        # them: the game may end before the last forged syncs arrive.)
        ignored = sum(_count(r"(\d+) messages from non-members ignored", line)
                      for line in game.traffic)
        refused = sum(_count(r"(\d+) unsigned", line) for line in game.traffic)
        assert ignored > 0, game.traffic
        assert refused > 0, game.traffic

    run(main(), 100)


def _count(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    return int(found.group(1)) if found else 0


# -- 2. a rogue creator ----------------------------------------------------------------------


@pytest.mark.multiprocess
# The rogue advert, the joins and their checks, in order.
def test_a_rogue_creator_captures_no_joiner_that_picked_the_real_table(  # noqa: PLR0915
        tmp_path: Path) -> None:
    """A stranger copies the real table's advert (its table id, under a key whose
    fingerprint sorts first, with stake 999999), advertises its mesh as a member of the
    real table too (to be dialled by the real creator's joiners), and answers every join at
    once with a roster of the joiner and its own sybil keys. ``p2pkille tables`` shows the real
    creator's row with the real terms beside the impostor's; a player that picks the real
    row in the lobby, and a ``p2pkille peer --creator`` taken from that listing, are both
    seated by the real creator, never bound to the impostor."""
    name = f"rogue-{os.urandom(3).hex()}"

    async def main() -> None:
        creator = Identity.from_seed(os.urandom(32))
        lobbies: list[Lobby] = []
        settings = PeerSettings(offer=Offer(name, 3, "wikipedia", 1, 10), create=True,
                                interface=LOOPBACK, identity=creator, timeout=60,
                                on_lobby=lobbies.append)
        stop = asyncio.Event()
        rogue = Rogue(name, 3, identity=low_identity(creator.public.fingerprint))
        zc = open_zeroconf([LOOPBACK])
        lan = LanLobby([LOOPBACK], LOOPBACK, "Tester")
        procs: list[subprocess.Popen[bytes]] = []
        async with asyncio.TaskGroup() as tg:
            honest = tg.create_task(run_peer(settings))
            browsing = tg.create_task(lan.run())
            try:
                mesh = await rogue.on_mesh(stop)
                await mesh.wait_ready()
                # The impostor copies the real advert once it hears it.
                while not lobbies or lobbies[0].table is None:
                    await asyncio.sleep(0.05)
                table = lobbies[0].table
                await advertise(zc, advert_txt(rogue.identity, table, name, stake=999999,
                                               taken=1, wanted=3), mesh.port)
                lure = Identity.from_seed(os.urandom(32))
                await advertise(zc, advert_txt(lure, table, name, stake=999999, taken=1,
                                               wanted=3, creator=creator.public.fingerprint),
                                mesh.port)
                listed = await asyncio.to_thread(_tables_json, 3.0)
                rows = [t for t in listed if t["name"] == name]
                real = [t for t in rows if t["table"] == canonical.b64encode(table)
                        and t["stake"] == 1]
                assert len(real) == 1, rows  # the real table, with its own terms
                assert real[0]["creator"] == creator.public.fingerprint
                assert any(t["stake"] == 999999 for t in rows), rows  # the copy, apart
                # A player picks the row of the real table in the lobby.
                while not [t for t in lan.tables if t.table == table and t.stake == 1]:
                    await asyncio.sleep(0.05)
                session = lan.join(next(t for t in lan.tables
                                        if t.table == table and t.stake == 1))
                # Until every seat is taken it sends its join to every advert naming its
                # creator, the lure too, and the rogue answers with a roster of its own.
                while rogue.rosters == 0:
                    await asyncio.sleep(0.05)
                # A peer told the creator from that listing takes the third seat.
                procs.append(subprocess.Popen(
                    peer_command(name, 3, 1, "--interface", LOOPBACK, "--creator",
                                 str(real[0]["creator"]), "--timeout", "40"),
                    cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                while session.lobby is None or session.lobby.roster is None:
                    await asyncio.sleep(0.05)
                assert session.lobby.roster.creator == creator.public
                while not lobbies[0].formed:
                    await asyncio.sleep(0.05)
                seated = {k.fingerprint for k in lobbies[0].config().identities}
                assert session.identity.public.fingerprint in seated
                assert len(seated) == 3  # the real creator seated the peer process too
            finally:
                for proc in procs:
                    proc.kill()
                    proc.wait()
                stop.set()
                lan.stop()
                honest.cancel()
                await zc.async_close()
                await asyncio.gather(browsing, return_exceptions=True)

    with contextlib.suppress(asyncio.CancelledError):
        run(main(), 60)


def _tables_json(seconds: float) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "tables", "--interface",
                           LOOPBACK, "--json", "--seconds", str(seconds)], check=False,
                          cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    tables = json.loads(proc.stdout)["tables"]
    assert isinstance(tables, list)
    return tables


@pytest.mark.broker
def test_over_mqtt_a_rogue_answering_every_join_captures_nobody(mosquitto: Broker) -> None:
    """Over mosquitto, joiners that name no creator bind to the only one offering the
    table; a stranger's instant rosters are refused and the real table forms."""
    name = f"mqtt-rogue-{os.urandom(3).hex()}"
    broker = BrokerUrl(LOOPBACK, mosquitto.port)

    async def main() -> None:
        stop = asyncio.Event()
        rogue = Rogue(name, 3)
        common = {"transport": "mqtt", "broker": broker, "hands": 1, "timeout": 40.0,
                  "linger": 2.0}
        settings = [PeerSettings(offer=Offer(name, 3, "wikipedia", 1, 10), create=True,
                                 **common)]  # type: ignore[arg-type]
        settings += [PeerSettings(offer=Offer(name, 3), **common)  # type: ignore[arg-type]
                     for _ in range(2)]
        transport = await rogue.on_mqtt(stop, broker)
        try:
            await transport.wait_ready()  # the rogue is subscribed before anyone joins
            results = await asyncio.gather(*(run_peer(s) for s in settings))
        finally:
            stop.set()
            await asyncio.gather(*rogue.serving)
        assert rogue.rosters > 0
        assert len({r.table for r in results}) == 1
        assert sorted(r.seat for r in results) == ["P1", "P2", "P3"]
        assert all(len(r.hands) == 1 for r in results)

    run(main(), 60)


def test_two_creators_offering_a_name_make_a_joiner_ask() -> None:
    """A joiner that names no creator and hears two offering the name binds to neither and
    stops, listing both (``p2pkille peer`` prints them and exits 2: see
    test_two_creators_of_one_name_make_a_joiner_ask_and_creator_picks_one)."""
    name = f"two-{os.urandom(3).hex()}"

    async def main() -> None:
        stop = asyncio.Event()
        rogue = Rogue(name, 3, offers=True)
        mesh = await rogue.on_mesh(stop)
        await mesh.wait_ready()
        lobbies: list[Lobby] = []
        creator = asyncio.create_task(run_peer(PeerSettings(
            offer=Offer(name, 3, "wikipedia", 1, 10), create=True, discover=False,
            port=free_ports(1)[0], timeout=30, on_lobby=lobbies.append)))
        try:
            while not lobbies:
                await asyncio.sleep(0.05)
            from p2pkille.net.mesh import PeerAddress
            joiner = PeerSettings(offer=Offer(name, 3), discover=False, timeout=10,
                                  peers=(PeerAddress.parse(lobbies[0].address),
                                         PeerAddress(LOOPBACK, mesh.port)))
            with pytest.raises(PeerError, match="2 creators offer a table called") as caught:
                await run_peer(joiner)
            offers = getattr(caught.value, "offers", ())
            assert {t.fingerprint for t in offers} == {
                rogue.identity.public.fingerprint, lobbies[0].identity.public.fingerprint}
            assert rogue.rosters == 0  # it never even asked anybody for a seat
        finally:
            stop.set()
            creator.cancel()
            await asyncio.gather(creator, return_exceptions=True)

    run(main(), 40)


# -- 3. handshake exhaustion -------------------------------------------------------------------


@pytest.mark.multiprocess
@pytest.mark.slow
def test_a_table_forms_under_the_half_open_attack_within_twice_its_quiet_time(
        tmp_path: Path) -> None:
    """66 idle connections to every peer's port, each reopened as soon as the peer closes
    it: a 4-peer table over the mesh (zeroconf on 127.0.0.1) forms within twice the time it
    takes on a quiet network."""
    async def main() -> None:
        quiet = await formation_seconds(tmp_path / "quiet", attack=False, timeout=40)
        attacked = await formation_seconds(tmp_path / "attacked", attack=True,
                                           timeout=2 * quiet + 5)
        assert attacked <= 2 * quiet, (attacked, quiet)

    (tmp_path / "quiet").mkdir()
    (tmp_path / "attacked").mkdir()
    run(main(), 120)


# -- 4. a huge MQTT publish --------------------------------------------------------------------


@pytest.mark.broker
@pytest.mark.multiprocess
def test_a_50_MB_publish_raises_no_peers_rss_by_10_MB(mosquitto: Broker,
                                                     tmp_path: Path) -> None:
    """The peers announce an MQTT 5 Maximum Packet Size, so the broker never sends them a
    50 MB publish on their table's topic: no peer's RSS rises by more than 10 MB."""
    rises = asyncio.run(asyncio.wait_for(huge_publish_kib(tmp_path, mosquitto.port), 60))
    assert all(rise <= 10 * 1024 for rise in rises), rises


# -- 5. the smaller items -----------------------------------------------------------------------


@pytest.mark.multiprocess
def test_adverts_of_hosts_that_hang_up_are_dialled_a_bounded_number_of_times(
        tmp_path: Path) -> None:
    """100 adverts for the table's name, each at a port that accepts a connection and
    hangs up at once: a creator dials none of them and an undecided joiner each at most
    three times, however long it waits (a dial loop per advert would make about one
    connection per advert a second). 100 leaves room under a browser's cap of 256 for
    other programs' adverts on the same loopback."""
    name = f"dead-{os.urandom(3).hex()}"
    count = 100
    dials = 0
    dialled = asyncio.Event()

    def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal dials
        dials += 1
        dialled.set()
        writer.transport.abort()

    async def main() -> None:
        servers = [await asyncio.start_server(hang_up, LOOPBACK, 0) for _ in range(count)]
        ports = [int(server.sockets[0].getsockname()[1]) for server in servers]
        zc = open_zeroconf([LOOPBACK])
        stranger = Identity.from_seed(os.urandom(32))
        peers = start_peers(tmp_path, [
            peer_command(name, 3, 0, "--interface", LOOPBACK, "--timeout", "600"),
            peer_command(name, 3, 1, "--interface", LOOPBACK, "--timeout", "600")])
        try:
            async with TableBrowser(zc) as browser:
                await advertise_many(zc, [
                    (advert_txt(stranger, os.urandom(16), name, stake=1, taken=1, wanted=3),
                     port) for port in ports])
                # Heard here, so heard by the peers on the same loopback too.
                await browser.wait_for(lambda b: sum(
                    s.advert.name == name for s in b.sightings.values()) >= count,
                    20 * SLACK)
            await asyncio.wait_for(dialled.wait(), 60 * SLACK)
            # Ten seconds of a dial loop would be about a thousand connections.
            await asyncio.sleep(10.0)
            assert 0 < dials <= 3 * count, dials
        finally:
            stop_peers(peers)
            await zc.async_close()
            for server in servers:
                server.close()

    run(main(), 120 * SLACK)


def test_a_node_held_after_its_hands_plays_no_further_hand_but_answers_syncs() -> None:
    """--hands 2: three simulated nodes wrapped as ``p2pkille peer --hands 2`` wraps its
    node commit hands 1 and 2, then, held, commit nothing more in a minute of virtual time,
    while each still answers syncs; so a peer's log holds exactly the hands it reports."""
    from p2pkille.net import peer
    from p2pkille.sim.network import SimNetwork
    from p2pkille.sim.table import build_table
    table = build_table(3, seed=7)
    network = SimNetwork(7)
    watches = [peer._Watch(node, node, 2) for node in table.nodes]
    for watch in watches:
        network.add(watch)
    network.run(until=600.0, stop=lambda _: all(w.held for w in watches))
    assert all(w.held for w in watches)
    network.run(until=network.now + 60.0)
    assert [len(node.outcomes) for node in table.nodes] == [2, 2, 2]
    # Held, a node still fills a peer's gaps: all it holds, to one that holds nothing.
    from p2pkille.runtime import gapfill
    from p2pkille.runtime.io import Send
    answer = watches[0].receive("n2", gapfill.encode_sync((0, 0, 0)), network.now)
    held = sum(table.nodes[0].transcript.heads().heads)
    assert len([o for o in answer if isinstance(o, Send) and o.to == "n2"]) == min(
        held, gapfill.MAX_REPLY)
    # ... but takes no envelope.
    assert watches[0].receive("n2", b"{}", network.now) == []


def test_p2pkille_tables_prints_no_warning() -> None:
    proc = subprocess.run([sys.executable, "-W", "default", "-m", "cli.main", "tables",
                           "--interface", LOOPBACK, "--seconds", "0.5"], check=False,
                          cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 0
    assert b"never awaited" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert b"RuntimeWarning" not in proc.stderr, proc.stderr.decode(errors="replace")


@pytest.mark.broker
def test_retained_junk_and_replays_under_a_members_name_leave_the_table_working(
        mosquitto: Broker) -> None:
    """Retained junk on the table's topics
    before the peers start, then junk and replayed lobby messages under every name."""
    name = f"junk-{os.urandom(3).hex()}"
    broker = BrokerUrl(LOOPBACK, mosquitto.port)
    prefix = topic_prefix(channel_id(name))

    async def main() -> None:
        async with aiomqtt.Client(LOOPBACK, mosquitto.port) as raw:
            for n, junk in enumerate([b"", b"S", b"S{}", b"{", b"\xff" * 1000,
                                      b"p2pkille-lobby/1\n{}", b"p2pkille-sync/1\n" + b"x" * 90,
                                      b'{"author":"x","seq":1}']):
                await raw.publish(f"{prefix}/all/junk{n}", junk, qos=1, retain=True)
            common = {"transport": "mqtt", "broker": broker, "hands": 1, "timeout": 40.0,
                      "linger": 2.0}
            settings = [PeerSettings(offer=Offer(name, 2, "bytes-kille", 1, 10), create=True,
                                     **common)]  # type: ignore[arg-type]
            settings.append(PeerSettings(offer=Offer(name, 2), **common))  # type: ignore[arg-type]
            replayed: set[bytes] = set()
            await raw.subscribe(f"{prefix}/all/+", qos=0)

            async def replay() -> None:
                # Each message the peers broadcast, once more under its author's name, and
                # junk to that author: at most 300 of each (our own replays come back too).
                async for message in raw.messages:
                    author = message.topic.value.rsplit("/", 1)[1]
                    data = bytes(message.payload)
                    if data in replayed or len(replayed) >= 300:
                        continue
                    replayed.add(data)
                    await raw.publish(f"{prefix}/all/{author}", data, qos=0)
                    await raw.publish(f"{prefix}/to/{author}/{author}", b"junk", qos=0)

            replaying = asyncio.create_task(replay())
            try:
                results = await asyncio.gather(*(run_peer(s) for s in settings))
            finally:
                replaying.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await replaying
            for topic in {f"{prefix}/all/junk{n}" for n in range(8)}:
                await raw.publish(topic, b"", qos=1, retain=True)
        assert len({r.table for r in results}) == 1
        assert all(len(r.hands) == 1 and not r.hands[0].voided for r in results)
        assert replayed

    run(main(), 60)
