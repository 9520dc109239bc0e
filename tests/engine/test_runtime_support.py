"""Game.snapshot/restore and Game.expel: what the peer runtime needs to void a hand
and to remove a proven cheater."""

from __future__ import annotations

import pytest

from p2pkille.engine.errors import InvalidSetupError
from p2pkille.engine.facts import Deal, Keep
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS


def _game(n: int = 4) -> Game:
    return Game(PRESETS["wikipedia"], [f"P{i + 1}" for i in range(n)], stake=1, chips=5)


def test_restore_returns_to_the_snapshot() -> None:
    game = _game()
    before = game.snapshot()
    chips, pot = list(game.chips), game.pot
    game.apply(Deal())
    game.apply(Keep(game.order[0]))
    assert game.phase != Phase.DEAL
    game.restore(before)
    assert game.phase == Phase.DEAL
    assert (game.chips, game.pot, game.hand_no, game.buybacks) == (chips, pot, 0, [0] * 4)
    game.apply(Deal())  # plays on from the restored state
    assert game.hand_no == 1


def test_snapshot_is_a_copy() -> None:
    game = _game()
    snap = game.snapshot()
    game.apply(Deal())
    game.chips[0] = 99
    game.restore(snap)
    assert game.chips[0] == 4
    game.chips[0] = 77
    game.restore(snap)  # restoring twice gives the same state
    assert game.chips[0] == 4


def test_expel_removes_a_seat_and_keeps_its_stake_in_the_pot() -> None:
    game = _game(4)
    pot = game.pot
    game.expel(2)
    assert game.in_game == [True, True, False, True]
    assert game.n_in == 3
    assert game.pot == pot
    game.apply(Deal())
    assert 2 not in game.dealt
    assert len(game.dealt) == 3


def test_expel_to_one_seat_ends_the_game() -> None:
    game = _game(3)
    pot = game.pot
    game.expel(0)
    game.expel(1)
    assert game.over
    assert game.winner == 2
    assert game.chips[2] == 4 + pot
    assert game.pot == 0


def test_expel_only_between_hands() -> None:
    game = _game()
    game.apply(Deal())
    with pytest.raises(InvalidSetupError):
        game.expel(0)
    with pytest.raises(InvalidSetupError):
        _game().expel(9)
