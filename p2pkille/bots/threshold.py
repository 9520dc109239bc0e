"""The fixed-threshold bot: keep a card at or above a rank, else swap.

The field notes put the break-even near the 8 (with rank r of 21 the neighbour
holds a higher card with chance about 2(21-r)/41); the threshold is a parameter.
"""

from __future__ import annotations

from p2pkille.bots.base import Strategy, keep, swap
from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import AskRedeal, Decision, VoteChoice
from p2pkille.engine.view import SeatView


class ThresholdBot(Strategy):
    """Keeps ranks >= ``threshold`` (a kille got by a swap counts as the lowest)."""

    name = "threshold"

    __slots__ = ("redeal_below", "threshold")

    def __init__(self, threshold: Rank = Rank.EIGHT, redeal_below: Rank = Rank.FOUR) -> None:
        self.threshold = threshold
        self.redeal_below = redeal_below

    def turn(self, view: SeatView) -> Decision:
        value = view.value
        if value < self.redeal_below and view.can_redeal:
            return AskRedeal(view.seat)
        if value >= self.threshold:
            return keep(view.seat)
        return swap(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        return VoteChoice.AGREE if view.value < self.threshold else VoteChoice.REFUSE
