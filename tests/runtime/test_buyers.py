"""A buyer (a seat that took a position by a card sale, `enkortskille`) holds no key of
the hand, yet it must disclose, show and forward. Its lies and its silence stop the hand
as a key holder's do: the hand is voided and the buyer expelled (docs/protocol.md
II.11.1, II.11.3), on audit and strict tables alike, and a buyer that never shows its
card is timed out. A box a buyer seals is disputed as a holder's (its own accuse
discloses it); the last tests here pin how a dispute is judged on a forward's or a
deal's face."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest

from cli.main import main
from p2pkille.engine.cards import DECK_SIZE, Rank
from p2pkille.engine.view import SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from protocol import canonical
from tests.runtime.bots import CrashesAHolderWhenAsked, Restless
from tests.runtime.test_log import logged_table

CHEAT = 0  # the node of seat P2 at seeds 2 and 4 below: a buyer in hand 2 or 3


class Cheat(Behaviour):
    """A misbehaviour that counts the envelopes it changed (``done``)."""

    def __init__(self) -> None:
        self.done = 0


class HidesKille(Cheat):
    """Gives a kille and says "no kille" (on a strict table with a keyless proof)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        view = node.view
        if kind == msg.DISCLOSE and body.get("kille") and view is not None:
            self.done += 1
            body = {"hand": body["hand"], "kille": False}
            if node.strict:
                body["pet"] = node.claim_proof(view.game.hold[view.game.tgt], b"disclose",
                                               frozenset({Rank.KILLE}))
        return [body]


def _buyer(node: TableNode) -> bool:
    """Does the node hold a position without a key in its current hand?"""
    status = node.status()
    return status is not None and status.me is None


