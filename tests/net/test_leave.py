"""A headless peer that is told to stop leaves the table with a signed leave
(docs/protocol.md II.11.4), and the others play on without waiting for it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from tests.net.processes import ROOT, collect, start, stop

# Limits far beyond every --timeout here: a table that waited for the quitter's seat would
# make the others give up, so finishing at all shows that nobody waited.
SLOW_LIMITS = ("--limit", "600", "--decide-limit", "600")


def _command(index: int, table: str, port: int, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "cli.main", "peer", "--table", table, "--seats", "4",
               "--hands", "4", "--json", "--timeout", "90", "--no-discovery", *SLOW_LIMITS,
               *extra]
    if index == 0:
        return [*command, "--create", "--ruleset", "wikipedia", "--stake", "1", "--chips",
                "10", "--port", str(port)]
    return [*command, "--peer", f"127.0.0.1:{port}"]


@pytest.mark.multiprocess
def test_a_stopped_peer_leaves_and_the_others_play_on_without_waiting() -> None:
    """Four peers over the mesh; once hand 1 is committed one of them gets SIGTERM: it
    signs its leave, prints ``"quit": true`` and exits 143 (128 + the signal). The other
    three void the hand it held a key in, with it eliminated, play their four hands, and
    each lists its seat in ``left``. (Ctrl-C's SIGINT takes the same path: the lobby test
    below sends it.)"""
    number = signal.SIGTERM
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    table = f"leave-{os.urandom(4).hex()}"
    procs = start([_command(i, table, port) for i in range(4)])
    quitter = 3
    try:
        stderr = procs[quitter].stderr
        assert stderr is not None
        seen: list[str] = []
        while True:  # bounded by the peer's own --timeout: it exits, and readline ends
            line = stderr.readline().decode(errors="replace")
            seen.append(line)
            if line.startswith("peer: hand 1:") or not line:
                break
        assert seen[-1].startswith("peer: hand 1:"), "".join(seen)[-2000:]
        procs[quitter].send_signal(number)
        out, err = procs[quitter].communicate(timeout=60)
        assert procs[quitter].returncode == 128 + number, err.decode(errors="replace")
        mine = json.loads(out)
        assert mine["quit"] is True
        seat = mine["seat"]
        assert mine["left"] == [seat]
        staying = procs[:quitter]
        results, _ = collect(staying, 120)
    finally:
        stop(procs)
    for result in results:
        assert result["quit"] is False
        assert result["left"] == [seat]
        assert result["hands"] == results[0]["hands"]
    hands = results[0]["hands"]
    assert isinstance(hands, list)
    voided = [h for h in hands if h["voided"]]
    assert len(voided) == 1, hands
    assert voided[0]["eliminated"] == [seat]
    # The hand it left in: the one after the last it counted (under load it may have
    # counted hand 2 before the signal was handled).
    assert voided[0]["hand"] == len(mine["hands"]) + 1
    # The table played on without it: four hands, or fewer with a winner.
    assert len(hands) == 4 or results[0]["winner"] is not None


def test_a_peer_stopped_in_the_lobby_exits_at_once() -> None:
    """Before the table is formed there is nothing to leave: on Ctrl-C (SIGINT) the peer
    says so and exits with 130 (128 + the signal)."""
    table = f"lobby-{os.urandom(4).hex()}"
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "peer", "--table", table,
                             "--seats", "3", "--no-discovery", "--json", "--timeout", "60",
                             "--create", "--ruleset", "wikipedia"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # The lobby runs once the creator's first progress line is out.
        stderr = proc.stderr
        assert stderr is not None
        first = stderr.readline().decode(errors="replace")
        assert first.startswith("peer: "), first
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        stop([proc])
    assert proc.returncode == 128 + signal.SIGINT, err.decode(errors="replace")
    assert out == b""
    assert "left before the table was formed" in err.decode(errors="replace")
