"""Test bots that steer a table into the rarer paths: sales, redeals, kille swaps."""

from __future__ import annotations

from p2pkille.bots.base import Strategy, swap
from p2pkille.engine.facts import AskRedeal, Decision, Sell, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.sim.table import SimTable


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
