"""A bot that picks uniformly among its legal decisions (for property tests)."""

from __future__ import annotations

from typing import Protocol

from p2pkille.bots.base import Strategy, keep, swap
from p2pkille.engine.facts import AskRedeal, Decision, Sell, VoteChoice
from p2pkille.engine.view import SeatView


class Chooser(Protocol):
    """Injected randomness (``random.Random`` fits)."""

    def randrange(self, start: int, /) -> int: ...


class RandomBot(Strategy):
    """Uniform over legal turn decisions (keep, swap with each legal pick, redeal, sell);
    votes, sale answers and buy-ins are coin flips among the legal answers."""

    name = "random"

    __slots__ = ("rng",)

    def __init__(self, rng: Chooser) -> None:
        self.rng = rng

    def turn(self, view: SeatView) -> Decision:
        seat = view.seat
        choices: list[Decision] = [keep(seat), swap(seat)]
        max_pick = view.options.max_pick
        if max_pick > 1:
            choices += [swap(seat, pick) for pick in range(1, max_pick + 1)]
        if view.can_redeal:
            choices.append(AskRedeal(seat))
        for buyer in view.buyers:
            chips = view.game.chips[buyer]
            choices.append(Sell(seat, buyer, self.rng.randrange(chips + 1)))
        return choices[self.rng.randrange(len(choices))]

    def vote(self, view: SeatView) -> VoteChoice:
        choices = [VoteChoice.AGREE, VoteChoice.REFUSE]
        if view.can_depend:
            choices.append(VoteChoice.DEPENDS)
        return choices[self.rng.randrange(len(choices))]

    def answer_sale(self, view: SeatView) -> bool:
        sale = view.sale
        return sale is not None and sale[1] <= view.chips and self.rng.randrange(2) == 1

    def cut(self, view: SeatView) -> int:
        return self.rng.randrange(len(view.game.stock))

    def buyin(self, view: SeatView) -> bool:
        return view.price <= view.chips and self.rng.randrange(2) == 1
