"""A bot that takes its time, so a person at the table can follow the play.

:class:`PacedDecider` wraps a bot: the first time the node asks a question it
raises :class:`~p2pkille.engine.view.DecisionPending` and schedules ``poke`` after
``delay`` seconds; asked again once the delay has passed, it gives the bot's
answer. Its node must honour the pending contract (``HumanTableNode`` does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from p2pkille.engine.facts import Decision, Fact, VoteChoice
from p2pkille.engine.view import Decider, DecisionPending, SeatView

__all__ = ["PacedDecider"]


class PacedDecider:
    """``inner``'s answers, each ``delay`` seconds after the question was first asked."""

    def __init__(self, inner: Decider, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.poke: Callable[[], None] = lambda: None
        self._asked: tuple[str, int, float] | None = None

    @property
    def wants_facts(self) -> bool:
        return bool(getattr(self.inner, "wants_facts", False))

    def _wait(self, kind: str, view: SeatView) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        key = (kind, view.game.fact_count)
        asked = self._asked
        if asked is not None and asked[:2] == key:
            if now >= asked[2]:
                self._asked = None
                return
        else:
            self._asked = (*key, now + self.delay)
            loop.call_later(self.delay, self.poke)
        raise DecisionPending(f"a bot thinks about its {kind}")

    def turn(self, view: SeatView) -> Decision:
        self._wait("turn", view)
        return self.inner.turn(view)

    def vote(self, view: SeatView) -> VoteChoice:
        self._wait("vote", view)
        return self.inner.vote(view)

    def answer_sale(self, view: SeatView) -> bool:
        self._wait("sale", view)
        return self.inner.answer_sale(view)

    def cut(self, view: SeatView) -> int:
        self._wait("cut", view)
        return self.inner.cut(view)

    def buyin(self, view: SeatView) -> bool:
        self._wait("buyin", view)
        return self.inner.buyin(view)

    def observe(self, fact: Fact, view: SeatView) -> None:
        self.inner.observe(fact, view)
