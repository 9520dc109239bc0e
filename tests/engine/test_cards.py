from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.engine.cards import DECK, RANKS, Card, Rank
from p2pkille.engine.errors import InvalidCardError


def test_deck_has_42_distinct_cards_two_per_rank() -> None:
    assert len(DECK) == 42
    assert len(set(DECK)) == 42
    for rank in Rank:
        assert sum(card.rank is rank for card in DECK) == 2
    assert all(card.index == i for i, card in enumerate(DECK))


def test_rank_order_is_the_rulings_order() -> None:
    ids = [rank.id for rank in sorted(Rank, reverse=True)]
    assert ids == ["kille", "kuku", "husar", "husu", "kavall", "vardshus",
                   "12", "11", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1",
                   "kransen", "blompottan", "blaren"]
    assert RANKS[Rank.KUKU] is Rank.KUKU


@given(st.sampled_from(DECK))
def test_card_text_and_repr_round_trip(card: Card) -> None:
    assert Card.parse(card.text) == card
    assert Card.from_index(card.index) == card
    assert eval(repr(card), {"Card": Card}) == card
    assert eval(repr(card.rank), {"Rank": Rank}) is card.rank


@pytest.mark.parametrize("text", ["", "kuku", "kuku:3", "kuku:0", "joker:1", "KUKU:1",
                                  "kuku:1:1", " kuku:1", "13:1"])
def test_malformed_card_text_names_the_input(text: str) -> None:
    with pytest.raises(InvalidCardError) as caught:
        Card.parse(text)
    assert repr(text.partition(":")[0]) in str(caught.value) or repr(text) in str(caught.value)


@pytest.mark.parametrize("bad", [None, 7, "13", "Kille", "kile"])
def test_unknown_rank_id(bad: object) -> None:
    with pytest.raises(InvalidCardError, match="unknown card"):
        Rank.from_id(bad)  # type: ignore[arg-type]


def test_card_rejects_bad_fields() -> None:
    with pytest.raises(InvalidCardError):
        Card(Rank.KUKU, 3)
    with pytest.raises(InvalidCardError):
        Card(19, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidCardError):
        Card.from_index(42)
