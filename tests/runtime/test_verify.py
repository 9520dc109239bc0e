"""``p2pkille verify``: a clean log verifies, a recorded fault is found again with the
same kind and seat, a tampered log is reported clearly."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from cli.main import main
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.log import MAGIC, LoggedNode, load_log, verify_log
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.sim.byzantine import BEHAVIOURS, WrongShare
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, build_table
from protocol import canonical
from protocol.envelope import Envelope
from tests.runtime.bots import Restless
from tests.runtime.test_log import logged_table


def _verify(capsys: pytest.CaptureFixture[str], path: str | Path) -> tuple[int, dict[str, object]]:
    status = main(["verify", str(path), "--json"])
    out = capsys.readouterr().out
    return status, json.loads(out) if out else {}


def test_a_whole_clean_game_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table, logged = logged_table(tmp_path, 3, seed=3)
    run = table.run()
    assert run.honest_agree
    for wrapper in logged:
        wrapper.close()
    node = table.nodes[1]
    status, doc = _verify(capsys, logged[1].path)
    assert status == 0
    assert doc["clean"] is True
    assert doc["complete"] is True
    assert doc["fault"] is None
    assert doc["hands"] == [o.to_json() for o in node.outcomes]
    assert doc["winner"] == run.document()["winner"]
    assert doc["seat"] == node.names[node.my_seat or 0]
    # The text form names the winner and every checkpoint.
    assert main(["verify", logged[1].path]) == 0
    text = capsys.readouterr().out
    assert f"winner {doc['winner']}" in text
    assert all(o.checkpoint in text for o in node.outcomes)


class BadShuffleCommit(Behaviour):
    """Publishes a shuffle whose commitment does not bind its deck: the audit blames it."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.SHUFFLE:
            body = {**body, "commit": canonical.b64encode(bytes(32))}
        return [body]


@pytest.mark.parametrize(("cls", "cheat", "kind"), [
    (WrongShare, 0, FaultKind.BAD_SHARE),
    (BadShuffleCommit, 2, FaultKind.AUDIT),
])
def test_verify_finds_the_fault_the_live_node_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cls: type[Behaviour], cheat: int,
        kind: FaultKind) -> None:
    table, logged = logged_table(tmp_path, 3, seed=4)
    cheater = table.nodes[cheat]
    cheater.behaviour = cls()
    table.run(until=30.0)
    victims = [w for w in logged if w.node is not cheater and w.node.faults]
    assert victims, "the cheat was not detected live"
    for wrapper in victims:
        wrapper.close()
        live = wrapper.node.faults[0]
        assert (live.kind, live.seat) == (kind, cheater.my_seat)
        status, doc = _verify(capsys, wrapper.path)
        assert status == 1
        fault = doc["fault"]
        assert isinstance(fault, dict)
        assert fault["kind"] == kind.value
        assert fault["accused"] == wrapper.node.names[live.seat or 0]
        assert fault["hand"] == live.hand
        assert [(f["kind"], f["accused"]) for f in doc["faults"]] == [  # type: ignore[attr-defined]
            (f.kind.value, wrapper.node.names[f.seat or 0]) for f in wrapper.node.faults]
        assert main(["verify", wrapper.path]) == 1
        assert f"FAULT {kind.value}" in capsys.readouterr().out


def test_an_equivocation_the_node_saw_is_kept_in_the_log_and_found_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table, logged = logged_table(tmp_path, 3, seed=6)
    table.run(max_hands=1)
    victim, cheater = logged[0], table.nodes[2]
    fork = Envelope.seal(cheater.identity, table=cheater.config.table_id, seq=1,
                         prev=bytes(32), kind=msg.COMMIT,
                         body={"commit": canonical.b64encode(bytes(32)), "hand": 0})
    victim.receive("n3", fork.wire, 100.0)
    victim.close()
    assert len(load_log(victim.path).evidence) == 1
    status, doc = _verify(capsys, victim.path)
    assert status == 1
    assert doc["fault"]["kind"] == "equivocation"  # type: ignore[index]
    assert doc["fault"]["accused"] == cheater.names[cheater.my_seat or 0]  # type: ignore[index]


def _game_log(tmp_path: Path) -> LoggedNode:
    table, logged = logged_table(tmp_path, 3, seed=5)
    table.run(max_hands=1)
    for wrapper in logged:
        wrapper.close()
    return logged[0]


