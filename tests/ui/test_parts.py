"""The UI's parts on their own: the human decider, the local net, the texts, the command."""

from __future__ import annotations

import asyncio
import random
import re
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import build_parser, main
from cli.play import spec_from
from p2pkille.bots.randombot import RandomBot
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import (
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decline,
    Keep,
    SaleAnswer,
    Sell,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from p2pkille.engine.peer import PeerView
from p2pkille.engine.referee import Referee
from p2pkille.engine.view import DecisionPending
from p2pkille.sim.table import build_table
from p2pkille.ui import i18n
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import Ask, HumanDecider, Request
from p2pkille.ui.localnet import LocalNet
from p2pkille.ui.narration import Chronicle
from p2pkille.ui.session import BOT_NAMES, TableSpec, local_table
from p2pkille.ui.words import Cast

DECISIONS = (Keep, Swap, AskRedeal, Sell, Vote, SaleAnswer, Cut, BuyIn, Decline)


def dealt_view() -> PeerView:
    view = PeerView(PRESETS["wikipedia"], ["a", "b", "c"], stake=1, chips=5, own_seat=0)
    view.feed(Deal())
    return view


def test_the_human_decider_asks_then_uses_the_answer_once() -> None:
    view = dealt_view()
    seat = view.game.expect_seat
    assert seat is not None
    asked: list[Request] = []
    decider = HumanDecider(asked.append)
    with pytest.raises(DecisionPending):
        decider.turn(view.view(seat))
    with pytest.raises(DecisionPending):
        decider.turn(view.view(seat))  # asked again: the same question, told once
    assert len(asked) == 1
    assert asked[0].ask is Ask.TURN
    decider.answer(Swap(seat))
    assert decider.turn(view.view(seat)) == Swap(seat)
    assert decider.request is None
    with pytest.raises(ValueError, match="no decision is pending"):
        decider.answer(Keep(seat))


def test_a_stale_answer_is_not_used_for_a_later_question() -> None:
    view = dealt_view()
    seat = view.game.expect_seat
    assert seat is not None
    decider = HumanDecider()
    with pytest.raises(DecisionPending):
        decider.turn(view.view(seat))
    decider.answer(Keep(seat))
    view.feed(Keep(seat))  # the game moved on without using the answer
    nxt = view.game.expect_seat
    assert nxt is not None
    with pytest.raises(DecisionPending):
        decider.turn(view.view(nxt))
    with pytest.raises(DecisionPending):
        decider.vote(view.view(nxt))  # another kind of question: not answered either
    decider.answer(VoteChoice.AGREE)
    assert decider.vote(view.view(nxt)) is VoteChoice.AGREE


def test_the_local_net_delivers_in_order_and_a_vanished_peer_is_cut_off() -> None:
    net = LocalNet(["a", "b", "c"])
    got: dict[str, list[tuple[str, bytes]]] = {"a": [], "b": [], "c": []}

    async def main() -> None:
        transports = {n: net.transport(n) for n in "abc"}
        def inbox(name: str) -> Callable[[str, bytes], None]:
            return lambda sender, data: got[name].append((sender, data))

        tasks = [asyncio.create_task(t.run(inbox(n))) for n, t in transports.items()]
        async with asyncio.timeout(2):
            await transports["a"].wait_ready()
        assert transports["a"].send(None, b"1") == 2
        assert transports["a"].send("b", b"2") == 1
        assert got["b"] == []  # never inside send
        await asyncio.sleep(0)
        net.vanish("c")
        assert transports["c"].send(None, b"3") == 0
        assert transports["b"].send(None, b"4") == 1
        await asyncio.sleep(0.01)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())
    assert got["b"] == [("a", b"1"), ("a", b"2")]
    assert got["a"] == [("b", b"4")]
    assert got["c"] == [("a", b"1")]
    with pytest.raises(ValueError, match="not one of the peers"):
        net.transport("d")


