"""Test bots that steer a table into the rarer paths: sales, redeals, kille swaps."""

from __future__ import annotations

from p2pkille.bots.base import Strategy, swap
from p2pkille.engine.facts import AskRedeal, Decision, Sell, VoteChoice
from p2pkille.engine.view import SeatView


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
