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


def _after_offers(ruleset: str, n: int, expelled: int) -> list[int]:
    """Expel a seat, play a hand where everyone keeps, and list the seats the buy-back
    round then asks (each declines)."""
    from p2pkille.engine.cards import Rank
    from p2pkille.engine.facts import Decline, Showdown

    game = Game(PRESETS[ruleset], [f"P{i + 1}" for i in range(n)], stake=1, chips=20)
    game.expel(expelled)
    assert game.expelled[expelled]
    game.apply(Deal())
    for seat in list(game.order):
        game.apply(Keep(seat))
    # A killing card (husar) is shown, so the lowest dies in every ruleset.
    faces = (Rank.ONE, *[Rank.FIVE, Rank.SIX, Rank.SEVEN, Rank.EIGHT][:len(game.order) - 2],
             Rank.HUSAR)
    game.apply(Showdown(faces))
    asked = []
    while game.phase == Phase.AFTER:
        assert game.expect_seat is not None
        asked.append(game.expect_seat)
        game.apply(Decline(game.expect_seat))
    return asked


@pytest.mark.parametrize(("ruleset", "n"), [("enkortskille", 6), ("bytes-kille", 6),
                                            ("bytes-kille", 4)])
def test_an_expelled_seat_is_never_offered_a_buy_back(ruleset: str, n: int) -> None:
    # enkortskille and bytes-kille ask every seat out of the game (bytes-kille with two
    # left: every starter, for twice the pot): an expelled cheater is not asked.
    asked = _after_offers(ruleset, n, n - 1)
    assert asked, "somebody was asked"
    assert n - 1 not in asked