def test_a_human_seat_with_late_answers_plays_a_whole_game_with_real_peers() -> None:
    table = local_table(TableSpec(bots=2, seed=3, chips=3))
    answered = []

    def on_request(request: Request) -> None:
        def later() -> None:
            view = request.view
            value: object = {Ask.TURN: Swap(view.seat), Ask.CUT: 0}.get(request.ask, False)
            table.decider.answer(value)
            answered.append(request.ask)
            table.decided()
        asyncio.get_running_loop().call_later(0.005, later)

    table.decider.on_request = on_request

    async def main() -> None:
        task = asyncio.create_task(table.run())
        async with asyncio.timeout(60):
            while not all(n.done for n in table.nodes):
                await asyncio.sleep(0.02)
        table.stop()
        await task

    asyncio.run(main())
    assert Ask.TURN in answered
    first = [o.checkpoint for o in table.human.outcomes]
    assert first
    assert all([o.checkpoint for o in n.outcomes] == first for n in table.nodes)
    assert all(o.agreed_by == o.holders for o in table.human.outcomes)
    assert set(table.human.audits) == {o.hand for o in table.human.outcomes}
    assert table.seat_names()
    assert sorted(table.seat_names()) == ["Anna", "Björn", "Du"]


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_text_has_the_same_fields_in_both_languages() -> None:
    for key, (sv, en) in i18n._TEXTS.items():
        assert fields(sv) == fields(en), key
        assert not fields(sv) & {"name", "lang"}, key


def test_the_language_comes_from_the_locale() -> None:
    assert i18n.default_lang({"LANG": "sv_SE.UTF-8"}) == "sv"
    assert i18n.default_lang({"LC_ALL": "en_GB.UTF-8", "LANG": "sv_SE.UTF-8"}) == "en"
    assert i18n.default_lang({}) == "en"
    with pytest.raises(KeyError, match="unknown language"):
        i18n.text("title", "de")


@pytest.mark.parametrize(("argv", "message"), [
    (["--bots", "0"], "--bots must be at least 1"),
    (["--bots", "x"], "--bots must be a whole number"),
    (["--ruleset", "poker"], "unknown ruleset 'poker'"),
    (["--chips", "1", "--stake", "2"], "--chips 1 must cover the stake 2"),
    (["--name", "Anna"], "--name 'Anna' is a bot's name"),
    (["--name", "Ev\x1bil"], "--name: 'Ev\\x1bil' holds the control or format character U+001B"),
    (["--name", "You"], "is a pronoun"),
    (["--name", "x" * 17], "longer than 16 characters"),
    (["--limit", "0"], "--limit 0: need 0 < SECONDS <= 3600"),
    (["--decide-limit", "soon"], "--decide-limit must be a number of seconds"),
    (["--bots", "1"], "2..14 bots"),
    (["--bots", "15"], "2..14 bots"),
    (["--bots", "20", "--ruleset", "enkortskille"], "1..19 bots"),
    (["--pace", "slow"], "--pace must be a number"),
    (["--pace", "-1"], "--pace must be 0..30"),
    (["--interface", "eth0"], "--interface 'eth0': give an IP address"),
])
def test_bad_arguments_exit_2_with_one_line(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--bots", "3", "--seed", "1"],
                                  ["--interface", "127.0.0.1"]])
