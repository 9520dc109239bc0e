"""The table screen at the smallest windows it supports (72x24, 80x24): nothing is cut,
long lines wrap, the narration keeps room and scrolls back over the whole game, ``l``
switches every word, status lines end with their hand, Ctrl-C asks as ``q`` does.

A table plays up to a question in its second hand and stops; the screen is then
driven directly (its keys and renders), with no terminal and no clock.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from prompt_toolkit.input import create_pipe_input

from p2pkille.engine.events import Event
from p2pkille.ui.model import LOG_ROOM, TableScreen
from p2pkille.ui.narration import said
from tests.ui.pilot import answer_one, run_with, setup, wait_for

SIZES = [(72, 24), (80, 24)]


def frozen_table(bots: int, hands: int = 2) -> TableScreen:
    """A screen whose table played until the player's first question in hand ``hands``."""
    with create_pipe_input() as inp:
        table, screen, app, _clock = setup(inp, bots=bots, seed=11, chips=5)

        async def body() -> None:
            def asked_in_hand() -> bool:
                return (table.decider.request is not None
                        and len(table.human.outcomes) >= hands - 1)

            while not asked_in_hand():
                await answer_one(screen, inp)
                await wait_for(lambda: table.decider.request is not None)

        asyncio.run(run_with(app, table, screen, body))
    screen.lang = "en"
    return screen


@pytest.fixture(scope="module")
def four() -> TableScreen:
    return frozen_table(3)


def log_part(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─ What happened"))
    return [line for line in lines[start + 1:-1] if line.strip()]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_nothing_is_cut_and_long_lines_wrap(four: TableScreen, width: int, height: int) -> None:
    long = said("cause_other", cause="Undone with the hand: the pot is 6 again (it was 7); "
                "Cecilia has 9 chips again (not 8); Anna's death; Cecilia's buy-back for 1 "
                "chip; your death.")
    four.chronicle.add(long)
    try:
        text = four.text(width, height)
        lines = text.splitlines()
        assert len(lines) == height
        assert all(len(line) <= width - 1 for line in lines), [
            line for line in lines if len(line) >= width]
        joined = " ".join(" ".join(lines).split())
        # The header says all of the last hand's trust line and who died.
        outcome = four.table.human.outcomes[-1]
        assert f"Hand {outcome.hand}: verified by all 4 peers (checkpoint " in joined
        assert re.search(rf"Died in hand {outcome.hand}: (nobody|[\w ,]+)", joined)
        # The long narration line is there whole, over several lines.
        whole = " ".join(long.text("en", four.cast()).split())
        assert whole in joined
        assert len(whole) > width
    finally:
        four.chronicle.lines.remove(long)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_narration_keeps_room_at_the_smallest_size(four: TableScreen, width: int,
                                                       height: int) -> None:
    assert four.table.decider.request is not None  # the moves are on screen too
    text = four.text(width, height)
    assert "Your moves:" in text
    assert len(log_part(text)) >= LOG_ROOM, text


def test_the_whole_game_scrolls_back(four: TableScreen) -> None:
    game = four.game
    assert game is not None
    added = [said("cause_other", cause=f"line {i:03d}") for i in range(120)]
    four.chronicle.lines.extend(added)
    try:
        newest = log_part(four.text(72, 24))
        assert newest[-1].strip() == "line 119"
        four.press("pageup")
        page = log_part(four.text(72, 24))
        assert "line 119" not in " ".join(page)
        assert re.search(r"\d+ newer lines below, End: newest", four.text(72, 24))
        four.press("up")
        assert log_part(four.text(72, 24))[-1] != page[-1]
        four.press("down")
        assert log_part(four.text(72, 24)) == page
        # New lines while scrolled back keep the view where it is.
        four._on_events([Event("keep", seat=0, call="Jag är nöjd!")], game)
        assert log_part(four.text(72, 24)) == page
        four.press("home")
        assert log_part(four.text(72, 24))[0].startswith("Hand 1: ")
        four.press("end")
        assert log_part(four.text(72, 24))[-1].strip().endswith("(I'm content!)")
        assert "newer lines below" not in four.text(72, 24)
    finally:
        del four.chronicle.lines[-121:]


def test_l_switches_every_word(four: TableScreen) -> None:
    english = four.text(80, 24)
    assert english.startswith("p2pkille · you and 3 bots · wikipedia · stake 1 · audit table")
    four.press("l")
    try:
        swedish = four.text(80, 24)
        assert swedish.startswith("p2pkille · du och 3 botar · wikipedia · insats 1 · "
                                  "granskat bord")
        words = set(re.findall(r"[A-Za-z]+", swedish))
        english_words = {"you", "You", "Your", "Hand", "Pot", "chips", "chip", "alive", "dead",
                         "swap", "keep", "What", "happened", "the", "and", "bots", "dealer",
                         "offers", "verified", "peers", "Died"}
        assert not words & english_words, words & english_words
        assert "Tester (du)" in swedish
        assert not re.search(r"\((you|du)\) \((you|du)\)", swedish)
    finally:
        four.press("l")


def test_a_status_line_ends_with_its_hand(four: TableScreen) -> None:
    game = four.game
    assert game is not None
    four.notice = four.t("sent", what="«Jag är nöjd!»")
    before = len(four.chronicle.lines)
    four._on_events([Event("deal", seat=0, other=1, amount=game.hand_no)], game)
    try:
        assert four.notice == ""
        assert "Sent:" not in four.text(80, 24)
    finally:
        del four.chronicle.lines[before:]


def test_ctrl_c_asks_as_q_does(four: TableScreen) -> None:
    four.press("interrupt")
    assert not leaving(four)
    text = four.text(80, 30)
    assert "Press q again to leave the table (or Ctrl-C)" in " ".join(text.split())
    # The player still plays: what leaving does to the others is said plainly.
    assert ("at a table with other people, they get a signed word that you left, settle "
            "your seat at once") in " ".join(text.split())
    four.press("k")  # any other key stays
    assert not leaving(four)
    four.press("interrupt")
    four.interrupt()
    assert leaving(four)
    assert four.interrupted
    four.quit = four.interrupted = False


def leaving(screen: TableScreen) -> bool:
    return screen.quit


def test_a_large_table_fits_the_smallest_window() -> None:
    screen = frozen_table(14, hands=1)
    names = screen.table.seat_names()
    assert len(names) == 15
    for width, height in SIZES:
        text = screen.text(width, height)
        lines = text.splitlines()
        assert all(len(line) <= width - 1 for line in lines)
        for seat, name in enumerate(names):
            shown = "You" if seat == screen.table.human.my_seat else name
            assert re.search(rf"[▶ ] {shown} ", text), (shown, text)
        assert len(log_part(text)) >= 3, text
