"""``p2pkille peer`` as separate OS processes: 4 bots form a table and play 5 hands, over
the mesh (finding each other only through zeroconf bound to 127.0.0.1) and over a real
mosquitto. Every process must print the same checkpoints, each agreed by every seat."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.net.conftest import Broker
from tests.net.processes import collect, start, stop

ROOT = Path(__file__).resolve().parents[2]
HANDS = 5


def peer_command(index: int, table: str, seats: int, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "cli.main", "peer", "--table", table, "--seats",
               str(seats), "--hands", str(HANDS), "--json", "--timeout", "50", *extra]
    if index == 0:
        command += ["--create", "--ruleset", "wikipedia", "--stake", "1", "--chips", "10"]
    return command


def run_peers(seats: int, *extra: str, timeout: float = 55) -> list[dict[str, object]]:
    table = f"t-{os.urandom(4).hex()}"
    procs = start([peer_command(i, table, seats, *extra) for i in range(seats)])
    return collect(procs, timeout)[0]


def check_identical(results: list[dict[str, object]], seats: int) -> None:
    names = [f"P{i + 1}" for i in range(seats)]
    assert sorted(str(r["seat"]) for r in results) == names
    first = results[0]["hands"]
    assert isinstance(first, list)
    # Five hands, or fewer when the game ended (then it has a winner).
    assert len(first) == HANDS or (0 < len(first) < HANDS and results[0]["winner"])
    for result in results:
        assert result["hands"] == first
        assert result["winner"] == results[0]["winner"]
    for hand in first:
        assert set(hand) >= {"hand", "died", "pot", "chips", "checkpoint", "agreed_by",
                             "voided", "accusations"}
        # Signed by every seat dealt into the hand (a seat out of chips holds no key).
        agreed = hand["agreed_by"]
        assert isinstance(agreed, list)
        assert len(agreed) >= 2
        assert set(agreed) <= set(names)
        assert not hand["voided"]
        assert hand["accusations"] == []
        assert len(hand["checkpoint"]) == 64
    assert len({h["checkpoint"] for h in first}) == len(first)


@pytest.mark.multiprocess
def test_four_peer_processes_discover_through_zeroconf_and_agree_over_the_mesh() -> None:
    # No --peer: the only way to find each other is zeroconf on 127.0.0.1.
    check_identical(run_peers(4, "--interface", "127.0.0.1"), 4)


@pytest.mark.multiprocess
@pytest.mark.broker
def test_four_peer_processes_agree_over_mosquitto(mosquitto: Broker) -> None:
    check_identical(run_peers(4, "--transport", "mqtt", "--broker",
                              f"mqtt://127.0.0.1:{mosquitto.port}"), 4)


@pytest.mark.multiprocess
def test_peers_find_each_other_by_address_without_discovery() -> None:
    """--peer HOST:PORT where multicast does not work: the joiners know only the creator's
    port; the roster's address hints complete the mesh."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    table = f"t-{os.urandom(4).hex()}"
    commands = [peer_command(0, table, 3, "--no-discovery", "--port", str(port))] + [
        peer_command(i, table, 3, "--no-discovery", "--peer", f"127.0.0.1:{port}")
        for i in (1, 2)]
    results, _ = collect(start(commands), 55)
    check_identical(results, 3)


@pytest.mark.parametrize(("args", "message"), [
    (["--seats", "4"], "--table"),
    (["--table", "x", "--seats", "four"], "--seats must be a whole number"),
    (["--table", "x", "--seats", "4", "--transport", "carrier-pigeon"], "--transport"),
    (["--table", "x", "--seats", "4", "--transport", "mqtt"], "needs --broker"),
    (["--table", "x", "--seats", "4", "--transport", "mqtt", "--broker", "http://h"],
     "--broker"),
    (["--table", "x", "--seats", "4", "--peer", "nohost"], "--peer"),
    (["--table", "x", "--seats", "4", "--create", "--ruleset", "poker"], "unknown ruleset"),
    (["--table", "x", "--seats", "40"], "--seats must be in"),
    (["--table", "x", "--seats", "4", "--bot", "oracle"], "unknown --bot"),
    (["--table", "x", "--seats", "4", "--timeout", "-1"], "--timeout"),
    (["--table", "x", "--seats", "4", "--create", "--stake", "5", "--chips", "3"], "--chips"),
])
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "peer", *args], check=False,
                          cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert message in err
    assert proc.stdout == b""


