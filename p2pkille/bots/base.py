"""The strategy interface every bot implements.

A strategy is asked only when its seat must decide, through a
:class:`~p2pkille.engine.view.SeatView` (the public state plus the seat's own card).
It returns a legal decision; the drivers apply it through the one state machine,
which rejects anything illegal. A strategy that learns from the table (shown
cards, who kept, what a swap taught it) sets ``wants_facts = True`` and gets every
public fact in :meth:`Strategy.observe` after it is applied.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from p2pkille.engine.facts import Decision, Fact, Keep, Swap, VoteChoice
from p2pkille.engine.view import SeatView

_KEEPS: dict[int, Keep] = {}
_SWAPS: dict[tuple[int, int | None], Swap] = {}


def keep(seat: int) -> Keep:
    """A shared ``Keep(seat)`` (facts are values; the hot path avoids rebuilding them)."""
    fact = _KEEPS.get(seat)
    if fact is None:
        fact = _KEEPS[seat] = Keep(seat)
    return fact


def swap(seat: int, pick: int | None = None) -> Swap:
    """A shared ``Swap(seat, pick)``."""
    fact = _SWAPS.get((seat, pick))
    if fact is None:
        fact = _SWAPS[seat, pick] = Swap(seat, pick)
    return fact


class Strategy(ABC):
    """Base class of bots: :meth:`turn` is required, the rest have safe defaults."""

    #: Set True to receive every public fact in :meth:`observe`.
    wants_facts: ClassVar[bool] = False
    #: A short name for reports and benchmarks.
    name: ClassVar[str] = "strategy"

    @abstractmethod
    def turn(self, view: SeatView) -> Decision:
        """Keep, swap (``view.options.max_pick`` > 1 allows a pick), ask a redeal
        (``view.can_redeal``) or sell (``view.buyers``)."""

    def vote(self, view: SeatView) -> VoteChoice:
        """Redeal vote; by default refuse (always legal)."""
        return VoteChoice.REFUSE

    def answer_sale(self, view: SeatView) -> bool:
        """Card sale offered to this seat; by default reject."""
        return False

    def cut(self, view: SeatView) -> int:
        """Förhand's cut point; by default no cut."""
        return 0

    def buyin(self, view: SeatView) -> bool:
        """Buy in at ``view.price``; by default when it costs at most half the chips."""
        return 0 < view.price <= view.chips // 2

    def observe(self, fact: Fact, view: SeatView) -> None:  # noqa: B027 (optional hook)
        """Called after every public fact when ``wants_facts`` is True."""
