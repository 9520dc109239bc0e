"""The narration explains what the table's rules made of a hand: which showdown rule
killed whom, that a bytes-kille husu kills the one who offered, why nobody died, why a
dead seat may not buy back in. Hands are played fact by fact on the engine."""

from __future__ import annotations

from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Answer, Deal, Fact, Keep, Showdown, Swap
from p2pkille.engine.machine import Game
from p2pkille.engine.options import PRESETS
from p2pkille.ui.narration import Chronicle
from p2pkille.ui.words import Cast

NAMES = ["Anna", "Björn", "Cecilia", "Tester"]
ME = 3


def told(ruleset: str, facts: list[Fact], seats: int = 4, lang: str = "en",
         chips: int = 3, known: dict[int, Rank] | None = None) -> list[str]:
    """The lines told of ``facts`` at a table of ``seats`` (dealer 0: turn order 1, 2, ...,
    0), the player at seat 3."""
    game = Game(PRESETS[ruleset], NAMES[:seats], stake=1, chips=chips, dealer=0,
                record_events=True)
    chronicle = Chronicle()
    for fact in facts:
        before = len(game.events or [])
        game.apply(fact)
        assert game.events is not None
        chronicle.events(game.events[before:], game, hand=game.hand_no, known=known or {},
                         me=ME if seats > ME else None)
    cast = Cast(NAMES[:seats], ME if seats > ME else None)
    return [line.text(lang, cast).strip() for line in chronicle.lines]


def keep_all(seats: int = 4) -> list[Fact]:
    return [Keep(s % seats) for s in range(1, seats + 1)]


def test_two_killing_cards_kill_the_two_lowest_and_the_line_says_so() -> None:
    # Turn order Björn, Cecilia, Tester, Anna: husar and husu shown, 5 and 3 die.
    lines = told("bytes-kille", [Deal(), *keep_all(),
                                 Showdown((Rank.HUSAR, Rank.HUSU, Rank.FIVE, Rank.THREE))])
    why = "one of the two lowest cards at the showdown, where 2 killing cards were shown."
    assert f"You die: {why}" in lines
    assert f"Anna dies: {why}" in lines
    wiki = told("wikipedia", [Deal(), *keep_all(),
                              Showdown((Rank.HUSAR, Rank.HUSU, Rank.FIVE, Rank.THREE))])
    assert "Anna dies: the lowest card at the showdown." in wiki
    assert not any("You die" in line for line in wiki)


def test_one_killing_card_kills_the_lowest() -> None:
    lines = told("enkortskille", [Deal(), *keep_all(),
                                  Showdown((Rank.KUKU, Rank.TEN, Rank.FIVE, Rank.THREE))])
    assert ("Anna dies: the lowest card at the showdown, where one killing card was shown."
            in lines)


def test_a_hand_where_nobody_dies_is_explained() -> None:
    lines = told("bytes-kille", [Deal(), *keep_all(),
                                 Showdown((Rank.TEN, Rank.NINE, Rank.FIVE, Rank.THREE))])
    assert ("Nobody dies: no killing card was shown (a Kille not got by a swap, Husu, Husar)."
            in lines)
    sv = told("bytes-kille", [Deal(), *keep_all(),
                              Showdown((Rank.TEN, Rank.NINE, Rank.FIVE, Rank.THREE))], lang="sv")
    assert ("Ingen dör: inget dödande kort visades (Kille som inte kommit genom byte, Husu, "
            "Husar).") in sv


def test_at_bytes_kille_the_husu_kills_the_one_who_offered() -> None:
    # Björn offers Cecilia, who holds the husu.
    lines = told("bytes-kille", [Deal(), Swap(1), Answer(2, Rank.HUSU)])
    assert lines[-2] == "Cecilia shows the Husu (pig): «Svinhugg går igen!» (The pig's blow " \
        "comes back!)"
    assert lines[-1] == "Björn dies: the Husu (pig) kills whoever offered."
    wiki = told("wikipedia", [Deal(), Swap(1), Answer(2, Rank.HUSU)])
    assert wiki[-1] == "Björn dies: the pig's blow falls on whoever first offered that card."


def test_a_player_who_dies_when_buy_backs_end_is_told() -> None:
    # Four at bytes-kille, one killing card: you die, three are left, buy-backs are over.
    lines = told("bytes-kille", [Deal(), *keep_all(),
                                 Showdown((Rank.HUSAR, Rank.TEN, Rank.THREE, Rank.FIVE))])
    assert "You die: the lowest card at the showdown, where one killing card was shown." in (
        lines)
    assert ("You cannot buy back in: buy-backs end for good once 3 or fewer players are "
            "left.") in lines
    sv = told("bytes-kille", [Deal(), *keep_all(),
                              Showdown((Rank.HUSAR, Rank.TEN, Rank.THREE, Rank.FIVE))],
              lang="sv")
    assert ("Du kan inte köpa in dig igen: återköpen är slut för gott när 3 eller färre "
            "spelare är kvar.") in sv


def test_the_two_left_buy_in_is_announced_when_deaths_leave_two() -> None:
    lines = told("bytes-kille", [Deal(), *keep_all(),
                                 Showdown((Rank.HUSAR, Rank.HUSU, Rank.FIVE, Rank.THREE))])
    assert ("Two players are left: everyone out of the game may buy back in for twice the "
            "pot, 8 chips.") in lines


def test_the_swap_line_names_the_card_the_player_gave_the_blaren_too() -> None:
    # Turn order Björn, Cecilia, Tester (token 2), Anna: the player offers Anna its blaren.
    facts: list[Fact] = [Deal(), Keep(1), Keep(2), Swap(3), Answer(0, None)]
    lines = told("wikipedia", facts, known={2: Rank.BLAREN})
    assert lines[-1] == "You swap with Anna face down: your Blaren (bladder) for Anna's card."
    sv = told("wikipedia", facts, known={2: Rank.BLAREN}, lang="sv")
    assert sv[-1] == "Du byter med Anna med baksidan upp: ditt kort, Blaren, mot Annas kort."