class SilentBuyer(Cheat):
    """Once it holds a position without a key, never discloses, shows nor forwards."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if _buyer(node) and kind in (msg.DISCLOSE, msg.SHOW, msg.FORWARD):
            self.done += 1
            return []
        return [body]


def _run(seed: int, cheat: Cheat, mode: str, faults: Faults | None = None) -> TableRun:
    """Five hands; the node ``CHEAT`` misbehaves, and is still counted among the honest
    nodes (it is honest but for the hands it buys in)."""
    table = build_table(4, seed=seed, chips=3, ruleset="enkortskille", mode=mode,
                        faults=faults, deciders=lambda _i: Restless())
    table.nodes[CHEAT].behaviour = cheat
    run = table.run(until=5000.0, max_hands=5)
    assert cheat.done, "the cheat happened"
    return run


def _check_expelled(run: TableRun, hand: int, kind: str) -> None:
    assert run.honest_agree
    cheat = run.nodes[CHEAT]
    assert cheat.my_seat is not None
    name = cheat.names[cheat.my_seat]
    for node in run.honest:
        outcome = node.outcomes[hand - 1]
        assert outcome.voided
        assert {(a["accused"], a["kind"]) for a in outcome.accusations} == {(name, kind)}
        assert node.view is not None
        assert node.view.game.expelled[cheat.my_seat]
        assert all(not o.voided for o in node.outcomes[hand:]), "the game goes on"
        assert len(node.outcomes) == 5


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_buyer_that_hides_the_kille_it_gives_is_expelled(mode: str) -> None:
    _check_expelled(_run(4, HidesKille(), mode), 3, "false-fact")


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_buyer_that_never_shows_is_timed_out_and_expelled(mode: str) -> None:
    run = _run(2, SilentBuyer(), mode)
    _check_expelled(run, 2, "timeout")
    # The buyer's time-out is in the verdict the holders decided: a strict majority of
    # them precommitted a verdict that names it (one that did not would let nodes differ).
    buyer = run.nodes[CHEAT].my_seat
    assert buyer is not None
    node = run.honest[0]
    hand = next(o for o in node.outcomes if o.hand == 2)
    precommits = [Outcome.from_text(str(env.body["value"]))
                  for member in node.members for env in node.transcript.chain(member)
                  if env.kind == msg.VOTE and env.body.get("hand") == 2
                  and env.body.get("of") == "verdict" and env.body.get("step") == "precommit"
                  and env.body.get("value") is not None]
    assert 2 * len(precommits) > len(hand.holders)
    assert {buyer in value.timed_out for value in precommits} == {True}


def test_a_silent_or_lying_buyer_is_expelled_on_a_lossy_network_too() -> None:
    faults = Faults(drop=0.15, dup=0.05, reorder=0.1, delay=0.02, jitter=0.05)
    _check_expelled(_run(2, SilentBuyer(), "strict", faults), 2, "timeout")
    _check_expelled(_run(4, HidesKille(), "audit", faults), 3, "false-fact")


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_verify_finds_the_lying_buyer_in_an_honest_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    table, logged = logged_table(tmp_path, 4, seed=4, chips=3, ruleset="enkortskille",
                                 mode=mode, deciders=lambda _i: Restless())
    cheat = table.nodes[CHEAT]
    lie = HidesKille()
    cheat.behaviour = lie
    table.run(until=5000.0, max_hands=4)
    assert lie.done, "the buyer lied"
    for wrapper in logged:
        wrapper.close()
    name = cheat.names[cheat.my_seat or 0]
    found = [w for w in logged if w.node is not cheat and w.node.faults]
    assert found, "the lie was found live"
    for wrapper in found:
        assert main(["verify", str(wrapper.path), "--json"]) == 1
        doc = json.loads(capsys.readouterr().out)
        assert (doc["fault"]["kind"], doc["fault"]["accused"]) == ("false-fact", name)
        assert [h["voided"] for h in doc["hands"]][:4] == [False, False, True, False]


class _BuysLateAndCrashesAHolder(CrashesAHolderWhenAsked, Restless):
    """A buyer that answers a sale late and, as it is offered, crashes one key holder (not
    the seller) for good."""

    def answer_sale(self, view: SeatView) -> bool:
        seller = view.game.order[view.game.turn]
        self._late(next(s for s in view.game.order if s not in (seller, view.seat)))
        return True


def test_a_late_buyer_and_a_crashed_holder_do_not_stall_a_small_table() -> None:
    # Three key holders: no silent set of two. The buyer holds no key and cannot say it
    # saw its own late acceptance, so its default needs every other holder's vote or
    # seen; the crashed holder gives none and is voted out for not answering.
    timing = Timing(limit=2.0, decide_limit=2.0, answer_limit=8.0)
    table = build_table(4, seed=2, chips=3, ruleset="enkortskille", timing=timing,
                        deciders=lambda _i: Restless())
    buyer = _BuysLateAndCrashesAHolder(table, delay=5.0)
    buyer_node = table.nodes[CHEAT]  # P2: it buys in hand 2
    buyer_node.decider = buyer
    run = table.run(until=3000.0, max_hands=4)
    assert buyer.victim is not None, "the sale was offered"
    live = [n for n in run.nodes if n.name != buyer.victim]
    records = [[o.to_json() for o in n.outcomes[:3]] for n in live]
    assert all(r == records[0] for r in records)
    victim = next(n for n in run.nodes if n.name == buyer.victim)
    hand2 = live[0].outcomes[1]
    assert hand2.voided
    assert [(a["accused"], a["kind"]) for a in hand2.accusations] == [
        (victim.names[victim.my_seat or 0], "timeout")]
    assert all(n.faults == [] for n in live)
    assert all(len(n.outcomes) >= 3 for n in live), "the game goes on without it"


@pytest.mark.parametrize("cut", [2, 3])
def test_a_node_the_buyers_chain_reaches_late_judges_its_accusers_alike(cut: int) -> None:
    # The lying buyer's envelopes never reach one node directly (gap fill brings them from
    # the others). That node checks the accusations only once it holds the buyer's sale,
    # so it too finds them proven and expels the buyer, not the honest accusers.
    table = build_table(4, seed=4, chips=3, ruleset="enkortskille",
                        faults=Faults(dup=0.05, reorder=0.1, delay=0.02, jitter=0.05),
                        deciders=lambda _i: Restless())
    lie = HidesKille()
    table.nodes[CHEAT].behaviour = lie
    table.network.set_link(table.nodes[CHEAT].name, table.nodes[cut].name, Faults(drop=1.0),
                           one_way=True)
    _check_expelled(table.run(until=5000.0, max_hands=5), 3, "false-fact")
    assert lie.done, "the buyer lied"


class BadKeylessProof(Cheat):
    """A buyer whose "no kille" carries a keyless proof that does not verify."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.DISCLOSE and "pet" in body and _buyer(node):
            self.done += 1
            raw = bytearray(canonical.b64decode(str(body["pet"])))
            raw[-32] ^= 1  # s_z: still a scalar, no longer the response
            body = {**body, "pet": canonical.b64encode(bytes(raw))}
        return [body]


def test_a_buyer_with_a_bad_keyless_proof_is_expelled() -> None:
    _check_expelled(_run(2, BadKeylessProof(), "strict"), 2, "bad-proof")


