"""A late restart in the simulator, deterministic: a seat crashed in hand 2 is timed out by
the others, who play on without it; it comes back from its log after that as a spectator.
Every member's log then verifies clean (``p2pkille verify`` of a survivor that took the
others' votes before making its own finds no fork), and a survivor restarted from its log
keeps the time-out vote it made before (it neither votes again nor answers its own vote
with a ``seen``)."""

from __future__ import annotations

from pathlib import Path

from p2pkille.bots import ThresholdBot
from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import seat_name
from p2pkille.runtime.log import LoggedNode, load_log, restart_from_log, verify_log
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.runtime.steps import Step
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, build_table

SEED = 7
FAST = Timing(limit=4.0, decide_limit=4.0)
SLOW = Timing(limit=9.0, decide_limit=9.0)  # takes the others' votes before it votes


def _table(tmp: Path) -> tuple[SimTable, list[LoggedNode]]:
    plain = build_table(4, seed=SEED, chips=6, timings={0: FAST, 1: FAST, 2: FAST, 3: SLOW})
    network = SimNetwork(SEED, plain.network.faults)
    logged = [LoggedNode(n, tmp / f"{n.name}.log", durable=False) for n in plain.nodes]
    for node in logged:
        network.add(node)
    return SimTable(list(plain.nodes), network), logged


def _crash_in_hand_two(table: SimTable, victim: int) -> None:
    node = table.nodes[victim]
    stop = table.network.run(stop=lambda _: node.stage == Stage.SHUFFLE
                             and (hand := node.status()) is not None and hand.number == 2)
    assert stop.value == "stopped"
    table.network.crash(node.name)


def _own_votes(node: TableNode) -> list[Step]:
    return [msg.get_step(e.body, e.wire) for e in node.transcript.chain(node.identity.public)
            if e.kind == msg.TIMEOUT]


def test_a_seat_back_after_its_limit_spectates_and_every_log_verifies(tmp_path: Path) -> None:
    table, logged = _table(tmp_path)
    victim = 0
    _crash_in_hand_two(table, victim)
    node = table.nodes[victim]
    me = seat_name(node.my_seat or 0)
    others = [n for i, n in enumerate(table.nodes) if i != victim]
    # Long past every limit: the others void hand 2 without it and play on.
    table.network.run(stop=lambda _: all(len(n.outcomes) >= 3 for n in others))
    assert all(n.outcomes[1].voided and n.outcomes[1].eliminated == [me] for n in others)
    # The slow survivor voted only after it held the others' votes (the order that broke).
    slow = table.nodes[3]
    assert _own_votes(slow), "the slow survivor never voted"
    logged[victim].close()
    back = restart_from_log(logged[victim].path, ThresholdBot(), durable=False)
    table.network.restart(node.name, back)
    table.nodes[victim] = back.node
    table.run(max_hands=5)
    watcher = back.node
    assert [o.to_json() for o in watcher.outcomes[:5]] == [
        o.to_json() for o in others[0].outcomes[:5]]
    assert watcher.outcomes[1].eliminated == [me]
    for outcome in watcher.outcomes[2:]:
        assert me not in outcome.holders  # no key: it only watches
    # Nothing of its own after the voided hand: no key, no share, no decision.
    own = watcher.transcript.chain(watcher.identity.public)
    assert max(msg.get_hand(e.body, e.wire) for e in own) == 2
    assert all(not n.transcript.equivocations for n in table.nodes)
    back.close()
    for i, log in enumerate(logged):
        if i != victim:
            log.close()
        verdict = verify_log(load_log(log.path), ThresholdBot())
        assert verdict.clean, (i, verdict.fault)
        assert [h["checkpoint"] for h in verdict.hands[:5]] == [
            o.checkpoint for o in others[0].outcomes[:5]]


def test_a_survivor_restarted_after_its_vote_keeps_it(tmp_path: Path) -> None:
    """Crashed right after it voted a seat's time out (hand 2 not yet voided everywhere),
    the survivor restarts from its log and neither votes again nor says it saw the seat."""
    table, logged = _table(tmp_path)
    _crash_in_hand_two(table, 0)
    slow = table.nodes[3]
    stop = table.network.run(stop=lambda _: bool(_own_votes(slow)))
    assert stop.value == "stopped"
    table.network.crash(slow.name)
    logged[3].close()
    back = restart_from_log(logged[3].path, ThresholdBot(), durable=False)
    table.network.restart(slow.name, back)
    table.nodes[3] = back.node
    others = table.nodes[1:]
    table.network.run(stop=lambda _: all(len(n.outcomes) >= 3 for n in others))
    kinds = [e.kind for e in back.node.transcript.chain(back.node.identity.public)
             if e.body.get("hand") == 2]
    assert kinds.count(msg.TIMEOUT) == 1
    assert msg.SEEN not in kinds
    assert all(not n.transcript.equivocations for n in table.nodes)
    assert [o.checkpoint for o in back.node.outcomes[:3]] == [
        o.checkpoint for o in table.nodes[1].outcomes[:3]]
