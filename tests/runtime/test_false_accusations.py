"""False and empty accusations (docs/protocol.md II.11.1): the void round decides each from
what the accuses show, blames the accuser, and never the honest seat it names."""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.byzantine import FalseAnswer, Withhold
from p2pkille.sim.table import build_table
from protocol.envelope import Envelope
from tests.runtime.bots import Restless
from tests.runtime.helpers import envelope_in, misbehave, own_envelopes


def _deal_of(node: TableNode, seat: int, hand: int) -> Envelope | None:
    """``seat``'s deal envelope of ``hand``, as ``node`` holds it."""
    chain = node.transcript.chain(node.members[node.member_of[seat]])
    return next((e for e in chain if e.kind == msg.DEAL and e.body.get("hand") == hand), None)


class LiarAccuser(FalseAnswer):
    """Answers plain over a blocking card, then falsely accuses its requester of a bad
    deal box, sending that accuse just before its forward."""

    def __init__(self) -> None:
        self.forwarded: dict[int, int] = {}
        """hand -> the seat of its first forward there (its victim)."""
        self.accusing: int | None = None

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        number = body.get("hand")
        if kind == msg.FORWARD and isinstance(number, int) and number not in self.forwarded:
            self.forwarded[number] = int(str(body["to"]))
            self.accusing = number
        return super().envelope(node, kind, body)

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        number, self.accusing = self.accusing, None
        if number is None:
            return []
        victim = self.forwarded[number]
        deal = _deal_of(node, victim, number)
        assert deal is not None
        acc = msg.Accusation(victim, FaultKind.BAD_SEAL.value, "box does not open", deal.wire)
        return [(msg.ACCUSE, {"accusations": [acc.to_json()], "disclosed": [],
                              "hand": number})]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        at: dict[str, int] = {}
        for i, output in enumerate(out):
            env = envelope_in(node, output.data) if isinstance(output, Send) else None
            if env is not None and env.author == node.identity.public and env.kind in (
                    msg.FORWARD, msg.ACCUSE):
                at.setdefault(env.kind, i)
        forward, accuse = at.get(msg.FORWARD), at.get(msg.ACCUSE)
        if forward is not None and accuse is not None and forward < accuse:
            out[forward], out[accuse] = out[accuse], out[forward]
        return out


def test_an_opened_card_and_a_disputed_box_of_one_slot_do_not_collide() -> None:
    # The requester's accuse both opens the liar's card and answers the liar's dispute
    # over the requester's deal box, for the same slot: each is judged on its own, so the
    # liar is blamed for both and the honest requester for nothing.
    for seed in range(1, 40):
        for liar in range(4):
            table = build_table(4, seed=seed, deciders=lambda _i: Restless())
            misbehave(table, liar, LiarAccuser)
            run = table.run(until=600.0, max_hands=1)
            first = run.honest[0].outcomes[0] if run.honest[0].outcomes else None
            if first is None or not any(a["kind"] == "false-fact" for a in first.accusations):
                continue
            assert run.honest_agree
            assert first.eliminated == [f"P{liar + 1}"]
            verdicts = {(a["kind"], a["verdict"]) for a in first.accusations}
            assert verdicts == {("false-fact", "proven"), ("bad-seal", "false")}
            return
    raise AssertionError("no seed let the liar lie and accuse")


class PetAccuser(Behaviour):
    """On a strict table, accuses a claim's prover of lying while the claim is under
    test, instead of giving its own part of the test."""

    def __init__(self) -> None:
        self.accusing: tuple[int, int, bytes] | None = None
        """(hand, prover's seat, claim envelope) to accuse."""
        self.accused: set[int] = set()

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        number = body.get("hand")
        if kind != msg.PET or not isinstance(number, int) or number in self.accused:
            return [body]
        # The claim this part is for: the one claim of another member taken in the hand
        # (its fact waits for the test, so no later claim can be in yet).
        claims = [(node.seat_of[m], e) for m, member in enumerate(node.members) if m != node.me
                  for e in node.transcript.chain(member)[:node.consumed[m]]
                  if e.kind in (msg.ANSWER, msg.DISCLOSE) and "pet" in e.body
                  and e.body.get("hand") == number]
        assert len(claims) == 1, claims
        (seat, claim), = claims
        self.accused.add(number)
        self.accusing = (number, seat, claim.wire)
        return []

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        if self.accusing is None:
            return []
        (number, seat, wire), self.accusing = self.accusing, None
        acc = msg.Accusation(seat, FaultKind.FALSE_FACT.value, "it lied", wire)
        return [(msg.ACCUSE, {"accusations": [acc.to_json()], "disclosed": [],
                              "hand": number})]