def test_a_bad_key_file_exits_2(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("not a key\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", "peer", "--table", "x",
                           "--seats", "4", "--key", str(key)], check=False, cwd=ROOT,
                          capture_output=True, timeout=30)
    assert proc.returncode == 2
    assert b"--key" in proc.stderr


@pytest.mark.multiprocess
def test_a_peer_killed_mid_game_resumes_from_its_log_and_the_game_goes_on(
        tmp_path: Path) -> None:
    """kill -9 of one peer once hand 1 is committed (its node is into hand 2); started
    again with the same --log it resumes, catches up from the others, and all four print
    the same five hands: nothing committed is lost. (The runtime has no time limits yet, so
    the others wait for it: this is the "restarted within the limit" case.)"""
    table = f"t-{os.urandom(4).hex()}"
    logs = [tmp_path / f"peer{i}.log" for i in range(4)]
    commands = [peer_command(i, table, 4, "--interface", "127.0.0.1", "--log", str(logs[i]))
                for i in range(4)]
    procs = start(commands)
    victim = 2
    try:
        stderr = procs[victim].stderr
        assert stderr is not None
        deadline = time.monotonic() + 40
        seen = []
        while time.monotonic() < deadline:
            line = stderr.readline().decode(errors="replace")
            seen.append(line)
            if line.startswith("peer: hand 1:") or not line:
                break
        assert seen[-1].startswith("peer: hand 1:"), "".join(seen)[-2000:]
        procs[victim].kill()  # SIGKILL: no clean-up of any kind
        procs[victim].wait()
        assert logs[victim].stat().st_size > 0
        procs[victim] = subprocess.Popen(commands[victim], cwd=ROOT, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        results, errors = collect(procs, deadline + 15 - time.monotonic())
        resumed = errors[victim].splitlines()[0]
        assert resumed.startswith("peer: resuming table"), errors[victim][-2000:]
        logged = int(resumed.rsplit(": ", 1)[1].split()[0])
        assert logged > 4 * 3, resumed  # past the genesis and into the hands
    finally:
        stop(procs)
    check_identical(results, 4)


@pytest.mark.multiprocess
def test_the_network_benchmark_plays_the_simulators_game_for_the_same_seed() -> None:
    """bench.network's processes rebuild the simulator's table from the seed: over the
    mesh they must commit exactly the simulator's checkpoints."""
    from bench.network import free_ports, run_processes, run_sim
    sim = run_sim(3, 7, 2)
    mesh = run_processes(3, 7, 2, "mesh", ",".join(map(str, free_ports(3))))
    assert sim.agree
    assert mesh.agree
    assert len(sim.checkpoints) == 2
    assert mesh.checkpoints == sim.checkpoints
    # The same game has the same envelopes, give or take one a slow peer re-sends.
    assert abs(mesh.envelopes - sim.envelopes) <= 2


def test_a_peer_that_finds_no_table_gives_up_with_exit_1_and_says_where() -> None:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "peer", "--table", "nobody-here",
                           "--seats", "3", "--no-discovery", "--timeout", "1.5", "--json"],
                          check=False, cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert "gave up after 1.5 s (--timeout) in the lobby: no table has seated us" in \
        proc.stderr.decode()


def test_a_log_that_is_not_a_network_peers_is_refused(tmp_path: Path) -> None:
    from p2pkille.runtime.log import LoggedNode
    from p2pkille.sim.table import build_table
    path = tmp_path / "sim.log"
    LoggedNode(build_table(3, seed=1).nodes[0], path, durable=False).close()
    proc = subprocess.run([sys.executable, "-m", "cli.main", "peer", "--table", "sim-1",
                           "--seats", "3", "--no-discovery", "--log", str(path)],
                          check=False, cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 1
    assert "of node 'n1', not of a network peer" in proc.stderr.decode()
    other = subprocess.run([sys.executable, "-m", "cli.main", "peer", "--table", "other",
                            "--seats", "3", "--no-discovery", "--log", str(path)],
                           check=False, cwd=ROOT, capture_output=True, timeout=30)
    assert other.returncode == 1
    assert "is of table 'sim-1', not 'other'" in other.stderr.decode()
