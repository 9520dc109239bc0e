"""The guard between a transport and a node: signed syncs, members only, the repair budget,
the inbox's bounds; and the driver carrying answers to syncs in the repair lane."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.net.driver import Driver
from p2pkille.net.guard import (
    PREFIX,
    REPLAY_WINDOW,
    Guard,
    Inbox,
    SignedSyncError,
    open_signed_sync,
    signed_sync,
)
from p2pkille.net.mesh import peer_name
from p2pkille.runtime import gapfill
from p2pkille.runtime.io import Output, Send
from protocol.errors import InvalidSignature, RemoteProtocolError
from tests.net.nodes import identity

TABLE = b"T" * 16
SYNC = gapfill.encode_sync((3, 1, 4))
MEMBERS = [identity(i).public for i in range(3)]
NAMES = [peer_name(k) for k in MEMBERS]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.ns = 10**18

    def stamp(self) -> int:
        self.ns += 1_000_000
        return self.ns


def guard(signed: bool = True, clock: Clock | None = None, **options: float) -> Guard:
    clock = clock or Clock()
    return Guard(identity(0), TABLE, MEMBERS, signed=signed, clock=lambda: clock.now,
                 stamp=clock.stamp, **options)


def test_a_signed_sync_names_its_table_and_member_and_nothing_else_verifies() -> None:
    wire = signed_sync(identity(1), TABLE, 7, SYNC)
    assert wire.startswith(PREFIX)
    assert open_signed_sync(wire, TABLE, MEMBERS[1]) == (7, SYNC)
    for table, key in ((b"U" * 16, MEMBERS[1]), (TABLE, MEMBERS[2])):
        with pytest.raises(InvalidSignature, match="transport-sync"):
            open_signed_sync(wire, table, key)
    tampered = wire[:-2] + b"9]"
    with pytest.raises(InvalidSignature):
        open_signed_sync(tampered, TABLE, MEMBERS[1])
    with pytest.raises(SignedSyncError, match="of 20 bytes"):
        open_signed_sync(wire[:20], TABLE, MEMBERS[1])
    with pytest.raises(SignedSyncError, match="carries no sync"):
        open_signed_sync(signed_sync(identity(1), TABLE, 7, b"{not a sync}"), TABLE,
                         MEMBERS[1])


@given(st.binary(max_size=200))
def test_opening_a_signed_sync_only_ever_raises_the_remote_kind(data: bytes) -> None:
    with pytest.raises(RemoteProtocolError):
        open_signed_sync(PREFIX + data, TABLE, MEMBERS[1])


def test_over_mqtt_only_a_members_own_signed_sync_is_taken() -> None:
    g = guard(signed=True)
    theirs = Guard(identity(1), TABLE, MEMBERS, signed=True)
    wire = theirs.wrap(SYNC)
    assert g.take(NAMES[1], wire) == SYNC
    # The same bytes again, under another member's name, unsigned, or from a stranger.
    assert g.take(NAMES[1], wire) is None
    assert g.take(NAMES[2], theirs.wrap(SYNC)) is None
    assert g.take(NAMES[1], SYNC) is None
    assert g.take("mallory", SYNC) is None
    assert g.take(peer_name(identity(7).public),
                  Guard(identity(7), TABLE, [identity(7).public], signed=True).wrap(SYNC)) \
        is None
    assert g.stats.refused == {"replay": 1, "bad-signature": 1, "unsigned": 1,
                               "non-member": 2}
    assert g.stats.syncs_taken == 1
    # Envelopes and lobby messages pass untouched: they carry their own signatures.
    assert g.take("mallory", b"{envelope}") == b"{envelope}"
    # Our own syncs go out signed; anything else as it is.
    assert g.wrap(b"{envelope}") == b"{envelope}"
    assert open_signed_sync(g.wrap(SYNC), TABLE, MEMBERS[0])[1] == SYNC


def test_a_replay_older_than_the_window_is_refused_and_reordering_within_it_is_not() -> None:
    g = guard()
    newest = 10**19
    old, recent = newest - REPLAY_WINDOW - 1, newest - REPLAY_WINDOW // 2
    assert g.take(NAMES[1], signed_sync(identity(1), TABLE, newest, SYNC)) == SYNC
    assert g.take(NAMES[1], signed_sync(identity(1), TABLE, recent, SYNC)) == SYNC
    assert g.take(NAMES[1], signed_sync(identity(1), TABLE, old, SYNC)) is None
    assert g.stats.refused == {"replay": 1}


def test_over_the_mesh_a_members_bare_sync_is_taken_and_a_strangers_is_not() -> None:
    g = guard(signed=False)
    assert g.take(NAMES[2], SYNC) == SYNC
    assert g.take("stranger", SYNC) is None
    assert g.wrap(SYNC) == SYNC


def test_more_syncs_a_second_than_a_member_sends_are_not_even_checked() -> None:
    clock = Clock()
    g = guard(signed=False, clock=clock, sync_rate=4.0)
    taken = [g.take(NAMES[1], SYNC) for _ in range(20)]
    assert taken.count(SYNC) == 8  # the burst: twice the rate
    assert g.stats.refused == {"rate": 12}
    clock.now += 1.0
    assert g.take(NAMES[1], SYNC) == SYNC
    # Unsigned syncs under a member's name (over MQTT) are refused before they count
    # against its rate: the member's own signed syncs still get through.
    signed = guard(signed=True, clock=clock, sync_rate=4.0)
    for _ in range(100):
        assert signed.take(NAMES[1], SYNC) is None
    theirs = Guard(identity(1), TABLE, MEMBERS, signed=True)
    assert signed.take(NAMES[1], theirs.wrap(SYNC)) == SYNC


def test_repair_traffic_is_held_to_each_members_budget() -> None:
    clock = Clock()
    g = guard(clock=clock, budget=1000.0, burst=3000.0)
    assert [g.charge(NAMES[1], 1000) for _ in range(4)] == [True, True, True, False]
    assert g.charge(NAMES[2], 1000)  # a budget per member
    clock.now += 1.0
    assert g.charge(NAMES[1], 1000)
    assert not g.charge(NAMES[1], 1000)
    assert g.stats.repair_sent == 5000
    assert g.stats.repair_dropped == 2
    with pytest.raises(ValueError, match="budget"):
        guard(budget=10.0, burst=5.0)


def test_the_inbox_is_bounded_per_sender_and_in_all_and_keeps_arrival_order() -> None:
    inbox = Inbox(per_sender=100, senders=2, total=150)
    assert inbox.put("a", b"x" * 60)
    assert not inbox.put("a", b"x" * 60)  # a over its own bound
    assert inbox.put("b", b"y" * 60)
    assert not inbox.put("c", b"z")  # a third sender
    assert not inbox.put("b", b"y" * 40)  # over the total
    assert inbox.put("b", b"y" * 40, force=True)
    assert inbox.dropped == 3
    assert [inbox.pop()[0] for _ in range(len(inbox))] == ["a", "b", "b"]
    assert inbox.held == 0
    assert inbox.put("c", b"z")


class Recorder:
    """A transport with a repair lane that records what goes where."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.game: list[tuple[str | None, bytes]] = []
        self.repair: list[tuple[str | None, bytes]] = []
        self.deliver: Callable[[str, bytes], None] | None = None
        self.ready = asyncio.Event()

    @property
    def name(self) -> str:
        return self._name

    def send(self, to: str | None, data: bytes) -> int:
        self.game.append((to, data))
        return 1

    def send_repair(self, to: str | None, data: bytes) -> int:
        self.repair.append((to, data))
        return 1

    async def run(self, deliver: Callable[[str, bytes], None]) -> None:
        self.deliver = deliver
        self.ready.set()
        await asyncio.Future()

    async def wait_ready(self) -> None:
        await self.ready.wait()


