"""A signed ``leave`` (docs/protocol.md II.11.4): a member that quits is settled at once,
a crash is still waited for.

A player quits when first asked to decide (:class:`QuitsWhenAsked`): its node signs its
leave and sends nothing more. On a network with 10 ms links, the others void the hand it
holds a key in without waiting for any limit (the whole void round takes a few round
trips of virtual time, against a 20 s limit), eliminate it, and play on to a winner.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from p2pkille.bots.base import Strategy, swap
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Node
from p2pkille.runtime.log import LoggedNode, load_log, verify_log
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, TableRun, build_table

LINKS = Faults(delay=0.01)
TIMING = Timing()
QUITTER = 1  # node n2


class QuitsWhenAsked(Strategy):
    """Asked for its ``on``-th decision, its player quits instead of deciding: the node
    signs its leave now (or, with ``crash``, just stops for good)."""

    name = "quits"

    def __init__(self, on: int = 1, *, crash: bool = False) -> None:
        super().__init__()
        self.on, self.crash = on, crash
        self.table: SimTable | None = None
        self.asked = 0
        self.at: float | None = None
        self.status_then: tuple[int, bool] | None = None
        """The hand it quit in, and whether it held a key there."""

    def _ask(self) -> None:
        self.asked += 1
        table = self.table
        assert table is not None
        if self.at is None and self.asked == self.on:
            network, node = table.network, table.nodes[QUITTER]
            self.at = network.now
            status = node.status()
            assert status is not None
            self.status_then = (status.number, status.me is not None)
            if self.crash:
                network.crash(node.name)
            else:
                network.at(self.at, node.name, _leave, "a leave")
        if self.at is not None:
            raise DecisionPending("the player is gone")

    def turn(self, view: SeatView) -> Decision:
        self._ask()
        return swap(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        self._ask()
        return VoteChoice.AGREE

    def answer_sale(self, view: SeatView) -> bool:
        self._ask()
        return False

    def buyin(self, view: SeatView) -> bool:
        return False


def _leave(node: Node, now: float) -> object:
    assert isinstance(node, TableNode | LoggedNode)
    return node.leave(now)


def _play(mode: str, seed: int, *, crash: bool = False, peers: int = 4,
          ruleset: str = "wikipedia",
          ) -> tuple[TableRun, QuitsWhenAsked, dict[tuple[str, int], float]]:
    """The table's run, its quitter, and when each node voided each hand it voided."""
    quitter = QuitsWhenAsked(crash=crash)
    table = build_table(peers, seed=seed, mode=mode, faults=LINKS, timing=TIMING,
                        ruleset=ruleset,
                        deciders=lambda i: quitter if i == QUITTER else ThresholdBot())
    quitter.table = table
    voids: dict[tuple[str, int], float] = {}
    for node in table.nodes:
        node.watchers.append(_timing(node, table, voids))
    return table.run(until=3600.0), quitter, voids


def _timing(node: TableNode, table: SimTable,
            voids: dict[tuple[str, int], float]) -> Callable[[str], None]:
    def watch(what: str) -> None:
        if what == "void":
            voids.setdefault((node.name, node.outcomes[-1].hand), table.network.now)
    return watch


@pytest.mark.parametrize("mode", ["audit", "strict"])
@pytest.mark.parametrize("seed", [1, 4])
def test_a_key_holder_that_leaves_is_settled_at_once_and_the_table_plays_on(
        mode: str, seed: int) -> None:
    run, quitter, voids = _play(mode, seed)
    assert quitter.at is not None
    assert quitter.status_then is not None
    number, held_key = quitter.status_then
    assert held_key
    leaver = run.nodes[QUITTER]
    assert leaver.has_quit
    seat = leaver.my_seat
    assert seat is not None
    staying = run.honest
    assert len(staying) == 3
    assert leaver not in staying
    assert run.honest_agree  # every staying node finished, with the same hands
    assert staying[0].view is not None
    assert staying[0].view.game.winner is not None
    # The hand it held a key in is voided with it eliminated, its time-out agreed ...
    voided = next(o for o in staying[0].outcomes if o.hand == number)
    assert voided.voided
    assert voided.eliminated == [leaver.names[seat]]
    # ... without any limit passing: a few network round trips after the leave.
    assert max(voids[(n.name, number)] for n in staying) - quitter.at < TIMING.limit / 10
    for node in staying:
        assert node.left == (seat,)
        chain = node.transcript.chain(leaver.identity.public)
        assert chain[-1].kind == msg.LEAVE  # its last envelope, held by every node
        assert all(env.kind != msg.LEAVE for env in chain[:-1])


