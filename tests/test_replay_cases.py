"""The worked examples of docs/rules.md, replayed through ``run_replay`` and the CLI.

Each file in ``tests/replay_cases/`` is one case whose expected output was derived
by hand from the source texts and rulings, independently of the engine:

``{"name", "source", "why", "input", "expect", "calls"}`` for a game that plays, where
``expect`` is the replay output without the hands' ``events`` and ``calls`` lists
traditional calls that must appear, in this order, among the ``call`` fields of
the events (other events may come between them); or
``{"name", "source", "why", "input", "error": {"hand", "move", "contains"}}`` for bad
input, where ``contains`` must occur (case-insensitively) in the error's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from p2pkille.replay import ReplayError, run_replay

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = Path(__file__).resolve().parent / "replay_cases"
CASE_FILES = sorted(CASES_DIR.glob("*.json"))
RULESETS = ("wikipedia", "bytes-kille", "enkortskille")


def _load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def _without_events(output: dict[str, object]) -> dict[str, object]:
    hands = output.get("hands")
    assert isinstance(hands, list), output
    stripped = dict(output)
    stripped["hands"] = [
        {key: value for key, value in hand.items() if key != "events"} for hand in hands
    ]
    return stripped


def _calls(output: dict[str, object]) -> list[str]:
    hands = output["hands"]
    assert isinstance(hands, list)
    calls: list[str] = []
    for hand in hands:
        events = hand["events"]
        assert isinstance(events, list), hand
        for event in events:
            assert isinstance(event, dict), event
            assert isinstance(event.get("type"), str), event
            assert event["type"], event
            if "call" in event:
                assert isinstance(event["call"], str), event
                calls.append(event["call"])
    return calls


def _is_subsequence(wanted: list[str], seen: list[str]) -> bool:
    remaining = iter(seen)
    return all(any(call == item for item in remaining) for call in wanted)


def _error_prefix(hand: int | None, move: int | None) -> str:
    if hand is None:
        return ""
    if move is None:
        return f"hand {hand}: "
    return f"hand {hand}, move {move}: "


def test_case_files_are_well_formed() -> None:
    assert len(CASE_FILES) >= 35
    names = set()
    for path in CASE_FILES:
        case = _load(path)
        assert case["name"] == path.stem, path
        assert case["name"] not in names
        names.add(case["name"])
        for key in ("source", "why"):
            assert isinstance(case[key], str), path
            assert case[key], path
        assert "input" in case, path
        assert ("expect" in case) != ("error" in case), path
        if "expect" in case:
            assert isinstance(case["calls"], list), path
            assert all(isinstance(call, str) for call in case["calls"]), path
            assert case["input"]["ruleset"] in RULESETS, path
            assert len(case["expect"]["hands"]) == len(case["input"]["hands"]), path
        else:
            assert set(case["error"]) == {"hand", "move", "contains"}, path


FACE_RANKS = (
    "kille",
    "kuku",
    "husar",
    "husu",
    "kavall",
    "vardshus",
    "kransen",
    "blompottan",
    "blaren",
)
RANKS = {*FACE_RANKS, *(str(n) for n in range(1, 13))}


def test_hand_derived_outputs_are_consistent() -> None:
    # A check of the cases themselves: chips and pot are conserved, each hand uses at
    # most two copies of a rank, and a finished game has an empty pot.
    for path in CASE_FILES:
        case = _load(path)
        if "expect" not in case:
            continue
        game, expect = case["input"], case["expect"]
        total = len(game["seats"]) * game["chips"]
        for given, got in zip(game["hands"], expect["hands"], strict=True):
            assert sum(got["chips"].values()) + got["pot"] == total, path
            assert set(got["chips"]) == set(game["seats"]), path
            dealt = [*given["cards"].values(), *given["stock"]]
            assert set(dealt) <= RANKS, path
            assert all(dealt.count(rank) <= 2 for rank in dealt), path
            assert set(got["held"].values()) <= RANKS, path
            assert set(got["died"]) <= set(game["seats"]), path
            assert got["died"] == [s for s in game["seats"] if s in got["died"]], path
        if expect["winner"] is not None:
            assert expect["hands"][-1]["pot"] == 0, path
            assert expect["hands"][-1]["in_game"] == [expect["winner"]], path


def test_every_ruleset_has_cases() -> None:
    seen = {_load(path)["input"].get("ruleset") for path in CASE_FILES if "expect" in _load(path)}
    assert set(RULESETS) <= seen


def test_subsequence_check_can_fail() -> None:
    assert _is_subsequence(["a", "c"], ["a", "b", "c"])
    assert not _is_subsequence(["c", "a"], ["a", "b", "c"])
    assert not _is_subsequence(["a", "a"], ["a"])


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda path: path.stem)
def test_replay_case(path: Path) -> None:
    case = _load(path)
    if "error" in case:
        want = case["error"]
        with pytest.raises(ReplayError) as caught:
            run_replay(case["input"])
        err = caught.value
        assert (err.hand, err.move) == (want["hand"], want["move"]), str(err)
        assert want["contains"].casefold() in err.message.casefold(), str(err)
        assert str(err) == _error_prefix(err.hand, err.move) + err.message
        return
    output = run_replay(case["input"])
    assert _without_events(output) == case["expect"], case["why"]
    calls = _calls(output)
    assert _is_subsequence(case["calls"], calls), (case["calls"], calls)


def _first(kind: str) -> Path:
    for path in CASE_FILES:
        if kind in _load(path):
            return path
    raise AssertionError(f"no case with {kind!r}")


def _write_input(tmp_path: Path, case_path: Path) -> Path:
    target = tmp_path / "input.json"
    target.write_text(json.dumps(_load(case_path)["input"]), encoding="utf-8")
    return target


def test_cli_prints_one_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case_path = _first("expect")
    status = main(["replay", str(_write_input(tmp_path, case_path))])
    out, err = capsys.readouterr()
    assert status == 0
    assert err == ""
    assert json.loads(out) == run_replay(_load(case_path)["input"])


def _assert_bad_input(status: int, out: str, err: str) -> str:
    assert status == 2
    assert out == ""
    assert err.endswith("\n"), err
    assert err.count("\n") == 1, err
    return err.rstrip("\n")


def test_cli_bad_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = _load(_first("error"))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(case["input"]), encoding="utf-8")
    status = main(["replay", str(path)])
    line = _assert_bad_input(status, *capsys.readouterr())
    with pytest.raises(ReplayError) as caught:
        run_replay(case["input"])
    assert line == str(caught.value)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"ruleset": ', "not JSON"),
        (b"[NaN]", "NaN"),
        (b"\xff\xfe", "UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
        (b"1" * 5_000, "limit"),
    ],
)
def test_cli_unparsable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    line = _assert_bad_input(main(["replay", str(path)]), *capsys.readouterr())
    assert needle in line


def test_cli_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.json"
    line = _assert_bad_input(main(["replay", str(missing)]), *capsys.readouterr())
    assert str(missing) in line


def test_cli_reads_stdin_in_a_subprocess() -> None:
    good = _load(_first("expect"))["input"]
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "replay", "-"],
        input=json.dumps(good).encode("utf-8"),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert json.loads(done.stdout.decode("utf-8")) == run_replay(good)

    bad = _load(_first("error"))["input"]
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "replay", "-"],
        input=json.dumps(bad).encode("utf-8"),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.count(b"\n") == 1, done.stderr


RULES_DOC = ROOT / "docs" / "rules.md"


def rule_options_table() -> str:
    """The table of docs/rules.md "Rule options", generated from the presets themselves."""
    from p2pkille.engine.options import PRESETS

    names = list(PRESETS)
    rows = [
        "| option | " + " | ".join(f"`{name}`" for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    values = {name: PRESETS[name].to_json() for name in names}
    for option in values[names[0]]:
        cells = [f"`{json.dumps(values[name][option], ensure_ascii=False)}`" for name in names]
        rows.append(f"| `{option}` | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def test_rules_doc_shows_the_presets_as_they_are() -> None:
    # The doc's table is generated from PRESETS, so it cannot drift from the engine:
    # regenerate it with `python -c "from tests.test_replay_cases import *;
    # print(rule_options_table())"` when an option changes.
    text = RULES_DOC.read_text(encoding="utf-8")
    assert rule_options_table() in text, rule_options_table()
    from p2pkille.engine.options import RuleOptions

    section = text.split("## Rule options", 1)[1].split("\n## ", 1)[0]
    for option in RuleOptions().to_json():
        assert f"- `{option}`" in section, f"docs/rules.md does not describe option {option}"


def test_rules_doc_and_cases_name_each_other() -> None:
    import re

    text = RULES_DOC.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:wikipedia|bytes_kille|enkortskille|error)_[a-z_]+)`", text))
    assert named, "docs/rules.md names no worked example"
    missing = sorted(name for name in named if not (CASES_DIR / f"{name}.json").exists())
    assert not missing, missing
    unnamed = sorted(path.stem for path in CASE_FILES if path.stem not in named)
    assert not unnamed, f"cases docs/rules.md does not name: {unnamed}"


def test_cli_reader_going_away_is_not_a_crash(tmp_path: Path) -> None:
    path = _write_input(tmp_path, CASES_DIR / "wikipedia_rotation_and_winner.json")
    child = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "replay", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert child.stdout is not None
    child.stdout.close()  # the reader leaves before the document is written
    _, err = child.communicate(timeout=60)
    assert child.returncode in (0, 1)
    assert b"Traceback" not in err, err


def _doc_section(title: str) -> str:
    text = RULES_DOC.read_text(encoding="utf-8")
    assert f"\n## {title}\n" in text, title
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_rules_doc_defines_the_replay_format() -> None:
    # docs/rules.md itself defines the replay input, output and events: every key the
    # replay reads, every move verb and every event the engine emits is in that section.
    import re

    from p2pkille import replay

    section = _doc_section("The replay tool")
    keys = [*replay._TOP_KEYS, *replay._HAND_KEYS]
    output = ["hands", "winner", "dealer", "died", "held", "pot", "chips", "in_game",
              "events", "redealt"]
    missing = [key for key in [*keys, *output] if f"`{key}`" not in section]
    assert not missing, f"docs/rules.md does not define replay keys {missing}"
    verbs = ["keep", "swap", "redeal", "sell", "agree", "refuse", "depends", "accept",
             "reject", "buyin", "decline"]
    missing = [verb for verb in verbs if f'"{verb}"' not in section]
    assert not missing, f"docs/rules.md does not define the moves {missing}"
    engine = ROOT / "p2pkille" / "engine"
    kinds = {kind for path in engine.glob("*.py")
             for kind in re.findall(r'Event\(\s*"([a-z_]+)"', path.read_text(encoding="utf-8"))}
    assert len(kinds) > 20
    missing = sorted(kind for kind in kinds if f'{{"type": "{kind}"' not in section)
    assert not missing, f"docs/rules.md does not define the events {missing}"


def test_rules_doc_files_card_selling_at_any_table_size() -> None:
    # A sale is allowed at any table size (rulings.md, card sale), so the doc does not
    # file it under the endgames, neither in "A turn" nor as a part of "Endgames".
    turn = _doc_section("A turn")
    selling = next(line for line in turn.split("\n- ") if "**sell the card**" in line)
    assert "any table size" in selling
    assert "(#endgames)" not in selling
    assert not selling.startswith("in an endgame")
    assert "Card selling" not in _doc_section("Endgames")
    assert "at any table size" in _doc_section("Card selling (`enkortskille`)")
