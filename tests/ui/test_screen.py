"""The application driven through prompt-toolkit's pipe input with a dummy output.

A table of the player and three bot peers (real protocol nodes over the in-memory
net) plays whole hands; the keys go through the application's key bindings.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.main import main
from cli.play import logged_table, table_screen
from p2pkille.engine.facts import BuyIn, Decision, Fact, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import TableNode
from p2pkille.ui.app import build_app
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import Ask, HumanDecider, Request
from p2pkille.ui.identity import Clash, Met, Seated, display_names
from p2pkille.ui.model import MIN_HEIGHT, MIN_WIDTH, Mode, TableScreen
from p2pkille.ui.session import LocalTable, TableSpec, local_table
from protocol.identity import Identity
from tests.runtime.helpers import flipped
from tests.ui.pilot import FakeClock, answer_one, default_policy, run_with, setup, wait_for


@pytest.fixture
def inp() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


WINS = re.compile(r"wins the game|You win the game")


def same_question(a: Request | None, b: Request | None) -> bool:
    """The node asks again on every wake, each time with a fresh request."""
    return a is not None and b is not None and (a.ask, a.at) == (b.ask, b.at)


def marker_seat(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("▶"):
            return line[1:].split()[0]
    return None


def my_card(text: str) -> str | None:
    found = re.search(r"│\s*(.+?)\s*│\s+rank (\d+) of 21", text)
    return found.group(1) if found else None


# A whole game through the keys, checked as it goes.
def test_a_whole_game_with_keys(inp: PipeInput) -> None:  # noqa: PLR0915
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
        assert same_question(decider.request, request)
        if request is not None and request.ask is Ask.TURN:
            inp.send_text("r")
            await wait_for(lambda: "A redeal cannot be asked now" in screen.text(100, 40))
            inp.send_text("3")
            await wait_for(lambda: "You cannot pick a card" in screen.text(100, 40))
            assert same_question(decider.request, request)

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
            await wait_for(lambda: game.over or decider.request is not None)
        await wait_for(lambda: WINS.search(screen.text(100, 40)) is not None)
        # A peer out of the game counts the last hand once the players sent over.
        await wait_for(lambda: all(n.done for n in table.nodes))
        sampler.cancel()

    asyncio.run(run_with(app, table, screen, body))
    final = screen.text(100, 40)
    game = screen.game
    assert game is not None
    assert game.winner is not None
    winner = table.seat_names()[game.winner]
    assert re.search(rf"{winner} wins the game and takes the pot!|You win the game and take "
                     r"the pot!", final), final
    # The turn marker moved round the table.
    assert len({marker_seat(t) for t in seen} - {None}) >= 2
    # A swap changed the player's card at least once.
    assert changed, "no swap changed the card"
    # The showdown was told, naming who died, and each hand was verified by every peer.
    log = "\n".join(screen.log)
    assert "«På rygg!»" in log
    assert re.search(r"(dies|die): the lowest card at the showdown|(dies|die): the Husar", log)
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
        await wait_for(lambda: bool(table.human.outcomes))
        assert "strict table" in screen.text(100, 40).splitlines()[0]
        inp.send_text("h")
        await wait_for(lambda: screen.mode is Mode.HELP)
        inp.send_text("\x1b[F")  # End: the bottom of the page
        await wait_for(lambda: "no key is ever revealed" in " ".join(screen.text(100, 40).split()))
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
        await wait_for(lambda: bool(table.human.outcomes))
        inp.send_text("h")
        await wait_for(lambda: screen.mode is Mode.HELP)
        help_text = " ".join(screen.text(100, 60).split())
        assert "Help: rules and keys" in help_text
        assert "The rules at this table: wikipedia" in help_text
        assert "The drawer takes the top card of the stock." in help_text
        assert "max_pick" not in help_text
        inp.send_text("a")
        await wait_for(lambda: screen.mode is Mode.AUDIT)
        audit = screen.text(100, 40)
        assert "Shuffle steps checked: 4" in audit
        assert re.search(r"Checkpoint hash: [0-9a-f]{64}", audit)
        assert re.search(r"Decryption shares with DLEQ proofs checked: [1-9]\d*", audit)
        assert "Checkpoint signatures: 4 of 4" in audit
        joined = " ".join(audit.split())
        dealt = re.search(r"Dealt \(as the audit after the reveal shows\): (.+?)(?: Esc or h|$)",
                          joined)
        assert dealt is not None, audit
        assert len(dealt.group(1).split(", ")) == 4
        assert "Tester (you): " in dealt.group(1)
        inp.send_text("l")
        await wait_for(lambda: screen.lang == "sv")
        assert "Granskning av giv" in screen.text(100, 40)
        told = "\n".join(screen.log)
        assert re.search(r"^Giv 1: .+ ger, .+ är förhand\. Potten är 4\.$", told, re.MULTILINE)
        assert "«På rygg!» Korten visas: " in told
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
    assert "Press q again to leave the table" in screen.text()
    screen.press("x")  # any other key stays
    assert "Press q again" not in screen.text()
    screen.press("q")
    assert not quits(screen)
    screen.press("q")
    assert quits(screen)
    assert not screen.interrupted


def quits(screen: TableScreen) -> bool:
    return screen.quit


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

    from p2pkille.runtime.node import Timing
    from p2pkille.ui.app import build_app
    from p2pkille.ui.model import TableScreen
    from p2pkille.ui.session import TableSpec, local_table
    from tests.ui.pilot import FakeClock

    table = local_table(TableSpec(bots=3, seed=13, chips=3, name="Tester"),
                        Timing(limit=0.3, decide_limit=30.0, answer_limit=0.6))
    screen = TableScreen(table, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)

    async def body() -> None:
        await wait_for(lambda: table.human.status() is not None)
        gone = table.bots[:2]
        for bot in gone:
            table.net.vanish(bot.name)
        await wait_for(lambda: "no majority" in screen.text(100, 40))
        text = screen.text(100, 40)
        names = table.seat_names()
        who = " and ".join(names[bot.my_seat] for bot in sorted(
            gone, key=lambda b: b.my_seat if b.my_seat is not None else -1)
            if bot.my_seat is not None)
        said = " ".join(text.split())
        assert (f"{who} are silent, and the rest of you are no majority of the hand's 4 key "
                "holders:") in said, text
        assert "nobody can agree their time-out" in said
        assert "Wait for them, or quit." in said

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


def test_a_voided_hand_is_narrated_with_who_why_and_one_hand_numbering(
        inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=15)
    cheater = table.bots[1]
    cheater.behaviour = BadKey()
    cheater_name = table.names_by_peer[cheater.name]

    async def body() -> None:
        await wait_for(lambda: bool(table.human.outcomes))
        await wait_for(lambda: any(line.startswith("Hand 2:") for line in screen.log))

    asyncio.run(run_with(app, table, screen, body))
    outcome = table.human.outcomes[0]
    assert outcome.voided
    assert outcome.hand == 1
    log = screen.log
    start = log.index("Hand 1 is voided and does not count.")
    accused = log[start + 1]
    # Every other holder's accusation, in one line.
    assert re.fullmatch(rf"  (\w+, )*\w+ and \w+ accused {cheater_name}: {cheater_name} sent a "
                        r"hand key whose proof does not hold \(proven\)\.", accused), accused
    assert re.search(r"\byou\b", accused)
    assert f"{cheater_name} accused" not in accused
    assert log[start + 2] == ("  Nothing had changed yet: the chips and the pot stand as "
                              "before the hand.")
    assert log[start + 3] == f"  {cheater_name} is out of the game for good."
    # The hand dealt next is hand 2 everywhere: the narration, the header, the audit.
    assert log[start + 4].startswith("Hand 2: ")
    assert not any(line.startswith("Hand 1:") for line in log[start:])
    text = screen.text(100, 40)
    assert re.search(r"^Hand 2\s+Pot: \d+\s+Hand 1 voided: see What happened", text,
                     re.MULTILINE), text
    seat = next(line for line in text.splitlines() if line[2:].startswith(cheater_name))
    assert re.search(r"\bout\b", seat), seat
    screen.press("a")
    audit = " ".join(screen.text(100, 40).split())
    assert (f"Hand 1 voided: bad-key: {cheater_name} sent a hand key whose proof does not hold "
            "(proven)") in audit
    screen.press("l")
    audit = " ".join(screen.text(100, 40).split())
    assert (f"Giv 1 ogiltig: bad-key: {cheater_name} skickade en nyckel vars bevis inte håller "
            "(bevisat)") in audit
    screen.press("l")
    screen.press("escape")
    swedish = screen.said_in("sv")
    assert "Giv 1 är ogiltig och räknas inte." in swedish
    assert f"  {cheater_name} är ute ur spelet för gott." in swedish


class BadReveal(Behaviour):
    """Reveals a broken hand key in every hand in which a seat bought back in."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        hand = node.status()
        if kind == msg.REVEAL and "secret" in body and hand is not None and any(
                isinstance(f, BuyIn) for f in hand.facts):
            body = {**body, "secret": flipped(body["secret"], 3)}
        return [body]


