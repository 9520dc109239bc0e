"""The application driven through prompt-toolkit's pipe input with a dummy output.

A table of the player and three bot peers (real protocol nodes over the in-memory
net) plays whole hands; the keys go through the application's key bindings.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import TableNode
from p2pkille.ui.human import Ask, Request
from p2pkille.ui.model import MIN_HEIGHT, MIN_WIDTH, Mode
from tests.runtime.helpers import flipped
from tests.ui.pilot import answer_one, run_with, setup, wait_for


@pytest.fixture
def inp() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


def marker_seat(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("▶"):
            return line[1:].split()[0]
    return None


def my_card(text: str) -> str | None:
    found = re.search(r"│\s*(.+?)\s*│\s+rank (\d+) of 21", text)
    return found.group(1) if found else None


def test_a_whole_game_with_keys(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=11)
    seen: list[str] = []
    changed: list[tuple[str, str]] = []

    async def sample() -> None:
        while True:
            seen.append(screen.text(100, 40))
            await asyncio.sleep(0.005)

    async def body() -> None:
        sampler = asyncio.create_task(sample())
        decider = table.decider
        await wait_for(lambda: decider.request is not None)
        first = screen.text(100, 40)
        assert "Pot: 4" in first
        assert my_card(first) is not None, first
        assert marker_seat(first) == "Tester"
        assert "Your moves:" in first
        assert "k  keep" in first

        # Illegal keys do nothing and say why.
        request = decider.request
        inp.send_text("x")
        await wait_for(lambda: "The key x does nothing now" in screen.text(100, 40))
        assert decider.request is request
        if request is not None and request.ask is Ask.TURN:
            inp.send_text("r")
            await wait_for(lambda: "A redeal cannot be asked now" in screen.text(100, 40))
            inp.send_text("3")
            await wait_for(lambda: "You cannot pick a card" in screen.text(100, 40))
            assert decider.request is request

        game = screen.game
        assert game is not None
        while not game.over:
            before = screen.text(100, 40)
            request = await answer_one(screen, inp)
            if request.ask is Ask.TURN and "s  swap with the next player" in before:
                hand, held = game.hand_no, my_card(before)

                def moved(hand: int = hand, held: str | None = held) -> bool:
                    return game.over or game.hand_no != hand or (
                        my_card(screen.text(100, 40)) != held)

                await wait_for(moved)
                after = screen.text(100, 40)
                if game.hand_no == hand and my_card(after) not in (None, my_card(before)):
                    changed.append((str(my_card(before)), str(my_card(after))))
            await wait_for(lambda: game.over or decider.request is not None, 30)
        await wait_for(lambda: "wins the game" in screen.text(100, 40))
        # A peer out of the game counts the last hand once the players sent over.
        await wait_for(lambda: all(n.done for n in table.nodes))
        sampler.cancel()

    asyncio.run(run_with(app, table, screen, body))
    final = screen.text(100, 40)
    game = screen.game
    assert game is not None
    assert game.winner is not None
    winner = table.seat_names()[game.winner]
    assert f"{winner}" in final
    assert "wins the game and takes the pot" in final
    # The turn marker moved round the table.
    assert len({marker_seat(t) for t in seen} - {None}) >= 2
    # A swap changed the player's card at least once.
    assert changed, "no swap changed the card"
    # The showdown was told, naming who died, and each hand was verified by every peer.
    log = "\n".join(screen.log)
    assert "«På rygg!»" in log
    assert re.search(r"dies: lowest card at the showdown|dies: the husar hews", log)
    assert any(re.search(r"Died in hand \d+: \w+", t) for t in seen)
    assert any("verified by all 4 peers" in t for t in seen)
    assert all(n.done for n in table.nodes)
    checkpoints = {tuple(o.checkpoint for o in n.outcomes) for n in table.nodes}
    assert len(checkpoints) == 1


def test_a_strict_table_says_what_it_proved_and_that_cards_stay_secret(
        inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=12, mode="strict")

    async def body() -> None:
        await answer_one(screen, inp)
        await wait_for(lambda: bool(table.human.outcomes), 60)
        inp.send_text("h")
        await wait_for(lambda: screen.mode is Mode.HELP)
        assert "no key is ever revealed" in " ".join(screen.text(100, 60).split())
        inp.send_text("a")
        await wait_for(lambda: screen.mode is Mode.AUDIT)
        audit = " ".join(screen.text(100, 40).split())
        assert re.search(r"Proofs checked \(shuffles and answers\): [1-9]\d*", audit), audit
        assert "cards no rule showed stay secret" in audit
        assert "Dealt (as the audit" not in audit

    asyncio.run(run_with(app, table, screen, body))


def test_help_audit_and_language(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=12)

    async def body() -> None:
        await answer_one(screen, inp)
        await wait_for(lambda: bool(table.human.outcomes), 30)
        inp.send_text("h")
        await wait_for(lambda: screen.mode is Mode.HELP)
        help_text = screen.text(100, 60)
        assert "Help: rules and keys" in help_text
        assert "This table's rules (wikipedia):" in help_text
        assert "max_pick: 1" in help_text
        assert "Keys: k keep" in help_text
        inp.send_text("a")
        await wait_for(lambda: screen.mode is Mode.AUDIT)
        audit = screen.text(100, 40)
        assert "Shuffle steps checked: 4" in audit
        assert re.search(r"Checkpoint hash: [0-9a-f]{64}", audit)
        assert re.search(r"Decryption shares with DLEQ proofs checked: [1-9]\d*", audit)
        assert "Checkpoint signatures: 4 of 4" in audit
        dealt = re.search(r"Dealt \(as the audit after the reveal shows\): (.+)", audit)
        assert dealt is not None
        assert len(dealt.group(1).split(", ")) == 4
        assert "Tester (you) " in dealt.group(1)
        inp.send_text("l")
        await wait_for(lambda: screen.lang == "sv")
        assert "Granskning av giv" in screen.text(100, 40)
        told = "\n".join(screen.log)
        assert re.search(r"^Giv 1: .+ ger, .+ är förhand\. Potten 4\.$", told, re.MULTILINE)
        assert "«På rygg!» (korten vänds upp)" in told
        inp.send_text("\x1b")
        await wait_for(lambda: screen.mode is Mode.TABLE)
        assert "Potten:" in screen.text(100, 40)

    asyncio.run(run_with(app, table, screen, body))


def test_a_too_small_window_says_so(inp: PipeInput) -> None:
    _table, screen, _app, _clock = setup(inp)
    small = screen.text(MIN_WIDTH - 1, 30)
    assert small == (f"The window is too small: {MIN_WIDTH - 1}x30, need at least "
                     f"{MIN_WIDTH}x{MIN_HEIGHT}. Make it larger.")
    assert "too small" in screen.text(100, MIN_HEIGHT - 1)
    narrow = screen.text(40, 10).splitlines()
    assert all(len(line) < 40 for line in narrow)
    assert " ".join(narrow).startswith("The window is too small: 40x10")
    assert "too small" not in screen.text(MIN_WIDTH, MIN_HEIGHT)


def test_keys_when_nothing_is_asked_say_why(inp: PipeInput) -> None:
    _table, screen, _app, _clock = setup(inp)
    screen.press("k")
    assert screen.notice == "Nothing to choose right now."
    screen.press("q")
    assert not screen.quit
    assert "Press q again" in screen.notice
    screen.press("q")
    assert screen.quit


def test_a_vanished_peer_is_named(inp: PipeInput) -> None:
    table, screen, app, clock = setup(inp, seed=13)

    async def body() -> None:
        await answer_one(screen, inp)
        for bot in table.bots:
            table.net.vanish(bot.name)
        me = table.human.my_seat
        await wait_for(lambda: bool([s for s in screen._waiting() if s != me]))
        screen.text(100, 40)
        clock.now += 25
        text = screen.text(100, 40)
        assert "has not answered for 25 s: the peer may have vanished" in text, text

    asyncio.run(run_with(app, table, screen, body))


def test_a_wait_that_no_majority_can_end_is_explained(inp: PipeInput) -> None:
    # Two of the three bots vanish: the player and the last bot are no majority of the
    # four key holders, so nobody can time the two out; the screen says so and why.
    from prompt_toolkit.output import DummyOutput

    from cli.play import narrate
    from p2pkille.runtime.node import Timing
    from p2pkille.ui.app import build_app
    from p2pkille.ui.model import TableScreen
    from p2pkille.ui.session import TableSpec, local_table
    from tests.ui.pilot import FakeClock

    table = local_table(TableSpec(bots=3, seed=13, chips=3, name="Tester"),
                        Timing(limit=0.3, decide_limit=30.0, answer_limit=0.6))
    screen = TableScreen(table, narrate, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)

    async def body() -> None:
        await wait_for(lambda: table.human.status() is not None)
        gone = table.bots[:2]
        for bot in gone:
            table.net.vanish(bot.name)
        await wait_for(lambda: "no majority" in screen.text(100, 40))
        text = screen.text(100, 40)
        names = table.seat_names()
        who = ", ".join(names[bot.my_seat] for bot in sorted(
            gone, key=lambda b: b.my_seat if b.my_seat is not None else -1)
            if bot.my_seat is not None)
        assert (f"{who} are silent, and the rest of you are no majority of the hand's 4 key "
                "holders:") in text, text
        assert "nobody can agree their time-out" in text
        assert "Wait for them, or quit." in text

    asyncio.run(run_with(app, table, screen, body))


def test_a_failing_table_is_a_message_not_a_traceback(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=14)
    bot = table.bots[0]

    def broken(sender: str, data: bytes, now: float) -> list[object]:
        raise RuntimeError("the bot's node broke")

    bot.receive = broken  # type: ignore[method-assign,assignment]

    async def body() -> None:
        await wait_for(lambda: screen.failure is not None)
        text = screen.text(100, 40)
        assert "The table cannot go on: RuntimeError: the bot's node broke" in text
        inp.send_text("q")
        await wait_for(lambda: not app.is_running)

    asyncio.run(run_with(app, table, screen, body))
    assert screen.quit


class BadKey(Behaviour):
    """Announces its hand key with a proof that does not hold."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.KEY:
            body = {**body, "share": flipped(body["share"], 40)}
        return [body]


