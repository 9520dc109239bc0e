"""End to end: ``p2pkille play`` in a real terminal (tmux), driven by keys.

The player swaps low cards, keeps high ones, never cuts and declines buy-backs, so
the game ends within a few hands. Bots take 0.2 s a decision, so the turn marker
is on each of them long enough to be captured. The seed fixes every key, secret and
bot choice, so the game is the same on every run. Every wait is for a state of the
screen; its time bound only ends a test that has failed (a stuck game), and is wide
enough for a loaded machine. Game logs and identities go to a temporary data and
configuration directory per terminal. Skipped without tmux, except under ``CI=true``,
where it fails instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SEED = 1
#: Bounds a whole test that hangs; never a margin a passing test relies on.
GAME_BOUND = 300.0
WAIT_BOUND = 120.0


def _tmux() -> str:
    found = shutil.which("tmux")
    if found is None:
        message = "tmux is not installed (apt-get install tmux)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; under CI=true the end-to-end test may not be skipped")
        pytest.skip(message)
    return found


class Term:
    """A tmux session running ``command`` at ``width`` x ``height``; when the command
    ends, the pane says whether the terminal's settings came back (``TTY-RESTORED``)
    and the exit status (``EXITED n``)."""

    def __init__(self, tmux: str, command: list[str], data: Path, *, width: int = 100,
                 height: int = 40) -> None:
        self.tmux = tmux
        self.socket = f"p2pk-{uuid.uuid4().hex[:8]}"
        env = (f"LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color "
               f"XDG_DATA_HOME={shlex.quote(str(data))} "
               f"XDG_CONFIG_HOME={shlex.quote(str(data / 'config'))}")
        script = (f"s=$(stty -g); env {env} {shlex.join(command)}; st=$?; "
                  f'[ "$s" = "$(stty -g)" ] && echo TTY-RESTORED; echo EXITED $st; sleep 60')
        self._run("new-session", "-d", "-s", "play", "-x", str(width), "-y", str(height),
                  script)

    def _run(self, *args: str) -> str:
        done = subprocess.run([self.tmux, "-u", "-L", self.socket, *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-J", "-t", "play")

    def keys(self, keys: str) -> None:
        self._run("send-keys", "-t", "play", "-l", keys)

    def key(self, name: str) -> None:
        """A named key (``Enter``, ``Escape``, ``Down``, ``C-c``)."""
        self._run("send-keys", "-t", "play", name)

    def wait(self, pattern: str, bound: float = WAIT_BOUND) -> str:
        """The screen once ``pattern`` is on it (fails after ``bound`` seconds)."""
        return self.until(lambda screen: re.search(pattern, screen) is not None, bound,
                          pattern)

    def until(self, done: Callable[[str], bool], bound: float = WAIT_BOUND,
              what: str = "") -> str:
        """The screen once ``done(screen)`` (fails after ``bound`` seconds)."""
        end = time.monotonic() + bound
        screen = self.screen()
        while not done(screen):
            assert time.monotonic() < end, f"never came: {what}\n{screen}"
            time.sleep(0.05)
            screen = self.screen()
        return screen

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30, check=False)


def card(screen: str) -> str | None:
    found = re.search(r"│\s*(.+?)\s*│\s+rank \d+ of 21", screen)
    return found.group(1) if found else None


def marker(screen: str) -> str | None:
    for line in screen.splitlines():
        if line.startswith("▶"):
            return line[1:].split()[0]
    return None


def hand(screen: str) -> str | None:
    found = re.search(r"^Hand (\d+)\s+Pot", screen, re.MULTILINE)
    return found.group(1) if found else None


def question(screen: str) -> str | None:
    """The moves on offer and the card: what a key answers."""
    if "Your moves:" not in screen:
        return None
    return f"{hand(screen)}|{card(screen)}|{screen.split('Your moves:')[1][:200]}"


RANK = re.compile(r"rank (\d+) of 21")
OVER = re.compile(r"wins the game|You win the game|EXITED")


def choose(screen: str) -> str | None:
    if "Your moves:" not in screen:
        return None
    if "k  keep" in screen:
        found = RANK.search(screen)
        return "k" if found and int(found.group(1)) >= 11 else "s"
    if "no cut" in screen:
        return "0"
    return "n"  # votes, sales, buy-backs


def play_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", "play", "--bots", "3", "--interface",
            "127.0.0.1", "--seed", str(SEED), "--chips", "3", "--lang", "en", "--pace", "0.2",
            *extra]


def test_a_whole_game_in_a_terminal(tmp_path: Path) -> None:
    tmux = _tmux()
    term = Term(tmux, play_command(), tmp_path, width=80, height=24)
    captures: list[str] = []
    swaps: list[tuple[str | None, str | None]] = []
    try:
        end = time.monotonic() + GAME_BOUND
        screen = term.wait(r"Your moves:|wins the game")
        while not OVER.search(screen):
            assert time.monotonic() < end, screen
            captures.append(screen)
            key = choose(screen)
            if key is None:
                screen = term.until(lambda s: choose(s) is not None or OVER.search(s)
                                    is not None, what="a question or the end")
                continue
            before = screen
            term.keys(key)

            def answered(s: str, asked: str | None = question(before)) -> bool:
                return question(s) != asked or OVER.search(s) is not None

            def exchanged(s: str, b: str = before) -> bool:
                return card(s) != card(b) or hand(s) != hand(b) or OVER.search(s) is not None

            # The key took effect: another question, or none.
            screen = term.until(answered, what="the key's effect")
            if key == "s" and "swap with the next player" in before:
                # The exchange is done: the card changes, or the hand ends.
                screen = term.until(exchanged, what="the exchange")
                captures.append(screen)
                if hand(screen) == hand(before):
                    swaps.append((card(before), card(screen)))
        final = term.wait(r"wins the game|You win the game")
        captures.append(final)
        assert all(len(line) <= 79 for line in final.splitlines())
        term.keys("q")
        after = term.wait(r"EXITED \d+")
        assert "EXITED 0" in after, after
        assert "TTY-RESTORED" in after
        logged = re.search(r"The game is logged in (\S+)\.$", after, re.MULTILINE)
        assert logged, after
    finally:
        term.close()
    assert "Traceback" not in "\n".join(captures)
    first = next(c for c in captures if card(c) is not None)
    assert "Pot: 4" in first
    markers = {marker(c) for c in captures} - {None}
    assert len(markers) >= 2, f"the turn marker never moved: {markers}"
    assert any(before != after and after is not None for before, after in swaps), swaps
    assert any(re.search(r"Died in hand \d+: (Anna|Björn|Cecilia|you)", c) for c in captures)
    assert any("«På rygg!»" in c for c in captures)
    winner = re.search(r"(\S+) wins? the game", final)
    assert winner
    assert winner.group(1) in ("Anna", "Björn", "Cecilia", "You")
    path = Path(logged.group(1))
    assert path.parent == tmp_path / "p2pkille" / "games"
    assert main(["verify", str(path)]) == 0


def test_ctrl_c_asks_then_leaves_with_status_130_and_the_terminal_restored(
        tmp_path: Path) -> None:
    tmux = _tmux()
    term = Term(tmux, play_command(), tmp_path, width=72, height=24)
    try:
        term.wait(r"Your moves:")
        term.key("C-c")
        asked = term.wait(r"Press q again to leave the table \(or Ctrl-C\)")
        assert "EXITED" not in asked
        term.key("C-c")
        after = term.wait(r"EXITED \d+")
        assert "EXITED 130" in after, after
        assert "TTY-RESTORED" in after
        assert "Traceback" not in after
    finally:
        term.close()


def test_the_lobby_creates_a_table_with_bots_over_the_mesh(tmp_path: Path) -> None:
    """``p2pkille play`` without --bots opens the lobby on 127.0.0.1; the form creates a
    table whose three bots join over the mesh; the table screen opens; q q leaves."""
    tmux = _tmux()
    term = Term(tmux, [sys.executable, "-m", "cli.main", "play", "--interface", "127.0.0.1",
                       "--lang", "en", "--pace", "0.2", "--name", "Tmux"], tmp_path)
    try:
        term.wait(r"Tables on the LAN \(listening on 127\.0\.0\.1\)")
        term.keys("c")
        form = term.wait(r"Create a table")
        assert "Table name:      Tmux's table_" in form
        term.key("Enter")
        table = term.wait(r"rank \d+ of 21")
        assert "Pot: 4" in table
        assert "Tmux (you)" in table
        for bot in ("Anna", "Björn", "Cecilia"):
            assert bot in table
        assert re.search(r"\((\d+) s left\)", term.wait(r"\(\d+ s left\)")), table
        term.keys("q")
        # The question stays until another key: a new turn does not take it away.
        term.wait(r"Press q again")
        term.keys("q")
        term.wait(r"EXITED 0")
        assert "Traceback" not in term.screen()
    finally:
        term.close()


def lan_command(name: str, limit: str = "2", decide_limit: str = "4") -> list[str]:
    """``p2pkille play`` in the lobby on 127.0.0.1, by default with short time limits."""
    return [sys.executable, "-m", "cli.main", "play", "--interface", "127.0.0.1", "--lang",
            "en", "--pace", "0.2", "--name", name, "--limit", limit, "--decide-limit",
            decide_limit]


# Limits far beyond GAME_BOUND: a table that waited for a seat's time-out would not get on.
NO_WAITING = ("900", "900")


def test_two_people_and_a_bot_at_a_lan_table_one_leaves_and_the_void_is_told(
        tmp_path: Path) -> None:
    """Done when of issue 26: two people (two terminals, each its own ``p2pkille play``
    with its own identity and name) and a bot at a table made in the lobby over the mesh.
    Both screens show both names; Bert leaves (q q): his peer signs a leave (issue 24), so
    with time limits far beyond the test's bounds Alice's table still goes on. Her screen
    says he left, narrates the voided hand (Alice and her bot voted Bert out at once) and
    numbers the hands one way: the void's hand is the header's last hand and the next
    hand is one more."""
    tmux = _tmux()
    table = f"t{uuid.uuid4().hex[:8]}"
    alice = Term(tmux, lan_command("Alice", *NO_WAITING), tmp_path / "alice", width=100,
                 height=40)
    bert: Term | None = None
    seen: list[str] = []
    try:
        _create_a_table_of_three(alice, table, tmp_path / "alice")
        bert = Term(tmux, lan_command("Bert", *NO_WAITING), tmp_path / "bert", width=100,
                    height=40)
        _join_from_the_list(bert, table)
        _seat_and_see_each_other(alice, bert)
        # Bert leaves: q asks, q leaves.
        bert.keys("q")
        bert.wait(r"Press q again")
        bert.keys("q")
        quit_at = time.monotonic()
        alice.wait(r"Bert left the table \(a signed leave\)")
        print(f"Bert's leave on Alice's screen {time.monotonic() - quit_at:.2f} s after q")
        left = bert.wait(r"EXITED \d+")
        assert "EXITED 0" in left, left
        assert "Traceback" not in left
        void = _play_until_the_void(alice, seen)
        _audit_after_the_void(alice, void, seen)
    finally:
        alice.close()
        if bert is not None:
            bert.close()
    _assert_the_void_is_told(seen, void)


def _create_a_table_of_three(alice: Term, table: str, home: Path) -> None:
    """Alice's first start makes her identity; she creates ``table``: 3 seats, 1 bot."""
    alice.wait(r"Tables on the LAN \(listening on 127\.0\.0\.1\)")
    made = alice.wait(r"You are Alice, key [0-9a-f]{16}\.")
    kept = home / "config" / "p2pkille" / "identity.json"
    # The screen wraps a long path anywhere: compare without white space.
    assert "".join(f"Created your identity in {kept}: key".split()) in "".join(made.split()), \
        made
    assert kept.stat().st_mode & 0o777 == 0o600
    alice.keys("c")
    alice.wait(r"Create a table")
    alice.key("BSpace")
    for _ in range(40):
        alice.key("BSpace")
    alice.keys(table)
    for _ in range(4):
        alice.key("Down")  # to the seats
    alice.key("Left")  # 3 seats: the bots go down to 2 with them
    alice.key("Down")
    alice.key("Left")  # 1 bot
    form = alice.wait(r"Bots:\s+1_")
    assert re.search(r"Seats:\s+3", form), form
    alice.key("Enter")
    alice.wait(r"2 of 3 seats taken")