def buys_back(request: Request) -> str:
    """Swaps low cards, keeps high ones, buys back in whenever it can."""
    if request.ask is Ask.BUYIN:
        return "y"
    return default_policy(request)


def test_a_void_says_what_it_undid_a_buy_back_too(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=16, chips=5)
    table.bots[0].behaviour = BadReveal()

    async def body() -> None:
        node = table.human
        while not any(o.voided for o in node.outcomes):
            await answer_one(screen, inp, buys_back)
            await wait_for(lambda: any(o.voided for o in node.outcomes)
                           or table.decider.request is not None)
        await wait_for(lambda: any(line.startswith(f"Hand {voided_hand(node) + 1}:")
                                   for line in screen.log))

    asyncio.run(run_with(app, table, screen, body))
    node = table.human
    hand = voided_hand(node)
    log = screen.log
    start = log.index(f"Hand {hand} is voided and does not count.")
    bought = [line for line in log[:start] if "buys back in for" in line
              or "You buy back in for" in line][-1]
    buyer = bought.split()[0]
    undone = next(line for line in log[start:] if line.startswith("  Undone with the hand:"))
    whose = "your" if buyer == "You" else f"{buyer}'s"
    assert f"{whose} buy-back for 1 chip" in undone, undone
    assert re.search(r"the pot is (\d+) again \(it was (\d+)\)", undone), undone
    assert re.search(rf"{'you have' if buyer == 'You' else buyer + ' has'} \d+ chips? again "
                     r"\(not \d+\)", undone), undone
    assert log[log.index(undone) + 1].endswith("is out of the game for good.")
    assert any(line.startswith(f"Hand {hand + 1}: ") for line in log[start:])