def test_an_accusation_is_shown_with_who_was_expelled(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=15)
    cheater = table.bots[1]
    cheater.behaviour = BadKey()
    cheater_name = table.names_by_peer[cheater.name]

    async def body() -> None:
        await wait_for(lambda: bool(table.human.outcomes), 30)

    asyncio.run(run_with(app, table, screen, body))
    outcome = table.human.outcomes[0]
    assert outcome.voided
    text = screen.text(100, 40)
    line = next(line for line in text.splitlines() if "voided" in line)
    assert re.match(rf"Hand 1 voided: .+ accuses {cheater_name}: .+ \(proven\)", line), line
    assert line.endswith(f"Expelled: {cheater_name}")
    seat = next(line for line in text.splitlines() if line[2:].startswith(cheater_name))
    assert re.search(r"\bout\b", seat), seat


def adventurous(request: Request) -> str:
    """Uses the endgame keys where they are open: picks, redeals, sales, 'it depends'."""
    view = request.view
    if request.ask is Ask.TURN:
        if view.buyers:
            return "b\r"  # the suggested buyer and price
        if view.can_redeal:
            return "r"
        if view.is_drawer and view.options.max_pick > 1:
            return str(view.options.max_pick)
        return "s"
    if request.ask is Ask.VOTE:
        return "d" if view.can_depend else "y"
    if request.ask is Ask.SALE:
        return "y" if view.sale is not None and view.sale[1] <= view.chips else "n"
    if request.ask is Ask.CUT:
        return "1" if len(view.game.stock) > 1 else "0"
    return "y" if 0 < view.price <= view.chips else "n"


