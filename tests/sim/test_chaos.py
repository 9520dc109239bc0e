"""The chaos sweep (``p2pkille chaos``): the classifier on hand-made records, one class at
a time; scripted tables built to split and to stall; a seed's run is the same every time
and in any number of processes; the command's output, replay line and argument errors."""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from cli.main import main
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.chaos import (
    GENERATOR,
    Crash,
    HandSeen,
    NodeRecord,
    Observation,
    Plan,
    RunClass,
    Script,
    Show,
    Trigger,
    classify,
    execute,
    run_seed,
)
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork

SEATS = ("P1", "P2", "P3", "P4", "P5")


def _hand(number: int, *, at: float = 1.0, voided: bool = False, eliminated: tuple[str, ...] = (),
          accusations: tuple[dict[str, object], ...] = (), checkpoint: str = "c0",
          holders: tuple[str, ...] = SEATS) -> HandSeen:
    outcome = {"accusations": list(accusations), "agreed_by": [] if voided else list(holders),
               "checkpoint": "" if voided else checkpoint, "chips": {}, "died": [],
               "eliminated": list(eliminated), "hand": number, "pot": 0, "voided": voided}
    return HandSeen(json.dumps(outcome, sort_keys=True), holders, at)


def _timeout(seat: str) -> dict[str, object]:
    return {"accused": seat, "by": None, "kind": "timeout", "reason": "", "verdict": "agreed"}


def _node(index: int, hands: tuple[HandSeen, ...], **kwargs: object) -> NodeRecord:
    fields: dict[str, object] = {"honest": True, "up": True, "finished": True,
                                 "holders": SEATS, **kwargs}
    return NodeRecord(f"n{index + 1}", SEATS[index], hands=hands, **fields)  # type: ignore[arg-type]


def _obs(nodes: list[NodeRecord], **kwargs: object) -> Observation:
    fields: dict[str, object] = {"planned": 2, "tau": 2.0, "end": 10.0, "limits_sum": 100.0,
                                 **kwargs}
    return Observation(nodes=tuple(nodes), seats={n.seat: n.name for n in nodes},
                       **fields)  # type: ignore[arg-type]


def _classes(obs: Observation) -> list[RunClass]:
    return [f.cls for f in classify(obs)]


AGREED = (_hand(1, at=1.0), _hand(2, at=2.0, checkpoint="c1"))


# -- the classifier on hand-made records --------------------------------------------------------


def test_nodes_that_agree_are_ok() -> None:
    assert _classes(_obs([_node(i, AGREED) for i in range(5)])) == [RunClass.OK]


def test_two_clean_nodes_that_record_a_hand_differently_are_a_split() -> None:
    other = (AGREED[0], _hand(2, at=2.0, checkpoint="c2"))
    findings = classify(_obs([_node(0, other), *(_node(i, AGREED) for i in range(1, 5))]))
    assert findings[0].cls is RunClass.SPLIT
    assert "hand 2" in findings[0].detail
    assert RunClass.SPLIT.label == "SPLIT"


def test_a_node_cut_off_that_keeps_its_own_record_after_the_heal_is_a_split_out() -> None:
    # n1 alone for 30 s: cut off in hand 1 (its window runs to the end of the run); its
    # record differs from what the four clean nodes record.
    agreed = (_hand(1, at=35.0), _hand(2, at=36.0, checkpoint="c1"))
    other = (_hand(1, at=35.0, checkpoint="mine"), agreed[1])
    nodes = [_node(0, other), *(_node(i, agreed) for i in range(1, 5))]
    cut = ((0.5, 30.5, (frozenset({"n1"}), frozenset({"n2", "n3", "n4", "n5"}))),)
    findings = classify(_obs(nodes, cuts=cut, end=40.0))
    assert [f.cls for f in findings] == [RunClass.SPLIT_OUT]
    assert findings[0].detail.startswith("n1 (P1), cut off in hand(s) 1")
    # A node cut off that agrees is ok; one down at the end is not counted.
    assert _classes(_obs([_node(0, agreed), *nodes[1:]], cuts=cut, end=40.0)) == [RunClass.OK]
    assert _classes(_obs([_node(0, other, up=False), *nodes[1:]], cuts=cut, end=40.0,
                         downs={"n1": ((35.0, float("inf")),)})) == [RunClass.OK]