def voided_hand(node: HumanTableNode) -> int:
    return next((o.hand for o in node.outcomes if o.voided), 0)


def test_a_seat_timed_out_is_named_with_what_the_table_waited_for(inp: PipeInput) -> None:
    from prompt_toolkit.output import DummyOutput

    from p2pkille.runtime.node import Timing
    from p2pkille.ui.app import build_app
    from p2pkille.ui.model import TableScreen
    from p2pkille.ui.session import TableSpec, local_table
    from tests.ui.pilot import FakeClock

    table = local_table(TableSpec(bots=3, seed=13, chips=3, name="Tester"),
                        Timing(limit=3.0, decide_limit=3.0, answer_limit=6.0))
    screen = TableScreen(table, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)
    gone = table.bots[1]

    async def body() -> None:
        await answer_one(screen, inp)
        table.net.vanish(gone.name)
        node = table.human
        while not any(o.voided for o in node.outcomes):
            await wait_for(lambda: any(o.voided for o in node.outcomes)
                           or table.decider.request is not None)
            if table.decider.request is not None:
                await answer_one(screen, inp)

    asyncio.run(run_with(app, table, screen, body))
    name = table.names_by_peer[gone.name]
    log = screen.log
    start = next(i for i, line in enumerate(log) if line.endswith("is voided and does not count."))
    assert re.fullmatch(rf"  {name} did not answer in time \(the table was waiting for "
                        rf"({name}'s decision|the [\w' ]+)\): every other key holder voted "
                        rf"{name} out\.", log[start + 1]), log[start:]
    assert f"  {name} is out of the game for good." in log[start:]


def adventurous(request: Request) -> str:  # noqa: PLR0911  one return per request kind it answers
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
                screen.game.over or table.decider.request is not None))
        await wait_for(lambda: WINS.search(screen.text(100, 40)) is not None)
        # A peer out of the game counts the last hand once the players say they moved on.
        await wait_for(lambda: all(n.done for n in table.nodes))

    asyncio.run(run_with(app, table, screen, body))
    assert used in keys
    screen.press("h")
    rules = " ".join(screen.text(100, 200).split())
    assert f"The rules at this table: {ruleset}" in rules
    assert ("Fråge-Kille" in rules) == (ruleset == "bytes-kille")
    assert ("Svinhugg går igen!" in rules) == (ruleset == "enkortskille")
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
            await wait_for(lambda: decider.request is not None)
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
        await wait_for(lambda: any(f"You offer the card to {second} for 1 chip." in line
                                   for line in screen.log))

    asyncio.run(run_with(app, table, screen, body))