def _join_from_the_list(bert: Term, table: str) -> None:
    """Bert finds ``table`` in his lobby's list and asks for a seat at it."""
    listed = bert.wait(rf"{table}\s+wikipedia\s+1\s+2/3")
    assert "Alice" not in listed.split(table)[1].splitlines()[0]  # not met before
    for _ in range(10):
        # Other programs' tables on this host's loopback may come and go in the list:
        # join, and go back if the row under the marker was another table.
        for _ in range(60):
            if re.search(rf"^▶ {table}", bert.screen(), re.MULTILINE):
                break
            bert.key("Down")
            time.sleep(0.05)
        bert.key("Enter")
        asking = bert.wait(r"for a seat at (\S+) \.\.\.")
        if f"for a seat at {table} ..." in asking:
            break
        bert.key("Escape")
        bert.wait(r"Tables on the LAN")


def _seat_and_see_each_other(alice: Term, bert: Term) -> None:
    """Alice accepts Bert; both table screens show both names and the bot."""
    asked = alice.wait(r"Wants a seat: Bert, key [0-9a-f]{16}")
    assert "Warning" not in asked
    alice.keys("a")
    alice_table = alice.wait(r"rank \d+ of 21")
    bert_table = bert.wait(r"rank \d+ of 21")
    assert "Alice (you)" in alice_table
    assert re.search(r"^[▶ ] Bert\b", alice_table, re.MULTILINE), alice_table
    assert "Bert (you)" in bert_table
    assert re.search(r"^[▶ ] Alice\b", bert_table, re.MULTILINE), bert_table
    assert "Anna" in alice_table
    assert "Anna" in bert_table


