"""``p2pkille peer`` as separate OS processes: 4 bots form a table and play 3 hands, over
the mesh (finding each other only through zeroconf bound to 127.0.0.1) and over a real
mosquitto. Every process must print the same checkpoints, each agreed by every seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.net.conftest import Broker
from tests.net.processes import collect, start, stop

ROOT = Path(__file__).resolve().parents[2]
HANDS = 3


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
def test_three_peer_processes_play_a_strict_table_over_the_mesh() -> None:
    # Only the creator says --mode strict; the joiners take the mode from its roster.
    table = f"t-{os.urandom(4).hex()}"
    commands = [peer_command(i, table, 3, "--interface", "127.0.0.1") for i in range(3)]
    commands[0] += ["--mode", "strict"]
    commands[1] += ["--mode", "strict"]  # a joiner may insist on it
    results = collect(start(commands), 55)[0]
    check_identical(results, 3)
    assert [r["mode"] for r in results] == ["strict"] * 3


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
    (["--table", "x", "--seats", "4", "--creator", "xyz"], "--creator 'xyz': give the"),
    (["--table", "x", "--seats", "4", "--create", "--creator", "0123456789abcdef"],
     "--creator is for a joiner"),
    (["--table", "x", "--seats", "4", "--limit", "0"], "--limit 0: need a positive"),
    (["--table", "x", "--seats", "4", "--mode", "lenient"], "--mode 'lenient'"),
    (["--table", "x", "--seats", "4", "--decide-limit", "soon"],
     "--decide-limit must be a number of seconds"),
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
    the same three hands: nothing committed is lost. It is back well within the default
    --limit (20 s), so nobody votes its time out: the "restarted within the limit" case."""
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
    assert ("gave up after 1.5 s (--timeout) in the lobby: no creator of 'nobody-here' "
            "chosen yet") in proc.stderr.decode()


def _open_fds_to(path: Path) -> int:
    fds = Path("/proc/self/fd")
    count = 0
    for fd in fds.iterdir():
        try:
            count += os.readlink(fd) == str(path)
        except OSError:
            continue  # closed between the listing and the read
    return count


def test_a_refused_log_is_closed_again(tmp_path: Path) -> None:
    # The peer reopens its log to resume before it checks whose it is: a refusal must
    # not leave the file open (a long-lived program such as the lobby UI runs many peers).
    import asyncio

    from p2pkille.net.lobby import Offer
    from p2pkille.net.peer import PeerError, PeerSettings, run_peer
    from p2pkille.runtime.log import LoggedNode
    from p2pkille.sim.table import build_table
    path = tmp_path / "sim.log"
    LoggedNode(build_table(3, seed=1).nodes[0], path, durable=False).close()
    for name in ("sim-1", "other"):
        settings = PeerSettings(offer=Offer(name, 3), discover=False, log=path, timeout=30)
        with pytest.raises(PeerError, match="the log"):
            asyncio.run(run_peer(settings))
        assert _open_fds_to(path) == 0


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


def _read_until(proc: subprocess.Popen[bytes], prefix: str, deadline: float) -> list[str]:
    """Lines of ``proc``'s stderr up to the first that starts with ``prefix``."""
    stderr = proc.stderr
    assert stderr is not None
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = stderr.readline().decode(errors="replace")
        seen.append(line)
        if line.startswith(prefix) or not line:
            break
    assert seen
    assert seen[-1].startswith(prefix), "".join(seen)[-2000:]
    return seen


