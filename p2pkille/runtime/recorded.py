"""A decider that answers from decisions already made, in order, then asks another:
a node fed its own envelopes again (from its log, or its transcript) makes exactly the
envelopes it made before."""

from __future__ import annotations

from collections.abc import Sequence

from p2pkille.engine.facts import (
    AskRedeal,
    BuyIn,
    Cut,
    Decision,
    Decline,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.view import Decider, SeatView


class RecordedDecider:
    """``decisions`` first (while the next one fits the question), then ``fallback``."""

    def __init__(self, decisions: Sequence[Fact], fallback: Decider) -> None:
        self._facts = list(decisions)
        self._next = 0
        self.fallback = fallback

    def _take(self, *types: type) -> Fact | None:
        if self._next < len(self._facts) and isinstance(self._facts[self._next], types):
            self._next += 1
            return self._facts[self._next - 1]
        return None

    def turn(self, view: SeatView) -> Decision:
        fact = self._take(Keep, Swap, AskRedeal, Sell)
        return fact if isinstance(fact, Keep | Swap | AskRedeal | Sell) else (
            self.fallback.turn(view))

    def vote(self, view: SeatView) -> VoteChoice:
        fact = self._take(Vote)
        return fact.choice if isinstance(fact, Vote) else self.fallback.vote(view)

    def answer_sale(self, view: SeatView) -> bool:
        fact = self._take(SaleAnswer)
        return fact.accept if isinstance(fact, SaleAnswer) else self.fallback.answer_sale(view)

    def cut(self, view: SeatView) -> int:
        fact = self._take(Cut)
        return fact.at if isinstance(fact, Cut) else self.fallback.cut(view)

    def buyin(self, view: SeatView) -> bool:
        fact = self._take(BuyIn, Decline)
        return isinstance(fact, BuyIn) if fact is not None else self.fallback.buyin(view)

    def observe(self, fact: Fact, view: SeatView) -> None:
        return None
