from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.engine.cards import ANSWERING, Rank
from p2pkille.engine.errors import InvalidFactError
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    BuyIn,
    Cut,
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
    fact_from_json,
    fact_to_json,
)
from protocol.errors import RemoteProtocolError

seats = st.integers(0, 63)
ranks = st.sampled_from(list(Rank))
facts: st.SearchStrategy[Fact] = st.one_of(
    st.just(Deal()),
    st.builds(Keep, seats),
    st.builds(Swap, seats, st.none() | st.integers(1, 4)),
    st.builds(AskRedeal, seats),
    st.builds(Vote, seats, st.sampled_from(list(VoteChoice))),
    st.builds(Sell, seats, seats, st.integers(0, 10**6)),
    st.builds(SaleAnswer, seats, st.booleans()),
    st.builds(Cut, seats, st.integers(0, 40)),
    st.builds(BuyIn, seats),
    st.builds(Decline, seats),
    st.builds(Answer, seats, st.none() | st.sampled_from(sorted(ANSWERING))),
    st.builds(Disclosure, seats, st.booleans()),
    st.builds(StockCard, seats, ranks),
    st.builds(Showdown, st.lists(ranks, max_size=20).map(tuple)),
)


@given(facts)
def test_fact_json_round_trip(fact: Fact) -> None:
    text = fact_to_json(fact)
    assert fact_from_json(text) == fact
    assert fact_from_json(text.encode()) == fact


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=10,
)


@given(st.one_of(st.text(), st.binary()))
def test_any_text_parses_or_raises_the_remote_error(text: str | bytes) -> None:
    try:
        fact_from_json(text)
    except RemoteProtocolError as exc:
        assert type(exc) is InvalidFactError  # noqa: PT017 (any text: parse or this error)


@given(facts, st.sampled_from(["seat", "pick", "shown", "rank", "ranks", "choice", "price",
                               "buyer", "accept", "kille", "at", "type", "extra"]), json_values)
def test_mutated_facts_parse_or_raise_the_remote_error(fact: Fact, key: str,
                                                       value: object) -> None:
    data = json.loads(fact_to_json(fact))
    data[key] = value
    try:
        parsed = fact_from_json(json.dumps(data))
    except InvalidFactError:
        return
    assert fact_from_json(fact_to_json(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{", "not JSON"),
        ("[]", "JSON object"),
        ('{"type": "dance"}', "unknown fact type"),
        ('{"type": "keep"}', "missing 'seat'"),
        ('{"type": "keep", "seat": true}', "seat"),
        ('{"type": "keep", "seat": -1}', "seat"),
        ('{"type": "swap", "seat": 1, "pick": 5}', "pick"),
        ('{"type": "answer", "seat": 1, "shown": "7"}', "not a card a target shows"),
        ('{"type": "answer", "seat": 1, "shown": "joker"}', "unknown card"),
        ('{"type": "keep", "seat": 1, "face": "kuku"}', "unexpected keys"),
        ('{"type": "vote", "seat": 1, "choice": "maybe"}', "choice"),
        ('{"type": "sell", "seat": 1, "buyer": 2, "price": -3}', "price"),
        ('{"type": "showdown", "ranks": "kuku"}', "ranks"),
    ],
)
def test_bad_facts_name_the_problem(text: str, needle: str) -> None:
    with pytest.raises(InvalidFactError, match=needle):
        fact_from_json(text)
