"""Agreed time-outs (docs/protocol.md II.11.3): a seat that withholds a step is
eliminated only when every other key holder voted its time out; nodes whose clocks
(limits) differ, or a node that is merely slow, never split the table."""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import SimTable, TableRun, build_table
from tests.runtime.bots import Restless
from tests.runtime.helpers import misbehave, node_results

WITHHOLDER = 1  # seat P2


def _withhold(timings: dict[int, Timing] | None = None) -> TableRun:
    table = build_table(4, seed=5, chips=4, byzantine={WITHHOLDER: "withhold"},
                        timings=timings)
    return table.run(until=3600.0)


def _eliminated_by_timeout(run: TableRun) -> None:
    assert run.honest_agree
    for node in run.honest:
        voided = [o for o in node.outcomes if o.voided]
        assert [o.eliminated for o in voided] == [["P2"]]
        assert [a["kind"] for a in voided[0].accusations] == ["timeout"]
        view = node.view
        assert view is not None
        assert view.game.over
        assert view.game.winner not in (None, WITHHOLDER)


def test_a_withholder_is_eliminated_by_agreed_timeout() -> None:
    run = _withhold()
    _eliminated_by_timeout(run)
    assert run.virtual_s >= Timing().limit


def test_skewed_limits_reach_the_same_verdict() -> None:
    table = build_table(4, seed=5, chips=4, byzantine={WITHHOLDER: "withhold"})
    order = table.seats()  # node index per seat
    timings = {order[0]: Timing(limit=1.0), order[2]: Timing(limit=13.0),
               order[3]: Timing(limit=47.0)}
    _eliminated_by_timeout(_withhold(timings))


def _votes(node: TableNode) -> int:
    return sum(1 for e in node.transcript.chain(node.identity.public) if e.kind == "timeout")


def _slow(table: SimTable, seat: int, delay: float) -> str:
    slow = table.nodes[table.seats()[seat]]
    for node in table.nodes:
        if node is not slow:
            table.network.set_link(slow.name, node.name, Faults(delay=delay), one_way=True)
    return slow.name


def test_a_slow_node_is_not_timed_out_while_one_holder_still_waits() -> None:
    clean = build_table(4, seed=5, chips=4)
    order = clean.seats()  # the same seats at every table of this seed
    clean.run(until=3600.0, max_hands=3)
    # P1 gives up after 0.5 s; P3 and P4 wait 60 s. P2's messages take 3 s. (Once
    # only P1 and P2 are left, P1 alone is "every other key holder": not played here.)
    table = build_table(4, seed=5, chips=4, timings={
        order[seat]: Timing(limit=limit, decide_limit=limit)
        for seat, limit in ((0, 0.5), (2, 60.0), (3, 60.0))})
    assert table.seats() == order
    _slow(table, 1, 3.0)
    run = table.run(until=3600.0, max_hands=3)
    assert run.honest_agree
    impatient = table.nodes[order[0]]
    assert any(o.voided for o in run.nodes[0].outcomes) is False
    for node in run.nodes:
        assert node_results(node)[:3] == node_results(clean.nodes[0])[:3]
    assert _votes(impatient) > 0, "the impatient node voted, and was answered"


def test_a_slow_node_that_every_other_holder_gave_up_on_is_out_everywhere() -> None:
    order = build_table(4, seed=5, chips=4).seats()
    table = build_table(4, seed=5, chips=4, timings={
        order[seat]: Timing(limit=0.5 + seat, decide_limit=0.5 + seat) for seat in (0, 2, 3)})
    assert table.seats() == order
    _slow(table, 1, 5.0)
    run = table.run(until=3600.0)
    # The slow node is honest: it must reach the same verdict on itself.
    assert run.honest_agree
    first = next(o for o in run.nodes[0].outcomes if o.voided)
    assert first.eliminated == ["P2"]


def test_a_timeout_after_a_voided_hand_is_still_agreed() -> None:
    # P3 withholds its reveal (so P2's bad shuffle is not audited yet): hand 1 is
    # voided by agreed timeout, hand 2 by the audit; nodes consumed different amounts
    # of the voided hand, yet they name the same steps.
    table = build_table(5, seed=5, chips=4, byzantine={1: "bad-shuffle", 2: "withhold"},
                        timings={0: Timing(limit=1.0), 3: Timing(limit=9.0)})
    run = table.run(until=3600.0)
    assert run.honest_agree
    voided = [o for o in run.honest[0].outcomes if o.voided]
    assert [o.eliminated for o in voided] == [["P3"], ["P2"]]
    assert [a["kind"] for a in voided[0].accusations] == ["timeout"]
    assert {a["kind"] for a in voided[1].accusations} == {"audit"}


class NoForward(Behaviour):
    """Never forwards its shares after an exchange (its partner cannot learn its card)."""

    def __init__(self) -> None:
        self.withheld = 0

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != msg.FORWARD:
            return [body]
        self.withheld += 1
        return []


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_withheld_forward_eliminates_the_withholder_not_its_victim(mode: str) -> None:
    # The table waits for an owed forward like any other step: walking away with a
    # partner's card must not leave the partner unable to play, timed out in its place.
    table = build_table(3, seed=1, mode=mode, deciders=lambda _i: Restless())
    withholder = NoForward()
    misbehave(table, 1, withholder)
    run = table.run(until=2000.0, max_hands=2)
    assert withholder.withheld
    assert run.honest_agree
    voided = [o for o in run.honest[0].outcomes if o.voided]
    assert [o.eliminated for o in voided] == [["P2"]]
    assert [a["kind"] for a in voided[0].accusations] == ["timeout"]
    assert all(n.timed_decisions == [] for n in run.honest)


@pytest.mark.parametrize("slow", ["n2", "n3", "n4"])
def test_a_forward_taken_before_its_exchange_is_not_owed_afterwards(slow: str) -> None:
    # One slow link into n1: the target's answer reaches n1 after the requester's
    # forward, which n1 takes first. Applying the answer must not record that forward as
    # owed: n1 would wait for it for ever, and so never vote that seat's next step (a
    # crash of that seat would then stall the table).
    table = build_table(4, seed=2, chips=4, deciders=lambda _i: Restless())
    net = table.network
    net.set_link(slow, "n1", Faults(delay=3.0), one_way=True)
    lingering: list[tuple[int, dict[tuple[int, int], int]]] = []
    owed_in_play: list[int] = []
    n1 = table.nodes[0]

    def check(_: object) -> bool:
        status, owed = n1.status(), n1.owed_forwards()
        if status is not None and owed and n1.stage == Stage.PLAY:
            owed_in_play.append(status.number)
        if status is not None and n1.stage > Stage.PLAY and owed:
            lingering.append((status.number, owed))
        return all(n.done for n in table.nodes)

    net.run(stop=check, until=3000.0)
    assert all(n.done for n in table.nodes)
    assert owed_in_play, "forwards were owed in play"
    assert lingering == []