def test_a_flipped_byte_is_reported_as_unreadable_with_the_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(_game_log(tmp_path).path)
    data = bytearray(path.read_bytes())
    at = bytes(data).index(load_log(path).envelopes[10])
    data[at + 40] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["verify", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "record 11 at offset" in lines[0]
    assert "checksum mismatch" in lines[0]


def test_a_tampered_envelope_with_a_fixed_checksum_fails_its_signature(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(_game_log(tmp_path).path)
    data = path.read_bytes()
    wire = load_log(path).envelopes[10]
    at = data.index(wire)
    # Change a digit in the body and recompute the record's checksum, as a forger would.
    body_at = wire.index(b'"hand":') + 7
    forged = wire[:body_at] + bytes([wire[body_at] ^ 0x01]) + wire[body_at + 1:]
    payload = b"E" + forged
    end = at + len(wire)
    data = (data[:at] + forged + zlib.crc32(payload).to_bytes(4, "big")
            + data[end + 4:])
    path.write_bytes(data)
    status, doc = _verify(capsys, path)
    assert status == 1
    fault = doc["fault"]
    assert isinstance(fault, dict)
    assert fault["kind"] == "tampered"
    assert fault["record"] == 11
    assert fault["accused"] is None
    assert "not an authentic envelope" in str(fault["reason"])


@pytest.mark.parametrize("content", [b"", b"junk", MAGIC])
def test_unreadable_logs_exit_2_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unreadable" in err
    assert main(["verify", str(tmp_path / "missing.log")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_a_torn_log_of_a_crashed_node_verifies_what_it_holds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrapper = _game_log(tmp_path)
    path = Path(wrapper.path)
    path.write_bytes(path.read_bytes()[:-7])
    status, doc = _verify(capsys, path)
    assert status == 0
    assert isinstance(doc["torn_bytes"], int)
    assert doc["torn_bytes"] > 0
    assert doc["records"] == len(load_log(path).order)
    assert main(["verify", str(path)]) == 0
    assert "torn bytes dropped" in capsys.readouterr().out


def test_an_honest_log_of_a_game_with_a_withholding_peer_verifies_without_a_fork(
        tmp_path: Path) -> None:
    # The honest member voted the withholder's time out: verify must take that vote as
    # the member's own (it has no clock to re-derive it), not report its chain forked.
    plain = build_table(3, seed=4, chips=4, timing=Timing(limit=5.0, decide_limit=5.0),
                        byzantine={1: "withhold"})
    network = SimNetwork(4, plain.network.faults)
    logged = [LoggedNode(n, tmp_path / f"{n.name}.log", durable=False) for n in plain.nodes]
    for wrapper in logged:
        network.add(wrapper)
    run = SimTable(list(plain.nodes), network, plain.byzantine).run(until=600.0, max_hands=2)
    for wrapper in logged:
        wrapper.close()
    assert run.honest_agree
    honest = [k for k in range(3) if k not in plain.byzantine]  # node indices
    assert len(honest) == 2
    withholder = plain.nodes[honest[0]].names[1]
    for k in honest:
        node = logged[k].node
        own = node.names[node.my_seat or 0]
        verdict = verify_log(load_log(logged[k].path), ThresholdBot())
        assert not [f for f in verdict.faults if f["accused"] == own], verdict.faults
        assert verdict.hands == [o.to_json() for o in node.outcomes]
        assert any(o.voided for o in node.outcomes)
        # It reports the withholder's timeout, as the live node did.
        timeouts = [a for h in verdict.hands if h["voided"]
                    for a in h["accusations"]  # type: ignore[attr-defined]
                    if a["kind"] == "timeout"]
        assert timeouts
        assert {a["accused"] for a in timeouts} == {withholder}


def test_a_strict_game_verifies_and_a_bad_proof_is_found_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clean").mkdir()
    table, logged = logged_table(tmp_path / "clean", 3, seed=3, mode="strict")
    run = table.run(max_hands=2)
    assert run.honest_agree
    for wrapper in logged:
        wrapper.close()
    status, doc = _verify(capsys, logged[0].path)
    assert status == 0
    assert doc["hands"] == [o.to_json() for o in table.nodes[0].outcomes]
    # A strict step whose deck is not what its proof proves: blamed before the deal,
    # live and offline alike.
    (tmp_path / "bad").mkdir()
    table, logged = logged_table(tmp_path / "bad", 3, seed=3, mode="strict",
                                 byzantine={1: "bad-shuffle"})
    table.run(max_hands=2)
    for wrapper in logged:
        wrapper.close()
    honest = [w for w in logged if w.node.my_seat != 1]
    for wrapper in honest:
        live = wrapper.node.faults[0]
        assert (live.kind, live.seat) == (FaultKind.BAD_PROOF, 1)
        status, doc = _verify(capsys, wrapper.path)
        assert status == 1
        assert doc["fault"]["kind"] == "bad-proof"  # type: ignore[index]
        assert doc["fault"]["accused"] == "P2"  # type: ignore[index]


@pytest.mark.parametrize("mode", ["audit", "strict"])
@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_verify_on_an_honest_log_finds_what_the_live_node_found(
        tmp_path: Path, behaviour: str, mode: str) -> None:
    # Every misbehaving peer of the simulator: replaying an honest peer's log offline
    # finds the same faults, with the same kind and seat, and the same hands.
    table, logged = logged_table(tmp_path, 4, seed=5, chips=4, mode=mode,
                                 byzantine={1: behaviour}, deciders=lambda _i: Restless())
    run = table.run(until=600.0, max_hands=3)
    assert run.honest_agree
    for wrapper in logged:
        wrapper.close()
    wrapper = next(w for w in logged if w.node.my_seat not in (None, 1))
    verdict = verify_log(load_log(wrapper.path), ThresholdBot())
    live = [(f.kind.value, wrapper.node.names[f.seat]) for f in wrapper.node.faults
            if f.seat is not None]
    found = [(str(f["kind"]), str(f["accused"])) for f in verdict.faults
             if f.get("accused") is not None]
    assert found == live
    assert verdict.hands == [o.to_json() for o in wrapper.node.outcomes]