def test_the_narration_says_your_and_names_the_card_received(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=11, name="You")

    async def body() -> None:
        game = None
        while game is None or not game.over:
            await answer_one(screen, inp)
            game = screen.game
            await wait_for(lambda: screen.game is not None and (
                screen.game.over or table.decider.request is not None))

    asyncio.run(run_with(app, table, screen, body))
    english = "\n".join(screen.said_in("en"))
    swedish = "\n".join(screen.said_in("sv"))
    assert "You's" not in english
    assert " ?" not in english
    assert "? " not in english
    # The card the player gave away is named, the blaren too (rank 0).
    assert re.search(r"(You swap with \w+ face down: your [\w ()]+ for \w+'s card|"
                     r"\w+ swaps with you face down: \w+'s card for your [\w ()]+)\.",
                     english), english
    assert re.search(r"^  You get \w+'s card: (the|a|an) [\w ()ä]+\.$", english,
                     re.MULTILINE), english
    assert re.search(r"^  Du får \w+ kort: [\w ():ä]+\.$", swedish, re.MULTILINE), swedish
    assert "Dus " not in swedish
    assert not re.search(r"[^\s.!?] +Du\b", swedish)
    # The player is spoken to in the second person, in both languages.
    assert not re.search(r"\bYou (is|keeps|swaps|draws|dies|buys|shows|takes|has)\b", english)
    assert re.search(r"\bYou (keep|swap|draw|show|are|take|die|buy)\b", english), english
    assert not re.search(r"\b(You|Du) \((you|du)\)", english + swedish)
    # Card names as the card box shows them, never the ids.
    assert not re.search(r"\b(vardshus|kille|kuku|husar|husu|kavall|blaren)\b", english + swedish)


def asks_recorded(table: LocalTable) -> list[tuple[Ask, int]]:
    """(question, hand) of every question put to the player, from now on."""
    asked: list[tuple[Ask, int]] = []
    shown = table.decider.on_request
    assert shown is not None

    def record(request: Request) -> None:
        asked.append((request.ask, request.view.game.hand_no))
        shown(request)

    table.decider.on_request = record
    return asked


async def play_out(screen: TableScreen, inp: PipeInput,
                   policy: Callable[[Request], str] = default_policy) -> None:
    """Answer every question until the game is over."""
    table = screen.table
    while not (screen.game is not None and screen.game.over):
        await wait_for(lambda: table.decider.request is not None or (
            screen.game is not None and screen.game.over))
        if table.decider.request is not None:
            await answer_one(screen, inp, policy)


def test_a_buy_back_the_player_cannot_pay_is_not_offered_and_says_why(inp: PipeInput) -> None:
    # Seed 6, one chip each: after the stake nobody can pay the first buy-back (1 chip).
    table, screen, app, _clock = setup(inp, seed=6, chips=1)
    asked = asks_recorded(table)

    asyncio.run(run_with(app, table, screen, lambda: play_out(screen, inp)))
    assert not [hand for ask, hand in asked if ask is Ask.BUYIN]
    assert "  You cannot buy back in: it costs 1 chip and you have 0 chips." in screen.log
    died = next(i for i, line in enumerate(screen.log) if line.startswith("  You die: "))
    assert screen.log[died + 1:].index(
        "  You cannot buy back in: it costs 1 chip and you have 0 chips.") < 3


def test_in_enkortskille_leaving_is_final_and_sitting_out_asks_again(inp: PipeInput) -> None:
    # Seed 6, enkortskille: the player dies in hand 2 and may buy back before any later hand.
    table, screen, app, _clock = setup(inp, seed=2, chips=6, ruleset="enkortskille")
    asked = asks_recorded(table)
    answers = iter(["w", "n"])
    moves: list[str] = []

    def policy(request: Request) -> str:
        if request.ask is Ask.BUYIN:
            text = screen.text(100, 40)
            moves.append(text)
            assert "w  sit this hand out (you are asked again before the next)" in text
            assert "n  leave the game for good (no more asking)" in text
            assert re.search(r"Buy back in for 2 chips\? You have \d+ chips; it would be "
                             r"buy-back 1 of 3\.", " ".join(text.split())), text
            return next(answers)
        return default_policy(request)

    asyncio.run(run_with(app, table, screen, lambda: play_out(screen, inp, policy)))
    buyins = [hand for ask, hand in asked if ask is Ask.BUYIN]
    assert len(buyins) == 2, buyins
    game = screen.game
    assert game is not None
    assert game.hand_no > buyins[-1] + 1  # hands went on without asking the player
    log = screen.log
    assert log.index("  You sit this hand out and may buy back in before a later hand.") < (
        log.index("  You leave the game for good and will not be asked to buy back in again."))