def test_an_honest_seat_timed_out_that_was_never_cut_off_is_timeout_blame() -> None:
    voided = _hand(1, at=5.0, voided=True, eliminated=("P3",), accusations=(_timeout("P3"),))
    hands = (voided, _hand(2, at=6.0, holders=("P1", "P2", "P4", "P5")))
    nodes = [_node(i, hands) for i in range(5)]
    findings = classify(_obs(nodes))
    assert [f.cls for f in findings] == [RunClass.TIMEOUT_BLAME]
    assert "P3 (n3)" in findings[0].detail
    # Cut off from the majority for longer than tau: ok. For less: still timeout-blame.
    alone = (frozenset({"n3"}), frozenset({"n1", "n2", "n4", "n5"}))
    assert _classes(_obs(nodes, cuts=((1.0, 3.5, alone),))) == [RunClass.OK]
    assert _classes(_obs(nodes, cuts=((1.0, 3.0, alone),), tau=2.0)) == [RunClass.OK]
    assert _classes(_obs(nodes, cuts=((1.0, 2.9, alone),), tau=2.0)) == [RunClass.TIMEOUT_BLAME]
    assert _classes(_obs(nodes, cuts=((1.0, 1.5, alone),))) == [RunClass.TIMEOUT_BLAME]
    # Down for longer than tau: ok; down after the hand: still timeout-blame.
    assert _classes(_obs(nodes, downs={"n3": ((0.5, 4.0),)})) == [RunClass.OK]
    assert _classes(_obs(nodes, downs={"n3": ((7.0, 9.0),)})) == [RunClass.TIMEOUT_BLAME]


def test_isolation_counts_the_hands_key_holders_not_the_members() -> None:
    # P5 was eliminated in hand 1, so hand 2 has four holders. n1 (P1) with n2 and n5 are
    # three of five members, but only two of the four holders: no strict majority, and
    # the other side may time P1 out.
    first = _hand(1, at=5.0, voided=True, eliminated=("P5",), accusations=(_timeout("P5"),))
    second = _hand(2, at=9.0, voided=True, eliminated=("P1",), accusations=(_timeout("P1"),),
                   holders=("P1", "P2", "P3", "P4"))
    nodes = [_node(i, (first, second)) for i in range(5)]
    cut = ((5.5, 8.5, (frozenset({"n1", "n2", "n5"}), frozenset({"n3", "n4"}))),)
    downs = {"n5": ((0.0, 4.5),)}
    assert RunClass.TIMEOUT_BLAME not in _classes(_obs(nodes, cuts=cut, downs=downs))
    # Without the cut, P1's time-out is blamed on the runtime.
    assert RunClass.TIMEOUT_BLAME in _classes(_obs(nodes, downs=downs))


def test_an_honest_seat_convicted_of_a_fault_is_wrong_blame() -> None:
    proven: dict[str, object] = {"accused": "P2", "by": "P1", "kind": "equivocation", "reason": "",
              "verdict": "proven"}
    hands = (_hand(1, voided=True, eliminated=("P2",), accusations=(proven,)), AGREED[1])
    findings = classify(_obs([_node(i, hands) for i in range(5)]))
    assert [f.cls for f in findings] == [RunClass.WRONG_BLAME]
    assert "equivocation by P1: proven" in findings[0].detail
    # The same conviction of a misbehaving seat is what should happen.
    nodes = [_node(i, hands, honest=i != 1) for i in range(5)]
    assert _classes(_obs(nodes)) == [RunClass.OK]