@pytest.mark.parametrize(("ruleset", "seed", "used"), [
    ("bytes-kille", 25, "4"),  # the drawer picks the 4th stock card
    ("enkortskille", 22, "b\r"),  # the player sells its card
])
def test_whole_games_in_the_other_rulesets(inp: PipeInput, ruleset: str, seed: int,
                                           used: str) -> None:
    table, screen, app, _clock = setup(inp, seed=seed, ruleset=ruleset, chips=4)
    keys: list[str] = []

    def policy(request: Request) -> str:
        keys.append(adventurous(request))
        return keys[-1]

    async def body() -> None:
        game = None
        while game is None or not game.over:
            await answer_one(screen, inp, policy)
            game = screen.game
            await wait_for(lambda: screen.game is not None and (
                screen.game.over or table.decider.request is not None), 30)
        await wait_for(lambda: "wins the game" in screen.text(100, 40))
        # A peer out of the game counts the last hand once the players say they moved on.
        await wait_for(lambda: all(n.done for n in table.nodes))

    asyncio.run(run_with(app, table, screen, body, timeout=90))
    assert used in keys
    assert screen.failure is None
    checkpoints = {tuple(o.checkpoint for o in n.outcomes) for n in table.nodes}
    assert len(checkpoints) == 1


def test_the_turn_marker_counts_down(inp: PipeInput) -> None:
    table, screen, app, clock = setup(inp, seed=11)

    async def body() -> None:
        await wait_for(lambda: table.decider.request is not None)
        limit = int(table.human.timing.decide_limit)
        assert f"Your turn! ({limit} s left)" in screen.text(100, 40)
        clock.now += 12.5
        assert f"Your turn! ({limit - 12} s left)" in screen.text(100, 40)
        clock.now += 40
        assert f"Your turn! ({limit - 52} s left)" in screen.text(100, 40)
        await answer_one(screen, inp)
        # A new step starts a new count, from the crypto steps' limit or a decision's.
        await wait_for(lambda: re.search(r"\((\d+) s left\)", screen.text(100, 40)) is not None)
        left = int(re.findall(r"\((\d+) s left\)", screen.text(100, 40))[0])
        assert left in (int(table.human.timing.limit), limit)

    asyncio.run(run_with(app, table, screen, body))


