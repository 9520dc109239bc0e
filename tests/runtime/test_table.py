"""Honest tables end to end on the simulated network."""

from __future__ import annotations

import functools

import pytest

from p2pkille.engine.options import PRESETS
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import StopReason
from p2pkille.sim.table import TableRun, build_table
from tests.runtime.helpers import node_results, referee_replay


def _check_honest(run: TableRun) -> None:
    assert run.stop is StopReason.STOPPED
    assert run.honest_agree
    for node in run.nodes:
        assert node.faults == []
        assert node.dropped == 0
    first = run.nodes[0]
    for node in run.nodes[1:]:
        assert node_results(node) == node_results(first)
        assert [o.checkpoint for o in node.outcomes] == [o.checkpoint for o in first.outcomes]
    for outcome in first.outcomes:
        assert outcome.agreed_by == outcome.holders
    assert referee_replay(first) == node_results(first)


def test_three_peers_play_a_whole_game_to_a_winner() -> None:
    run = build_table(3, seed=3).run()
    _check_honest(run)
    doc = run.document()
    assert doc["winner"] is not None
    assert all(n.done for n in run.nodes)
    # The whole pot went to the winner; chips are conserved.
    hands = doc["hands"]
    assert isinstance(hands, list)
    assert hands[-1]["pot"] == 0
    assert sum(hands[-1]["chips"].values()) == 3 * 10


CASES = []
for _name, _opts in PRESETS.items():
    for _n in sorted({_opts.min_players, 3, 5, _opts.max_players}):
        if _opts.min_players <= _n <= _opts.max_players:
            CASES.append(pytest.param(
                _name, _n, 1 if _n > 5 else 3,
                id=f"{_name}-{_n}",
                # The everyday run plays up to 15 seats; the largest tables (20 and 38
                # seats, a minute of CPU) are in the thorough run.
                marks=[pytest.mark.thorough] if _n > 15 else
                [pytest.mark.slow] if _n > 9 else [],
            ))


@pytest.mark.parametrize(("ruleset", "peers", "hands"), CASES)
def test_rulesets_from_min_to_max_seats_agree_and_match_the_referee(
        ruleset: str, peers: int, hands: int) -> None:
    run = build_table(peers, seed=peers, ruleset=ruleset).run(max_hands=hands)
    _check_honest(run)
    assert len(run.nodes[0].outcomes) >= min(hands, 1)


@pytest.mark.parametrize("ruleset", ["bytes-kille", "enkortskille"])
def test_many_hands_to_the_end_match_the_referee(ruleset: str) -> None:
    run = build_table(4, seed=11, ruleset=ruleset, chips=6).run()
    _check_honest(run)
    assert all(n.done for n in run.nodes)


def test_the_same_seed_gives_identical_results() -> None:
    a = build_table(4, seed=5).run(max_hands=3)
    b = build_table(4, seed=5).run(max_hands=3)
    assert [o.to_json() for o in a.nodes[0].outcomes] == [
        o.to_json() for o in b.nodes[0].outcomes]
    c = build_table(4, seed=6).run(max_hands=3)
    assert [o.checkpoint for o in c.nodes[0].outcomes] != [
        o.checkpoint for o in a.nodes[0].outcomes]


@functools.cache
def _clean_game() -> TableRun:
    """A whole game of four honest peers on a network without faults (run once)."""
    run = build_table(4, seed=8).run()
    _check_honest(run)
    return run


@pytest.mark.parametrize("faults", [
    "drop=0.2",
    "dup=0.2,reorder=0.3,delay=20ms,jitter=30ms",
    "drop=0.2,dup=0.05,reorder=0.1,delay=50ms",
])
def test_faulty_network_gives_the_same_results(faults: str) -> None:
    clean = _clean_game()
    noisy = build_table(4, seed=8, faults=Faults.parse(faults)).run()
    _check_honest(noisy)
    # The same game; not the same checkpoints: a checkpoint names chain positions, and
    # how many agreement votes a holder signs before its hand is decided depends on the
    # order they arrive in (a holder that learns the decision first signs no precommit).
    assert node_results(noisy.nodes[0]) == node_results(clean.nodes[0])


def _kinds(run: TableRun) -> set[str]:
    out = set()
    for o in run.nodes[0].outcomes:
        for f in o.facts:
            name = type(f).__name__
            if name == "Disclosure" and getattr(f, "kille", False):
                name = "Disclosure:kille"
            if name == "SaleAnswer" and getattr(f, "accept", False):
                name = "SaleAnswer:accept"
            out.add(name)
    return out


def test_sales_to_seats_out_of_the_game_and_redeals_work() -> None:
    from p2pkille.bots.threshold import ThresholdBot
    from tests.runtime.bots import Restless

    run = build_table(4, seed=1, ruleset="enkortskille", chips=5,
                      deciders=lambda i: Restless() if i % 2 else ThresholdBot()).run()
    _check_honest(run)
    kinds = _kinds(run)
    assert {"Sell", "SaleAnswer:accept", "AskRedeal", "Vote"} <= kinds


def test_a_kille_given_away_is_opened_publicly() -> None:
    from tests.runtime.bots import Restless

    run = build_table(5, seed=8, chips=3, deciders=lambda _i: Restless()).run(max_hands=2)
    _check_honest(run)
    assert "Disclosure:kille" in _kinds(run)


def test_players_who_agree_to_every_redeal_stop_at_the_hand_cap() -> None:
    # bytes-kille's "Fråge-Kille": with three left, each seat asks for a redeal and every
    # seat agrees, so the game never ends, and with no delay the virtual clock stands at 0.
    from tests.runtime.bots import Restless

    run = build_table(3, seed=1, ruleset="bytes-kille",
                      deciders=lambda _i: Restless()).run(hand_cap=12)
    assert run.unfinished
    assert run.honest_agree
    assert run.stop is StopReason.STOPPED
    hands = run.honest[0].outcomes
    assert len(hands) >= 12
    assert [o.died for o in hands[-3:]] == [[], [], []], "redealt: nobody died"
    doc = run.document()
    assert doc["winner"] is None
    assert doc["stats"]["unfinished"] is True  # type: ignore[index]
    # A game that ends under the cap is not marked.
    assert not build_table(3, seed=1).run(hand_cap=500).unfinished
