"""The LAN lobby of ``p2pkille play``, driven through the application with pipe input.

Everything binds to 127.0.0.1: zeroconf (browsing and advertising), the TCP mesh of the
player's peer and of its bots, and the ``p2pkille peer`` processes that take a seat.
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.play import lobby_screen
from p2pkille.net.discovery import Advertiser, TableAdvert, open_zeroconf
from p2pkille.net.lobby import Lobby
from p2pkille.net.peer import PeerSettings
from p2pkille.runtime.node import Timing
from p2pkille.ui.app import build_app, play_lan
from p2pkille.ui.human import Ask
from p2pkille.ui.identity import Profile
from p2pkille.ui.lan import LanLobby, LanSession, NewTable
from p2pkille.ui.lobby import FIELDS, LobbyScreen, View
from p2pkille.ui.model import TableScreen
from p2pkille.ui.session import TableSpec
from protocol.identity import Identity
from tests.net.processes import collect, start, stop
from tests.ui.pilot import FakeClock, wait_for

LOOPBACK = ["127.0.0.1"]


@pytest.fixture
def inp() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


def run_lobby(inp: PipeInput, body: Callable[[LanLobby, LobbyScreen], Awaitable[None]], *,
              timing: Timing | None = None, timeout: float = 60.0,
              clock: FakeClock | None = None, profile: Profile | None = None,
              log_to: Callable[[bytes], Path] | None = None, lang: str = "en") -> LobbyScreen:
    """The lobby application on 127.0.0.1 while ``body`` plays; then quit."""
    screens: list[LobbyScreen] = []

    async def main() -> None:
        lan, screen = lobby_screen(TableSpec(name="Tester", pace=0.0), lang, LOOPBACK, timing,
                                   clock, profile=profile, log_to=log_to)
        screens.append(screen)
        app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)
        task = asyncio.create_task(play_lan(lan, screen, app))
        try:
            async with asyncio.timeout(timeout):
                await wait_for(lambda: app.is_running, 10)
                await body(lan, screen)
        finally:
            if app.is_running:
                app.exit()
            await task

    asyncio.run(main())
    return screens[0]


async def select(screen: LobbyScreen, inp: PipeInput, name: str) -> None:
    """Move the list's marker to the table called ``name``."""
    for _ in range(50):
        tables = screen.lan.tables
        if tables and tables[min(screen.selected, len(tables) - 1)].name == name:
            return
        before = screen.selected
        inp.send_text("\x1b[B")

        def moved(before: int = before) -> bool:
            return screen.selected != before or len(screen.lan.tables) < 2

        await wait_for(moved)
    raise AssertionError(f"cannot select {name}: {screen.text()}")


def table_name() -> str:
    return f"ui-{uuid.uuid4().hex[:8]}"


def test_a_table_advertised_on_loopback_appears_in_the_list(inp: PipeInput) -> None:
    name = table_name()

    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        assert "No tables heard yet" in screen.text()
        assert "Tables on the LAN (listening on 127.0.0.1)" in screen.text()
        zc = open_zeroconf(LOOPBACK)
        creator = Identity.from_seed(b"\x21" * 32)
        fingerprint = creator.public.fingerprint
        advert = TableAdvert(uuid.uuid4().bytes, name, "bytes-kille", 2, 1, 4, fingerprint)
        try:
            async with Advertiser(zc, advert, 40404, LOOPBACK, creator):
                await wait_for(lambda: name in screen.text(), 20)
                line = next(line for line in screen.text().splitlines() if name in line)
                # Other tables on loopback (other tests') may be listed too.
                assert re.search(
                    rf"^[▶ ] {name}\s+bytes-kille\s+2\s+1/4\s+{fingerprint}\s+1 peer", line), \
                    line
                await select(screen, inp, name)
                assert next(line for line in screen.text().splitlines()
                            if name in line).startswith("▶")
                inp.send_text("x")
                await wait_for(lambda: "The key x does nothing here" in screen.text())
            await wait_for(lambda: name not in screen.text(), 20)
        finally:
            await zc.async_close()

    run_lobby(inp, body)


