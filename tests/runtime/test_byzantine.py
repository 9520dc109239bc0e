"""The misbehaving peers of ``p2pkille/sim/byzantine.py``: each is detected, blamed on
the right seat with evidence a third party can check, honest players lose nothing
(a voided hand gives back the last checkpoint's chips) and the game goes on to a
winner. ``replay`` and ``garbage`` need no accusation and change nothing."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.node import TableNode
from p2pkille.sim.byzantine import BEHAVIOURS
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from protocol.envelope import decode
from protocol.identity import PublicKey
from protocol.transcript import Equivocation
from tests.runtime.bots import Restless
from tests.runtime.helpers import node_results

CHEATER = 1  # seat P2


def _play(behaviour: str, *, seed: int = 5, peers: int = 4, hands: int | None = None,
          restless: bool = False) -> TableRun:
    table = build_table(peers, seed=seed, chips=4, byzantine={CHEATER: behaviour},
                        deciders=(lambda _i: Restless()) if restless else None)
    return table.run(until=600.0, max_hands=hands)


def _cheater(run: TableRun) -> TableNode:
    (index,) = run.byzantine
    return run.nodes[index]


def _check_blamed(run: TableRun, kind: FaultKind) -> None:
    """The first hand is voided with the cheater eliminated, at every honest node; the
    evidence convicts the cheater's key; nothing honest is lost; a winner comes."""
    assert run.honest_agree
    cheater = _cheater(run)
    name = cheater.names[CHEATER]
    assert cheater.my_seat == CHEATER
    for node in run.honest:
        voided = [o for o in node.outcomes if o.voided]
        assert len(voided) == 1, [o.to_json() for o in node.outcomes]
        first = voided[0]
        assert first.eliminated == [name]
        assert any(a["accused"] == name and a["verdict"] == "proven"
                   for a in first.accusations), first.accusations
        before = node.outcomes[node.outcomes.index(first) - 1].chips if (
            node.outcomes.index(first)) else dict.fromkeys(node.names, 4 - 1)
        assert first.chips == before, "a void gives back the last checkpoint's chips"
        own = [f for f in node.faults if f.seat == CHEATER]
        if own:  # every honest node that found it itself holds checkable evidence
            assert own[0].kind is kind
            _verify_evidence(node, cheater, own[0].kind, own[0].evidence)
        view = node.view
        assert view is not None
        assert view.game.over
        assert view.game.winner is not None
        assert view.game.winner != CHEATER
        assert not view.game.in_game[CHEATER]


def _verify_evidence(node: TableNode, cheater: TableNode, kind: FaultKind,
                     evidence: bytes) -> None:
    """A third party with only the table id and member keys checks who signed it."""
    if kind is FaultKind.EQUIVOCATION:
        author = Equivocation.from_bytes(evidence).verify(table=node.config.table_id,
                                                          members=node.members)
    else:
        author = decode(evidence, table=node.config.table_id, members=node.members,
                        kinds=None).author
    assert author == cheater.identity.public


@pytest.mark.parametrize(("behaviour", "kind"), [
    ("equivocate", FaultKind.EQUIVOCATION),
    ("bad-shuffle", FaultKind.AUDIT),
    ("wrong-share", FaultKind.BAD_SHARE),
    ("out-of-turn", FaultKind.ILLEGAL_ACT),
])
def test_a_cheat_is_blamed_and_the_game_goes_on(behaviour: str, kind: FaultKind) -> None:
    _check_blamed(_play(behaviour), kind)


def test_a_false_answer_is_found_and_blamed() -> None:
    for seed in range(1, 30):
        run = _play("false-answer", seed=seed, restless=True, hands=3)
        if any(o.voided for o in run.honest[0].outcomes):
            assert run.honest_agree
            voided = next(o for o in run.honest[0].outcomes if o.voided)
            assert voided.eliminated == ["P2"]
            assert {a["kind"] for a in voided.accusations} == {"false-fact"}
            return
    pytest.fail("no seed let the liar answer falsely")


