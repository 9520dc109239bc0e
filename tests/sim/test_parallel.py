"""The simulator's parallel mode: the nodes of one instant run side by side on an executor,
and the run is the sequential one, delivery for delivery."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from p2pkille.runtime.io import Output, Send
from p2pkille.sim import Faults, SimNetwork, StopReason
from p2pkille.sim.table import build_table
from protocol.group import Point, Scalar, counters
from tests.sim.test_network import NAMES, Gossip, Recorder

ZERO_DELAY = Faults(drop=0.2, dup=0.1, reorder=0.2)  # many deliveries share an instant
FAULTS = [Faults(), ZERO_DELAY, Faults(drop=0.2, dup=0.1, reorder=0.2, delay=0.01, jitter=0.005)]


@pytest.fixture(scope="module")
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(3, thread_name_prefix="test-peer") as executor:
        yield executor


class Threaded(Gossip):
    """Gossip that notes the thread each call runs on and does some group work."""

    def __init__(self, name: str, peers: Sequence[str]) -> None:
        super().__init__(name, peers)
        self.threads: set[int] = set()

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        self.threads.add(threading.get_ident())
        Point.base_mult(Scalar.from_int(len(data) + 1))  # counted in the thread that runs the node
        return super().receive(sender, data, now)


def _run(seed: int, faults: Faults, parallel: ThreadPoolExecutor | None) -> tuple[
        SimNetwork, list[Threaded], int]:
    net = SimNetwork(seed, faults, parallel=parallel)
    nodes = [Threaded(name, NAMES) for name in NAMES]
    for node in nodes:
        net.add(node)
    counters.reset()
    assert net.run() is StopReason.IDLE
    return net, nodes, counters.base_mults


@pytest.mark.parametrize("faults", FAULTS, ids=["none", "zero-delay", "delayed"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_parallel_run_is_the_sequential_run(
    pool: ThreadPoolExecutor, seed: int, faults: Faults
) -> None:
    seq_net, seq_nodes, seq_mults = _run(seed, faults, None)
    par_net, par_nodes, par_mults = _run(seed, faults, pool)
    assert par_net.trace_digest() == seq_net.trace_digest()
    assert par_net.stats == seq_net.stats
    assert par_net.now == seq_net.now
    assert [n.first_seen for n in par_nodes] == [n.first_seen for n in seq_nodes]
    assert par_mults == seq_mults > 0  # the pool threads' counts reach the caller's counter
    assert all(node.complete(NAMES) for node in par_nodes)


def test_nodes_of_one_instant_run_on_several_threads(pool: ThreadPoolExecutor) -> None:
    _net, nodes, _ = _run(1, Faults(), pool)
    threads = set().union(*(n.threads for n in nodes))
    assert threading.get_ident() in threads
    assert len(threads) >= 2
    _net, nodes, _ = _run(1, Faults(), None)
    assert set().union(*(n.threads for n in nodes)) == {threading.get_ident()}


def test_max_events_bounds_a_batch(pool: ThreadPoolExecutor) -> None:
    net = SimNetwork(0, parallel=pool)
    for name in NAMES:
        net.add(Recorder(name))
    for name in NAMES:
        net.inject("x", b"hi", to=name)
    assert net.run(max_events=3) is StopReason.MAX_EVENTS
    assert net.stats.delivered == 3
    assert net.run() is StopReason.IDLE
    assert net.stats.delivered == 4


def test_a_node_gets_its_events_of_one_instant_in_order(pool: ThreadPoolExecutor) -> None:
    net = SimNetwork(0, parallel=pool)
    a = Recorder("a")
    net.add(a)
    net.add(Recorder("b"))
    for k in range(5):
        net.inject("x", b"%d" % k, to="a")
        net.inject("x", b"%d" % k, to="b")
    net.run()
    assert [data for _, _, data in a.got] == [b"0", b"1", b"2", b"3", b"4"]


class Raising(Recorder):
    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        super().receive(sender, data, now)
        raise ValueError(f"bug in {self.name}")


class Slow(Recorder):
    """Takes a while, notes whether another call into it was still running, and replies."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.inside = False
        self.overlapped = False
        self.done = 0

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        if self.inside:
            self.overlapped = True
        self.inside = True
        time.sleep(0.005)  # long enough for a second call to start, if the batch allowed one
        super().receive(sender, data, now)
        self.done += 1
        self.inside = False
        return [Send(b"reply", to="sink")]


def test_the_first_error_of_a_batch_in_event_order_is_raised(pool: ThreadPoolExecutor) -> None:
    net = SimNetwork(0, parallel=pool)
    nodes = [Raising("bad0"), Slow("ok1"), Raising("bad2"), Slow("ok3")]
    sink = Recorder("sink")
    for node in [*nodes, sink]:
        net.add(node)
    for node in nodes:
        net.inject("x", b"hi", to=node.name)
    with pytest.raises(ValueError, match="bug in bad0") as info:
        net.run()
    assert any("node 'bad0' receiving from 'x' at t=0.0" in n for n in info.value.__notes__)
    # The error waited for the whole batch, and the replies of the nodes that ran are sent.
    assert [node.done for node in nodes if isinstance(node, Slow)] == [1, 1]
    assert net.pending == 2
    net.parallel = None
    net.run()
    assert [data for _, _, data in sink.got] == [b"reply", b"reply"]


def test_a_node_never_runs_two_calls_at_once(pool: ThreadPoolExecutor) -> None:
    net = SimNetwork(0, parallel=pool)
    nodes = [Slow(name) for name in ("a", "b")]
    for node in [*nodes, Recorder("sink")]:
        net.add(node)
    for k in range(4):
        for node in nodes:
            net.inject("x", b"%d" % k, to=node.name)
    net.run()
    assert [node.done for node in nodes] == [4, 4]
    assert not any(node.overlapped for node in nodes)


def test_a_tap_sees_each_delivery_just_before_its_recipient(pool: ThreadPoolExecutor) -> None:
    seen: list[tuple[str, int]] = []
    nodes = [Recorder(name) for name in NAMES]

    def tap(now: float, sender: str, recipient: str, data: bytes) -> None:
        seen.append((recipient, sum(len(n.got) for n in nodes)))

    net = SimNetwork(0, parallel=pool, tap=tap)
    for node in nodes:
        net.add(node)
    for node in nodes:
        net.inject("x", b"hi", to=node.name)
    net.run()
    assert seen == [("P1", 0), ("P2", 1), ("P3", 2), ("P4", 3)]


class Echo(Recorder):
    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        super().receive(sender, data, now)
        return [Send(data + b"!", to=sender)] if len(data) < 6 else []


def test_outputs_are_applied_in_the_batchs_order(pool: ThreadPoolExecutor) -> None:
    runs = []
    for parallel in (None, pool):
        net = SimNetwork(0, parallel=parallel)
        nodes = [Echo(name) for name in NAMES]
        for node in nodes:
            net.add(node)
        for node in nodes:
            net.inject("P1", node.name.encode(), to=node.name)
        net.run()
        runs.append((net.trace_digest(), [node.got for node in nodes]))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_table_plays_the_same_hands_with_its_peers_side_by_side(
    pool: ThreadPoolExecutor, mode: str
) -> None:
    docs = []
    for parallel in (None, pool):
        table = build_table(4, seed=5, mode=mode, chips=3,
                            faults=Faults(drop=0.05, dup=0.05, reorder=0.1),
                            parallel=parallel)
        run = table.run(max_hands=2)
        assert run.honest_agree
        docs.append([[o.to_json() for o in node.outcomes[:2]] for node in run.nodes])
    assert docs[0] == docs[1]
