"""The MQTT transport against a real mosquitto on 127.0.0.1 (marked ``broker``)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gc
import ipaddress
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from p2pkille.net import Driver, peer_name
from p2pkille.net.mqtt import BrokerUrl, MqttTransport, topic_prefix
from tests.net import conftest
from tests.net.conftest import Broker
from tests.net.nodes import Gossip, identity, until

TABLE = b"test-table-mqtt"


def run(coro: Coroutine[Any, Any, None], timeout: float = 30.0) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(timeout):
            await coro

    asyncio.run(bounded())


# -- offline: broker URLs ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "url", "shown"), [
    ("mqtt://127.0.0.1", BrokerUrl("127.0.0.1"), "mqtt://127.0.0.1:1883"),
    ("mqtts://broker.lan", BrokerUrl("broker.lan", 8883, tls=True), "mqtts://broker.lan:8883"),
    ("mqtt://al%40ice:p%3Ass@h:1884/?protocol=3.1.1",
     BrokerUrl("h", 1884, username="al@ice", password="p:ss", protocol="3.1.1"),
     "mqtt://al%40ice@h:1884/?protocol=3.1.1"),
    ("mqtts://u:pw@[::1]:8884/?cafile=/tmp/ca.pem",
     BrokerUrl("::1", 8884, tls=True, username="u", password="pw", cafile="/tmp/ca.pem"),
     "mqtts://u@[::1]:8884/?cafile=%2Ftmp%2Fca.pem"),
])
def test_broker_urls(text: str, url: BrokerUrl, shown: str) -> None:
    parsed = BrokerUrl.parse(text)
    assert parsed == url
    assert str(parsed) == shown
    assert "pw" not in repr(parsed)
    assert "p:ss" not in repr(parsed)
    if url.password is None:
        assert BrokerUrl.parse(str(parsed)) == parsed


@pytest.mark.parametrize("text", ["http://h", "mqtt://", "mqtt://h:99999", "mqtt://h/topic",
                                  "mqtt://h/?x=1", "mqtt://h/?protocol=4",
                                  "mqtt://u:secret@h:x"])
def test_bad_broker_urls_never_show_the_password(text: str) -> None:
    with pytest.raises(ValueError, match="broker") as info:
        BrokerUrl.parse(text)
    assert "secret" not in str(info.value)


def test_names_must_fit_a_topic_level() -> None:
    with pytest.raises(ValueError, match="topic level"):
        MqttTransport("a/b", TABLE, BrokerUrl("127.0.0.1"))
    with pytest.raises(ValueError, match="topic level"):
        MqttTransport("#", TABLE, BrokerUrl("127.0.0.1"))


@pytest.mark.parametrize(("ci", "outcome"), [("true", "fail"), ("", "skip")])
def test_a_missing_mosquitto_fails_under_ci_and_skips_elsewhere(
        monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str) -> None:
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if outcome == "fail" else pytest.skip.Exception
    with pytest.raises(expected, match="mosquitto is not installed"):
        conftest._mosquitto()


# -- against mosquitto -----------------------------------------------------------------------


@dataclass
class Peer:
    transport: MqttTransport
    node: Gossip
    driver: Driver
    presence: list[tuple[str, bool]] = field(default_factory=list)


def _recorder(events: list[tuple[str, bool]]) -> Callable[[str, bool], None]:
    def record(who: str, up: bool) -> None:
        events.append((who, up))

    return record


@contextlib.asynccontextmanager
async def peers_on(url: BrokerUrl, n: int, count: int = 5) -> AsyncIterator[list[Peer]]:
    names = [peer_name(identity(i).public) for i in range(n)]
    out: list[Peer] = []
    async with asyncio.TaskGroup() as tg:
        for name in names:
            events: list[tuple[str, bool]] = []
            transport = MqttTransport(name, TABLE, url, backoff_min=0.05, backoff_max=0.5,
                                      on_presence=_recorder(events))
            node = Gossip(name, names, count)
            peer = Peer(transport, node, Driver(node, transport), events)
            tg.create_task(peer.driver.run())
            out.append(peer)
        try:
            yield out
        finally:
            for peer in out:
                peer.driver.stop()


@pytest.mark.broker
@pytest.mark.parametrize("protocol", ["auto", "3.1.1"])
def test_peers_exchange_over_mosquitto(mosquitto: Broker, protocol: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="p2pkille.net")
    url = BrokerUrl("127.0.0.1", mosquitto.port, protocol=protocol)

    async def main() -> None:
        async with peers_on(url, 3, count=20) as peers:
            await until(lambda: all(p.node.complete() for p in peers), 15, "gossip")
            names = {p.transport.name for p in peers}
            for p in peers:
                assert p.transport.online == names - {p.transport.name}
            # A broadcast reaches the others, never its sender.
            peers[0].transport.send(None, b"M|all|1")
            await until(lambda: all(("all", 1) in p.node.first_seen for p in peers[1:]), 5,
                        "broadcast")
            await asyncio.sleep(0.2)
            assert ("all", 1) not in peers[0].node.first_seen
            # Both others acked it. (The sender's whole input is not counted: QoS 1 is at
            # least once, and under load the broker re-sends earlier messages.)
            assert peers[0].node.acks.get(("all", 1), 0) >= 2

    run(main())
    version = "5" if protocol == "auto" else "3.1.1"
    assert any(f"(MQTT {version})" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.broker
def test_duplicates_forgeries_and_stray_topics_do_not_harm(mosquitto: Broker) -> None:
    url = BrokerUrl("127.0.0.1", mosquitto.port)

    async def main() -> None:
        async with peers_on(url, 2, count=1) as (a, b):
            await until(lambda: a.node.complete() and b.node.complete(), 10, "gossip")
            prefix = topic_prefix(TABLE)
            async with aiomqtt.Client("127.0.0.1", mosquitto.port) as raw:
                # QoS 1 may deliver twice: both copies reach the node, which dedupes.
                for _ in range(2):
                    await raw.publish(f"{prefix}/all/{b.transport.name}", b"M|dup|3", qos=1)
                await raw.publish(f"{prefix}/all/x/y", b"M|deep|1", qos=1)
                await raw.publish(f"{prefix}/to/{a.transport.name}", b"M|short|1", qos=1)
                await raw.publish(f"{prefix}/presence/{b.transport.name}", b"maybe", qos=1)
                await raw.publish(f"{prefix}/all/{b.transport.name}", b"\xff" * 100, qos=1)
                await raw.publish(f"{prefix}/all/{b.transport.name}", b"M|after|1", qos=1)
            await until(lambda: ("after", 1) in a.node.first_seen, 5, "after")
            copies = a.node.copies
            assert ("dup", 3) in a.node.first_seen
            assert ("deep", 1) not in a.node.first_seen
            assert ("short", 1) not in a.node.first_seen
            assert a.node.garbage == 1
            assert b.transport.name in a.transport.online
            assert copies >= 1 + 2 + 1

    run(main())


WILL_PEER = """
import asyncio, sys
from p2pkille.net.mqtt import BrokerUrl, MqttTransport
async def main():
    t = MqttTransport(sys.argv[1], b"test-table-mqtt", BrokerUrl("127.0.0.1", int(sys.argv[2])),
                      keepalive=5)
    task = asyncio.create_task(t.run(lambda who, data: None))
    await t.wait_ready()
    print("ready", flush=True)
    await task