def test_the_form_says_what_is_wrong_and_esc_goes_back(inp: PipeInput) -> None:
    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        inp.send_text("c")
        await wait_for(lambda: screen.view is View.FORM)
        form = screen.text()
        assert "Create a table" in form
        assert "▶ Table name:      Tester's table_" in form
        assert "Rules:           ◀ wikipedia ▶" in form
        # seats 4, bots 3: no open seat; one more seat is open to the LAN.
        assert "open to players" not in form
        inp.send_text("\x1b[B" * 4)  # down to the seats
        await wait_for(lambda: screen.form.field == 4)
        inp.send_text("\x1b[C")  # right: 5 seats
        await wait_for(lambda: screen.form.seats == "5")
        await wait_for(lambda: "1 seat(s) open to players on the LAN" in screen.text())
        inp.send_text("\x1b[B" + "\x7f" + "9" + "\r")  # bots: 9 at 5 seats
        await wait_for(lambda: "Cannot create it: 9 bots at 5 seats" in screen.text())
        assert lan.session is None
        inp.send_text("\x1b[A" * 4 + "\x1b[C")  # up to the rules: the next ruleset
        await wait_for(lambda: screen.form.ruleset != "wikipedia")
        inp.send_text("\x1b[A" + "\x7f" * 40 + "Kväll" + "\x1b")
        await wait_for(lambda: screen.view is View.LIST)
        assert screen.form.name == "Kväll"
        inp.send_text("q")
        await wait_for(lambda: screen.quit)

    screen = run_lobby(inp, body)
    assert screen.quit


def test_the_form_checks_the_ruleset_s_players() -> None:
    with pytest.raises(ValueError, match="at most 3"):
        NewTable("t", seats=4, bots=4).offer()
    with pytest.raises(ValueError, match=r"40 seats: wikipedia is played by 3 to 15"):
        NewTable("t", "wikipedia", seats=40, bots=3).offer()
    assert NewTable("t", "enkortskille", 2, 5, 2, 1).offer().seats == 2


