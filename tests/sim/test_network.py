"""The simulator's mechanics, driven by small real nodes of the ``Node`` interface.

``Gossip`` sends numbered messages to every peer and retransmits until each is acked, so it
finishes under any loss that is not permanent. ``Pinger``/``Ponger`` exercise timers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from p2pkille.runtime.io import Node, Output, Send, WakeAt
from p2pkille.sim import Faults, SimError, SimNetwork, SimStats, StopReason

RETRY = 0.25


class Gossip:
    """Sends ``count`` numbered messages to each peer and resends them every RETRY until acked."""

    def __init__(self, name: str, peers: Sequence[str], count: int = 5) -> None:
        self.name = name
        self.count = count
        self.unacked = {(peer, n) for peer in peers if peer != name for n in range(count)}
        self.first_seen: dict[tuple[str, int], float] = {}
        self.copies = 0

    def start(self, now: float) -> Sequence[Output]:
        return self._resend(now)

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        kind, origin, number = data.decode().split("|")
        n = int(number)
        if kind == "A":
            self.unacked.discard((sender, n))
            return []
        self.copies += 1
        self.first_seen.setdefault((origin, n), now)
        return [Send(f"A|{origin}|{n}".encode(), to=sender)]

    def wake(self, now: float) -> Sequence[Output]:
        return self._resend(now)

    def _resend(self, now: float) -> list[Output]:
        out: list[Output] = [
            Send(f"M|{self.name}|{n}".encode(), to=peer) for peer, n in sorted(self.unacked)
        ]
        if self.unacked:
            out.append(WakeAt(now + RETRY))
        return out

    def complete(self, peers: Sequence[str]) -> bool:
        want = {(p, n) for p in peers if p != self.name for n in range(self.count)}
        return set(self.first_seen) == want and not self.unacked


class Pinger:
    """Pings ``partner`` every ``period`` seconds after it starts, ``count`` times."""

    def __init__(self, name: str, partner: str, period: float = 1.0, count: int = 10) -> None:
        self.name = name
        self.partner = partner
        self.period = period
        self.left = count
        self.wakes: list[float] = []
        self.pongs: list[tuple[float, bytes]] = []
        self.started_at: float | None = None

    def start(self, now: float) -> Sequence[Output]:
        self.started_at = now
        return [WakeAt(now + self.period)]

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.pongs.append((now, data))
        return []

    def wake(self, now: float) -> Sequence[Output]:
        self.wakes.append(now)
        self.left -= 1
        out: list[Output] = [Send(b"ping %d" % len(self.wakes), to=self.partner)]
        if self.left > 0:
            out.append(WakeAt(now + self.period))
        return out


class Ponger:
    def __init__(self, name: str) -> None:
        self.name = name
        self.pings: list[tuple[float, bytes]] = []

    def start(self, now: float) -> Sequence[Output]:
        return []

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.pings.append((now, data))
        return [Send(data.replace(b"ping", b"pong"), to=sender)]

    def wake(self, now: float) -> Sequence[Output]:
        raise AssertionError("a ponger sets no timer")


class Recorder:
    """Records what it receives; sends ``on_start`` when started."""

    def __init__(self, name: str, on_start: Sequence[Output] = ()) -> None:
        self.name = name
        self.on_start = list(on_start)
        self.got: list[tuple[float, str, bytes]] = []
        self.woken: list[float] = []

    def start(self, now: float) -> Sequence[Output]:
        return self.on_start

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.got.append((now, sender, data))
        return []

    def wake(self, now: float) -> Sequence[Output]:
        self.woken.append(now)
        return []


def _balanced(stats: SimStats) -> bool:
    return (
        stats.sent + stats.duplicated
        == stats.delivered + stats.dropped + stats.cut + stats.lost + stats.in_flight
    )


NAMES = ["P1", "P2", "P3", "P4"]
FAULTY = Faults(drop=0.2, dup=0.1, reorder=0.2, delay=0.01, jitter=0.005)


def _gossip(seed: int, faults: Faults = FAULTY) -> tuple[SimNetwork, list[Gossip]]:
    net = SimNetwork(seed, faults)
    nodes = [Gossip(name, NAMES) for name in NAMES]
    for node in nodes:
        net.add(node)
    return net, nodes


def test_the_test_nodes_are_nodes() -> None:
    nodes: list[Node] = [Gossip("a", []), Pinger("b", "a"), Ponger("c"), Recorder("d")]
    assert [n.name for n in nodes] == ["a", "b", "c", "d"]


# -- end to end and determinism ------------------------------------------------------------


def test_gossip_completes_under_faults_and_the_network_goes_idle() -> None:
    net, nodes = _gossip(seed=1)
    assert net.run() is StopReason.IDLE
    assert all(node.complete(NAMES) for node in nodes)
    stats = net.stats
    assert stats.dropped > 0
    assert stats.duplicated > 0
    assert stats.in_flight == 0
    assert net.pending == 0
    assert _balanced(stats)
    assert stats.cut == stats.lost == stats.timers_discarded == 0
    assert stats.events == stats.delivered + stats.timers_fired


def test_same_seed_gives_the_same_trace_and_stats() -> None:
    runs = []
    for _ in range(2):
        net, _nodes = _gossip(seed=42)
        net.run()
        runs.append((net.trace_digest(), net.stats, net.now))
    assert runs[0] == runs[1]


def test_different_seeds_give_different_traces_under_faults() -> None:
    digests = set()
    for seed in range(5):
        net, _nodes = _gossip(seed)
        net.run()
        digests.add(net.trace_digest())
    assert len(digests) == 5


def test_without_faults_the_seed_does_not_matter() -> None:
    # No fault draws means no randomness at all: the run is fixed by the nodes alone.
    digests = set()
    for seed in (1, 2):
        net, nodes = _gossip(seed, Faults(delay=0.01))
        net.run()
        assert all(node.complete(NAMES) for node in nodes)
        assert net.stats.sent == 2 * 4 * 3 * 5  # each message once, each ack once
        digests.add(net.trace_digest())
    assert len(digests) == 1


def test_the_trace_digest_covers_time_names_and_bytes() -> None:
    digests = []
    for payload, recipient, delay in [
        (b"x", "b", 0.0),
        (b"y", "b", 0.0),
        (b"x", "c", 0.0),
        (b"x", "b", 0.5),
    ]:
        net = SimNetwork(0, Faults(delay=delay))
        for name in "abc":
            net.add(Recorder(name))
        empty = net.trace_digest()
        net.inject("a", payload, to=recipient)
        net.run()
        digests.append(net.trace_digest())
    assert len(set(digests)) == 4
    assert empty not in digests


# -- sending ---------------------------------------------------------------------------------


def test_broadcast_reaches_every_other_node_and_not_the_sender() -> None:
    net = SimNetwork(0)
    nodes = [Recorder("a", [Send(b"hello")]), Recorder("b"), Recorder("c")]
    for node in nodes:
        net.add(node)
    net.run()
    assert [len(n.got) for n in nodes] == [0, 1, 1]
    assert nodes[1].got == [(0.0, "a", b"hello")]
    assert net.stats.sent == 2


def test_a_send_to_its_own_name_loops_back_through_the_network() -> None:
    net = SimNetwork(0, Faults(delay=0.25))
    node = Recorder("a", [Send(b"note to self", to="a")])
    net.add(node)
    net.run()
    assert node.got == [(0.25, "a", b"note to self")]


def test_the_default_faults_can_change_between_runs() -> None:
    net = SimNetwork(0, Faults(drop=1.0))
    b = Recorder("b")
    net.add(Recorder("a"))
    net.add(b)
    net.inject("a", b"lost", to="b")
    net.run()
    net.faults = Faults(delay=1.0)
    net.inject("a", b"kept", to="b")
    net.run()
    assert b.got == [(1.0, "a", b"kept")]


def test_inject_sends_as_an_outsider_through_the_faults() -> None:
    net = SimNetwork(0, Faults(delay=0.5))
    a, b = Recorder("a"), Recorder("b")
    net.add(a)
    net.add(b)
    net.inject("mallory", b"forged")
    net.run()
    assert a.got == [(0.5, "mallory", b"forged")]
    assert b.got == [(0.5, "mallory", b"forged")]


def test_tap_sees_every_delivery_as_the_recipients_do() -> None:
    seen: list[tuple[float, str, str, bytes]] = []
    net = SimNetwork(3, FAULTY, tap=lambda *d: seen.append(d))
    nodes = [Gossip(name, NAMES) for name in NAMES]
    for node in nodes:
        net.add(node)
    net.run()
    assert len(seen) == net.stats.delivered
    assert sum(node.copies for node in nodes) == sum(1 for d in seen if d[3].startswith(b"M"))
    for node in nodes:
        got = {(d[1], d[3]) for d in seen if d[2] == node.name and d[3].startswith(b"M")}
        assert got == {(o, f"M|{o}|{n}".encode()) for o, n in node.first_seen}


def test_tap_replay_without_faults_is_delivered_again() -> None:
    seen: list[tuple[float, str, str, bytes]] = []
    net = SimNetwork(0, tap=lambda *d: seen.append(d))
    a, b = Recorder("a", [Send(b"secret", to="b")]), Recorder("b")
    net.add(a)
    net.add(b)
    net.run()
    assert seen == [(0.0, "a", "b", b"secret")]
    net.inject(seen[0][1], seen[0][3], to=seen[0][2])
    net.run()
    assert [d for _, _, d in b.got] == [b"secret", b"secret"]


def test_set_link_overrides_one_link_both_ways_or_one_way() -> None:
    net = SimNetwork(0)
    nodes = {name: Recorder(name) for name in "abc"}
    for node in nodes.values():
        net.add(node)
    net.set_link("a", "b", Faults(drop=1.0))
    net.inject("a", b"1")
    net.inject("b", b"2")
    net.run()
    assert [d for _, _, d in nodes["b"].got] == []
    assert [d for _, _, d in nodes["a"].got] == []
    assert [d for _, _, d in nodes["c"].got] == [b"1", b"2"]

    net.set_link("a", "b", None)
    net.set_link("a", "b", Faults(delay=2.0), one_way=True)
    net.inject("a", b"3", to="b")
    net.inject("b", b"4", to="a")
    net.run()
    assert nodes["b"].got == [(2.0, "a", b"3")]
    assert nodes["a"].got == [(0.0, "b", b"4")]


# -- timers ----------------------------------------------------------------------------------


def test_timers_fire_in_order_at_their_virtual_times() -> None:
    net = SimNetwork(0)
    node = Recorder("t", [WakeAt(3.0), WakeAt(1.0), WakeAt(2.5), WakeAt(1.0)])
    net.add(node)
    assert net.run() is StopReason.IDLE
    # The two WakeAt(1.0) are one wake: wake means "time has passed".
    assert node.woken == [1.0, 2.5, 3.0]
    assert net.now == 3.0
    assert net.stats.timers_fired == 3


def test_a_deadline_in_the_past_fires_now_and_the_clock_never_goes_back() -> None:
    net = SimNetwork(0)
    node = Recorder("t")
    net.add(node)
    net.run(until=5.0)
    assert net.now == 5.0
    net.add(Recorder("u", [WakeAt(1.0)]))
    net.run()
    assert net.now == 5.0


def test_pinger_wakes_at_each_period_and_gets_each_pong_after_the_round_trip() -> None:
    net = SimNetwork(0, Faults(delay=0.1))
    pinger, ponger = Pinger("a", "b", period=1.0, count=3), Ponger("b")
    net.add(pinger)
    net.add(ponger)
    net.run()
    assert pinger.wakes == [1.0, 2.0, 3.0]
    assert [t for t, _ in ponger.pings] == pytest.approx([1.1, 2.1, 3.1])
    assert [t for t, _ in pinger.pongs] == pytest.approx([1.2, 2.2, 3.2])
    assert [d for _, d in pinger.pongs] == [b"pong 1", b"pong 2", b"pong 3"]


def test_same_time_events_run_in_the_order_they_were_scheduled() -> None:
    net = SimNetwork(0)
    b = Recorder("b")
    net.add(Recorder("a", [Send(b"%d" % i, to="b") for i in range(20)]))
    net.add(b)
    net.run()
    assert [d for _, _, d in b.got] == [b"%d" % i for i in range(20)]


# -- partition -------------------------------------------------------------------------------


def test_partition_blocks_cross_group_traffic_and_heal_restores_it() -> None:
    net, nodes = _gossip(seed=5, faults=Faults(delay=0.01))
    by_name = dict(zip(NAMES, nodes, strict=True))
    net.partition(["P1", "P2"], ["P3", "P4"])
    assert net.run(until=3.0) is StopReason.UNTIL
    assert {origin for origin, _ in by_name["P1"].first_seen} == {"P2"}
    assert {origin for origin, _ in by_name["P3"].first_seen} == {"P4"}
    assert net.stats.cut > 0
    assert not any(node.complete(NAMES) for node in nodes)
    net.heal()
    assert net.run() is StopReason.IDLE
    assert all(node.complete(NAMES) for node in nodes)


def test_unlisted_nodes_and_outsiders_form_one_more_group() -> None:
    net = SimNetwork(0)
    nodes = {name: Recorder(name) for name in "abc"}
    for node in nodes.values():
        net.add(node)
    net.partition(["a"])
    net.inject("b", b"from b")
    net.inject("mallory", b"from outside")
    net.run()
    assert nodes["a"].got == []
    assert [d for _, _, d in nodes["c"].got] == [b"from b", b"from outside"]


def test_messages_in_flight_are_cut_by_a_partition_and_stay_lost_after_heal() -> None:
    net = SimNetwork(0, Faults(delay=1.0))
    b = Recorder("b")
    net.add(Recorder("a"))
    net.add(b)
    net.inject("a", b"on the wire", to="b")
    net.run(until=0.5)
    net.partition(["a"], ["b"])
    net.inject("a", b"sent while cut", to="b")
    net.run(until=1.5)  # the first arrives at 1.0, into the partition
    net.heal()
    net.inject("a", b"after heal", to="b")
    assert net.run() is StopReason.IDLE
    assert b.got == [(2.5, "a", b"after heal")]
    assert net.stats.cut == 2


# -- crash and restart -----------------------------------------------------------------------


def test_crash_loses_messages_to_the_node_and_restart_resumes_with_the_new_one() -> None:
    net = SimNetwork(0, Faults(delay=0.1))
    pinger, old = Pinger("a", "b", count=10), Ponger("b")
    net.add(pinger)
    net.add(old)
    net.run(until=3.5)
    net.crash("b")
    assert not net.is_up("b")
    net.run(until=6.5)
    new = Ponger("b")
    net.restart("b", new)
    assert net.is_up("b")
    assert net.nodes["b"] is new
    net.run()
    assert [d for _, d in old.pings] == [b"ping 1", b"ping 2", b"ping 3"]
    assert [d for _, d in new.pings] == [b"ping %d" % i for i in range(7, 11)]
    assert net.stats.lost == 3  # pings 4, 5 and 6
    assert [d for _, d in pinger.pongs] == [b"pong %d" % i for i in (1, 2, 3, 7, 8, 9, 10)]


def test_crash_discards_pending_timers_and_restart_starts_the_new_node_now() -> None:
    net = SimNetwork(0)
    old = Pinger("a", "b", count=10)
    net.add(old)
    net.add(Ponger("b"))
    net.run(until=3.5)
    net.crash("a")
    net.run(until=6.5)
    assert net.stats.timers_discarded == 1  # the wake due at 4.0
    new = Pinger("a", "b", count=2)
    net.restart("a", new)
    net.run()
    assert old.wakes == [1.0, 2.0, 3.0]
    assert new.started_at == 6.5
    assert new.wakes == [7.5, 8.5]
    assert net.stats.timers_fired == 5


def test_a_message_in_flight_is_lost_if_its_recipient_is_down_when_it_arrives() -> None:
    net = SimNetwork(0, Faults(delay=1.0))
    a, b = Recorder("a"), Recorder("b")
    net.add(a)
    net.add(b)
    net.inject("a", b"to b", to="b")
    net.inject("b", b"to a", to="a")
    net.run(until=0.5)
    net.crash("b")  # its own message is already on the wire and still arrives
    net.run()
    assert b.got == []
    assert a.got == [(1.0, "b", b"to a")]
    assert net.stats.lost == 1


def test_a_restarted_node_gets_messages_sent_after_it_is_back() -> None:
    net = SimNetwork(0)
    net.add(Recorder("a"))
    net.add(Recorder("b"))
    net.crash("b")
    net.inject("a", b"while down", to="b")
    fresh = Recorder("b")
    net.restart("b", fresh)
    net.inject("a", b"after restart", to="b")
    net.run()
    assert [d for _, _, d in fresh.got] == [b"after restart"]


# -- run() and its stop conditions -----------------------------------------------------------


def test_run_until_stops_the_clock_at_until_with_events_left() -> None:
    net = SimNetwork(0)
    pinger = Pinger("a", "b", count=10)
    net.add(pinger)
    net.add(Ponger("b"))
    assert net.run(until=4.5) is StopReason.UNTIL
    assert net.now == 4.5
    assert pinger.wakes == [1.0, 2.0, 3.0, 4.0]
    assert net.pending == 1
    assert net.run(until=100.0) is StopReason.IDLE
    assert net.now == 100.0
    assert len(pinger.wakes) == 10


def test_run_until_processes_events_at_exactly_until() -> None:
    net = SimNetwork(0)
    node = Recorder("a", [WakeAt(2.0)])
    net.add(node)
    net.run(until=2.0)
    assert node.woken == [2.0]


def test_run_max_events_counts_events_of_this_call() -> None:
    net = SimNetwork(0)
    pinger = Pinger("a", "b", count=10)
    net.add(pinger)
    net.add(Ponger("b"))
    assert net.run(max_events=4) is StopReason.MAX_EVENTS
    assert net.stats.events == 4
    assert net.run(max_events=0) is StopReason.MAX_EVENTS
    assert net.stats.events == 4
    assert net.run(max_events=4) is StopReason.MAX_EVENTS
    assert net.stats.events == 8
    assert net.run() is StopReason.IDLE
    assert net.stats.events == 30  # 10 wakes, 10 pings, 10 pongs


def test_run_stop_predicate_is_asked_before_each_event() -> None:
    net = SimNetwork(0)
    pinger = Pinger("a", "b", count=10)
    net.add(pinger)
    net.add(Ponger("b"))
    reason = net.run(stop=lambda n: len(pinger.pongs) >= 2)
    assert reason is StopReason.STOPPED
    assert len(pinger.pongs) == 2
    assert net.now == 2.0
    assert net.run(stop=lambda n: True) is StopReason.STOPPED
    assert len(pinger.pongs) == 2


def test_a_node_looping_on_timers_is_bounded_by_max_events() -> None:
    class Busy(Recorder):
        def wake(self, now: float) -> Sequence[Output]:
            super().wake(now)
            return [WakeAt(now)]

    net = SimNetwork(0)
    busy = Busy("busy", [WakeAt(0.0)])
    net.add(busy)
    assert net.run(max_events=100) is StopReason.MAX_EVENTS
    assert len(busy.woken) == 100
    assert net.now == 0.0


def test_add_after_start_starts_the_node_at_once() -> None:
    net = SimNetwork(0)
    net.add(Recorder("a"))
    net.run(until=2.0)
    late = Pinger("late", "a", count=1)
    net.add(late)
    assert late.started_at == 2.0
    net.run()
    assert late.wakes == [3.0]


# -- errors ----------------------------------------------------------------------------------


class Faulty(Recorder):
    def __init__(self, name: str, where: str, on_start: Sequence[Output] = ()) -> None:
        super().__init__(name, on_start)
        self.where = where

    def start(self, now: float) -> Sequence[Output]:
        if self.where == "start":
            raise ValueError("bug in start")
        return super().start(now)

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        if self.where == "receive":
            raise KeyError("bug in receive")
        return super().receive(sender, data, now)

    def wake(self, now: float) -> Sequence[Output]:
        if self.where == "wake":
            raise ZeroDivisionError("bug in wake")
        return super().wake(now)


@pytest.mark.parametrize(
    ("where", "error", "note"),
    [
        ("start", ValueError, "node 'bad' in start at t=0.0"),
        ("receive", KeyError, "node 'bad' receiving from 'x' at t=0.0"),
        ("wake", ZeroDivisionError, "node 'bad' in wake at t=1.5"),
    ],
)
def test_a_node_exception_propagates_with_the_node_named(
    where: str, error: type[Exception], note: str
) -> None:
    net = SimNetwork(0)
    net.add(Faulty("bad", where, [WakeAt(1.5)]))
    net.add(Recorder("x"))
    net.inject("x", b"hi", to="bad")
    with pytest.raises(error) as info:
        net.run()
    assert any(note in n for n in info.value.__notes__)


class Returns(Recorder):
    def __init__(self, name: str, result: object) -> None:
        super().__init__(name)
        self.result = result

    def start(self, now: float) -> Sequence[Output]:
        return self.result  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (None, "returned None from start; expected a sequence"),
        (b"xy", "returned b'xy' from start; expected a sequence"),
        ([b"x"], "returned b'x' from start; expected Send or WakeAt"),
        ([Send(b"x", to="nobody")], "no node named 'nobody'"),
        ([Send("text", to="b")], "data must be bytes, got str"),  # type: ignore[arg-type]
        ([WakeAt(float("nan"))], "returned WakeAt(nan) from start; need a finite time"),
        ([WakeAt("soon")], "WakeAt('soon')"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_output_is_an_error_naming_the_node(result: object, message: str) -> None:
    net = SimNetwork(0)
    net.add(Recorder("b"))
    net.add(Returns("a", result))
    with pytest.raises(SimError) as info:
        net.start()
    assert message in str(info.value)


def test_misuse_is_reported_with_the_name_and_the_state() -> None:
    net = SimNetwork(0)
    net.add(Recorder("a"))
    net.add(Recorder("b"))
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: net.add(Recorder("a")), "add 'a': a node of that name is already"),
        (lambda: net.add(Recorder("")), "its name must be a non-empty str"),
        (lambda: net.crash("zed"), "crash: no node named 'zed'"),
        (lambda: net.restart("a", Recorder("a")), "restart 'a' at t=0.0: it is up"),
        (net.partition, "at least one group"),
        (lambda: net.partition("ab"), "group 'ab' is a str"),
        (lambda: net.partition(["a"], ["a", "b"]), "'a' is in two groups"),
        (lambda: net.partition(["zed"]), "partition: no node named 'zed'"),
        (lambda: net.set_link("a", "zed", Faults()), "set_link: no node named 'zed'"),
        (lambda: net.inject("a", b"x", to="zed"), "inject: no node named 'zed'"),
        (lambda: net.run(until=-1.0), "until=-1.0 is not a time"),
        (lambda: net.run(until=float("inf")), "until=inf is not a time"),
        (lambda: net.run(max_events=-1), "max_events=-1 is negative"),
        (lambda: net.is_up("zed"), "is_up: no node named 'zed'"),
    ]
    for call, message in cases:
        with pytest.raises(SimError) as info:
            call()
        assert message in str(info.value), (message, str(info.value))
    net.crash("a")
    with pytest.raises(SimError, match="it is already down"):
        net.crash("a")
    with pytest.raises(SimError, match="the new node is named 'b'"):
        net.restart("a", Recorder("b"))
    net.start()
    with pytest.raises(SimError, match="already started"):
        net.start()
    with pytest.raises(SimError, match="must be an int"):
        SimNetwork("7")  # type: ignore[arg-type]


def test_run_cannot_be_called_from_inside_run() -> None:
    net = SimNetwork(0)

    def reenter(*_: object) -> None:
        net.run()

    net.tap = reenter
    net.add(Recorder("a"))
    net.add(Recorder("b"))
    net.inject("a", b"x", to="b")
    with pytest.raises(SimError, match="from inside run"):
        net.run()
