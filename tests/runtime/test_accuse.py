"""Accusations checked by every node itself: false ones blame the accuser, sealed-share
disputes are settled by disclosure, and the verdict does not depend on arrival order."""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import TableRun, build_table
from protocol import canonical
from protocol.errors import RemoteProtocolError
from tests.runtime.helpers import misbehave


class Accuser(Behaviour):
    """Once in play in hand 1, accuses the next key holder of ``kind``, citing as evidence
    that holder's (or, with ``someone_else``, the holder after it's) ``evidence_kind``
    envelope of the hand."""

    kind = FaultKind.BAD_SEAL
    evidence_kind = msg.DEAL
    someone_else = False

    def __init__(self) -> None:
        self.accused: int | None = None

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.accused is not None or status is None or status.me is None
                or node.stage != Stage.PLAY or status.number != 1):
            return []
        holders, me = status.holders, status.me
        self.accused = holders[(me + 1) % len(holders)]
        author = holders[(me + 2) % len(holders)] if self.someone_else else self.accused
        chain = node.transcript.chain(node.members[node.member_of[author]])
        evidence = next(e for e in chain if e.kind == self.evidence_kind
                        and e.body.get("hand") == 1)
        accusation = msg.Accusation(self.accused, self.kind.value, "made up", evidence.wire)
        return [(msg.ACCUSE, {"accusations": [accusation.to_json()], "disclosed": [],
                              "hand": 1})]


class ForgedEvidence(Accuser):
    kind = FaultKind.ILLEGAL_ACT
    evidence_kind = msg.KEY
    someone_else = True


class MadeUpLie(Accuser):
    kind = FaultKind.FALSE_FACT
    evidence_kind = msg.KEY


def _with(cls: type[Accuser], mode: str = "audit") -> TableRun:
    table = build_table(4, seed=3, chips=4, mode=mode)
    accuser = misbehave(table, 1, cls)
    run = table.run(until=600.0, max_hands=2)
    assert isinstance(accuser.behaviour, cls)
    assert accuser.behaviour.accused is not None, "the accuser accused"
    return run


def test_a_sealed_share_dispute_is_settled_by_disclosure() -> None:
    run = _with(Accuser)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    # The accused disclosed each box's plaintext and one-time key: every node opened the
    # box itself, found the valid share in it, and so the accusation is proven false.
    assert first.eliminated == ["P2"]
    assert [(a["by"], a["kind"], a["verdict"]) for a in first.accusations] == [
        ("P2", "bad-seal", "false")]
    accused = next(n for n in run.nodes if n.my_seat == 2)
    accuse = next(e for e in accused.transcript.chain(accused.identity.public)
                  if e.kind == msg.ACCUSE)
    disclosed = msg.get_disclosed(accuse.body, accuse.wire)
    assert disclosed, "the accused disclosed its share"
    assert all(key is not None for _, _, key in disclosed), "and each box's key"
    assert not any(o.voided for o in run.honest[0].outcomes[1:])


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_made_up_lie_is_false_at_once_and_stalls_nothing(mode: str) -> None:
    # A false-fact accusation must carry its proof (the claim, and the card opened); one
    # resting on anything else is false at once: a stopped hand never reaches an audit.
    run = _with(MadeUpLie, mode=mode)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.eliminated == ["P2"]
    assert [(a["by"], a["kind"], a["verdict"]) for a in first.accusations] == [
        ("P2", "false-fact", "false")]


def test_evidence_signed_by_someone_else_blames_the_accuser() -> None:
    run = _with(ForgedEvidence)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.eliminated == ["P2"]
    assert [a["verdict"] for a in first.accusations if a["by"] == "P2"] == ["false"]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_verdict_does_not_depend_on_arrival_order(seed: int) -> None:
    faults = Faults(drop=0.1, dup=0.1, reorder=0.3, delay=0.01, jitter=0.05)
    verdicts = set()
    for net_seed in (seed, seed + 100):
        table = build_table(4, seed=5, chips=4, byzantine={1: "bad-shuffle"})
        # The same table on another network schedule: other drops, copies and order.
        table.network = SimNetwork(net_seed, faults)
        for node in table.nodes:
            table.network.add(node)
        run = table.run(until=3600.0, max_hands=2)
        assert run.honest_agree
        first = run.honest[0].outcomes[0]
        verdicts.add((first.voided, tuple(first.eliminated)))
    assert verdicts == {(True, ("P2",))}


def test_accuse_bodies_parse_or_raise_the_remote_kind() -> None:
    good = msg.Accusation(1, "bad-key", "why", b"x" * 10).to_json()
    body: dict[str, object] = {"accusations": [good], "disclosed": [], "hand": 1}
    assert msg.get_accusations(body, b"") == [msg.Accusation(1, "bad-key", "why", b"x" * 10)]
    for bad in ({**good, "reason": "line\nbreak"}, {**good, "kind": "BAD"},
                {**good, "accused": 99}, {**good, "evidence": ""}, {"accused": 1}):
        with pytest.raises(RemoteProtocolError):
            msg.get_accusations({"accusations": [bad]}, b"")
    with pytest.raises(RemoteProtocolError):
        msg.get_disclosed({"disclosed": [{"by": 0, "for": None, "share": "AA", "token": 0}]},
                          b"")
    assert canonical.encode(body)


class WrongInput(Behaviour):
    """Claims to have shuffled another deck than the previous step's."""

    def __init__(self) -> None:
        self.shuffles = 0

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.SHUFFLE:
            self.shuffles += 1
            body = {**body, "input": canonical.b64encode(bytes(32))}
        return [body]


def test_a_shuffle_of_another_input_deck_blames_nobody_for_the_fork() -> None:
    table = build_table(4, seed=3, chips=4)
    wrong = WrongInput()
    misbehave(table, 1, wrong)
    run = table.run(until=3600.0, max_hands=1)
    assert wrong.shuffles, "the wrong input was sent"
    for node in run.honest:
        fork = [f for f in node.faults if f.kind is FaultKind.EQUIVOCATION]
        assert fork, "the input mismatch is seen"
        assert all(f.seat is None for f in fork), "never blamed on the later shuffler"
    # The step is never taken: the table waits for a valid one, and in the end times
    # the seat out by agreement (it never shuffles the deck everyone holds).
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert [a["kind"] for a in first.accusations] == ["timeout"]
    assert run.honest_agree
