"""``p2pkille selfplay``: a whole bot game, narrated or as JSON, through ``cli.main``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.main import main
from p2pkille.engine.options import PRESETS


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["selfplay", *args])
    out, err = capsys.readouterr()
    return status, out, err


def _doc(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    status, out, err = _run(capsys, *args, "--json")
    assert status == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_a_game_is_narrated_to_its_winner(capsys: pytest.CaptureFixture[str],
                                          ruleset: str) -> None:
    status, out, err = _run(capsys, "--seats", "5", "--ruleset", ruleset, "--seed", "7")
    assert status == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == f"Byteskille, ruleset {ruleset}, seed 7."
    assert "Hand 1: " in out
    assert "Cards: " in out
    assert PRESETS[ruleset].showdown_call in out
    assert " dies: " in out
    last = lines[-1]
    assert " wins the game with " in last
    winner = last.split(" ")[0]
    doc = _doc(capsys, "--seats", "5", "--ruleset", ruleset, "--seed", "7")
    assert doc["winner"] == winner
    assert f"{winner} is the last one standing and takes the pot" in out


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_json_conserves_chips_and_pot(capsys: pytest.CaptureFixture[str], ruleset: str) -> None:
    doc = _doc(capsys, "--seats", "6", "--ruleset", ruleset, "--seed", "3", "--stake", "5",
               "--chips", "60", "--bots", "threshold,tableaware,random")
    assert [s["bot"] for s in doc["seats"]] == ["threshold", "tableaware", "random"] * 2
    total = 6 * 60
    assert doc["hands"]
    for hand in doc["hands"]:
        assert sum(hand["chips"].values()) + hand["pot"] == total
        assert set(hand["died"]) <= set(hand["cards"])
        assert hand["events"][0]["type"] == "deal"
    winner = doc["winner"]
    assert winner is not None
    last = doc["hands"][-1]
    assert last["pot"] == 0
    assert last["in_game"] == [winner]
    assert doc["hands_played"] == len(doc["hands"])


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_same_seed_same_output(capsys: pytest.CaptureFixture[str], ruleset: str) -> None:
    args = ("--seats", "4", "--ruleset", ruleset, "--seed", "11")
    first = _run(capsys, *args)
    assert _run(capsys, *args) == first
    assert _run(capsys, "--seats", "4", "--ruleset", ruleset, "--seed", "12") != first
    assert _doc(capsys, *args) == _doc(capsys, *args)


def test_max_hands_stops_without_a_winner(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _doc(capsys, "--seats", "8", "--max-hands", "1")
    assert doc["winner"] is None
    assert len(doc["hands"]) == 1
    status, out, _ = _run(capsys, "--seats", "8", "--max-hands", "1")
    assert status == 0
    assert out.splitlines()[-1].startswith("No winner after 1 hands")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seats", "2"], "--seats 2: wikipedia plays with 3..15 players"),
        (["--seats", "16"], "--seats 16: wikipedia plays with 3..15 players"),
        (["--ruleset", "enkortskille", "--seats", "21"], "enkortskille plays with 2..20"),
        (["--ruleset", "poker"], "unknown ruleset 'poker'"),
        (["--bots", "threshold,smart"], "unknown bot 'smart'"),
        (["--seats", "five"], "--seats must be a whole number, got 'five'"),
        (["--seed", "-1"], "--seed must be at least 0"),
        (["--stake", "20", "--chips", "10"], "--chips 10 must cover the stake 20"),
        (["--max-hands", "0"], "--max-hands must be at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                            args: list[str], message: str) -> None:
    status, out, err = _run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--seats", "4", "--ruleset", "enkortskille", "--bots", "tableaware"],
         ["offers the card to", "'s card for", "swaps undone", "every swap of the hand is undone"]),
        (["--seats", "3", "--ruleset", "bytes-kille"],
         ["«Bättre kort!» (Better cards!) - asks for a redeal.", "refuses the redeal",
          "«Kuku behåll» (Cuckoo, keep!)", "«Upp till bevis!» (Prove it!)"]),
        (["--seats", "4", "--ruleset", "wikipedia"],
         ["(no exchange: ", "«Jag går i lek!» (I go to the pack!) - goes to the stock.",
          "«Husar hugger!» (The hussar strikes!) - it hews", "does not cut the stock",
          "buys back in for"]),
    ],
)
def test_narration_tells_sales_redeals_and_draws(capsys: pytest.CaptureFixture[str],
                                                 args: list[str], wanted: list[str]) -> None:
    missing = set(wanted)
    for seed in range(80):
        status, out, _ = _run(capsys, *args, "--seed", str(seed))
        assert status == 0
        missing -= {text for text in missing if text in out}
        if not missing:
            break
    assert not missing