@pytest.mark.multiprocess
# The kill, the vote, the restart and the watch, in order.
def test_a_peer_back_after_its_time_limit_was_eliminated_and_watches_as_a_spectator(  # noqa: PLR0915
        tmp_path: Path) -> None:
    """kill -9 of one peer once hand 1 is committed; the others vote its time out after
    --limit, void hand 2 and deal hand 3 without it. Only then is it started again with its
    log: it resumes, gap-fills, sees the committed history and its own elimination, and
    follows the game holding no key to the end. Every process prints the same hands:
    1 committed by four, 2 voided eliminating the victim (its stake stays in the pot), 3..5
    committed by the three others."""
    table = f"t-{os.urandom(4).hex()}"
    logs = [tmp_path / f"peer{i}.log" for i in range(4)]
    limits = ("--limit", "3")
    commands = [peer_command(i, table, 4, "--interface", "127.0.0.1", "--log", str(logs[i]),
                             *limits) for i in range(4)]
    procs = start(commands)
    victim, witness = 2, 1
    try:
        deadline = time.monotonic() + 40
        _read_until(procs[victim], "peer: hand 1:", deadline)
        procs[victim].kill()  # SIGKILL: no clean-up of any kind
        procs[victim].wait()
        # The witness reports hand 1, then the voided hand 2 that eliminated the victim.
        lines = _read_until(procs[witness], "peer: hand 2:", deadline + 20)
        assert "(voided)" in lines[-1], lines[-1]
        assert "eliminated" in lines[-1], lines[-1]
        procs[victim] = subprocess.Popen(commands[victim], cwd=ROOT, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        results, errors = collect(procs, deadline + 40 - time.monotonic())
    finally:
        stop(procs)
    assert errors[victim].startswith("peer: resuming table"), errors[victim][-2000:]
    assert "watching the rest of the game as a spectator" in errors[victim]
    me = str(results[victim]["seat"])
    names = {"P1", "P2", "P3", "P4"}
    assert sorted(str(r["seat"]) for r in results) == sorted(names)
    hands = results[0]["hands"]
    assert isinstance(hands, list)
    for result in results:
        assert result["hands"] == hands  # nothing committed is lost, for anyone
        assert result["winner"] == results[0]["winner"]
    assert [h["hand"] for h in hands] == [1, 2, 3, 4, 5][:len(hands)]
    first, voided, *rest = hands
    assert not first["voided"]
    assert sorted(first["agreed_by"]) == sorted(names)
    assert voided["voided"]
    assert voided["checkpoint"] == ""
    assert voided["agreed_by"] == []
    assert voided["eliminated"] == [me]
    assert [a["accused"] for a in voided["accusations"]] == [me]
    assert voided["accusations"][0]["kind"] == "timeout"
    # Voided: chips back to hand 1's checkpoint, except what the victim already staked.
    assert sum(voided["chips"].values()) + voided["pot"] == 40
    assert rest, "the game went on after the elimination"
    for hand in rest:
        assert not hand["voided"]
        # Every seat still dealt in (one out of chips holds no key either), never the victim.
        assert len(hand["agreed_by"]) >= 2
        assert set(hand["agreed_by"]) <= names - {me}
        assert hand["chips"][me] == voided["chips"][me]  # out: it neither pays nor wins
        assert len(hand["checkpoint"]) == 64
    assert results[victim]["spectated_from"] == 3
    for i, result in enumerate(results):
        if i != victim:
            assert result["spectated_from"] is None
    # Every log, the victim's included, replays offline to the same history.
    for path in logs:
        check = subprocess.run([sys.executable, "-m", "cli.main", "verify", str(path),
                                "--json"], check=False, cwd=ROOT, capture_output=True,
                               timeout=120)
        verdict = json.loads(check.stdout)
        assert verdict["clean"], (path.name, verdict["fault"])
        assert [h["checkpoint"] for h in verdict["hands"][:len(hands)]] == [
            h["checkpoint"] for h in hands]


def _key_file(path: Path) -> str:
    """A --key file with a fresh seed; returns the key's fingerprint."""
    from protocol.identity import Identity
    seed = os.urandom(32)
    path.write_text(seed.hex() + "\n")
    return Identity.from_seed(seed).public.fingerprint


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.multiprocess
def test_two_creators_of_one_name_make_a_joiner_ask_and_creator_picks_one(
        tmp_path: Path) -> None:
    """Two creators offer a table of the same name. A joiner that names neither lists both
    and exits 2; a joiner with --creator FINGERPRINT sits down only at the table of the
    creator it named (the other one ignores its joins, which name another creator)."""
    table = f"t-{os.urandom(4).hex()}"
    real, other = _key_file(tmp_path / "real.key"), _key_file(tmp_path / "other.key")
    real_port, other_port = _free_port(), _free_port()

    def creator(key: str, port: int, *extra: str) -> list[str]:
        # bytes-kille: the ruleset that plays with two.
        return peer_command(1, table, 2, "--no-discovery", "--key", str(tmp_path / key),
                            "--port", str(port), "--hands", "1", "--create", "--ruleset",
                            "bytes-kille", *extra)

    both = ("--peer", f"127.0.0.1:{other_port}", "--peer", f"127.0.0.1:{real_port}")
    undecided = peer_command(1, table, 2, "--no-discovery", *both)
    pinned = peer_command(1, table, 2, "--no-discovery", "--creator", real.upper(), *both,
                          "--hands", "1")
    procs = start([creator("other.key", other_port, "--timeout", "15"),
                   creator("real.key", real_port), undecided])
    try:
        out, err = procs[2].communicate(timeout=40)
        assert procs[2].returncode == 2, err.decode(errors="replace")[-2000:]
        assert out == b""
        text = err.decode()
        assert f"2 creators offer a table called {table!r}; choose one with --creator" in text
        for fingerprint in (real, other):
            assert f"  --creator {fingerprint} (bytes-kille, stake 1, chips 10, 1/2 seats)" \
                in text
        procs += start([pinned])
        results, _ = collect([procs[3], procs[1]], 45)
        out, err = procs[0].communicate(timeout=30)
    finally:
        stop(procs)
    joined, made = results
    assert {joined["seat"], made["seat"]} == {"P1", "P2"}
    assert joined["hands"] == made["hands"]
    hands = joined["hands"]
    assert isinstance(hands, list)
    assert len(hands) == 1
    assert len(hands[0]["checkpoint"]) == 64
    # The other creator never seated anybody.
    assert procs[0].returncode == 1
    assert out == b""
    assert "in the lobby: 1 of 2 seats taken" in err.decode()


def test_a_pinned_joiner_that_finds_only_other_creators_gives_up_saying_so() -> None:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "peer", "--table", "nobody-here",
                           "--seats", "3", "--no-discovery", "--timeout", "1.5",
                           "--creator", "0123456789abcdef"],
                          check=False, cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 1
    assert ("gave up after 1.5 s (--timeout) in the lobby: no table by creator "
            "0123456789abcdef has seated us") in proc.stderr.decode()