asyncio.run(main())
"""


@pytest.mark.broker
def test_the_will_announces_a_killed_peer_and_a_clean_stop_says_offline(
        mosquitto: Broker) -> None:
    url = BrokerUrl("127.0.0.1", mosquitto.port)
    victim = peer_name(identity(5).public)

    async def main() -> None:
        async with peers_on(url, 2, count=0) as (a, b):
            await a.transport.wait_ready()
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-c", WILL_PEER, victim, str(mosquitto.port),
                stdout=subprocess.PIPE, env=os.environ | {"PYTHONPATH": os.getcwd()})
            assert proc.stdout is not None
            assert await proc.stdout.readline() == b"ready\n"
            await until(lambda: victim in a.transport.online, 5, "victim online")
            proc.kill()  # SIGKILL: no DISCONNECT, so the broker publishes the will
            await proc.wait()
            await until(lambda: victim not in a.transport.online, 5, "will")
            assert (victim, False) in a.presence
            # b stops cleanly: it announces itself offline (a clean stop sends no will).
            b.driver.stop()
            await until(lambda: (b.transport.name, False) in a.presence, 5, "clean stop")

    run(main())


@pytest.mark.broker
def test_reconnect_and_resubscribe_after_the_broker_restarts(mosquitto: Broker) -> None:
    url = BrokerUrl("127.0.0.1", mosquitto.port)

    async def main() -> None:
        async with peers_on(url, 2, count=2) as (a, b):
            await until(lambda: a.node.complete() and b.node.complete(), 10, "gossip")
            await asyncio.to_thread(mosquitto.stop)
            await until(lambda: not a.transport.connected, 5, "loss noticed")
            await asyncio.to_thread(mosquitto.start)
            await until(lambda: a.transport.connections >= 2 and b.transport.connections >= 2
                        and a.transport.connected and b.transport.connected, 10, "reconnect")
            # New subscriptions work (the restarted broker has no memory of the old ones).
            b.transport.send(a.transport.name, b"M|again|1")
            a.transport.send(None, b"M|again|2")
            await until(lambda: ("again", 1) in a.node.first_seen
                        and ("again", 2) in b.node.first_seen, 5, "after restart")

    run(main())


def _tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 signed by it."""
    now = datetime.datetime.now(datetime.UTC)

    def make(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str,
             signer: ec.EllipticCurvePrivateKey, ca: bool) -> x509.Certificate:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(hours=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=False, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        else:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    server_key = ec.generate_private_key(ec.SECP256R1())
    ca = make("p2pkille test CA", ca_key, "p2pkille test CA", ca_key, True)
    server = make("127.0.0.1", server_key, "p2pkille test CA", ca_key, False)
    paths = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(server_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return paths


@pytest.mark.broker
# paho-mqtt 2.2 leaves the socket of a failed TLS handshake to the garbage collector; the
# collection below makes its ResourceWarning land here, where it is expected.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_tls_and_password_pass_through(mosquitto_exe: str, tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    ca, cert, key = _tls_files(tmp_path)
    passwords = tmp_path / "passwd"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(passwords), "player", "s3cr:t"],
                   check=True, capture_output=True)
    broker = Broker(mosquitto_exe, tmp_path, tls=True, extra=(
        f"certfile {cert}\nkeyfile {key}\nallow_anonymous false\n"
        f"password_file {passwords}\n"))
    broker.start()
    good = BrokerUrl.parse(f"mqtts://player:s3cr%3At@127.0.0.1:{broker.port}/?cafile={ca}")
    wrong = BrokerUrl.parse(f"mqtts://player:guess@127.0.0.1:{broker.port}/?cafile={ca}")
    untrusted = BrokerUrl.parse(f"mqtts://player:s3cr%3At@127.0.0.1:{broker.port}")

    caplog.set_level(logging.INFO, logger="p2pkille.net")

    async def main() -> None:
        async with peers_on(good, 2, count=2) as (a, b):
            await until(lambda: a.node.complete() and b.node.complete(), 10, "gossip over TLS")
        for url in (wrong, untrusted):
            refused = MqttTransport(peer_name(identity(7).public), TABLE, url, backoff_min=0.05)
            task = asyncio.create_task(refused.run(lambda who, data: None))
            await asyncio.sleep(0.5)
            assert not refused.connected
            assert refused.connections == 0
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    try:
        run(main())
    finally:
        broker.stop()
        gc.collect()
    messages = [r.getMessage() for r in caplog.records]
    assert any("Not authorized" in m for m in messages)
    assert any("CERTIFICATE_VERIFY_FAILED" in m for m in messages)
    assert not any("s3cr" in m for m in messages)


