"""Lies found late: a plain answer (or a "no kille") whose card is opened only at the
showdown, or only at an audit table's audit (docs/protocol.md II.11.1).

Which lies can be late. At an audit table a plain answer always ends in an exchange, and
the two sides forward each other every share they hold for their old cards (II.5), so the
requester learns the liar's card at once and proves the lie then
(tests/runtime/test_detection.py::test_a_false_plain_answer_is_proven_at_once_by_the_requester);
a "no kille" is likewise seen at once by the target. So a lie reaches the showdown or the
audit only when the one seat that learns the card keeps quiet (a colluding requester,
:func:`_accomplice`) and no honest seat receives that card later (an honest seat that does
proves it at once too). Then it is found:

- at the showdown, by every node, when a live player shows the card: in every ruleset
  (the accomplice keeps it, or a revert gives it back to the liar); in enkortskille also
  when the seat that shows it is a buyer out of the game (a card sale);
- at the audit, by every node, when the hand ends without a showdown: a redeal asked
  after the exchange (bytes-kille and enkortskille, exactly three players; tested for a
  plain answer in both and for a "no kille" in enkortskille). Also possible, not tested
  here (no seed of these tables reached it): the card ends with a dead player, or in the
  discard (a dealer that drew from the stock), which is wikipedia's only way to the audit.

A strict table proves each plain claim before it is applied (II.13): a lie is found by
every node during play, so none of these cases can reach the showdown or the audit there
(:func:`test_a_strict_table_finds_the_same_lie_at_once`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pkille.bots.base import Strategy, swap
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import AskRedeal, Deal, Decision, VoteChoice
from p2pkille.engine.machine import Game
from p2pkille.engine.options import options_from_json
from p2pkille.engine.view import SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.log import LoggedNode, load_log, verify_log
from p2pkille.runtime.node import HandOutcome, TableNode
from p2pkille.sim.byzantine import FalseAnswer
from p2pkille.sim.table import DeciderFactory, SimTable, TableRun, build_table
from protocol.envelope import Envelope, decode
from tests.runtime.bots import Restless
from tests.runtime.helpers import flipped, misbehave
from tests.runtime.test_log import logged_table

LIAR = 1  # seat P2 answers plain while it holds an answering card


class KeepsQuiet(Behaviour):
    """A colluding witness: it never proves a lie at once (it keeps quiet on learning a
    card a seat lied about). It still finds a lie at the showdown or the audit, as every
    node does."""

    def proves_lie(self, node: TableNode, token: int) -> bool:
        return False


def _accomplice(table: SimTable, seat: int, behaviour: KeepsQuiet | None = None) -> TableNode:
    """Make the node at ``seat`` a colluding witness that sends what ``behaviour`` says."""
    return misbehave(table, seat, behaviour or KeepsQuiet())


class TamperedOpening(KeepsQuiet):
    """Accuses like every node, but flips a bit of every share its accuse opens."""

    def __init__(self) -> None:
        self.tampered = 0

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.ACCUSE and body.get("opened"):
            self.tampered += 1
            opened = []
            for entry in body["opened"]:  # type: ignore[attr-defined]
                opened.append({**entry, "share": flipped(entry["share"], -1)})
            body = {**body, "opened": opened}
        return [body]


class FramesTruth(Behaviour):
    """As soon as another seat's plain claim (a plain answer or a "no kille") is taken,
    accuses it of a false fact with that (true) claim as evidence, and opens what it
    holds of the card."""

    def __init__(self) -> None:
        self.framed: set[int] = set()

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (status is None or status.me is None or status.voiding
                or status.number in self.framed):
            return []
        for token, seat, wire in node.claims():
            if seat == node.my_seat:
                continue
            self.framed.add(status.number)
            accusation = msg.Accusation(seat, FaultKind.FALSE_FACT.value,
                                        "said its card answers nothing", wire)
            opened = node.opening(token)
            return [(msg.ACCUSE, {
                "accusations": [accusation.to_json()], "disclosed": node.disclosures(),
                "hand": status.number,
                "opened": [{**e, "token": token} for e in opened if isinstance(e, dict)]})]
        return []


class HidesKille(Behaviour):
    """Gives a kille away in an exchange and says it was none."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.DISCLOSE and body.get("kille"):
            body = {"hand": body["hand"], "kille": False}
        return [body]