def test_a_false_accusation_blames_the_accuser() -> None:
    run = _play("false-accuse")
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert first.eliminated == ["P2"]
    assert [(a["by"], a["verdict"]) for a in first.accusations if a["by"] == "P2"] == [
        ("P2", "false")]
    # The accused seat was not harmed: it plays on.
    accused = next(a["accused"] for a in first.accusations if a["by"] == "P2")
    view = run.honest[0].view
    assert view is not None
    assert view.game.in_game[run.honest[0].names.index(str(accused))] or view.game.over


@pytest.mark.parametrize("behaviour", ["replay", "garbage"])
def test_noise_changes_nothing(behaviour: str) -> None:
    clean = build_table(4, seed=5, chips=4)
    clean.run(until=600.0)
    run = _play(behaviour)
    assert run.honest_agree
    for node in run.honest:
        assert node.faults == []
        assert not any(o.voided for o in node.outcomes)
        assert node_results(node) == node_results(clean.nodes[0])
    if behaviour == "garbage":
        assert sum(n.dropped for n in run.honest) > 0
    else:
        assert sum(n.transcript.duplicates for n in run.honest) > 0


@pytest.mark.parametrize("byzantine", [
    {0: "replay", 3: "replay"},
    {0: "garbage", 1: "garbage", 3: "garbage"},
])
def test_noisy_peers_together_do_not_flood_the_table(byzantine: dict[int, str]) -> None:
    # Noisy peers answer only messages that bring a new envelope: two that answered
    # every message would answer each other's noise with more for ever (the simulated
    # clock would stand still and the process grow without bound).
    table = build_table(5, seed=5, chips=4, byzantine=byzantine)
    honest = [n for i, n in enumerate(table.nodes) if i not in table.byzantine]
    stop = table.network.run(max_events=60_000,
                             stop=lambda _: all(len(n.outcomes) >= 2 for n in honest))
    assert stop.value == "stopped", "the noise flooded the table"
    clean = build_table(5, seed=5, chips=4)
    clean.run(max_hands=2)
    for node in honest:
        assert node.faults == []
        assert node_results(node)[:2] == node_results(clean.nodes[0])[:2]


def test_every_behaviour_has_a_name_and_a_bad_name_is_refused() -> None:
    assert set(BEHAVIOURS) == {"equivocate", "bad-shuffle", "wrong-share", "false-answer",
                               "withhold", "replay", "out-of-turn", "garbage",
                               "false-accuse"}
    with pytest.raises(ValueError, match="unknown behaviour"):
        build_table(3, byzantine={0: "nice"})


def test_the_verdict_lists_the_same_accusations_at_every_node() -> None:
    # The verdict waits for every holder's accuse: under reordering the cheater's own
    # accuse reaches some nodes late, and every node still lists the same accusations.
    table = build_table(4, seed=208, chips=4, byzantine={2: "bad-shuffle"},
                        faults=Faults.parse("drop=0.1,dup=0.05,reorder=0.1,delay=50ms"),
                        deciders=lambda _i: Restless())
    run = table.run(until=3000.0, max_hands=4)
    assert run.honest_agree
    voided = [o for o in run.honest[0].outcomes if o.voided]
    assert [o.eliminated for o in voided] == [["P3"]]
    assert {a["by"] for a in voided[0].accusations} == {"P1", "P2", "P3", "P4"}


def test_a_fork_cited_as_evidence_is_verified_once_per_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The void round is weighed after every envelope until it decides, and each weighing
    # judges every accusation again: a fork's signatures were checked anew each time
    # (about 250 times per node here, and most of a large table's CPU in its void round).
    checked: Counter[bytes] = Counter()
    verify = Equivocation.verify

    def counting(self: Equivocation, **kwargs: Any) -> PublicKey:
        checked[self.first + self.second] += 1
        return verify(self, **kwargs)

    monkeypatch.setattr(Equivocation, "verify", counting)
    run = _play("equivocate")
    _check_blamed(run, FaultKind.EQUIVOCATION)
    assert checked
    # Once per node's machine (a node rebuilt on a rewind starts a fresh one).
    assert max(checked.values()) <= 2 * len(run.nodes), checked
