"""``p2pkille sim`` through ``cli.main``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.main import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["sim", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_document_has_the_issue_shape(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "--peers", "3", "--seed", "4", "--json")
    assert status == 0, err
    assert err == ""
    doc: dict[str, Any] = json.loads(out)
    assert set(doc) == {"hands", "winner", "honest_agree", "stats"}
    assert doc["honest_agree"] is True
    assert doc["winner"] in ("P1", "P2", "P3")
    assert set(doc["stats"]) == {"wall_s", "envelopes", "bytes", "scalar_mults", "unfinished"}
    assert doc["stats"]["unfinished"] is False
    assert doc["stats"]["scalar_mults"] > 0
    hand = doc["hands"][0]
    assert set(hand) == {"hand", "died", "pot", "chips", "checkpoint", "agreed_by", "voided",
                         "accusations", "eliminated"}
    assert hand["hand"] == 1
    assert len(bytes.fromhex(hand["checkpoint"])) == 32
    assert hand["agreed_by"] == ["P1", "P2", "P3"]
    assert hand["voided"] is False
    assert hand["accusations"] == []


def test_progress_goes_to_stderr_and_hands_limit(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "--peers", "4", "--hands", "2", "--ruleset",
                            "enkortskille", "--faults", "drop=0.2,dup=0.05,reorder=0.1")
    assert status == 0
    assert err.startswith("hand 1: died ")
    assert "hand 2: " in err
    doc = json.loads(out)
    assert [h["hand"] for h in doc["hands"]] == [1, 2]


def test_the_same_seed_prints_the_same_hands(capsys: pytest.CaptureFixture[str]) -> None:
    docs = []
    for _ in range(2):
        status, out, _err = _run(capsys, "--peers", "3", "--seed", "9", "--hands", "2",
                                 "--json")
        assert status == 0
        docs.append(json.loads(out)["hands"])
    assert docs[0] == docs[1]


@pytest.mark.parametrize("args", [
    ["--peers", "1"],
    ["--peers", "x"],
    ["--peers", "16", "--ruleset", "wikipedia"],
    ["--ruleset", "poker"],
    ["--faults", "drop=2"],
    ["--stake", "5", "--chips", "4"],
])
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                            args: list[str]) -> None:
    status, out, err = _run(capsys, *args)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_byzantine_seat_is_voided_and_blamed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "--peers", "4", "--hands", "2", "--seed", "5",
                            "--byzantine", "P3:bad-shuffle", "--json")
    assert status == 0, err
    doc: dict[str, Any] = json.loads(out)
    assert doc["honest_agree"] is True
    first = doc["hands"][0]
    assert first["voided"] is True
    assert first["eliminated"] == ["P3"]
    assert {(a["accused"], a["verdict"]) for a in first["accusations"]} == {("P3", "proven")}
    assert all({"accused", "by", "reason"} <= set(a) for a in first["accusations"])
    assert doc["hands"][1]["voided"] is False
    assert "P3" not in doc["hands"][1]["agreed_by"]


@pytest.mark.parametrize("spec", ["P9:garbage", "P1:nice", "X:garbage", "P1"])
def test_bad_byzantine_specs_are_refused(capsys: pytest.CaptureFixture[str], spec: str) -> None:
    status, out, err = _run(capsys, "--peers", "3", "--byzantine", spec)
    assert status == 2
    assert out == ""
    assert "--byzantine" in err


def test_threads_change_nothing_but_the_time(capsys: pytest.CaptureFixture[str]) -> None:
    hands = []
    for threads in ("1", "2", "3"):
        status, out, err = _run(capsys, "--peers", "3", "--hands", "2", "--mode", "strict",
                                "--threads", threads, "--json")
        assert status == 0, err
        hands.append(json.loads(out)["hands"])
    assert hands[0] == hands[1] == hands[2]
    status, _, err = _run(capsys, "--threads", "-1")
    assert status == 2
    assert "--threads" in err