def test_an_accusation_of_a_claim_under_test_is_decided_by_the_parts_it_shows() -> None:
    # A void round does not wait for the test nobody finishes: the accuse is judged on
    # the parts it carries (none here), so it is false.
    hits = 0
    for seed in range(1, 5):
        table = build_table(4, seed=seed, mode="strict", deciders=lambda _i: Restless())
        accuser = misbehave(table, 0, PetAccuser)
        run = table.run(until=300.0, max_hands=2)
        assert run.honest_agree
        voided = [o for o in run.honest[0].outcomes if o.voided]
        if not voided:
            continue  # P1 never saw another seat's claim under test
        hits += 1
        assert own_envelopes(accuser, msg.ACCUSE, voided[0].hand), "P1 accused"
        assert voided[0].eliminated == ["P1"]
        assert [(a["by"], a["verdict"]) for a in voided[0].accusations] == [("P1", "false")]
    assert hits


class PatientAccuser(Behaviour):
    """In hand 1's void round, waits until its neighbour's accuse is out, then says that
    neighbour's deal box to it was bad (too late, it hopes, to be answered). Its node
    makes no accuse of hand 1 of its own (``logged_accuses``)."""

    def __init__(self) -> None:
        self.sent = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.sent or status is None or status.me is None or status.number != 1
                or not status.voiding):
            return []
        victim = status.holders[(status.me + 1) % len(status.holders)]
        deal = _deal_of(node, victim, 1)
        if deal is None or not any(
                e.kind == msg.ACCUSE and e.body.get("hand") == 1
                for e in node.transcript.chain(node.members[node.member_of[victim]])):
            return []
        self.sent = True
        acc = msg.Accusation(victim, FaultKind.BAD_SEAL.value, "box does not open", deal.wire)
        return [(msg.ACCUSE, {"accusations": [acc.to_json()], "disclosed": [], "hand": 1})]


def test_a_late_accusation_of_a_deal_box_finds_its_answer_already_given() -> None:
    # Every accuse discloses the sealer's whole deal with the boxes' keys, so a dispute
    # raised after the sealer's accuse is decided, not taken as an unanswered one: the
    # false accuser is blamed, the honest sealer is not.
    table = build_table(4, seed=3, timing=Timing(limit=2.0, decide_limit=2.0))
    accuser = misbehave(table, 0, PatientAccuser)
    accuser.logged_accuses = {1}
    misbehave(table, 2, Withhold)
    run = table.run(max_hands=2, until=600.0)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert first.eliminated == ["P1", "P3"]
    assert ("P1", "bad-seal", "false") in [(a["by"], a["kind"], a["verdict"])
                                           for a in first.accusations]


class Griefer(Behaviour):
    """Stops every hand in play with an accuse that accuses nothing."""

    def __init__(self) -> None:
        self.stopped: set[int] = set()

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (status is None or status.me is None or node.stage != Stage.PLAY
                or status.number in self.stopped):
            return []
        self.stopped.add(status.number)
        return [(msg.ACCUSE, {"accusations": [], "disclosed": [], "hand": status.number})]


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_seat_that_stops_hands_for_nothing_is_removed(mode: str) -> None:
    # An accuse with no accusation and no cause voids the hand with its author blamed,
    # or a seat could stall the game for ever at no cost. The seats that joined the round
    # cite its accuse as their cause; it cites nothing.
    table = build_table(4, seed=5, mode=mode, deciders=lambda _i: Restless())
    misbehave(table, 1, Griefer)
    run = table.run(until=600.0, max_hands=3)
    assert run.honest_agree
    outcomes = run.honest[0].outcomes
    assert outcomes[0].voided
    assert outcomes[0].eliminated == ["P2"]
    assert [(a["accused"], a["kind"], a["verdict"]) for a in outcomes[0].accusations] == [
        ("P2", "illegal-act", "proven")]
    assert not any(o.voided for o in outcomes[1:3])
    for node in run.honest:
        for env in node.transcript.chain(node.identity.public):
            if env.kind == msg.ACCUSE and not env.body["accusations"]:
                assert "cause" in env.body, "a seat that joins a round says why"