def test_a_misbehaviour_that_showed_and_was_never_blamed_is_missed_blame() -> None:
    nodes = [_node(i, AGREED, honest=i != 3) for i in range(5)]
    shuffle = Show("P4", "bad-shuffle", "shuffle", 1, 0.5, delivered=("n1",))
    assert _classes(_obs(nodes, shows=(shuffle,))) == [RunClass.MISSED_BLAME]
    # Blamed by one honest node's faults: ok.
    blamed = [replace(nodes[0], blames=frozenset({"P4"})), *nodes[1:]]
    assert _classes(_obs(blamed, shows=(shuffle,))) == [RunClass.OK]
    # Not delivered, or its hand voided for something else, or noise: need not be found.
    assert _classes(_obs(nodes, shows=(replace(shuffle, delivered=()),))) == [RunClass.OK]
    void = (_hand(1, voided=True, eliminated=("P1",), accusations=(_timeout("P1"),)),)
    voiding = [_node(i, void, honest=i != 3) for i in range(5)]
    assert RunClass.MISSED_BLAME not in _classes(_obs(voiding, shows=(shuffle,)))
    noise = Show("P4", "replay", "commit", None, 0.1, delivered=("n1",))
    assert _classes(_obs(nodes, shows=(noise,))) == [RunClass.OK]
    # A fork counts once one honest node took both of its envelopes.
    fork = Show("P4", "equivocate", "key", 1, 0.2, delivered=("n1", "n2"))
    assert _classes(_obs(nodes, shows=(fork,))) == [RunClass.OK]
    assert _classes(_obs(nodes, shows=(replace(fork, forked=("n2",)),))) == [
        RunClass.MISSED_BLAME]
    # A withheld reveal in a hand the table committed.
    withheld = Show("P4", "withhold", "reveal", 2, 1.5, omission=True)
    assert _classes(_obs(nodes, shows=(withheld,))) == [RunClass.MISSED_BLAME]


def test_an_unfinished_run_is_a_stall_only_with_a_majority_of_honest_holders_up() -> None:
    stuck = [_node(i, AGREED[:1], finished=False, waiting=("P2",)) for i in range(5)]
    findings = classify(_obs(stuck, stopped="quiet", end=500.0))
    assert [f.cls for f in findings] == [RunClass.STALL]
    assert "waiting for P2" in findings[0].detail
    # Three of five holders down for good: the table waits by design.
    down = {f"n{i + 1}": ((50.0, float("inf")),) for i in range(2, 5)}
    waiting = [*stuck[:2], *(replace(n, up=False) for n in stuck[2:])]
    findings = classify(_obs(waiting, stopped="quiet", end=500.0, downs=down))
    assert [f.cls for f in findings] == [RunClass.OK]
    assert "by design" in findings[0].detail
    # Misbehaving holders are no part of that majority.
    lying = [*stuck[:2], *(replace(n, honest=False) for n in stuck[2:])]
    assert _classes(_obs(lying, stopped="deadline", end=500.0)) == [RunClass.OK]


def test_a_run_past_its_bound_or_the_wall_clock_cap_is_slow() -> None:
    nodes = [_node(i, AGREED) for i in range(5)]
    # bound: E + 10 Q + (2 + 2 V) L + D = 30 + 10 * 2 + 2 * 100 + 0 = 250
    obs = _obs(nodes, end=250.0, disrupted_until=30.0, quiet=2.0)
    assert obs.slow_bound() == 250.0
    assert _classes(obs) == [RunClass.OK]
    assert _classes(replace(obs, end=251.0)) == [RunClass.SLOW]
    assert _classes(replace(obs, stopped="wall-cap")) == [RunClass.SLOW]
    findings = classify(replace(obs, stopped="cpu-cap"))
    assert [(f.cls, f.detail) for f in findings] == [
        (RunClass.SLOW, "stopped by the CPU-time cap")]


def test_a_node_that_raised_is_an_error() -> None:
    obs = _obs([_node(i, AGREED) for i in range(5)], error="ValueError: boom", stopped="error")
    findings = classify(obs)
    assert [(f.cls, f.detail) for f in findings] == [(RunClass.ERROR, "ValueError: boom")]


# -- scripted tables ------------------------------------------------------------------------------

QUICK = Timing(limit=2.0, decide_limit=5.0, answer_limit=10.0)


def _quiet_plan(peers: int, ruleset: str = "wikipedia") -> Plan:
    return Plan(seed=5, peers=peers, mode="audit", ruleset=ruleset, chips=2, hands=2,
                bots="threshold", latency=Faults(delay=0.02), faults=Faults(),
                timings=(QUICK,) * peers)


def _kept_apart(*halves: list[str]) -> Script:
    """Cuts the halves apart for good once every node has a hand: not in the plan, so the
    classifier takes them for connected."""
    cut: list[float] = []

    def script(net: SimNetwork, nodes: Mapping[str, TableNode]) -> None:
        if cut or not all(n.stage >= Stage.KEYS for n in nodes.values()):
            return
        cut.append(net.now)
        a, b = halves
        for x in a:
            for y in b:
                net.set_link(x, y, Faults(drop=1.0))

    return script


