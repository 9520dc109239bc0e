"""Hypothesis invariants over random games per ruleset, with random legal decisions."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.bots import RandomBot, ThresholdBot
from p2pkille.engine.cards import DECK_SIZE
from p2pkille.engine.facts import AskRedeal, SaleAnswer
from p2pkille.engine.machine import _REGULAR, _TWO_LEFT, Game, Phase
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
    opts = game.options
    closed = False  # buy-backs have ended for good (bytes-kille: three or fewer remained)
    sellers: set[int] = set()
    while not game.over and game.hand_no < HAND_CAP:
        referee.apply(referee.next_fact())  # the deal
        dealt = len(game.order)
        requests = 0
        while game.phase not in (Phase.DEAL, Phase.OVER):
            fact = referee.next_fact()
            showdown = game.phase == Phase.SHOWDOWN
            if isinstance(fact, AskRedeal):
                # One redeal request per hand: a refusal is final for the hand.
                requests += 1
                assert requests == 1
            if isinstance(fact, SaleAnswer) and fact.accept:
                sellers.add(game.order[game.turn])
            referee.apply(fact)
            # Chips plus pot are conserved (buy-ins and sales only move chips).
            assert sum(game.chips) + game.pot == total
            assert min(game.chips) >= 0
            if showdown:
                # Right after the showdown n_in counts the players the hand's deaths left.
                left = game.n_in
                closed = closed or left <= opts.buybacks_close_at
                kinds = {kind for _, kind in game.after}
                assert not (closed and _REGULAR in kinds), (left, game.after)
                if _TWO_LEFT in kinds:
                    assert left == 2 < dealt, (left, dealt)
                # A seat that sold its card may never buy back.
                assert not sellers & {seat for seat, _ in game.after}
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


@given(seats=st.integers(5, 9), seed=st.integers(0, 2**32 - 1))
def test_bytes_kille_buybacks_never_reopen(seats: int, seed: int) -> None:
    # Rich players, so the two-left buy-in at twice the pot is often paid by several and
    # refills the table above three: regular buy-backs must stay over all the same.
    rng = random.Random(seed)
    game = Game(PRESETS["bytes-kille"], [f"S{i}" for i in range(seats)], stake=1,
                chips=100_000, dealer=rng.randrange(seats))
    referee = Referee(game, [RandomBot(rng) for _ in range(seats)], rng)
    closed = False
    while not game.over and game.hand_no < HAND_CAP:
        showdown = game.phase == Phase.SHOWDOWN
        referee.apply(referee.next_fact())
        if showdown:
            closed = closed or game.n_in <= 3
            assert game.buybacks_closed == closed
            assert not (closed and any(kind == _REGULAR for _, kind in game.after))