class Answers:
    """Answers a sync with three 400-byte replies to its sender, anything else with a
    broadcast."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.got: list[tuple[str, bytes]] = []

    def start(self, now: float) -> Sequence[Output]:
        return [Send(SYNC)]

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.got.append((sender, data))
        if data.startswith(gapfill.PREFIX):
            return [Send(b"{" + b"r" * 398 + b"}", to=sender) for _ in range(3)]
        return [Send(b"{game}")]

    def wake(self, now: float) -> Sequence[Output]:
        return []


def test_the_driver_guards_input_and_sends_answers_to_syncs_in_the_repair_lane() -> None:
    async def main() -> None:
        transport = Recorder(NAMES[0])
        node = Answers(NAMES[0])
        g = Guard(identity(0), TABLE, MEMBERS, signed=True, budget=800.0, burst=1000.0)
        driver = Driver(node, transport, guard=g)
        async with asyncio.timeout(5), asyncio.TaskGroup() as tg:
            tg.create_task(driver.run())
            await transport.wait_ready()
            deliver = transport.deliver
            assert deliver is not None
            deliver("mallory", SYNC)
            deliver(NAMES[1], SYNC)  # unsigned, over a transport that signs syncs
            deliver(NAMES[1], Guard(identity(1), TABLE, MEMBERS, signed=True).wrap(SYNC))
            deliver(NAMES[2], b"{an envelope}")
            while len(node.got) < 2:
                await asyncio.sleep(0.01)
            driver.stop()
        # The node saw the member's sync (unwrapped) and the envelope, nothing else.
        assert node.got == [(NAMES[1], SYNC), (NAMES[2], b"{an envelope}")]
        # Our own sync went out signed, in the game lane; so did the broadcast.
        assert transport.game[0][1].startswith(PREFIX)
        assert transport.game[1] == (None, b"{game}")
        # Two of the three 400-byte answers fit the member's 1000-byte burst.
        assert [to for to, _ in transport.repair] == [NAMES[1], NAMES[1]]
        assert g.stats.repair_dropped == 1
        assert sum(g.stats.refused.values()) == 2

    asyncio.run(main())