def test_falls_back_to_3_1_1_when_the_broker_refuses_mqtt_5() -> None:
    """A loopback listener that answers CONNECT as a 3.1.1-only broker does (MQTT 3.1.1
    section 3.1.2.2: return code 1, then close), recording the protocol levels it is offered."""
    levels: list[int] = []

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = await reader.readexactly(1)
        assert header[0] >> 4 == 1  # CONNECT
        size, shift = 0, 0
        while True:
            byte = (await reader.readexactly(1))[0]
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        body = await reader.readexactly(size)
        levels.append(body[6])  # after the protocol name b"\x00\x04MQTT"
        writer.write(bytes([0x20, 0x02, 0x00, 0x01]))
        await writer.drain()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(refuse, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = MqttTransport(peer_name(identity(0).public), TABLE,
                                  BrokerUrl("127.0.0.1", port), backoff_min=0.05)
        task = asyncio.create_task(transport.run(lambda who, data: None))
        await until(lambda: len(levels) >= 2, 5, "two CONNECTs")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        server.close()
        assert levels[:2] == [5, 4]
        assert transport.protocol is aiomqtt.ProtocolVersion.V311

    run(main())


@pytest.mark.broker
def test_what_is_sent_while_disconnected_goes_out_on_connection(mosquitto: Broker) -> None:
    url = BrokerUrl("127.0.0.1", mosquitto.port)
    got: list[bytes] = []

    async def main() -> None:
        name = peer_name(identity(0).public)
        transport = MqttTransport(name, TABLE, url)
        assert transport.send(None, b"queued 1") == 1  # not connected yet: the outbox holds it
        assert transport.send("someone", b"queued 2") == 1
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as raw:
            await raw.subscribe(f"{topic_prefix(TABLE)}/+/#", qos=1)
            task = asyncio.create_task(transport.run(lambda who, data: None))
            async with asyncio.timeout(5):
                async for message in raw.messages:
                    if not message.topic.matches(f"{topic_prefix(TABLE)}/presence/+"):
                        got.append(bytes(message.payload))
                    if len(got) == 2:
                        break
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    run(main())
    assert got == [b"queued 1", b"queued 2"]


@pytest.mark.broker
def test_game_traffic_goes_before_repair_and_a_full_game_lane_says_so(
        mosquitto: Broker, caplog: pytest.LogCaptureFixture) -> None:
    url = BrokerUrl("127.0.0.1", mosquitto.port)
    got: list[bytes] = []

    async def main() -> None:
        transport = MqttTransport(peer_name(identity(0).public), TABLE, url, max_queue=2,
                                  max_repair=2)
        # Queued before the connection: the repair lane was filled first.
        for n in range(3):
            assert transport.send_repair("someone", b"repair %d" % n) == 1
        assert transport.send(None, b"game 1") == 1
        assert transport.send(None, b"game 2") == 1
        assert transport.send(None, b"game 3") == 0  # the game lane is full: said, counted
        assert transport.queued == (2, 2)
        assert (transport.dropped, transport.repair_dropped) == (1, 1)
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as raw:
            await raw.subscribe(f"{topic_prefix(TABLE)}/+/#", qos=1)
            task = asyncio.create_task(transport.run(lambda who, data: None))
            async with asyncio.timeout(5):
                async for message in raw.messages:
                    if not message.topic.matches(f"{topic_prefix(TABLE)}/presence/+"):
                        got.append(bytes(message.payload))
                    if len(got) == 4:
                        break
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    run(main())
    # The oldest repair message made room for a newer one; game traffic went first.
    assert got == [b"game 1", b"game 2", b"repair 1", b"repair 2"]
    assert any("dropped one (1 so far): the peers will fetch what they miss by gap fill"
               in r.getMessage() for r in caplog.records)


@pytest.mark.broker
@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_huge_publish_never_reaches_a_peer_and_strangers_are_ignored_once_members_are_set(
        mosquitto: Broker, protocol: str) -> None:
    """Over MQTT 5 the peer announces a Maximum Packet Size: the broker drops a 5 MB
    publish for it. (3.1.1 has no such field: the peer reads it and then refuses it.)"""
    url = BrokerUrl("127.0.0.1", mosquitto.port, protocol=protocol)
    got: list[tuple[str, bytes]] = []
    me, member = peer_name(identity(0).public), peer_name(identity(1).public)

    async def main() -> None:
        transport = MqttTransport(me, TABLE, url)
        task = asyncio.create_task(transport.run(lambda who, data: got.append((who, data))))
        await transport.wait_ready()
        prefix = topic_prefix(TABLE)
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as raw:
            await raw.publish(f"{prefix}/all/mallory", b"h" * (5 << 20), qos=1)
            await raw.publish(f"{prefix}/all/mallory", b"small 1", qos=1)
            await until(lambda: ("mallory", b"small 1") in got, 10, "small 1")
            transport.set_members([me, member])
            await raw.publish(f"{prefix}/all/mallory", b"small 2", qos=1)
            await raw.publish(f"{prefix}/all/{member}", b"small 3", qos=1)
            await until(lambda: (member, b"small 3") in got, 5, "small 3")
        assert [data for _, data in got] == [b"small 1", b"small 3"]
        assert transport.strangers == 1
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    run(main())