def test_of_two_players_the_one_who_stays_decides_the_void_on_the_leavers_votes() -> None:
    # At two key holders the agreement's quorum is both: the leave carries the votes its
    # holder stands by (void of its own seat), and the one who stays decides with them at
    # once, then wins the game alone.
    run, quitter, voids = _play("audit", 1, peers=2, ruleset="bytes-kille")
    assert quitter.at is not None
    assert quitter.status_then is not None
    number, held_key = quitter.status_then
    assert held_key
    leaver, stayer = run.nodes[QUITTER], run.nodes[1 - QUITTER]
    leave = leaver.transcript.chain(leaver.identity.public)[-1]
    assert leave.kind == msg.LEAVE
    assert "stand" in leave.body
    voided = next(o for o in stayer.outcomes if o.hand == number)
    assert voided.voided
    assert voids[(stayer.name, number)] - quitter.at < TIMING.limit / 10
    assert stayer.done
    assert stayer.view is not None
    assert stayer.view.game.winner == stayer.my_seat


def test_a_node_rebuilt_from_a_log_that_holds_its_leave_makes_no_move() -> None:
    """Its leave was its last envelope: rebuilt from what it had accepted (its log), it
    has left, and neither its start nor its wakes sign anything more."""
    run, _, _ = _play("audit", 1)
    leaver = run.nodes[QUITTER]
    mine = leaver.transcript.chain(leaver.identity.public)
    assert mine[-1].kind == msg.LEAVE
    fresh = build_table(4, seed=1, mode="audit", faults=LINKS, timing=TIMING).nodes[QUITTER]
    fresh.replay(env.wire for env in leaver.transcript.accepted)
    assert fresh.has_quit
    now = run.virtual_s
    fresh.start(now)
    for k in range(1, 5):
        fresh.wake(now + k * TIMING.sync_interval)
    assert len(fresh.transcript.chain(fresh.identity.public)) == len(mine)


def test_a_crash_is_still_waited_for() -> None:
    run, quitter, voids = _play("audit", 1, crash=True)
    assert quitter.at is not None
    assert quitter.status_then is not None
    number, _ = quitter.status_then
    staying = [n for i, n in enumerate(run.nodes) if i != QUITTER]
    voided = next(o for o in staying[0].outcomes if o.hand == number)
    assert voided.voided
    assert all(node.left == () for node in staying)
    assert min(voids[(n.name, number)] for n in staying) - quitter.at >= TIMING.limit


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_the_log_of_a_player_who_left_with_a_decision_pending_verifies_clean(
        mode: str, tmp_path: Path) -> None:
    """It quit instead of making a decision it was asked for: verify must not make that
    decision for it (its log's decisions ran out, and it left), or the re-derived act
    takes its leave's slot and its own chain shows as forked."""
    quitter = QuitsWhenAsked()
    plain = build_table(4, seed=1, mode=mode, faults=LINKS, timing=TIMING,
                        deciders=lambda i: quitter if i == QUITTER else ThresholdBot())
    network = SimNetwork(1, plain.network.faults)
    logged = LoggedNode(plain.nodes[QUITTER], tmp_path / "quitter.log", durable=False)
    for k, node in enumerate(plain.nodes):
        network.add(logged if k == QUITTER else node)
    table = SimTable(list(plain.nodes), network, plain.byzantine)
    quitter.table = table
    run = table.run(until=3600.0)
    logged.close()
    leaver = run.nodes[QUITTER]
    assert leaver.has_quit
    assert run.honest_agree
    verdict = verify_log(load_log(logged.path), ThresholdBot())
    assert verdict.faults == [], verdict.faults
    assert verdict.hands == [o.to_json() for o in leaver.outcomes]
