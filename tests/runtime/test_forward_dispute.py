"""A dispute over a forward raised after the sealer's accuse is still decided
(docs/protocol.md II.11.1): every accuse discloses the forwards its author sealed to
key holders that may still dispute them, so a recipient that lies about a good box
is blamed however it times its accusation, and a sealer that garbled one is blamed."""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.table import TableRun, build_table
from protocol import canonical
from tests.runtime.bots import Restless, sealed_next
from tests.runtime.helpers import misbehave

LIAR = 1  # seat P2


class LateFalseDispute(Behaviour):
    """Once a forward to it has been consumed, says that forward's first box was bad (it
    was good) and sends that accuse to everyone but the sealer: the others join the void
    round at once, so the sealer writes its own accuse before it learns of the dispute."""

    def __init__(self, names_by_seat: dict[int, str]) -> None:
        self.names_by_seat = names_by_seat
        self.accuse: bytes | None = None
        self.sealer: int | None = None
        self.sent = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.accuse is not None or status is None or status.me is None
                or node.stage < Stage.PLAY):
            return []
        for m, member in enumerate(node.members):
            fwd = next((e for e in node.transcript.chain(member)[:node.consumed[m]]
                        if e.kind == msg.FORWARD and e.body.get("hand") == status.number
                        and e.body.get("to") == node.my_seat), None)
            if fwd is None:
                continue
            self.sealer = node.seat_of[m]
            accusation = msg.Accusation(self.sealer, FaultKind.BAD_SEAL.value,
                                        "the box does not open", fwd.wire)
            body: Body = {"accusations": [accusation.to_json()],
                          "disclosed": node.disclosures(), "hand": status.number}
            self.accuse = sealed_next(node, msg.ACCUSE, body).wire
            return [(msg.ACCUSE, body)]
        return []

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if self.sent or self.accuse is None:
            return out
        sent: list[Output] = []
        for o in out:
            if isinstance(o, Send) and o.to is None and o.data == self.accuse:
                sent += [Send(o.data, to=name) for seat, name in self.names_by_seat.items()
                         if seat not in (self.sealer, node.my_seat)]
                self.sent = True
            else:
                sent.append(o)
        return sent


def _run(seed: int, peers: int = 4) -> TableRun:
    table = build_table(peers, seed=seed, chips=3, deciders=lambda _i: Restless())
    names = {seat: table.nodes[index].name for seat, index in enumerate(table.seats())}
    liar = LateFalseDispute(names)
    misbehave(table, LIAR, liar)
    run = table.run(until=3600.0, max_hands=3)
    assert liar.sent, "the false dispute was sent"
    return run


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_false_dispute_of_a_forward_raised_late_blames_the_accuser(seed: int) -> None:
    run = _run(seed)
    assert run.honest_agree
    voided = [o for o in run.honest[0].outcomes if o.voided]
    assert voided, "the dispute stopped a hand"
    first = voided[0]
    assert first.eliminated == ["P2"], first.accusations
    dispute = [a for a in first.accusations if a["by"] == "P2"]
    assert [a["verdict"] for a in dispute] == ["false"]
    # The sealer's accuse answers the dispute it was not sent: it discloses the forward.
    node = run.honest[0]
    sealer = node.names.index(str(dispute[0]["accused"]))
    accuse = next(e for e in node.transcript.chain(node.members[node.member_of[sealer]])
                  if e.kind == msg.ACCUSE and e.body.get("hand") == first.hand)
    lie = next(e for e in node.transcript.chain(node.members[node.member_of[LIAR]])
               if e.kind == msg.ACCUSE and e.body["accusations"])
    forward = canonical.decode_object(msg.get_accusations(lie.body, lie.wire)[0].evidence)
    body = forward["body"]
    assert isinstance(body, dict)
    assert isinstance(body["boxes"], list)
    disputed = {(b["token"], b["by"], b["for"]) for b in body["boxes"] if isinstance(b, dict)}
    disclosed = {(t, e.sender, e.recipient)
                 for t, e, _ in msg.get_disclosed(accuse.body, accuse.wire)}
    assert disputed
    assert disputed <= disclosed


class GarbleAndHide(Behaviour):
    """Garbles the first box of its first forward, and accuses (nothing) right after it
    without disclosing that forward, before its recipient can dispute the box."""

    def __init__(self) -> None:
        self.garbled: int | None = None
        self.hidden = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != msg.FORWARD or self.garbled is not None:
            return [body]
        self.garbled = int(str(body["hand"]))
        boxes = [dict(b) for b in body["boxes"]]  # type: ignore[attr-defined]
        boxes[0]["box"] = canonical.b64encode(bytes(80))
        return [{**body, "boxes": boxes}]

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        if self.garbled is None or self.hidden:
            return []
        self.hidden = True  # my next envelope
        return [(msg.ACCUSE, {"accusations": [], "disclosed": [], "hand": self.garbled})]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_forward_left_out_of_its_sealers_accuse_is_proven_bad(seed: int) -> None:
    table = build_table(4, seed=seed, chips=3, deciders=lambda _i: Restless())
    garbler = GarbleAndHide()
    misbehave(table, LIAR, garbler)
    run = table.run(until=3600.0, max_hands=3)
    assert garbler.hidden, "it garbled a forward and accused right after"
    assert run.honest_agree
    first = next(o for o in run.honest[0].outcomes if o.voided)
    assert first.eliminated == ["P2"]
    disputes = [a for a in first.accusations if a["accused"] == "P2"]
    assert disputes
    assert {a["kind"] for a in disputes} <= {FaultKind.BAD_SEAL.value,
                                             FaultKind.BAD_SHARE.value}
    assert {a["verdict"] for a in disputes} == {"proven"}


class Padder(Behaviour):
    """Accuses (nothing) with a padded ``disclosed`` list: a made-up entry that is no box
    it sealed (``made-up``), or its genuine disclosures with the first one repeated
    (``repeat``)."""

    def __init__(self, padding: str) -> None:
        self.padding = padding
        self.padded = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.padded or status is None or status.me is None
                or node.stage < Stage.PLAY):
            return []
        self.padded = True
        if self.padding == "made-up":
            disclosed: list[object] = [{
                "by": node.my_seat, "for": 0, "key": canonical.b64encode(bytes(32)),
                "share": canonical.b64encode(bytes(96)), "token": 41}]
        else:
            real = node.disclosures()
            disclosed = [*real, *real[:1]]
        return [(msg.ACCUSE, {"accusations": [], "disclosed": disclosed,
                              "hand": status.number})]


@pytest.mark.parametrize("padding", ["made-up", "repeat"])
def test_an_accuse_that_pads_its_disclosures_is_blamed(padding: str) -> None:
    # A list filled up with made-up or repeated entries would reach the cap and leave a
    # forward it left out unproven.
    table = build_table(4, seed=3, chips=3)
    padder = Padder(padding)
    misbehave(table, LIAR, padder)
    run = table.run(until=3600.0, max_hands=2)
    assert padder.padded
    assert run.honest_agree
    first = next(o for o in run.honest[0].outcomes if o.voided)
    assert first.eliminated == ["P2"]
    assert any(a["accused"] == "P2" and a["kind"] == FaultKind.MALFORMED.value
               and a["verdict"] == "proven" for a in first.accusations), first.accusations
