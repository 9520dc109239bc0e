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
from p2pkille.ui.lan import LanLobby, LanSession, NewTable
from p2pkille.ui.lobby import LobbyScreen, View
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
              clock: FakeClock | None = None) -> LobbyScreen:
    """The lobby application on 127.0.0.1 while ``body`` plays; then quit."""
    screens: list[LobbyScreen] = []

    async def main() -> None:
        lan, screen = lobby_screen(TableSpec(name="Tester", pace=0.0), "en", LOOPBACK, timing,
                                   clock)
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
    with pytest.raises(ValueError, match=r"seats 40: need 2\.\.32"):
        NewTable("t", "wikipedia", seats=40, bots=3).offer()
    assert NewTable("t", "enkortskille", 2, 5, 2, 1).offer().seats == 2


def test_creating_a_table_with_three_bots_forms_it_over_the_mesh(inp: PipeInput) -> None:
    seen: list[str] = []

    async def body(lan: LanLobby, screen: LobbyScreen) -> None:
        inp.send_text("c")
        await wait_for(lambda: screen.view is View.FORM)
        inp.send_text("\x7f" * 40 + "Bots-" + uuid.uuid4().hex[:6] + "\r")
        await wait_for(lambda: screen.view is not View.FORM)

        async def sample() -> None:
            while True:
                seen.append(screen.text())
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
        assert len(session.bot_lobbies) == 3
        assert all(lobby.formed for lobby in session.bot_lobbies)
        # Every peer is its own mesh listener on loopback.
        assert session.lobby is not None
        assert session.lobby.address.startswith("127.0.0.1:")
        addresses = {lobby.address for lobby in [session.lobby, *session.bot_lobbies]}
        assert len(addresses) == 4
        # A whole hand by keys: every peer checks it and signs its checkpoint.
        await play_until(inp, table_screen, lambda: bool(table_screen.table.human.outcomes))
        await wait_for(lambda: "verified by all 4 peers" in screen.text(), 10)

    run_lobby(inp, body)
    assert any(re.search(r"Table Bots-\w+ \(wikipedia, stake 1\): \d of 4 seats taken", t)
               for t in seen), seen[:3]
    assert any(re.search(r"Your bots: \d of 3 seated\.", t) for t in seen)


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
        assert re.search(rf"{stranger}(, \w+)* has not answered for 25 s: the peer may have "
                         r"vanished", text), text
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


def test_a_creating_player_sees_each_joiner_by_key_and_lets_it_in_or_refuses_it() -> None:
    """The creator decides who sits: each stranger asking for a seat is shown by its key
    fingerprint, oldest first; ``a`` lets it in, ``r`` turns it away. The player's bots sit
    down without asking."""
    from p2pkille.net.lobby import channel_id, encode_message
    from p2pkille.net.mesh import peer_name
    from protocol import canonical

    async def main() -> None:
        lan = LanLobby(LOOPBACK, "127.0.0.1", "Tester")
        screen = LobbyScreen(lan, "en", lambda table: None)  # type: ignore[arg-type,return-value]
        # The session as LanLobby.create makes it, its lobby driven by hand (not started).
        session = LanSession(PeerSettings(offer=NewTable("keys", seats=4, bots=1).offer(),
                                          create=True), "Tester", 1, 0.0, None)
        lan.session = session
        lobby = Lobby(session.identity, bytes([0x44]) * 32, session.settings.offer,
                      table=b"K" * 16, ask=session.settings.ask,
                      admit=session.settings.admit)
        session.lobby = lobby
        screen.view = View.WAIT
        strangers = [Identity.from_seed(bytes([0x60 + i]) * 32) for i in range(3)]

        def join(who: Identity) -> None:
            lobby.receive(peer_name(who.public), encode_message(who, {
                "address": "", "channel": canonical.b64encode(channel_id("keys")),
                "creator": session.identity.public.fingerprint,
                "delivery": canonical.b64encode(bytes([0x50]) * 32), "type": "join"}), 0.0)

        bot = session.bot_identities[0]
        join(bot)
        assert [s.identity for s in lobby.joined] == [session.identity.public, bot.public]
        for who in strangers:
            join(who)
        text = screen.text()
        assert f"Wants a seat: {strangers[0].public.fingerprint}  (a: let in, r: refuse)" \
            in text
        assert "... and 2 more waiting." in text
        screen.press("r")
        assert f"Wants a seat: {strangers[1].public.fingerprint}" in screen.text()
        screen.press("a")
        assert lobby.joined[-1].identity == strangers[1].public
        screen.press("a")  # the last seat: the roster is made
        assert lobby.roster is not None
        assert {s.identity for s in lobby.roster.members} == {
            session.identity.public, bot.public, strangers[1].public, strangers[2].public}
        assert "Wants a seat" not in screen.text()

    asyncio.run(main())