class GarblesForward(Cheat):
    """Once it holds a position without a key, garbles every box of its forwards (its
    recipient cannot learn the card, and could not show it)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.FORWARD and _buyer(node):
            self.done += 1
            boxes = []
            for entry in cast(list[dict[str, object]], body["boxes"]):
                raw = bytearray(canonical.b64decode(str(entry["box"])))
                raw[40] ^= 1  # past the ephemeral key: the box no longer authenticates
                boxes.append({**entry, "box": canonical.b64encode(bytes(raw))})
            body = {**body, "boxes": boxes}
        return [body]


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_buyer_that_garbles_its_forward_is_expelled_not_its_recipient(mode: str) -> None:
    # The recipient cannot open the box and accuses; the buyer's own accuse must disclose
    # the box (as a holder's does), and the box does not open with its disclosed key. The
    # forward does not count as paid: the honest recipient is not timed out for not
    # showing a card it could not open.
    _check_expelled(_run(2, GarblesForward(), mode), 2, "bad-seal")


class FramesItsBuyer(Cheat):
    """A key holder that says a good forward a buyer sealed to it was a bad box, once it
    took it."""

    def __init__(self) -> None:
        super().__init__()
        self.framed: set[int] = set()

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (status is None or status.me is None or status.number in self.framed
                or node.stage != Stage.PLAY):
            return []
        for m, member in enumerate(node.members):
            if node.seat_of[m] in status.holders:
                continue
            forward = next((e for e in node.transcript.chain(member)[:node.consumed[m]]
                            if e.kind == msg.FORWARD and e.body.get("hand") == status.number
                            and e.body.get("to") == node.my_seat), None)
            if forward is None:
                continue
            self.framed.add(status.number)
            self.done += 1
            accusation = msg.Accusation(node.seat_of[m], FaultKind.BAD_SEAL.value,
                                        "said to be a bad box (it is not)", forward.wire)
            return [(msg.ACCUSE, {"accusations": [accusation.to_json()],
                                  "disclosed": node.disclosures(), "hand": status.number})]
        return []


class SilentGarbler(GarblesForward):
    """Garbles its forwards and then discloses nothing."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.ACCUSE and _buyer(node):
            return []
        return super().envelope(node, kind, body)


def test_a_buyer_framed_for_a_bad_box_discloses_it_and_its_accuser_pays() -> None:
    table = build_table(4, seed=2, chips=3, ruleset="enkortskille",
                        deciders=lambda _i: Restless())
    framers = [FramesItsBuyer() for _ in table.nodes[1:]]
    for node, frames in zip(table.nodes[1:], framers, strict=True):
        node.behaviour = frames  # only the buyer's recipient finds a chance
    run = table.run(until=5000.0, max_hands=5)
    assert sum(f.done for f in framers) == 1, "the buyer's recipient framed it"
    buyer = run.nodes[CHEAT]
    records = [[o.to_json() for o in n.outcomes] for n in run.nodes]
    assert all(r == records[0] for r in records)
    voided = run.nodes[0].outcomes[1]
    assert voided.voided
    framer = [a for a in voided.accusations if a["kind"] == "bad-seal"]
    assert [(a["accused"], a["verdict"]) for a in framer] == [
        (buyer.names[buyer.my_seat or 0], "false")]
    assert voided.eliminated == [framer[0]["by"]]


def test_a_buyer_that_garbles_and_never_discloses_is_timed_out_and_expelled() -> None:
    run = _run(2, SilentGarbler(), "audit")
    assert run.honest_agree
    buyer = run.nodes[CHEAT]
    name = buyer.names[buyer.my_seat or 0]
    voided = run.honest[0].outcomes[1]
    assert voided.voided
    assert {(a["accused"], a["kind"]) for a in voided.accusations} == {
        (name, "bad-seal"), (name, "timeout")}
    assert voided.eliminated == [name]


class WrongSlotForward(Cheat):
    """Forwards its good boxes under another slot's token: as a buyer (``buyer``) or as a
    key holder."""

    def __init__(self, buyer: bool) -> None:
        super().__init__()
        self.buyer = buyer

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.FORWARD and node.status() is not None and _buyer(node) == self.buyer:
            self.done += 1
            body = {**body, "token": (int(cast(int, body["token"])) + 1) % DECK_SIZE}
        return [body]


@pytest.mark.parametrize("buyer", [True, False], ids=["buyer", "holder"])
def test_a_good_box_forwarded_under_another_slot_blames_its_sealer(buyer: bool) -> None:
    # The box opens with its disclosed key to a good share, of another slot than the
    # forward names: the recipient's accusation is judged on the forward alone, and
    # proven (the good share in the box does not make the forward right).
    run = _run(2, WrongSlotForward(buyer), "audit")
    assert run.honest_agree
    name = run.nodes[CHEAT].names[run.nodes[CHEAT].my_seat or 0]
    for outcome in run.honest[0].outcomes:
        if outcome.voided:
            assert outcome.eliminated == [name]
            assert {(a["accused"], a["verdict"]) for a in outcome.accusations
                    if a["kind"] == "bad-seal"} == {(name, "proven")}
            break
    else:
        pytest.fail("the bad forward voided no hand")


class ShortDeal(Cheat):
    """Leaves the last box out of its deal of hand 1."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.DEAL and body.get("hand") == 1:
            self.done += 1
            body = {**body, "boxes": cast(list[object], body["boxes"])[:-1]}
        return [body]


def test_a_deal_without_the_accusers_box_blames_the_dealer_not_the_accuser() -> None:
    # The holder whose box is missing accuses the dealer of a bad seal: a deal without
    # the accuser's box proves the accusation (the dispute finds no box to open).
    run = _run(2, ShortDeal(), "audit")
    assert run.honest_agree
    name = run.nodes[CHEAT].names[run.nodes[CHEAT].my_seat or 0]
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert first.eliminated == [name]
    assert all(a["verdict"] != "false" for a in first.accusations)
