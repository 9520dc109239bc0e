"""Smoke tests of the bot benchmarks (tiny sizes): they run and count correctly."""

from __future__ import annotations

import pytest

from bench.engine_speed import hands_per_second
from bench.selfplay import play, wilson
from p2pkille.engine.options import PRESETS


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 10)[0] == pytest.approx(0.0)
    assert wilson(10, 10)[1] == pytest.approx(1.0)
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_selfplay_tally_adds_up(ruleset: str) -> None:
    tally = play(ruleset, ("threshold", "tableaware"), 6, 4, 0)
    assert tally.games == 6
    assert sum(tally.wins.values()) + tally.undecided == 6
    assert tally.seats == {"threshold": 12, "tableaware": 12}
    # The winner takes the pot: chips are conserved over the seats.
    assert sum(tally.net.values()) == 0
    assert tally.hands >= 6


def test_engine_speed_counts_hands() -> None:
    rate, hands, games = hands_per_second("wikipedia", "threshold", 0.05)
    assert rate > 0
    assert hands >= games >= 1