def test_the_player_chooses_the_buyer_and_the_price_of_a_sale(inp: PipeInput) -> None:
    # Seed 8, enkortskille: in hand 2 the player may sell to three seats that are out.
    table, screen, app, _clock = setup(inp, seed=8, ruleset="enkortskille", chips=4)

    def policy(request: Request) -> str:
        key = adventurous(request)
        return "s" if key.startswith("b") else key

    async def body() -> None:
        decider = table.decider
        while True:
            await wait_for(lambda: decider.request is not None, 30)
            request = decider.request
            assert request is not None
            if request.ask is Ask.TURN and len(request.view.buyers) >= 2:
                break
            await answer_one(screen, inp, policy)
        names = table.seat_names()
        buyers = request.view.buyers
        assert "b  sell your card (choose the buyer and the price)" in screen.text(100, 40)
        inp.send_text("b")
        await wait_for(lambda: screen.sale is not None)
        first = names[buyers[0]]
        text = screen.text(100, 40)
        assert "Sell your card:" in text
        assert f"to: ◀ {first} ▶" in text
        inp.send_text("\x1b[B")
        second = names[buyers[1]]
        await wait_for(lambda: f"to: ◀ {second} ▶" in screen.text(100, 40))
        chips = request.view.game.chips[buyers[1]]
        inp.send_text(str(chips + 1) + "\r")
        await wait_for(lambda: "cannot pay" in screen.text(100, 40))
        assert f"{second} has only {chips} chips and cannot pay {chips + 1}." in screen.text(
            100, 40)
        asked = decider.request
        assert asked is not None
        assert (asked.ask, asked.at) == (request.ask, request.at)
        inp.send_text("\x7f" * 5 + "x")
        await wait_for(lambda: "The key x does nothing here" in screen.text(100, 40))
        inp.send_text("\r")
        await wait_for(lambda: "Type a price" in screen.text(100, 40))
        inp.send_text("1\r")
        await wait_for(lambda: decider.request is None or decider.request.at != request.at)
        assert screen.sale is None
        await wait_for(lambda: any(f"offers the card to {second} for 1 chips" in line
                                   for line in screen.log))

    asyncio.run(run_with(app, table, screen, body, timeout=90))


def test_the_narration_says_your_and_names_the_card_received(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=11, name="You")

    async def body() -> None:
        game = None
        while game is None or not game.over:
            await answer_one(screen, inp)
            game = screen.game
            await wait_for(lambda: screen.game is not None and (
                screen.game.over or table.decider.request is not None), 30)

    asyncio.run(run_with(app, table, screen, body))
    english = "\n".join(screen._log["en"])
    swedish = "\n".join(screen._log["sv"])
    assert "You's" not in english
    assert " ?" not in english
    assert "? " not in english
    assert re.search(r"exchange face down \((your [\w-]+ for \w+'s card|\w+'s card for your "
                     r"[\w-]+)\)\.", english), english
    assert re.search(r"^  You get \w+'s card: [\w ()ä-]+\.$", english, re.MULTILINE), english
    assert re.search(r"^  Du får \w+ kort: [\w ()ä-]+\.$", swedish, re.MULTILINE), swedish
    assert "Dus " not in swedish
    # The player called "You" is spoken to in the second person.
    assert not re.search(r"\bYou (is|keeps|swaps|draws|dies|buys|shows|takes|has)\b", english)
    assert re.search(r"\bYou (keep|swap|draw|show|are|take|die|buy)\b", english), english
