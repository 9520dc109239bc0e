"""run_replay: the issue's sample, every kind of bad input, and fuzzing."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.replay import ReplayError, run_replay

SAMPLE: dict[str, Any] = {
    "ruleset": "wikipedia",
    "options": {},
    "seats": ["A", "B", "C", "D"],
    "stake": 10,
    "chips": 100,
    "dealer": "D",
    "hands": [
        {
            "cards": {"A": "7", "B": "3", "C": "kavall", "D": "husar"},
            "stock": ["kuku", "12"],
            "moves": [["A", "swap"], ["B", "swap"], ["C", "keep"], ["D", "keep"]],
            "after": [["A", "buyin"]],
        }
    ],
}


def test_issue_sample_gives_the_issue_output() -> None:
    out = run_replay(copy.deepcopy(SAMPLE))
    hands = out["hands"]
    assert isinstance(hands, list)
    events = hands[0].pop("events")
    assert out == {
        "hands": [
            {"dealer": "D", "died": ["A", "B"],
             "held": {"A": "3", "B": "7", "C": "kavall", "D": "husar"},
             "pot": 50, "chips": {"A": 80, "B": 90, "C": 90, "D": 90},
             "in_game": ["A", "C", "D"]}
        ],
        "winner": None,
    }
    assert [e.get("call") for e in events if "call" in e] == [
        "Kavall förbi!", "Husar hugger!", "Jag är nöjd!", "Jag är nöjd!", "På rygg!"]
    json.dumps(out)  # JSON-ready


def _bad(edit: Any) -> ReplayError:
    doc = copy.deepcopy(SAMPLE)
    edit(doc)
    with pytest.raises(ReplayError) as caught:
        run_replay(doc)
    err = caught.value
    prefix = ("" if err.hand is None else f"hand {err.hand}: " if err.move is None
              else f"hand {err.hand}, move {err.move}: ")
    assert str(err) == prefix + err.message
    return err


def _hand(doc: dict[str, Any]) -> dict[str, Any]:
    hand: dict[str, Any] = doc["hands"][0]
    return hand


@pytest.mark.parametrize(
    ("name", "edit", "where", "needle"),
    [
        ("unknown card", lambda d: _hand(d)["cards"].update(A="joker"), (1, None),
         "unknown card 'joker'"),
        ("third copy", lambda d: _hand(d).update(stock=["husar", "husar"]), (1, None),
         "a third husar"),
        ("seat without a card", lambda d: _hand(d)["cards"].pop("C"), (1, None),
         "C has no card"),
        ("card for a stranger", lambda d: _hand(d)["cards"].update(E="1"), (1, None),
         "'E' is not a seat"),
        ("stock too short", lambda d: _hand(d).update(
            moves=[["A", "keep"], ["B", "keep"], ["C", "keep"], ["D", "swap"]], stock=[]),
         (1, 4), "stock is too short"),
        ("out of turn", lambda d: _hand(d)["moves"].insert(1, ["C", "keep"]), (1, 2),
         "move out of turn: C moved but B was expected"),
        ("moves left over", lambda d: _hand(d)["moves"].append(["A", "keep"]), (1, 5),
         "left over"),
        ("moves missing", lambda d: _hand(d)["moves"].pop(), (1, 4),
         "moves missing: D was expected"),
        ("hand after the end", lambda d: d.update(seats=["A", "B", "C"], dealer="C", hands=[
            {"cards": {"A": "5", "B": "husu", "C": "9"},
             "moves": [["A", "swap"], ["B", "keep"], ["C", "keep"]]},
            {"cards": {"B": "1"}, "moves": []}]), (2, None), "after the game has ended"),
        ("after: no choice", lambda d: _hand(d).update(after=[["C", "buyin"]]), (1, None),
         "C has no buy-in choice"),
        ("after: bad verb", lambda d: _hand(d).update(after=[["A", "pay"]]), (1, None),
         "expected 'buyin' or 'decline'"),
        ("after: twice", lambda d: _hand(d).update(after=[["A", "buyin"], ["A", "decline"]]),
         (1, None), "named twice"),
        ("after: cannot pay", lambda d: d.update(chips=10), (1, None), "cannot pay"),
        ("pick without picking", lambda d: _hand(d)["moves"].__setitem__(0, ["A", "swap", 2]),
         (1, 1), "no picking"),
        ("wrong verb", lambda d: _hand(d)["moves"].__setitem__(0, ["A", "agree"]), (1, 1),
         "A cannot 'agree' now"),
        ("move shape", lambda d: _hand(d)["moves"].__setitem__(2, "C keep"), (1, 3),
         "a move must be"),
        ("unknown seat in a move", lambda d: _hand(d)["moves"].__setitem__(0, ["Z", "keep"]),
         (1, 1), "unknown seat 'Z'"),
        ("sale under wikipedia", lambda d: _hand(d)["moves"].__setitem__(0, ["A", "sell", "B", 3]),
         (1, 1), "no card sales"),
        ("not an object", lambda d: d.clear() or d.update(hands=7, seats=[], stake=1, chips=1,
                                                          dealer="A"), (None, None),
         "seats"),
        ("unknown ruleset", lambda d: d.update(ruleset="poker"), (None, None), "unknown ruleset"),
        ("bad option", lambda d: d.update(options={"husu": 1}), (None, None), "option husu"),
        ("stake type", lambda d: d.update(stake="10"), (None, None), "stake"),
        ("bool stake", lambda d: d.update(stake=True), (None, None), "stake"),
        ("dealer unknown", lambda d: d.update(dealer="Q"), (None, None), "dealer"),
        ("too few seats", lambda d: d.update(seats=["A", "B"], dealer="A"), (None, None),
         "3..15"),
        ("unknown key", lambda d: d.update(colour="red"), (None, None), "unknown key"),
        ("hand not an object", lambda d: d.update(hands=[[]]), (1, None), "JSON object"),
    ],
)
def test_bad_input(name: str, edit: Any, where: tuple[int | None, int | None],
                   needle: str) -> None:
    err = _bad(edit)
    assert (err.hand, err.move) == where, str(err)
    assert needle in err.message, str(err)


@pytest.mark.parametrize("doc", [None, 3, "x", [], [SAMPLE], {"hands": []}, True])
def test_non_object_documents(doc: object) -> None:
    with pytest.raises(ReplayError):
        run_replay(doc)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 200) | st.text(max_size=8)
    | st.sampled_from(["A", "B", "C", "D", "swap", "keep", "kuku", "husar", "buyin"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=5),
    max_leaves=12,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@given(st.data(), json_values)
def test_any_mutation_gives_output_or_replay_error(data: st.DataObject, value: object) -> None:
    doc = copy.deepcopy(SAMPLE)
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    target: Any = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    try:
        out = run_replay(doc)
    except ReplayError:
        return
    json.dumps(out)


@given(json_values)
def test_any_json_value_gives_a_replay_error(value: object) -> None:
    with pytest.raises(ReplayError):
        run_replay(value)