def _play_until_the_void(alice: Term, seen: list[str]) -> int:
    """Alice plays on (the table needs her decisions before it needs Bert again) until
    the header names the voided hand; the screens go to ``seen``. Returns the void's
    hand number, checked to be the one before the header's hand."""
    header_void = re.compile(r"^Hand (\d+)\s+Pot: \d+\s+Hand (\d+) voided", re.MULTILINE)
    after = alice.screen()
    end = time.monotonic() + GAME_BOUND
    while not header_void.search(after):
        assert time.monotonic() < end, after
        seen.append(after)
        key = choose(after)
        if key is not None:
            alice.keys(key)

            def answered(s: str, asked: str | None = question(after)) -> bool:
                return question(s) != asked or header_void.search(s) is not None

            after = alice.until(answered, what="Alice's key taking effect")
        else:
            time.sleep(0.05)
            after = alice.screen()
    seen.append(after)
    header = header_void.search(after)
    assert header is not None
    now, void = int(header.group(1)), int(header.group(2))
    assert now == void + 1, after
    return void


def _audit_after_the_void(alice: Term, void: int, seen: list[str]) -> None:
    """Once the next hand is dealt, Alice's audit names everyone's key and the void;
    then she leaves."""
    def dealt(screen: str) -> bool:
        seen.append(screen)
        return f"Hand {void + 1}: " in screen

    alice.until(dealt, what="the next hand's deal in the log")
    alice.keys("a")
    audit = alice.wait(r"The players and their keys:")
    assert re.search(r"Bert: key [0-9a-f]{16}", audit), audit
    assert re.search(r"Anna: key [0-9a-f]{16} \(a bot\)", audit), audit
    assert f"Hand {void} voided:" in audit
    alice.keys("a")
    alice.keys("qq")
    alice.wait(r"EXITED \d+")


def _assert_the_void_is_told(seen: list[str], void: int) -> None:
    told = "\n".join(seen)
    assert "Traceback" not in told
    flat = " ".join(told.split())
    assert "Bert left the table (a signed leave)." in flat, told[-3000:]
    assert "The connection to Bert closed" not in flat  # he left: no time-out is waited for
    assert f"Hand {void} is voided and does not count." in told
    assert "Bert left the table: every other key holder voted Bert out at once." in flat, \
        told[-3000:]
    assert "Bert is out of the game for good." in told
    for capture in seen:
        # Below the void in the log, no line deals the voided hand's number again.
        if f"Hand {void} is voided" in capture:
            below = capture.split(f"Hand {void} is voided", 1)[1]
            assert not re.search(rf"^\s*Hand {void}: ", below, re.MULTILINE), capture
