"""Test bots that steer a table into the rarer paths (sales, redeals, kille swaps), and
misbehaviours several test files share."""

from __future__ import annotations

from collections.abc import Mapping

from p2pkille.bots.base import Strategy, swap
from p2pkille.engine.facts import AskRedeal, Decision, Sell, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.table import SimTable
from protocol.envelope import Envelope


class Restless(Strategy):
    """Sells its card when it can, else asks a redeal when it can, else always swaps;
    agrees to redeals and accepts sales (so cards reach buyers out of the game)."""

    name = "restless"

    def turn(self, view: SeatView) -> Decision:
        if view.buyers:
            return Sell(view.seat, view.buyers[0], 0)
        if view.can_redeal:
            return AskRedeal(view.seat)
        return swap(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        return VoteChoice.AGREE

    def answer_sale(self, view: SeatView) -> bool:
        return True

    def buyin(self, view: SeatView) -> bool:
        return False


class CrashesAHolderWhenAsked:
    """A decider's mixin: when first asked, it crashes the node of another seat for good,
    then keeps deciding ``delay`` seconds (virtual) late. The table votes the decision out,
    and the crashed holder never adds its vote nor says it saw the late one."""

    def __init__(self, table: SimTable, delay: float) -> None:
        super().__init__()
        self.table = table
        self.delay = delay
        self.asked: float | None = None
        self.victim: str | None = None

    def _late(self, victim: int) -> None:
        """Crash ``victim``'s node on the first call; raise DecisionPending until late."""
        now = self.table.network.now
        if self.asked is None:
            self.asked = now
            self.victim = next(n.name for n in self.table.nodes if n.my_seat == victim)
            self.table.network.crash(self.victim)
        if now - self.asked < self.delay:
            raise DecisionPending("thinking")


def sealed_next(node: TableNode, kind: str, body: Mapping[str, object]) -> Envelope:
    """``node``'s envelope of ``kind`` with ``body`` at the next slot of its chain. Its
    signature is deterministic (Ed25519): the node signing the same body there makes the
    same bytes, so a behaviour knows the wire of an envelope before the node sends it."""
    seq, prev = node.transcript.next_slot(node.identity.public)
    return Envelope.seal(node.identity, table=node.config.table_id, seq=seq, prev=prev,
                         kind=kind, body=body)


def bare_accuse(node: TableNode) -> Body:
    """An accuse of ``node``'s current hand that accuses nobody: it stops the hand for
    nothing, and discloses what the node's own accuse would."""
    status = node.status()
    assert status is not None
    return {"accusations": [], "disclosed": node.disclosures(), "hand": status.number}


class StopsForNothing(Behaviour):
    """Stops hand 1 once play starts, with an accuse that accuses nobody."""

    def __init__(self) -> None:
        self.stopped = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.stopped or status is None or status.number != 1 or status.voiding
                or node.stage != Stage.PLAY):
            return []
        self.stopped = True
        return [(msg.ACCUSE, bare_accuse(node))]