def test_ctrl_c_asks_then_leaves_with_status_130(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=11)

    async def body() -> None:
        await wait_for(lambda: table.decider.request is not None)
        inp.send_text("\x03")
        await wait_for(lambda: "Press q again to leave the table (or Ctrl-C)" in screen.text())
        assert app.is_running
        inp.send_text("\x03")
        await wait_for(lambda: not app.is_running)

    assert asyncio.run(run_with(app, table, screen, body)) == 130
    assert screen.interrupted


def test_q_leaves_with_status_0(inp: PipeInput) -> None:
    table, screen, app, _clock = setup(inp, seed=11)

    async def body() -> None:
        await wait_for(lambda: table.decider.request is not None)
        inp.send_text("qq")
        await wait_for(lambda: not app.is_running)

    assert asyncio.run(run_with(app, table, screen, body)) == 0


def test_every_game_is_logged_and_verify_checks_it(
        inp: PipeInput, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    spec = TableSpec(bots=2, seed=4, chips=2, name="Tester")
    table, log, problem = logged_table(spec)
    assert problem is None
    assert log is not None
    assert log.parent == tmp_path / "p2pkille" / "games"
    assert log.stat().st_mode & 0o777 == 0o600
    assert log.parent.stat().st_mode & 0o777 == 0o700
    screen = table_screen(table, spec, "en", FakeClock(), log, problem)
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)

    async def body() -> None:
        await play_out(screen, inp)
        await wait_for(lambda: all(n.done for n in table.nodes))

    asyncio.run(run_with(app, table, screen, body))
    end = screen.text(200, 40)  # wide enough for the test's long path on one line
    # Two key holders in the last hand: "both", never "all 2".
    assert "Hand 2: verified by both peers" in end
    assert "all 2" not in end
    assert f"The game is logged in {log}." in end
    assert f"Check it with: p2pkille verify {log}" in end
    assert main(["verify", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"clean: {len(table.human.outcomes)} hands" in out
    assert "(game over)" in out


class Away:
    """A seat whose player never decides (gone for coffee)."""

    wants_facts = False

    def turn(self, view: SeatView) -> Decision:
        raise DecisionPending("away")

    def vote(self, view: SeatView) -> VoteChoice:
        raise DecisionPending("away")

    def answer_sale(self, view: SeatView) -> bool:
        raise DecisionPending("away")

    def cut(self, view: SeatView) -> int:
        raise DecisionPending("away")

    def buyin(self, view: SeatView) -> bool:
        raise DecisionPending("away")

    def observe(self, fact: Fact, view: SeatView) -> None:
        """Unused."""


def test_a_decision_the_table_gave_its_default_is_told(inp: PipeInput) -> None:
    from p2pkille.runtime.node import Timing
    from p2pkille.ui.session import local_table

    table = local_table(TableSpec(bots=3, seed=13, chips=3, name="Tester"),
                        Timing(limit=3.0, decide_limit=1.0, answer_limit=6.0))
    screen = TableScreen(table, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)
    away = table.bots[1]
    away.decider = Away()
    node = table.human

    async def body() -> None:
        while not node.timed_decisions:
            await wait_for(lambda: bool(node.timed_decisions) or table.decider.request is not None)
            if table.decider.request is not None:
                await answer_one(screen, inp)
        await wait_for(lambda: any("did not decide in time" in line for line in screen.log))

    asyncio.run(run_with(app, table, screen, body))
    name = table.names_by_peer[away.name]
    assert f"  {name} did not decide in time: the table gave {name} the default answer." in (
        screen.log)


class Known:
    """A local table as a LAN table looks to the screen: one bot's name clashes with a
    player met before, and the seats the test names have lost their connection."""

    def __init__(self, table: LocalTable, met: Met) -> None:
        self.local = table
        self.met = met
        self.gone_seats: list[int] = []

    @property
    def human(self) -> HumanTableNode:
        return self.local.human

    @property
    def decider(self) -> HumanDecider:
        return self.local.decider

    def seat_names(self) -> list[str]:
        return self.local.seat_names()

    def seated(self) -> list[Seated]:
        out = self.local.seated()
        return [replace(s, met=self.met) if s.name == "Anna" else s for s in out]

    def gone(self) -> list[int]:
        return self.gone_seats

    def decided(self) -> None:
        self.local.decided()


def test_the_audit_page_names_every_seat_with_its_key_and_the_log_warns_of_a_clash(
        inp: PipeInput) -> None:
    spec = TableSpec(bots=3, seed=11, chips=3, name="Tester")
    local = local_table(spec)
    met = Met(Clash.BOT_NAME, "Anna", "0123456789abcdef", ("fedcba9876543210",))
    table = Known(local, met)
    screen = TableScreen(table, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)

    async def body() -> None:
        await wait_for(lambda: table.decider.request is not None)
        warning = ("Warning: a bot calls itself Anna (0123456789abcdef), like a person you "
                   "met with the key fedcba9876543210.")
        assert screen.log[0] == warning
        assert sum(line == warning for line in screen.log) == 1  # said once
        inp.send_text("a")
        await wait_for(lambda: screen.mode is Mode.AUDIT)
        audit = screen.text(120, 40)
        assert "The players and their keys:" in audit
        node = local.human
        for seat, name in enumerate(local.seat_names()):
            key = node.members[node.member_of[seat]].fingerprint
            label = "Tester (you)" if seat == node.my_seat else name
            bot = "" if seat == node.my_seat else " (a bot)"
            assert f"  {label}: key {key}{bot}" in audit, audit
        assert warning in " ".join(audit.split())
        inp.send_text("l")
        await wait_for(lambda: screen.lang == "sv")
        audit = " ".join(screen.text(120, 40).split())
        assert "Spelarna och deras nycklar:" in audit
        assert "Tester (du): nyckel" in audit
        assert "Varning: en bot kallar sig Anna (0123456789abcdef)" in audit
        assert screen.log[0].startswith("Varning: en bot kallar sig Anna")

    asyncio.run(run_with(app, local, screen, body))


def test_a_player_whose_connection_closed_is_named_at_once_with_what_the_table_does(
        inp: PipeInput) -> None:
    spec = TableSpec(bots=3, seed=11, chips=3, name="Tester")
    local = local_table(spec)
    table = Known(local, Met(Clash.NEW_KEY, "x", "0" * 16, ()))
    screen = TableScreen(table, "en", FakeClock())
    app = build_app(screen, input=inp, output=DummyOutput(), refresh=0.05)

    async def body() -> None:
        await wait_for(lambda: table.decider.request is not None)
        assert "left the table" not in screen.text(100, 40)
        names = local.seat_names()
        me = local.human.my_seat
        gone = next(seat for seat in range(len(names)) if seat != me)
        table.gone_seats = [gone]
        said = " ".join(screen.text(100, 40).split())
        assert (f"The connection to {names[gone]} closed without {names[gone]} leaving the "
                "table (a crash, or the network): the table plays on until it needs "
                f"{names[gone]}, then waits out the time-out (up to 60 s) and votes "
                f"{names[gone]} out.") in said, said
        inp.send_text("l")
        await wait_for(lambda: screen.lang == "sv")
        said = " ".join(screen.text(100, 40).split())
        assert f"Anslutningen till {names[gone]} stängdes, utan att {names[gone]} lämnade" in said

    asyncio.run(run_with(app, local, screen, body))


def test_names_two_members_share_are_told_apart_by_their_keys() -> None:
    keys = [Identity.from_seed(bytes([0x51 + i]) * 32).public for i in range(4)]
    names = display_names([Seated(keys[0], "Tester"), Seated(keys[1], "tester", bot=True),
                           Seated(keys[2], "Björn", bot=True), Seated(keys[3], "")])
    assert names == [f"Tester ({keys[0].fingerprint[:4]})",
                     f"tester ({keys[1].fingerprint[:4]})", "Björn",
                     f"peer {keys[3].fingerprint[:6]}"]
    long = display_names([Seated(keys[0], "A" * 16), Seated(keys[1], "A" * 16)])
    assert all(len(n) <= 16 for n in long)
    assert long[0] != long[1]
