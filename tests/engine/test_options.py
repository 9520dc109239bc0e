from __future__ import annotations

import dataclasses

import pytest

from p2pkille.engine.errors import InvalidOptionsError
from p2pkille.engine.options import (
    PRESETS,
    HusuEffect,
    KukuEffect,
    Price,
    RedealRule,
    RuleOptions,
    options_from_json,
)


def test_presets_differ_where_the_sources_do() -> None:
    wiki, book, short = PRESETS["wikipedia"], PRESETS["bytes-kille"], PRESETS["enkortskille"]
    assert wiki.husu is HusuEffect.SVINHUGG
    assert book.husu is HusuEffect.KILL_REQUESTER
    assert short.kuku is KukuEffect.REVERT_ALL
    assert wiki.kuku is KukuEffect.STOP
    assert (wiki.min_players, wiki.max_players) == (3, 15)
    assert (short.min_players, short.max_players) == (2, 20)
    assert (book.min_players, book.max_players) == (2, 38)
    assert book.redeal is RedealRule.FRAGE_KILLE
    assert short.redeal is RedealRule.BOTH_OTHERS
    assert short.card_selling
    assert not wiki.card_selling
    assert not book.card_selling


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_options_json_round_trip(name: str) -> None:
    opts = PRESETS[name]
    assert options_from_json("wikipedia", opts.to_json()) == opts


def test_single_override() -> None:
    opts = options_from_json("wikipedia", {"husu": "kill-requester", "buyback_limit": None,
                                           "buyback_prices": ["pot", "twice-pot"]})
    assert opts.husu is HusuEffect.KILL_REQUESTER
    assert opts.buyback_limit is None
    assert opts.buyback_prices == (Price.POT, Price.TWICE_POT)
    assert dataclasses.replace(opts, husu=HusuEffect.SVINHUGG, buyback_limit=3,
                               buyback_prices=PRESETS["wikipedia"].buyback_prices) \
        == PRESETS["wikipedia"]


@pytest.mark.parametrize(
    ("ruleset", "overrides", "needle"),
    [
        ("poker", None, "unknown ruleset"),
        (None, None, "unknown ruleset"),
        ("wikipedia", [], "must be a JSON object"),
        ("wikipedia", {"husu": "bite"}, "option husu"),
        ("wikipedia", {"colour": 1}, "unknown option 'colour'"),
        ("wikipedia", {"max_pick": "4"}, "option max_pick"),
        ("wikipedia", {"max_pick": True}, "option max_pick"),
        ("wikipedia", {"max_pick": 9}, "max_pick must be 1..4"),
        ("wikipedia", {"card_selling": 1}, "option card_selling"),
        ("wikipedia", {"buyback_prices": "pot"}, "option buyback_prices"),
        ("wikipedia", {"buyback_prices": []}, "at least one price"),
        ("wikipedia", {"min_players": 1}, "min_players"),
        ("wikipedia", {"max_players": 40}, "max_players"),
        ("wikipedia", {"redeal": "frage-kille", "redeal_players": 4}, "redeal_players 3"),
        ("wikipedia", {"kuku_call": 3}, "option kuku_call"),
    ],
)
def test_bad_options_name_the_option(ruleset: object, overrides: object, needle: str) -> None:
    with pytest.raises(InvalidOptionsError, match=needle):
        options_from_json(ruleset, overrides)


def test_price_amounts_round_half_pot_up() -> None:
    assert Price.HALF_POT.amount(10, 75) == 38
    assert Price.HALF_POT.amount(10, 74) == 37
    assert Price.TWICE_POT.amount(10, 75) == 150
    assert Price.TWICE_STAKE.amount(10, 75) == 20


def test_constructor_validates() -> None:
    with pytest.raises(InvalidOptionsError):
        RuleOptions(max_pick=0)