def test_a_two_player_table_whose_players_are_kept_apart_waits_and_never_splits() -> None:
    # Neither holder alone is a strict majority of two: neither times the other out, so
    # there is no double winner; both wait, and the run is a stall as halves are.
    obs, _schedule, records = execute(_quiet_plan(2, "bytes-kille"),
                                      script=_kept_apart(["n1"], ["n2"]))
    assert obs.stopped == "quiet"
    findings = classify(obs)
    assert [f.cls for f in findings] == [RunClass.STALL], (findings, records)
    assert "waiting for P2" in findings[0].detail


def test_a_table_whose_halves_are_kept_apart_is_a_stall() -> None:
    plan = _quiet_plan(4)
    obs, _schedule, records = execute(plan, script=_kept_apart(["n1", "n2"], ["n3", "n4"]))
    assert obs.stopped == "quiet"
    assert obs.end >= plan.quiet_window  # bounded: nothing new for W virtual seconds
    findings = classify(obs)
    assert [f.cls for f in findings] == [RunClass.STALL], (findings, records)
    assert "4 of 4 holders honest and up" in findings[0].detail


@pytest.mark.parametrize(("behaviour", "kind"), [
    ("equivocate", "key"), ("bad-shuffle", "shuffle"), ("garbage", "bytes")])
def test_a_misbehaving_seat_shows_where_its_honest_twin_would_have_sent_otherwise(
        behaviour: str, kind: str) -> None:
    plan = replace(_quiet_plan(4), byzantine=(("n2", behaviour),))
    obs, _schedule, records = execute(plan)
    (show,) = obs.shows
    assert (show.seat, show.behaviour, show.kind) == (obs.nodes[1].seat, behaviour, kind)
    assert show.delivered == ("n1", "n3", "n4")
    assert bool(show.forked) == (behaviour == "equivocate")
    assert _classes(obs) == [RunClass.OK], records
    # The same run, had nobody blamed the seat, misses what must be found.
    unblamed = tuple(replace(n, blames=frozenset(), hands=AGREED) for n in obs.nodes)
    expected = [RunClass.OK] if behaviour == "garbage" else [RunClass.MISSED_BLAME]
    if behaviour == "bad-shuffle":  # found by the audit, before the hand could commit
        assert json.loads(obs.nodes[0].hands[0].outcome)["voided"]
    assert _classes(replace(obs, nodes=unblamed, shows=(replace(show, hand=1),))) == expected


