"""Hypothesis invariants over random games per ruleset, with random legal decisions."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.bots import RandomBot, ThresholdBot
from p2pkille.engine.cards import DECK_SIZE
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from p2pkille.engine.referee import Referee

HAND_CAP = 400


@st.composite
def tables(draw: st.DrawFn, ruleset: str) -> tuple[int, int, int, int]:
    opts = PRESETS[ruleset]
    # Mostly small tables (fast), sometimes up to the ruleset's limit.
    most = draw(st.sampled_from([9, 9, 9, opts.max_players]))
    seats = draw(st.integers(opts.min_players, most))
    stake = draw(st.integers(1, 5))
    chips = draw(st.integers(stake, stake * 12))
    seed = draw(st.integers(0, 2**32 - 1))
    return seats, stake, chips, seed


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
@given(data=st.data(), random_bots=st.booleans())
def test_random_games_keep_every_invariant(ruleset: str, data: st.DataObject,
                                           random_bots: bool) -> None:
    n, stake, chips, seed = data.draw(tables(ruleset))
    rng = random.Random(seed)
    game = Game(PRESETS[ruleset], [f"S{i}" for i in range(n)], stake=stake, chips=chips,
                dealer=rng.randrange(n))
    bots = [RandomBot(rng) if random_bots else ThresholdBot() for _ in range(n)]
    referee = Referee(game, bots, rng)
    total = n * chips
    while not game.over and game.hand_no < HAND_CAP:
        referee.apply(referee.next_fact())  # the deal
        while game.phase not in (Phase.DEAL, Phase.OVER):
            referee.apply(referee.next_fact())
            # Chips plus pot are conserved (buy-ins and sales only move chips).
            assert sum(game.chips) + game.pot == total
            assert min(game.chips) >= 0
        # The 42 cards are conserved: every token is in exactly one place.
        assert sorted(game.tokens_in_play()) == list(range(DECK_SIZE))
        # No hand leaves nobody alive.
        assert game.n_alive == sum(game.alive) >= 1
        result = game.result
        assert result is not None
        if not result.redealt and not result.sold_out:
            assert len(result.died) < len(result.dealt)
    assert game.over, f"{ruleset} with {n} seats did not end in {HAND_CAP} hands"
    # Exactly one winner, who took the pot.
    assert game.n_in == sum(game.in_game) == 1
    assert game.winner == game.in_game.index(True)
    assert game.pot == 0
    assert sum(game.chips) == total
