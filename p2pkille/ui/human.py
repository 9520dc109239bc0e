"""A decider for a human seat: it asks, the player answers later with keys.

The node asks its decider synchronously; a person cannot answer at once. So the
first call for a decision records the question (:attr:`HumanDecider.request`) and
raises :class:`~p2pkille.engine.view.DecisionPending`; the UI calls
:meth:`HumanDecider.answer` once the player chose and makes the node run again,
which asks the same question and now gets the answer. An answer is tied to the
question it answers (its kind and the game's fact count), so a stale answer is
never used for a later decision. A question the player has settled in advance (a
buy-back after leaving the game for good, one the player cannot pay) is answered at
once by :attr:`HumanDecider.standing`, without waiting.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from p2pkille.engine.facts import AskRedeal, Decision, Fact, Keep, Sell, Swap, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView

__all__ = ["Ask", "HumanDecider", "Request"]


class Ask(enum.Enum):
    """What the node asks the human."""

    TURN = "turn"
    VOTE = "vote"
    SALE = "sale"
    CUT = "cut"
    BUYIN = "buyin"


@dataclass(frozen=True, slots=True)
class Request:
    """A pending question: its kind, the seat's view, and the game's fact count then."""

    ask: Ask
    view: SeatView
    at: int


class HumanDecider:
    """Implements ``engine.view.Decider`` by waiting for :meth:`answer`."""

    wants_facts = False

    def __init__(self, on_request: Callable[[Request], None] | None = None) -> None:
        self.request: Request | None = None
        self._answer: tuple[Ask, int, object] | None = None
        self.on_request = on_request
        self.standing: Callable[[Request], object | None] | None = None
        """Answers a question at once (not ``None``) where the answer is settled already."""

    def answer(self, value: object) -> None:
        """Answer the pending request (a ``Decision``, ``VoteChoice``, bool or int)."""
        request = self.request
        if request is None:
            raise ValueError(f"no decision is pending; got the answer {value!r}")
        self._answer = (request.ask, request.at, value)

    def _ask(self, ask: Ask, view: SeatView) -> object:
        at = view.game.fact_count
        answer = self._answer
        if answer is not None and answer[0] is ask and answer[1] == at:
            self._answer = None
            self.request = None
            return answer[2]
        request = Request(ask, view, at)
        if self.standing is not None:
            settled = self.standing(request)
            if settled is not None:
                self.request = None
                return settled
        fresh = self.request is None or (self.request.ask, self.request.at) != (ask, at)
        self.request = request
        if fresh and self.on_request is not None:
            self.on_request(request)
        raise DecisionPending(f"waiting for the player: {ask.value}")

    def turn(self, view: SeatView) -> Decision:
        value = self._ask(Ask.TURN, view)
        assert isinstance(value, Keep | Swap | AskRedeal | Sell)
        return value

    def vote(self, view: SeatView) -> VoteChoice:
        value = self._ask(Ask.VOTE, view)
        assert isinstance(value, VoteChoice)
        return value

    def answer_sale(self, view: SeatView) -> bool:
        return bool(self._ask(Ask.SALE, view))

    def cut(self, view: SeatView) -> int:
        value = self._ask(Ask.CUT, view)
        assert isinstance(value, int)
        return value

    def buyin(self, view: SeatView) -> bool:
        return bool(self._ask(Ask.BUYIN, view))

    def observe(self, fact: Fact, view: SeatView) -> None:
        """Unused: the screen reads the node's game events instead."""