# The create form to the formed table, screen by screen.
def test_creating_a_table_with_three_bots_forms_it_over_the_mesh(  # noqa: PLR0915
        inp: PipeInput, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """... with the player's persistent identity: every seat is named by the name its peer
    signed into the lobby, the audit page shows each key, and the game is logged where
    ``p2pkille verify`` checks it."""
    from cli.main import main
    from p2pkille.ui.gamelog import new_log_path
    from p2pkille.ui.identity import open_profile

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    profile = open_profile(tmp_path / "me.json", "Tester")
    seen: list[str] = []
    logged: list[Path] = []

    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        assert f"You are Tester, key {profile.fingerprint}." in screen.text()
        inp.send_text("c")
        await wait_for(lambda: screen.view is View.FORM)
        inp.send_text("\x7f" * 40 + "Bots-" + uuid.uuid4().hex[:6] + "\r")
        await wait_for(lambda: screen.view is not View.FORM)

        async def sample() -> None:
            while True:
                seen.append(screen.text(width=200))
                await asyncio.sleep(0.01)

        sampler = asyncio.create_task(sample())
        await wait_for(lambda: screen.view is View.TABLE, 40)
        table_screen = screen.table_screen
        assert table_screen is not None
        await wait_for(lambda: table_screen.table.decider.request is not None
                       or "Waiting for" in screen.text(), 40)
        await wait_for(lambda: re.search(r"rank \d+ of 21", screen.text()) is not None, 40)
        sampler.cancel()
        text = screen.text()
        assert "Pot: 4" in text
        assert "Tester (you)" in text
        for bot in ("Anna", "Björn", "Cecilia"):
            assert bot in text
        session = lan.session
        assert session is not None
        assert session.identity == profile.identity
        assert len(session.bot_lobbies) == 3
        assert all(lobby.formed for lobby in session.bot_lobbies)
        # The names come from the signed roster, the same at every peer.
        roster = session.bot_lobbies[0].roster
        assert roster is not None
        assert sorted((s.player, s.bot) for s in roster.members) == [
            ("Anna", True), ("Björn", True), ("Cecilia", True), ("Tester", False)]
        # Every peer is its own mesh listener on loopback.
        assert session.lobby is not None
        assert session.lobby.address.startswith("127.0.0.1:")
        addresses = {lobby.address for lobby in [session.lobby, *session.bot_lobbies]}
        assert len(addresses) == 4
        inp.send_text("a")
        await wait_for(lambda: "The players and their keys:" in screen.text())
        audit = screen.text()
        assert f"Tester (you): key {profile.fingerprint}" in audit
        for seat in roster.members:
            assert f"{seat.player}{'' if seat.bot else ' (you)'}: key {seat.fingerprint}" \
                in audit
        inp.send_text("a")
        await wait_for(lambda: "The players and their keys:" not in screen.text())
        # A whole hand by keys: every peer checks it and signs its checkpoint.
        await play_until(inp, table_screen, lambda: bool(table_screen.table.human.outcomes))
        await wait_for(lambda: "verified by all 4 peers" in screen.text(), 10)
        assert table_screen.log_path is not None
        logged.append(Path(table_screen.log_path))
        # Bots are never remembered: their keys are new each game.
        assert len(profile.known_players()) == 0

    run_lobby(inp, body, profile=profile, log_to=new_log_path)
    assert any(re.search(r"Table Bots-\w+ \(wikipedia, stake 1\): 4 of 4 seats taken", t)
               for t in seen), seen[:3]
    assert any(re.search(r"Your bots: \d of 3 seated\.", t) for t in seen)
    assert not any(re.search(r"Table Bots-\w+ \(wikipedia, stake 1\): [0-3] of 4 seats", t)
                   for t in seen)  # the bots' seats are taken from the start
    path = logged[0]
    assert path.parent == tmp_path / "data" / "p2pkille" / "games"
    assert path.stat().st_mode & 0o777 == 0o600
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert "clean: 1 hands" in capsys.readouterr().out


async def play_until(inp: PipeInput, table_screen: TableScreen,
                     done: Callable[[], bool]) -> None:
    """Answer the player's questions with keys (keep, no cut, no) until ``done()``."""
    decider = table_screen.table.decider
    while not done():
        request = decider.request
        if request is not None:
            inp.send_text({Ask.TURN: "k", Ask.CUT: "0"}.get(request.ask, "n"))
            at = request.at

            def answered(at: int = at) -> bool:
                asked = decider.request
                return asked is None or asked.at != at or done()

            await wait_for(answered, 30)
        await asyncio.sleep(0.02)


def peer_command(name: str, seats: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", "peer", "--table", name, "--seats", str(seats),
            "--interface", "127.0.0.1", "--json", "--timeout", "60", *extra]


def test_a_peer_process_takes_the_open_seat_of_a_created_table(inp: PipeInput) -> None:
    """... and when it is killed, the screen names it as gone (the time-outs are the
    node's; the screen's clock is the test's)."""
    name = table_name()
    procs: list[subprocess.Popen[bytes]] = []
    clock = FakeClock()

    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        screen.form.name = name
        screen.form.seats = "3"
        screen.form.bots = "1"
        inp.send_text("c\r")
        await wait_for(lambda: screen.view is View.WAIT)
        await wait_for(lambda: "1 of 3 seats taken" in screen.text()
                       or "2 of 3 seats taken" in screen.text(), 20)
        assert "Others can join: p2pkille play, or p2pkille peer --table" in screen.text()
        procs.extend(start([peer_command(name, 3, "--hands", "1")]))
        # The player decides who sits: the stranger waits until it is let in.
        await wait_for(lambda: "Wants a seat: " in screen.text(), 30)
        session = lan.session
        assert session is not None
        assert session.lobby is not None
        assert len(session.lobby.joined) < 3
        inp.send_text("a")
        await wait_for(lambda: screen.view is View.TABLE, 40)
        await wait_for(lambda: re.search(r"rank \d+ of 21", screen.text()) is not None, 40)
        found = re.search(r"peer [0-9a-f]{6}", screen.text())
        assert found
        stranger = found.group(0)
        stop(procs)  # kill -9
        table_screen = screen.table_screen
        assert table_screen is not None
        decider = table_screen.table.decider

        def stuck() -> bool:
            request = decider.request
            if request is not None:
                inp.send_text({Ask.TURN: "k", Ask.CUT: "0"}.get(request.ask, "n"))
            return f"Waiting for {stranger}" in screen.text()

        await wait_for(stuck, 30)
        clock.now += 25
        text = screen.text()
        # The stranger is named; a bot of ours may be waited for at the same step
        # (one waiting for the stranger's share, or a paced one not there yet).
        assert re.search(rf"{stranger}((, | and )[\w ]+?)* (has|have) not answered for 25 "
                         r"s: the peers? may have vanished", " ".join(text.split())), text
        assert "Traceback" not in text

    try:
        run_lobby(inp, body, clock=clock)
    finally:
        stop(procs)


def test_joining_a_table_created_by_a_peer_process(inp: PipeInput) -> None:
    name = table_name()
    procs = start([peer_command(name, 2, "--create", "--ruleset", "enkortskille", "--hands",
                                "1")])

    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        await wait_for(lambda: name in screen.text(), 30)
        line = next(line for line in screen.text().splitlines() if name in line)
        assert re.search(r"1/2\s+[0-9a-f]{16}\s+1 peer", line), line
        await select(screen, inp, name)
        inp.send_text("\r")
        await wait_for(lambda: screen.view is not View.LIST)
        await wait_for(lambda: screen.view is View.TABLE, 40)
        await wait_for(lambda: re.search(r"rank \d+ of 21", screen.text()) is not None, 40)
        # Play the hand out so the process can finish.
        table_screen = screen.table_screen
        assert table_screen is not None
        node = table_screen.table.human
        await play_until(inp, table_screen, lambda: bool(node.outcomes))
        assert node.outcomes[0].agreed_by
        # The process leaves once it knows we hold its last signatures.
        await wait_for(lambda: procs[0].poll() is not None, 20)

    try:
        run_lobby(inp, body, timeout=90)
        results, _errors = collect(procs, 30)
    finally:
        stop(procs)
    assert len(results[0]["hands"]) == 1  # type: ignore[arg-type]


def test_a_table_that_fails_is_a_message_and_esc_goes_back(inp: PipeInput) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()

        async def body(lan: LanLobby, screen: LobbyScreen) -> None:
            lan.port = busy.getsockname()[1]  # the player's mesh cannot listen there
            inp.send_text("c\r")
            await wait_for(lambda: "The table failed:" in screen.text(), 20)
            text = screen.text()
            said = " ".join(text.split())
            assert re.search(r"The table failed: OSError: .*address already in use", said), text
            assert "Traceback" not in text
            assert "Esc: leave and go back" in text
            inp.send_text("\x1b")
            await wait_for(lambda: screen.view is View.LIST)
            assert lan.session is None
            assert "Tables on the LAN" in screen.text()

        run_lobby(inp, body)


def test_a_creating_player_sees_each_joiner_by_key_and_lets_it_in_or_refuses_it(
        tmp_path: Path) -> None:
    """The creator decides who sits: each stranger asking for a seat is shown by its signed
    name and key fingerprint, oldest first, with a warning when the name was met under
    another key; ``a`` lets it in, ``r`` turns it away. The player's bots sit down without
    asking."""
    from p2pkille.net.lobby import channel_id, encode_message
    from p2pkille.net.mesh import peer_name
    from p2pkille.ui.identity import KnownPlayers
    from protocol import canonical

    async def main() -> None:
        strangers = [Identity.from_seed(bytes([0x60 + i]) * 32) for i in range(3)]
        known = KnownPlayers(tmp_path / "known-players.json")
        friend = Identity.from_seed(b"\x70" * 32)
        known.remember([(friend.public, "Lisa")])  # Lisa was met before, under another key
        lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester", known=known)
        screen = LobbyScreen(lan, "en", lambda table: None)  # type: ignore[arg-type,return-value]
        # The session as LanLobby.create makes it, its lobby driven by hand (not started).
        session = LanSession(PeerSettings(offer=NewTable("keys", seats=4, bots=1).offer(),
                                          create=True), "Tester", 1, 0.0, None, known=known)
        lan.session = session
        lobby = Lobby(session.identity, bytes([0x44]) * 32, session.settings.offer,
                      table=b"K" * 16, ask=session.settings.ask,
                      admit=session.settings.admit, player="Tester")
        session.lobby = lobby
        screen.view = View.WAIT

        def join(who: Identity, **named: object) -> None:
            lobby.receive(peer_name(who.public), encode_message(who, {
                "address": "", "channel": canonical.b64encode(channel_id("keys")),
                "creator": session.identity.public.fingerprint,
                "delivery": canonical.b64encode(bytes([0x50]) * 32), "type": "join",
                **named}), 0.0)

        bot = session.bot_identities[0]
        assert "2 of 4 seats taken" in screen.text()  # the bot's seat is held already
        join(bot, player="Anna", bot=True)
        assert [s.identity for s in lobby.joined] == [session.identity.public, bot.public]
        join(strangers[0])
        join(strangers[1], player="Lisa")
        join(strangers[2], player="Kalle")
        text = screen.text()
        assert "At the table: Tester, key " in text
        assert f"Anna (bot), key {bot.public.fingerprint}" in text
        assert f"Wants a seat: no name, key {strangers[0].public.fingerprint}  " \
            "(a: let in, r: refuse)" in text
        assert "... and 2 more waiting." in text
        screen.press("r")
        text = screen.text(width=200)
        assert f"Wants a seat: Lisa, key {strangers[1].public.fingerprint}" in text
        assert (f"Warning: Lisa ({strangers[1].public.fingerprint}) is a new key for a name "
                f"you met with the key {friend.public.fingerprint}.") in text
        screen.lang = "sv"
        assert "Varning: Lisa" in screen.text(width=200)
        assert f"Vill sitta med: Lisa, nyckel {strangers[1].public.fingerprint}" \
            in screen.text(width=200)
        screen.press("a")
        assert lobby.joined[-1].identity == strangers[1].public
        assert (lobby.joined[-1].player, lobby.joined[-1].bot) == ("Lisa", False)
        screen.press("a")  # the last seat: the roster is made
        assert lobby.roster is not None
        assert {s.identity for s in lobby.roster.members} == {
            session.identity.public, bot.public, strangers[1].public, strangers[2].public}
        assert "Vill sitta med" not in screen.text()

    asyncio.run(main())


def form_screen(lang: str = "en") -> LobbyScreen:
    """A lobby screen on its form (nothing runs: keys only)."""
    lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester")
    screen = LobbyScreen(lan, lang, lambda table: None)  # type: ignore[arg-type,return-value]
    screen.press("c")
    assert screen.view is View.FORM
    return screen


def to_field(screen: LobbyScreen, name: str) -> None:
    while FIELDS[screen.form.field][0] != name:
        screen.press("down")


def test_the_form_keeps_seats_and_bots_within_the_ruleset() -> None:
    screen = form_screen()
    form = screen.form
    to_field(screen, "seats")
    for _ in range(10):
        screen.press("left")
    assert (form.seats, form.bots) == ("3", "2")  # wikipedia: 3 players at least
    to_field(screen, "bots")
    for _ in range(5):
        screen.press("right")
    assert form.bots == "2"  # one seat is the player's
    screen.press("left")
    assert form.bots == "1"
    to_field(screen, "seats")
    for _ in range(20):
        screen.press("right")
    assert form.seats == "15"
    to_field(screen, "ruleset")
    while form.ruleset != "enkortskille":
        screen.press("right")
    to_field(screen, "seats")
    for _ in range(20):
        screen.press("left")
    assert (form.seats, form.bots) == ("2", "1")
    to_field(screen, "stake")
    screen.press("left")
    screen.press("left")
    assert form.stake == "1"


def test_the_form_offers_audit_or_strict() -> None:
    screen = form_screen()
    assert "Mode:            ◀ audit: the cards are shown after each hand ▶" in screen.text()
    to_field(screen, "mode")
    screen.press("right")
    assert screen.form.mode == "strict"
    assert "◀ strict: proofs, no key shown ▶" in screen.text()
    assert screen.form.value().offer().mode == "strict"
    screen.press("x")
    assert "The key x does nothing here" in screen.text()
    screen.press("left")
    assert screen.form.mode == "audit"


@pytest.mark.parametrize(("field", "typed", "sv", "en"), [
    # 3 bots at 0 seats (the "Går inte: 3 bots at 0 seats: at most -1")
    ("seats", "0", "Går inte: 0 platser: wikipedia spelas av 3 till 15",
     "Cannot create it: 0 seats: wikipedia is played by 3 to 15"),
    ("stake", "0", "Går inte: insatsen måste vara minst 1",
     "Cannot create it: the stake must be at least 1"),
    ("chips", "0", "Går inte: markerna (0) måste täcka insatsen (1)",
     "Cannot create it: the chips (0) must cover the stake (1)"),
    ("bots", "", "Går inte: Botar: skriv ett heltal", "Cannot create it: Bots: type a whole "
     "number"),
    ("name", "", "Går inte: bordet behöver ett namn", "Cannot create it: the table needs a name"),
])
def test_every_form_error_is_said_in_the_screen_s_language(
        field: str, typed: str, sv: str, en: str) -> None:
    for lang, want in (("sv", sv), ("en", en)):
        screen = form_screen(lang)
        to_field(screen, field)
        for _ in range(70):
            screen.press("backspace")
        for key in typed:
            screen.press(key)
        screen.press("enter")
        text = screen.text()
        assert want in text, text
        assert screen.lan.session is None
        if lang == "sv":
            assert not re.search(r"\b(bots|seats|at most|stake|must|need)\b", text), text


def test_ctrl_c_in_the_lobby_leaves_as_q_does_with_status_130(inp: PipeInput) -> None:
    async def main() -> int:
        lan, screen = lobby_screen(TableSpec(name="Tester"), "en", LOOPBACK)
        app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)
        task = asyncio.create_task(play_lan(lan, screen, app))
        await wait_for(lambda: app.is_running, 10)
        inp.send_text("c")  # in the form, Ctrl-C leaves too (q would be typed)
        await wait_for(lambda: screen.view is View.FORM)
        inp.send_text("\x03")
        return await asyncio.wait_for(task, 20)

    assert asyncio.run(main()) == 130