class LateRedeal(Strategy):
    """Swaps, but asks a redeal on its turn once a card has changed hands in the hand
    (the hand then ends without a showdown), and agrees to every redeal."""

    name = "late-redeal"

    def turn(self, view: SeatView) -> Decision:
        if view.can_redeal and view.game.log:
            return AskRedeal(view.seat)
        return swap(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        return VoteChoice.AGREE

    def answer_sale(self, view: SeatView) -> bool:
        return False

    def buyin(self, view: SeatView) -> bool:
        return False


# Seeds found by running these tables: the liar lies in the first hand or a later one,
# and the card comes out only where the case says.
AUDIT_CASES = [("enkortskille", 3), ("enkortskille", 8), ("bytes-kille", 25)]
NO_KILLE_AUDIT_CASES = [("enkortskille", 21)]
SHOWDOWN_CASES = [("wikipedia", 3), ("bytes-kille", 1), ("enkortskille", 1)]
SOLD_CARD_CASE = ("enkortskille", 25)  # the lied-about card is shown by its buyer



def _table(peers: int, ruleset: str, seed: int, deciders: DeciderFactory, mode: str,
           tmp: Path | None) -> tuple[SimTable, list[LoggedNode]]:
    if tmp is None:
        return build_table(peers, seed=seed, ruleset=ruleset, chips=4, deciders=deciders,
                           mode=mode), []
    return logged_table(tmp, peers, seed=seed, ruleset=ruleset, chips=4, deciders=deciders,
                        mode=mode)


def _audit_table(ruleset: str, seed: int, tmp: Path | None = None, mode: str = "audit",
                 quiet: KeepsQuiet | None = None, lie: str = "answer"
                 ) -> tuple[SimTable, list[LoggedNode]]:
    """Three players who ask a redeal once a card changed hands: P2 lies (a plain answer,
    or a "no kille"), the other side of its exchange (P1, its requester, or P3, its
    target) keeps quiet, the third is honest."""
    table, logged = _table(3, ruleset, seed, lambda _i: LateRedeal(), mode, tmp)
    misbehave(table, LIAR, FalseAnswer if lie == "answer" else HidesKille)
    _accomplice(table, LIAR - 1 if lie == "answer" else LIAR + 1, quiet)
    return table, logged


def _showdown_table(ruleset: str, seed: int, tmp: Path | None = None, mode: str = "audit"
                    ) -> tuple[SimTable, list[LoggedNode]]:
    """Five players: P2 lies, P1 and P3 keep quiet, P4 and P5 are honest."""
    table, logged = _table(5, ruleset, seed, lambda _i: Restless(), mode, tmp)
    misbehave(table, LIAR, FalseAnswer)
    for seat in (0, 2):
        _accomplice(table, seat)
    return table, logged


def _voided(node: TableNode) -> HandOutcome:
    voided = [o for o in node.outcomes if o.voided]
    assert len(voided) == 1, [o.to_json() for o in node.outcomes]
    return voided[0]


def _in_hand(node: TableNode, number: int, kind: str) -> list[Envelope]:
    return [e for m in node.members for e in node.transcript.chain(m)
            if e.kind == kind and e.body.get("hand") == number]


def _check_blamed_late(run: TableRun, table: SimTable, where: str,
                       others_blamed: tuple[int, ...] = ()) -> HandOutcome:
    """Every honest node found the lie at ``where`` ("showdown" or "audit"), the liar is
    proven and eliminated (with ``others_blamed``), the hand is void and the game went on
    from the last checkpoint."""
    assert run.honest_agree
    honest = run.honest
    liar = table.nodes[table.seats()[LIAR]]
    name = honest[0].names[LIAR]
    voided = _voided(honest[0])
    for node in honest:
        fault = node.faults[0]
        assert (fault.kind, fault.seat, fault.hand) == (FaultKind.FALSE_FACT, LIAR,
                                                         voided.hand), node.faults
        # Found by the faces (PeerView), not by a seat that learnt the card in play.
        assert "lied in" in fault.reason, fault.reason
        claim = decode(fault.evidence, table=node.config.table_id, members=node.members,
                       kinds=None)
        assert claim.author == liar.identity.public
        assert (claim.kind, claim.body.get("shown", 0), claim.body.get("kille")) in (
            (msg.ANSWER, None, None), (msg.DISCLOSE, 0, False))
        reveals = _in_hand(node, voided.hand, msg.REVEAL)
        shows = _in_hand(node, voided.hand, msg.SHOW)
        if where == "audit":
            assert len(reveals) == len(voided.holders), "found at the audit"
        else:
            assert shows, "the showdown opened the card"
            assert not reveals, "found at the showdown, before any key was revealed"
        me = node.names[node.my_seat or 0]
        mine = [a for a in _voided(node).accusations if a["by"] == me]
        # Every key holder accuses (a seat out of the game, e.g. a buyer, holds no key).
        assert [(a["accused"], a["kind"], a["verdict"]) for a in mine] == (
            [(name, "false-fact", "proven")] if me in voided.holders else [])
    if not others_blamed:
        assert {(a["accused"], a["kind"], a["verdict"]) for a in voided.accusations} == {
            (name, "false-fact", "proven")}
    assert voided.eliminated == sorted(
        honest[0].names[s] for s in {LIAR, *others_blamed})
    # Chips and pot are back where the last checkpoint left them (the liar's stakes stay).
    node = honest[0]
    before = [o for o in node.outcomes if not o.voided and o.hand < voided.hand]
    if len(voided.eliminated) < len(node.names) - sum(
            1 for o in before for _ in o.eliminated) - 1:
        if before:
            assert (voided.chips, voided.pot) == (before[-1].chips, before[-1].pot)
        else:
            game = Game(node.config.options, node.names, stake=node.config.stake,
                        chips=node.config.chips, dealer=node.first_dealer)
            assert voided.chips == dict(zip(node.names, game.chips, strict=True))
            assert voided.pot == game.pot
    # The game goes on without the liar: a later hand, or the game is won.
    view = node.view
    assert view is not None
    assert node.outcomes[-1] is not voided or view.game.winner is not None
    assert not view.game.in_game[LIAR]
    later = [o for o in node.outcomes if o.hand > voided.hand]
    assert not [o.hand for o in later if name in o.holders or name in o.agreed_by]
    return voided


@pytest.mark.parametrize(("ruleset", "seed", "lie"), [
    *((r, s, "answer") for r, s in AUDIT_CASES),
    *((r, s, "kille") for r, s in NO_KILLE_AUDIT_CASES)])
def test_a_lie_found_at_the_audit_is_proven_by_every_node(ruleset: str, seed: int,
                                                          lie: str) -> None:
    table, _ = _audit_table(ruleset, seed, lie=lie)
    run = table.run(until=900.0, max_hands=4)
    _check_blamed_late(run, table, "audit")


@pytest.mark.parametrize(("ruleset", "seed"), SHOWDOWN_CASES)
def test_a_lie_found_at_the_showdown_is_proven_by_every_node(ruleset: str,
                                                             seed: int) -> None:
    table, _ = _showdown_table(ruleset, seed)
    run = table.run(until=900.0, max_hands=4)
    _check_blamed_late(run, table, "showdown")


def test_a_lie_found_when_a_buyer_shows_the_card() -> None:
    table, _ = _showdown_table(*SOLD_CARD_CASE)
    run = table.run(until=900.0, max_hands=4)
    _check_blamed_late(run, table, "showdown")


def _verify_finds_the_same(table: SimTable, logged: list[LoggedNode]) -> None:
    for wrapper in logged:
        wrapper.close()
    index = table.seats()[len(table.nodes) - 1]  # the last seat is honest
    node = table.nodes[index]
    verdict = verify_log(load_log(logged[index].path), ThresholdBot())
    live = [(f.kind.value, node.names[f.seat]) for f in node.faults if f.seat is not None]
    found = [(str(f["kind"]), str(f["accused"])) for f in verdict.faults
             if f.get("accused") is not None]
    assert found == live
    assert found[0] == ("false-fact", node.names[LIAR])
    assert verdict.hands == [o.to_json() for o in node.outcomes]


def test_verify_finds_a_lie_found_at_the_audit(tmp_path: Path) -> None:
    table, logged = _audit_table(*AUDIT_CASES[0], tmp=tmp_path)
    run = table.run(until=900.0, max_hands=4)
    assert run.honest_agree
    _verify_finds_the_same(table, logged)


def test_verify_finds_a_lie_found_at_the_showdown(tmp_path: Path) -> None:
    table, logged = _showdown_table(*SHOWDOWN_CASES[0], tmp=tmp_path)
    run = table.run(until=900.0, max_hands=4)
    assert run.honest_agree
    _verify_finds_the_same(table, logged)


def test_a_tampered_opening_is_false_and_blames_its_accuser() -> None:
    # The accomplice accuses the lie at the audit like everyone, but its accuse opens the
    # card with shares that no longer verify: its accusation is false, the honest one
    # proven, and both the liar and the accuser are eliminated.
    tampered = TamperedOpening()
    table, _ = _audit_table(*AUDIT_CASES[0], quiet=tampered)
    run = table.run(until=900.0, max_hands=4)
    assert tampered.tampered, "the accomplice's accuse opened the card"
    voided = _check_blamed_late(run, table, "audit", others_blamed=(LIAR - 1,))
    names = run.honest[0].names
    forged = [a for a in voided.accusations if a["by"] == names[LIAR - 1]]
    assert [(a["accused"], a["kind"], a["verdict"]) for a in forged] == [
        (names[LIAR], "false-fact", "false")]


def test_accusing_a_true_plain_answer_is_false_and_blames_the_accuser() -> None:
    # A seat accuses the first honest plain answer it sees, with that answer as evidence
    # and what it holds of the card as the opening: every node finds the claim true (the
    # shares do not open it into an answering card), blames the accuser, and plays on
    # with the honest seat.
    for seed in range(1, 20):
        table = build_table(4, seed=seed, chips=4, deciders=lambda _i: Restless())
        frames = FramesTruth()
        framer = misbehave(table, 0, frames)
        run = table.run(until=400.0, max_hands=2)
        honest = run.honest
        voided = [o for o in honest[0].outcomes if o.voided]
        if not voided:
            continue
        assert frames.framed, "the framer accused"
        assert run.honest_agree
        names = honest[0].names
        framed = [a for a in voided[0].accusations if a["by"] == names[0]]
        assert len(framed) == 1
        assert framed[0]["kind"] == "false-fact"
        assert framed[0]["verdict"] == "false"
        assert framed[0]["accused"] != names[0]
        assert voided[0].eliminated == [names[0]]
        assert framer.my_seat == 0
        for node in honest:
            assert not [f for f in node.faults if f.seat != 0]
        return
    pytest.fail("the framer never saw a plain answer")


@pytest.mark.parametrize(("ruleset", "seed"), SHOWDOWN_CASES[:1] + AUDIT_CASES[:1])
def test_a_strict_table_finds_the_same_lie_at_once(ruleset: str, seed: int) -> None:
    # The same tables in strict mode: the liar's plain answer carries a claim that every
    # other key holder tests before the answer is applied, so every node finds the lie
    # during play, from the test parts, and no card of the hand is shown or revealed.
    build = _audit_table if (ruleset, seed) in AUDIT_CASES else _showdown_table
    table, _ = build(ruleset, seed, mode="strict")
    run = table.run(until=900.0, max_hands=4)
    assert run.honest_agree
    voided = _voided(run.honest[0])
    name = run.honest[0].names[LIAR]
    for node in run.honest:
        fault = node.faults[0]
        assert (fault.kind, fault.seat) == (FaultKind.FALSE_FACT, LIAR)
        assert "proven false" in fault.reason
        assert not _in_hand(node, voided.hand, msg.SHOW)
        assert not _in_hand(node, voided.hand, msg.REVEAL)
    assert voided.eliminated == [name]
    assert {(a["accused"], a["kind"], a["verdict"]) for a in voided.accusations} == {
        (name, "false-fact", "proven")}


def test_an_expelled_seat_cannot_buy_its_way_back() -> None:
    options = options_from_json("enkortskille")
    names = ["P1", "P2", "P3", "P4"]
    game = Game(options, names, stake=1, chips=4)
    game.expel(3)  # a proven cheater, between hands
    game.apply(Deal())
    assert game.expect_seat is not None
    assert 3 not in game.sale_buyers()
