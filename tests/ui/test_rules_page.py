"""The rules page: the table's own rules in plain words, house rules marked, in both
languages; never a raw dump of the options."""

from __future__ import annotations

import dataclasses
import re

import pytest

from p2pkille.engine.options import PRESETS, RuleOptions, options_from_json
from p2pkille.ui.rules import COVERED, rules_page


def page(options: RuleOptions, ruleset: str, lang: str = "en", stake: int = 1) -> str:
    return "\n".join(p.text for p in rules_page(options, ruleset, stake, lang))


def test_every_option_is_explained_somewhere() -> None:
    assert {f.name for f in dataclasses.fields(RuleOptions)} <= COVERED


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
@pytest.mark.parametrize("lang", ["sv", "en"])
def test_no_raw_settings(ruleset: str, lang: str) -> None:
    text = page(PRESETS[ruleset], ruleset, lang)
    names = [f.name for f in dataclasses.fields(RuleOptions) if "_" in f.name]
    assert not [n for n in names if n in text]
    assert not re.search(r"\bTrue\b|\bFalse\b|\bNone\b|\[\'|_", text)
    assert "[house rule]" not in text
    assert "[husregel]" not in text
    if lang == "sv":
        assert not re.search(r"\b(the|and|you|dies|card)\b", text), text


def test_a_bytes_kille_table_reads_the_bytes_kille_rules() -> None:
    text = page(PRESETS["bytes-kille"], "bytes-kille", stake=2)
    assert "Bytes-Kille from a card-game book" in text
    assert "Husu: no swap; whoever offered dies, as with the Husar." in text
    assert "Svinhugg" not in text  # the wikipedia rule
    assert "the two lowest cards die" in text
    assert "Once a hand leaves 3 or fewer players, buy-backs end for good." in text
    assert "Each buy-back costs twice the stake (4)." in text
    assert "chooses which of the top 4 stock cards" in text
    assert "Fråge-Kille" in text
    assert "«Upp till bevis!»" in text
    assert "The stock is not cut." in text


def test_wikipedia_and_enkortskille_read_their_own() -> None:
    wiki = page(PRESETS["wikipedia"], "wikipedia")
    assert "lowest card die, always" in wiki
    assert "whoever gets the Kille by a swap dies at once" in wiki
    assert "the 1st the stake (1), the 2nd half the pot (rounded up), the 3rd the whole pot" in (
        wiki)
    assert "There are no redeals." in wiki
    enk = page(PRESETS["enkortskille"], "enkortskille")
    assert "Kuku: every swap of the hand is undone" in enk
    assert "the Kuku, the Husu and the Husar" in enk
    assert "may never buy back in" in enk
    assert "2 to 20 players." in enk


def test_house_rules_are_marked_in_both_languages() -> None:
    options = options_from_json("bytes-kille", {"max_pick": 1, "two_left_buyin": False})
    en = page(options, "bytes-kille")
    assert "with house rules" in en
    assert "[house rule] The drawer takes the top card of the stock." in en
    assert "[house rule] There is no buy-in when two are left." in en
    assert "[house rule] Once a hand" not in en
    sv = page(options, "bytes-kille", "sv")
    assert "[husregel] Den som drar tar översta kortet i högen." in sv
    off = page(options_from_json("enkortskille", {"card_selling": False}), "enkortskille")
    assert "[house rule] Nobody may sell the card." in off
