"""Illegal input: a typed error naming the input and the state; the state is unchanged."""

from __future__ import annotations

import pytest

from p2pkille.engine.cards import Rank
from p2pkille.engine.errors import IllegalMoveError, InvalidSetupError
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    BuyIn,
    Deal,
    Decline,
    Disclosure,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Showdown,
    StockCard,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from tests.engine.helpers import snapshot


def _game(ruleset: str = "wikipedia", n: int = 4, chips: int = 100) -> Game:
    names = "ABCDEFGH"[:n]
    return Game(PRESETS[ruleset], list(names), stake=10, chips=chips, dealer=n - 1)


def _rejects(game: Game, fact: Fact, *needles: str) -> None:
    before = snapshot(game)
    with pytest.raises(IllegalMoveError) as caught:
        game.apply(fact)
    assert snapshot(game) == before
    message = str(caught.value)
    assert repr(fact) in message  # names the input
    assert f"hand {game.hand_no}, phase {Phase(game.phase).name.lower()}" in message  # state
    for needle in needles:
        assert needle in message


def test_out_of_turn() -> None:
    g = _game()
    g.apply(Deal())
    _rejects(g, Keep(1), "out of turn", "B may not act now, A is expected")
    _rejects(g, Swap(3), "out of turn")


def test_wrong_kind_of_fact_for_the_phase() -> None:
    g = _game()
    _rejects(g, Keep(0), "not expected now", "waiting for the deal")
    g.apply(Deal())
    _rejects(g, Answer(1, None), "not expected now", "keep or swap from A")
    _rejects(g, Showdown(()), "not expected now")
    _rejects(g, BuyIn(0), "not expected now")


def test_a_dead_player_cannot_swap() -> None:
    g = _game()
    g.apply(Deal())
    g.apply(Swap(0))
    g.apply(Answer(1, Rank.HUSAR))  # A dies
    assert g.alive[0] is False
    _rejects(g, Swap(0), "out of turn", "A may not act now, B is expected")


def test_a_pick_under_a_ruleset_without_picking() -> None:
    g = _game("wikipedia")
    g.apply(Deal())
    _rejects(g, Swap(0, 2), "no picking")
    b = _game("bytes-kille")
    b.apply(Deal())
    b.apply(Swap(0, 4))  # legal there
    assert b.phase == Phase.ANSWER


def test_target_answers_must_come_from_the_target() -> None:
    g = _game()
    g.apply(Deal())
    g.apply(Swap(0))
    _rejects(g, Answer(2, None), "out of turn")
    g.apply(Answer(1, None))
    _rejects(g, Disclosure(1, False), "out of turn")
    _rejects(g, StockCard(0, Rank.KUKU), "not expected now")


def test_showdown_needs_one_face_per_live_player() -> None:
    g = _game()
    g.apply(Deal())
    g.apply(Swap(0))
    g.apply(Answer(1, Rank.KUKU))
    _rejects(g, Showdown((Rank.ONE, Rank.TWO)), "4 live players must show")


def _to_after(g: Game, faces: tuple[Rank, ...]) -> None:
    g.apply(Deal())
    for seat in list(g.order):
        g.apply(Keep(seat))
    g.apply(Showdown(faces))


def test_buyin_not_entitled_or_not_affordable() -> None:
    g = _game("wikipedia", chips=10)  # everyone has 0 chips after the stake
    _to_after(g, (Rank.ONE, Rank.FIVE, Rank.SIX, Rank.SEVEN))
    assert g.phase == Phase.AFTER
    assert g.expect_seat == 0
    _rejects(g, BuyIn(1), "out of turn")
    _rejects(g, BuyIn(0), "A cannot pay 10 (has 0)")
    g.apply(Decline(0))
    assert g.phase == Phase.DEAL


def test_redeal_and_sale_where_not_allowed() -> None:
    g = _game("wikipedia", n=3)
    g.apply(Deal())
    _rejects(g, AskRedeal(0), "no redeals")
    _rejects(g, Sell(0, 1, 5), "no card sales")
    e = _game("enkortskille", n=3)
    e.apply(Deal())
    _rejects(e, Sell(0, 1, 5), "buyer must be out of the game")
    e.apply(AskRedeal(0))
    _rejects(e, Vote(1, VoteChoice.DEPENDS), "first voter of Fråge-Kille")
    e.apply(Vote(1, VoteChoice.REFUSE))
    _rejects(e, AskRedeal(0), "keep or swap now")


@pytest.mark.parametrize("ruleset", ["bytes-kille", "enkortskille"])
def test_a_second_redeal_request_in_a_hand(ruleset: str) -> None:
    g = _game(ruleset, n=3)
    g.apply(Deal())
    g.apply(AskRedeal(0))
    assert g.expect_seat is not None
    g.apply(Vote(g.expect_seat, VoteChoice.REFUSE))
    g.apply(Keep(0))
    assert not g.can_ask_redeal()
    _rejects(g, AskRedeal(1), "one redeal request per hand", "refused")
    g.apply(Keep(1))
    _rejects(g, AskRedeal(2), "one redeal request per hand")


def test_a_seller_is_never_asked_to_buy_back() -> None:
    # Four seats, dealer D. Hand 1: A's 1 dies (husar shown); A declines. Hand 2 (dealer
    # A: B C D): B sells its card to A, who takes B's place; husar kills the lowest, C.
    # Only C is asked to buy back: B's buy-in is out of turn.
    g = _game("enkortskille", n=4)
    _to_after(g, (Rank.ONE, Rank.FIVE, Rank.SIX, Rank.HUSAR))
    g.apply(Decline(0))
    g.apply(Deal())
    g.apply(Sell(1, 0, 5))
    g.apply(SaleAnswer(0, True))
    for seat in (0, 2, 3):
        g.apply(Keep(seat))
    g.apply(Showdown((Rank.FIVE, Rank.ONE, Rank.HUSAR)))
    assert g.sold == [False, True, False, False]
    assert g.expect_seat == 2
    _rejects(g, BuyIn(1), "out of turn", "B may not act now, C is expected")
    g.apply(Decline(2))
    assert g.phase == Phase.DEAL  # B was never asked
    # Out of the game, B may still be offered a card (hand 3, dealer B: D A).
    g.apply(Deal())
    assert g.order == [3, 0]
    assert 1 in g.sale_buyers()


def test_bad_setup() -> None:
    with pytest.raises(InvalidSetupError, match=r"3\.\.15 players"):
        _game("wikipedia", n=2)
    with pytest.raises(InvalidSetupError, match="stake"):
        Game(PRESETS["wikipedia"], ["A", "B", "C"], stake=10, chips=5)
    with pytest.raises(InvalidSetupError, match="distinct"):
        Game(PRESETS["wikipedia"], ["A", "A", "C"], stake=10, chips=50)
    with pytest.raises(InvalidSetupError, match="dealer"):
        Game(PRESETS["wikipedia"], ["A", "B", "C"], stake=10, chips=50, dealer=3)


def test_nothing_is_accepted_after_the_game() -> None:
    g = _game("wikipedia", n=3)
    g.apply(Deal())
    g.apply(Swap(0))
    g.apply(Answer(1, Rank.HUSAR))
    g.apply(Keep(1))
    g.apply(Keep(2))
    g.apply(Showdown((Rank.HUSAR, Rank.TWO)))
    g.apply(Decline(0))
    g.apply(Decline(2))
    assert g.over
    assert g.winner == 1
    _rejects(g, Deal(), "game is over")
