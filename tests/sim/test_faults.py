"""Fault settings: their text form, and what each fault does to real traffic.

``Probe`` nodes send numbered messages at set times and record what arrives; the payload
carries the send time, so every check is made against what the nodes themselves saw.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.runtime.io import Output, Send, WakeAt
from p2pkille.sim import Faults, SimNetwork, StopReason

# -- the text form ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "faults", "shown"),
    [
        (
            "drop=0.1,dup=0.05,reorder=0.1,delay=50ms",
            Faults(drop=0.1, dup=0.05, reorder=0.1, delay=0.05),
            "drop=0.1,dup=0.05,reorder=0.1,delay=50ms",
        ),
        (" delay = 2s , drop = 10% ", Faults(drop=0.1, delay=2.0), "drop=0.1,delay=2s"),
        ("jitter=250us", Faults(jitter=0.00025), "jitter=250us"),
        ("delay=1.5ms,jitter=0", Faults(delay=0.0015), "delay=1.5ms"),
        ("drop=1,dup=0", Faults(drop=1.0), "drop=1"),
        ("none", Faults(), "none"),
        ("", Faults(), "none"),
    ],
)
def test_parse_and_str(text: str, faults: Faults, shown: str) -> None:
    assert Faults.parse(text) == faults
    assert str(faults) == shown
    assert Faults.parse(shown) == faults


def test_repr_is_evaluable() -> None:
    faults = Faults(drop=0.25, dup=0.5, reorder=0.125, delay=0.05, jitter=0.001)
    assert eval(repr(faults)) == faults


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("drop", "fault item 'drop' in 'drop': expected key=value"),
        ("drop=", "fault item 'drop=' in 'drop=': expected key=value"),
        ("drop=0.1,,dup=0.1", "fault item '' in 'drop=0.1,,dup=0.1': expected key=value"),
        ("loss=0.1", "fault item 'loss=0.1' in 'loss=0.1': unknown key (known: drop, dup"),
        ("drop=0.1,drop=0.2", "fault item 'drop=0.2' in 'drop=0.1,drop=0.2': drop is given twice"),
        ("drop=1.5", "fault item 'drop=1.5': a probability must be in 0..1"),
        ("dup=-0.1", "fault item 'dup=-0.1': a probability must be in 0..1"),
        ("reorder=150%", "fault item 'reorder=150%': a probability must be in 0..1"),
        ("drop=lots", "fault item 'drop=lots': 'lots' is not a number"),
        ("drop=nan", "fault item 'drop=nan': 'nan' is not a finite number"),
        ("delay=50", "fault item 'delay=50': a duration needs a unit (s, ms or us)"),
        (
            "delay=50min",
            "fault item 'delay=50min': '50min' is not a duration (a number and s, ms or us)",
        ),
        ("delay=-5ms", "fault item 'delay=-5ms': a duration must not be negative"),
        ("jitter=infs", "fault item 'jitter=infs': 'inf' is not a finite number"),
    ],
)
def test_parse_errors_name_the_bad_item(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="fault item") as info:
        Faults.parse(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"drop": 1.5}, "fault drop=1.5: a probability must be in 0..1"),
        ({"dup": math.nan}, "fault dup=nan: a probability must be in 0..1"),
        ({"reorder": True}, "fault reorder=True: a probability must be in 0..1"),
        ({"delay": -0.1}, "fault delay=-0.1: a duration must be a finite number of seconds"),
        ({"jitter": math.inf}, "fault jitter=inf: a duration must be a finite number"),
    ],
)
def test_construction_checks_values(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match="fault") as info:
        Faults(**kwargs)
    assert message in str(info.value)


probabilities = st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0))
durations = st.one_of(
    st.just(0.0), st.floats(0.0, 1e6), st.integers(0, 10**6).map(lambda n: n / 1e6)
)
fault_settings = st.builds(
    Faults,
    drop=probabilities,
    dup=probabilities,
    reorder=probabilities,
    delay=durations,
    jitter=durations,
)


@given(fault_settings)
def test_str_round_trips(faults: Faults) -> None:
    assert Faults.parse(str(faults)) == faults


@given(st.text(alphabet="drop=dup,jitter.0159%msu -e", max_size=30) | st.text(max_size=30))
def test_parse_raises_only_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        Faults.parse(text)


# -- what the faults do ----------------------------------------------------------------------


class Probe:
    """Sends one numbered message at each of ``send_times`` to ``to`` (all others if None)."""

    def __init__(self, name: str, send_times: Sequence[float] = (), to: str | None = None) -> None:
        self.name = name
        self.times = sorted(send_times)
        self.to = to
        self.sent = 0
        self.got: list[tuple[float, str, int, float]] = []  # (arrived, origin, number, sent_at)

    def start(self, now: float) -> Sequence[Output]:
        return [WakeAt(self.times[0])] if self.times else []

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        origin, number, sent_at = data.decode().split("|")
        assert origin == sender
        self.got.append((now, origin, int(number), float(sent_at)))
        return []

    def wake(self, now: float) -> Sequence[Output]:
        out: list[Output] = []
        while self.sent < len(self.times) and self.times[self.sent] <= now:
            out.append(Send(f"{self.name}|{self.sent}|{now!r}".encode(), to=self.to))
            self.sent += 1
        if self.sent < len(self.times):
            out.append(WakeAt(self.times[self.sent]))
        return out


def _one_way(
    faults: Faults, send_times: Sequence[float], seed: int = 0
) -> tuple[SimNetwork, Probe]:
    net = SimNetwork(seed, faults)
    sink = Probe("sink")
    net.add(Probe("src", send_times, to="sink"))
    net.add(sink)
    assert net.run() is StopReason.IDLE
    return net, sink


def _inversions(numbers: Sequence[int]) -> int:
    return sum(1 for i, a in enumerate(numbers) for b in numbers[i + 1 :] if a > b)


def test_drop_rate_is_near_the_setting() -> None:
    count = 5000
    net, sink = _one_way(Faults(drop=0.2), [0.0] * count, seed=11)
    lost = count - len(sink.got)
    assert lost == net.stats.dropped
    # Fixed seed, so this is deterministic; 0.02 is about 3.5 standard deviations.
    assert abs(lost / count - 0.2) < 0.02
    assert len({n for _, _, n, _ in sink.got}) == len(sink.got)


def test_drop_one_loses_everything_and_drop_zero_nothing() -> None:
    _, sink = _one_way(Faults(drop=1.0), [0.0] * 100)
    assert sink.got == []
    _, sink = _one_way(Faults(drop=0.0, delay=0.01), [0.0] * 100)
    assert len(sink.got) == 100


def test_duplicates_arrive_twice_never_more_and_the_copy_comes_later() -> None:
    count = 1000
    net, sink = _one_way(Faults(dup=0.3, delay=0.01), [i * 0.001 for i in range(count)], seed=3)
    copies = Counter(n for _, _, n, _ in sink.got)
    assert set(copies) == set(range(count))
    assert set(copies.values()) == {1, 2}
    doubled = sum(1 for c in copies.values() if c == 2)
    assert doubled == net.stats.duplicated
    assert abs(doubled / count - 0.3) < 0.05
    arrivals: dict[int, list[float]] = {}
    for arrived, _, n, _ in sink.got:
        arrivals.setdefault(n, []).append(arrived)
    for times in arrivals.values():
        if len(times) == 2:
            assert times[0] <= times[1] <= times[0] + 0.01


def test_reorder_lets_later_messages_overtake() -> None:
    times = [i * 0.002 for i in range(200)]
    _, steady = _one_way(Faults(delay=0.01), times)
    assert [n for _, _, n, _ in steady.got] == list(range(200))
    net, sink = _one_way(Faults(reorder=0.2, delay=0.01), times, seed=4)
    order = [n for _, _, n, _ in sink.got]
    assert sorted(order) == list(range(200))
    assert _inversions(order) > 20
    held = [(arrived - sent) for arrived, _, _, sent in sink.got if arrived - sent > 0.01 + 1e-9]
    assert held
    # Held back one to two windows (a window is delay + jitter = 10 ms) on top of the delay.
    assert all(0.02 - 1e-9 <= h <= 0.03 + 1e-9 for h in held)
    assert net.stats.delivered == 200


def test_reorder_without_delay_still_reorders() -> None:
    _, sink = _one_way(Faults(reorder=0.5), [0.0] * 50, seed=2)
    order = [n for _, _, n, _ in sink.got]
    assert sorted(order) == list(range(50))
    assert order != sorted(order)


def test_delay_and_jitter_bound_every_arrival() -> None:
    _, sink = _one_way(Faults(delay=0.05, jitter=0.02), [i * 0.01 for i in range(300)], seed=9)
    latencies = [arrived - sent for arrived, _, _, sent in sink.got]
    assert len(latencies) == 300
    assert min(latencies) >= 0.05
    assert max(latencies) <= 0.07 + 1e-9
    assert max(latencies) - min(latencies) > 0.015  # jitter really varies
    _, fixed = _one_way(Faults(delay=0.05), [0.0, 0.5])
    assert [arrived for arrived, _, _, _ in fixed.got] == [0.05, 0.55]


# -- invariants under any faults -------------------------------------------------------------

names = ["a", "b", "c"]
schedules = st.lists(st.floats(0.0, 1.0), max_size=15)
actions = st.lists(
    st.tuples(
        st.floats(0.0, 1.5),
        st.sampled_from(["crash", "restart", "partition", "heal"]),
        st.sampled_from(names),
    ),
    max_size=6,
)


@given(
    seed=st.integers(0, 2**32),
    faults=fault_settings.filter(lambda f: f.delay + f.jitter < 10.0),
    plans=st.tuples(schedules, schedules, schedules),
    targets=st.tuples(*[st.sampled_from([None, *names]) for _ in names]),
    script=actions,
)
def test_every_message_arrives_zero_to_two_times_never_early(
    seed: int,
    faults: Faults,
    plans: tuple[list[float], list[float], list[float]],
    targets: tuple[str | None, str | None, str | None],
    script: list[tuple[float, str, str]],
) -> None:
    net = SimNetwork(seed, faults)
    probes = {
        name: [Probe(name, plan, to)] for name, plan, to in zip(names, plans, targets, strict=True)
    }
    for versions in probes.values():
        net.add(versions[0])
    for at, action, name in sorted(script):
        net.run(until=max(at, net.now))
        if action == "crash" and net.is_up(name):
            net.crash(name)
        elif action == "restart" and not net.is_up(name):
            probes[name].append(Probe(name))  # a restarted probe only listens
            net.restart(name, probes[name][-1])
        elif action == "partition":
            net.partition([name])
        elif action == "heal":
            net.heal()
    assert net.run() is StopReason.IDLE

    stats = net.stats
    assert stats.in_flight == 0
    assert stats.sent + stats.duplicated == stats.delivered + stats.dropped + stats.cut + stats.lost
    received: Counter[tuple[str, int, str]] = Counter()
    for versions in probes.values():
        for probe in versions:
            for arrived, origin, number, sent_at in probe.got:
                assert arrived >= sent_at + faults.delay
                assert sent_at == probes[origin][0].times[number]
                received[(origin, number, probe.name)] += 1
    assert all(1 <= c <= 2 for c in received.values())
    assert sum(received.values()) == stats.delivered