def test_ctrl_c_at_a_lan_table_asks_first() -> None:
    from p2pkille.ui.model import TableScreen as Screen
    lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester")
    screen = LobbyScreen(lan, "en", lambda table: None)  # type: ignore[arg-type,return-value]

    class Asked:
        interrupted = False
        quit = False
        asked = 0

        def interrupt(self) -> None:
            self.asked += 1

    table = Asked()
    screen.table_screen = table  # type: ignore[assignment]
    screen.view = View.TABLE
    screen.interrupt()
    assert table.asked == 1
    assert not screen.quit
    assert not screen.interrupted
    assert Screen.interrupt is not None


def test_a_row_names_its_creator_by_the_name_its_key_played_under_before(
        tmp_path: Path) -> None:
    from p2pkille.ui.identity import KnownPlayers
    from p2pkille.ui.lan import Listed

    creator = Identity.from_seed(b"\x21" * 32)
    stranger = Identity.from_seed(b"\x22" * 32)
    known = KnownPlayers(tmp_path / "known-players.json")
    known.remember([(creator.public, "Kalle")])
    lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester", known=known)
    screen = LobbyScreen(lan, "en", lambda table: None)  # type: ignore[arg-type,return-value]
    lan.tables = [Listed(b"t" * 16, "Fredag", "wikipedia", 1, 2, 4, creator.public.fingerprint,
                         2),
                  Listed(b"u" * 16, "Lördag", "wikipedia", 1, 4, 4,
                         stranger.public.fingerprint, 1)]
    rows = [line for line in screen.text(120).splitlines() if "wikipedia" in line]
    assert re.search(rf"Fredag\s+wikipedia\s+1\s+2/4\s+{creator.public.fingerprint} Kalle",
                     rows[0]), rows
    assert re.search(rf"Lördag\s+wikipedia\s+1\s+4/4 full\s+{stranger.public.fingerprint}  ",
                     rows[1]), rows


def test_a_list_longer_than_the_window_scrolls_with_the_marker() -> None:
    from p2pkille.ui.lan import Listed

    lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester")
    screen = LobbyScreen(lan, "en", lambda table: None)  # type: ignore[arg-type,return-value]
    lan.tables = [Listed(bytes([i]) * 16, f"table-{i:02}", "wikipedia", 1, 1, 4, "ab" * 8, 1)
                  for i in range(60)]
    first = screen.text(100, 24)
    assert len(first.splitlines()) <= 24
    assert "▶ table-00" in first
    assert "more table(s) below" in first
    for _ in range(59):
        screen.press("down")
    last = screen.text(100, 24)
    assert "▶ table-59" in last
    assert "more table(s) above" in last
    assert "below" not in last
    for _ in range(30):
        screen.press("up")
    middle = screen.text(100, 24)
    assert "▶ table-29" in middle
    assert "above" in middle
    assert "below" in middle