def test_a_restart_from_the_log_leaves_no_file_behind(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    plan = replace(_quiet_plan(3), crashes=(Crash("n2", 3.0, Trigger(0, Stage.PLAY, 0.0)),))
    obs, schedule, _records = execute(plan)
    assert any("restart n2 from its log" in line for line in schedule), schedule
    assert obs.downs["n2"][0][1] - obs.downs["n2"][0][0] == pytest.approx(3.0)
    assert _classes(obs) == [RunClass.OK]
    assert list(tmp_path.iterdir()) == []


# -- determinism ----------------------------------------------------------------------------------


def test_a_plan_comes_from_its_seed_alone() -> None:
    random.seed(1)
    first = [Plan.draw(seed) for seed in range(40)]
    random.seed(2)
    assert [Plan.draw(seed) for seed in range(40)] == first
    assert len({json.dumps(p.to_json(), sort_keys=True) for p in first}) == 40
    kinds = {c.down is None for p in first for c in p.crashes}
    assert kinds == {True, False}  # crashes for a while and for good
    assert any(len(c.groups) == 3 for p in first for c in p.cuts)
    assert any(p.byzantine for p in first)
    assert any(p.slow for p in first)


SWEEP = ("--seed", "3824", "--runs", "5")  # small tables, one run not ok


def test_a_seed_runs_the_same_twice() -> None:
    a, b = run_seed(3825), run_seed(3825)
    assert replace(a, wall_s=0.0) == replace(b, wall_s=0.0)


@pytest.fixture(scope="module")
def sweep() -> tuple[int, str, str]:
    """The short sweep in two processes: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["chaos", *SWEEP, "--jobs", "2", "--json"])
    return status, out.getvalue(), err.getvalue()


def test_a_short_sweep_runs_end_to_end_with_progress(sweep: tuple[int, str, str]) -> None:
    status, out, err = sweep
    doc = json.loads(out)
    assert doc["generator"] == GENERATOR
    assert doc["config"] == {"cpu_cap": 900, "runs": 5, "seed": 3824, "wall_cap": 3600}
    assert [r["seed"] for r in doc["runs"]] == list(range(3824, 3829))
    assert sum(doc["counts"].values()) == 5
    assert doc["counts"]["ok"] == sum(r["class"] == "ok" for r in doc["runs"])
    assert status == (0 if doc["counts"]["ok"] == 5 else 1)
    assert "chaos: 5/5 runs" in err
    for run in doc["runs"]:
        if run["class"] != "ok":
            assert run["replay"] == f"p2pkille chaos --seed {run['seed']} --runs 1 --verbose"
            assert f"seed {run['seed']} {RunClass(run['class']).label}:" in err


def test_the_document_does_not_depend_on_the_number_of_processes(
        sweep: tuple[int, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    main(["chaos", *SWEEP, "--jobs", "1", "--json"])
    assert capsys.readouterr().out == sweep[1]


def test_the_replay_command_reproduces_the_run(sweep: tuple[int, str, str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    runs = json.loads(sweep[1])["runs"]
    run = next((r for r in runs if r["class"] != "ok"), runs[0])
    argv = f"chaos --seed {run['seed']} --runs 1 --verbose".split()
    status = main(argv)
    out = capsys.readouterr().out
    label = RunClass(run["class"]).label
    assert out.startswith(f"seed {run['seed']}: {label} (")
    assert all(part in out for part in ("plan:", "schedule:", "records:"))
    assert f"detail: {run['detail']}" in out
    assert status == (0 if run["class"] == "ok" else 1)


@pytest.mark.parametrize(("argv", "message"), [
    (["--runs", "0"], "--runs must be in 1..10000000, got 0"),
    (["--seed", "-3"], "--seed must be at least 0, got -3"),
    (["--jobs", "two"], "--jobs must be a whole number, got 'two'"),
    (["--wall-cap", "0"], "--wall-cap must be at least 1, got 0"),
    (["--cpu-cap", "1.5"], "--cpu-cap must be a whole number, got '1.5'"),
])
def test_a_bad_argument_is_one_line_and_exit_2(argv: list[str], message: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chaos", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"p2pkille chaos: {message}\n"
    assert captured.out == ""


def test_a_replay_command_names_the_caps_the_run_had() -> None:
    from p2pkille.sim.chaos import CPU_CAP, Caps, replay_command

    assert replay_command(7) == "p2pkille chaos --seed 7 --runs 1 --verbose"
    assert replay_command(7, Caps(cpu=30.0)) == (
        "p2pkille chaos --seed 7 --runs 1 --cpu-cap 30 --verbose")
    assert replay_command(7, Caps(cpu=CPU_CAP, wall=60.5)) == (
        "p2pkille chaos --seed 7 --runs 1 --wall-cap 60.5 --verbose")


def test_a_run_whose_table_cannot_be_built_is_an_error_not_a_crash(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from p2pkille.sim import chaos

    def broken(seed: int) -> chaos.Plan:
        raise ValueError(f"no plan for seed {seed}")

    monkeypatch.setattr(chaos.Plan, "draw", staticmethod(broken))
    result = chaos.run_seed(3, chaos.Caps(cpu=30.0))
    assert result.cls is chaos.RunClass.ERROR
    assert "ValueError: no plan for seed 3" in result.detail
    assert result.replay.endswith("--cpu-cap 30 --verbose")


@pytest.mark.parametrize(("seed", "case"), [
    (11, "a holder restarted from its log in the void round takes the others' verdict"),
    (58, "the last two holders cut off from each other: neither wins alone"),
    (525, "holders cut off one by one in the void round decide one verdict"),
    (559, "a decider crashed with another holder: the two are silent together"),
    (19, "a slow decider with a holder cut off: the decision gets its default"),
])
def test_hard_tables_of_the_sweep_finish_with_one_record(seed: int, case: str) -> None:
    result = run_seed(seed)
    assert result.cls is RunClass.OK, f"{case}: {result.detail}"