def test_without_a_terminal_play_says_so(argv: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", *argv]) == 1
    assert "needs a terminal" in capsys.readouterr().err


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_the_narration_tells_every_event_of_whole_games_in_both_languages(ruleset: str) -> None:
    kinds: set[str] = set()
    for seed in range(12):
        rng = random.Random(seed)
        options = PRESETS[ruleset]
        names = [f"S{i}" for i in range(max(options.min_players, 3 + seed % 3))]
        game = Game(options, names, stake=1, chips=3, dealer=0, record_events=True)
        referee = Referee(game, [RandomBot(rng) for _ in names], rng)
        chronicle = Chronicle()
        me = seed % len(names) if seed % 2 else None
        told = 0
        hands = 0
        while not game.over and hands < 60:
            referee.apply(referee.next_fact())
            hands += game.phase == Phase.DEAL
            assert game.events is not None
            new = game.events[told:]
            if new:
                chronicle.events(new, game, hand=game.hand_no, known={}, me=me)
                kinds.update(event.kind for event in new)
            told = len(game.events)
        cast = Cast(names, me)
        for line in chronicle.lines:
            assert line.key != "cause_other", line  # every kind has its words
            for lang in ("sv", "en"):
                said = line.text(lang, cast)
                assert said.strip(), line
                assert not re.search(r"[{}]|\bNone\b", said), said
    assert {"deal", "keep", "offer", "showdown", "died"} <= kinds


def test_paced_bots_take_their_time_and_still_finish_the_game() -> None:
    pace = 0.15  # well above the unpaced game (about 0.3 s here, 5 bot decisions)
    table = local_table(TableSpec(bots=2, seed=4, chips=2, pace=pace))

    def on_request(request: Request) -> None:
        def now() -> None:
            value: object = {Ask.TURN: Keep(request.view.seat), Ask.CUT: 0}.get(
                request.ask, False)
            table.decider.answer(value)
            table.decided()
        asyncio.get_running_loop().call_soon(now)

    table.decider.on_request = on_request
    wall = 0.0

    async def main() -> None:
        nonlocal wall
        loop = asyncio.get_running_loop()
        start = loop.time()
        task = asyncio.create_task(table.run())
        async with asyncio.timeout(60):
            while not all(n.done for n in table.nodes):
                await asyncio.sleep(0.005)
        wall = loop.time() - start
        table.stop()
        await task

    asyncio.run(main())
    first = [o.checkpoint for o in table.human.outcomes]
    assert first
    assert all([o.checkpoint for o in n.outcomes] == first for n in table.nodes)
    me = table.human.my_seat
    decisions = [f for o in table.human.outcomes for f in o.facts
                 if isinstance(f, DECISIONS) and f.seat != me]
    assert decisions
    # The table waits for each bot decision in turn, and each took the pace.
    assert wall >= len(decisions) * pace


def test_a_screen_node_that_starts_over_keeps_an_audit_of_every_counted_hand() -> None:
    # A node that starts over counts hands in its replay, where no watcher listens: the
    # void it tells afterwards brings the screen's audits up to date (as if the node had
    # counted none of the table's hands live).
    table = build_table(3, seed=2, chips=3)
    table.run(until=600.0)
    played = table.nodes[0]
    human = HumanTableNode(played.name, played.identity, played.delivery, played.config,
                           ThresholdBot(), played.seed, played.timing)
    human.replay(env.wire for env in played.transcript.accepted)
    human.start(0.0)
    counted = [o.hand for o in played.outcomes if not o.voided]
    assert counted
    assert sorted(human.audits) == counted
    live = dict(human.audits)
    human.audits.clear()
    human.start_over()
    assert human.rebuilds == 1
    assert human.audits == live


@pytest.mark.parametrize(("ruleset", "bots"), [("wikipedia", 14), ("enkortskille", 19),
                                                ("bytes-kille", 37), ("bytes-kille", 1)])
def test_play_takes_every_player_count_the_ruleset_allows(ruleset: str, bots: int) -> None:
    args = build_parser().parse_args(["play", "--bots", str(bots), "--ruleset", ruleset])
    spec, _lang = spec_from(args)
    assert spec.bots == bots
    assert len(set(BOT_NAMES[:bots])) == bots


def test_an_identity_file_that_cannot_be_used_is_one_line_and_status_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    bad = tmp_path / "me.json"
    bad.write_text("{not json")
    bad.chmod(0o600)
    assert main(["play", "--identity", str(bad), "--bots", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"p2pkille play: the identity file {str(bad)!r} is damaged")
    assert err.count("\n") == 1
    assert bad.read_text() == "{not json"
    missing = tmp_path / "nowhere" / "me.json"
    assert main(["play", "--identity", str(missing), "--name", "Kalle"]) == 1
    assert "cannot create the identity file" in capsys.readouterr().err


def test_the_identity_is_made_on_first_use_and_said_and_a_new_name_is_kept(
        tmp_path: Path) -> None:
    from cli.play import profile_from
    args = build_parser().parse_args(["play", "--identity", str(tmp_path / "me.json"),
                                      "--name", "Kalle"])
    spec, lang = spec_from(args)
    profile, said = profile_from(args, spec, lang)
    assert profile.name == "Kalle"
    assert said == [f"Created your identity in {tmp_path / 'me.json'}: key "
                    f"{profile.fingerprint}, name Kalle (change it with --name)."]
    args = build_parser().parse_args(["play", "--identity", str(tmp_path / "me.json"),
                                      "--name", "Karl", "--lang", "sv"])
    spec, lang = spec_from(args)
    again, said = profile_from(args, spec, lang)
    assert again.identity.public == profile.identity.public
    assert said == ["Ditt namn är nu Karl (var Kalle)."]
    args = build_parser().parse_args(["play", "--identity", str(tmp_path / "me.json")])
    spec, lang = spec_from(args)
    third, said = profile_from(args, spec, lang)
    assert (third.name, said) == ("Karl", [])
