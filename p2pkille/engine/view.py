"""One seat's window on a game, and the interface a deciding strategy implements.

A :class:`SeatView` is what a bot may look at: the public state of the game plus
the seat's own card (``rank``), given by a face function the driver supplies (the
referee knows every face; a peer only its own). :class:`Decider` is the protocol
the drivers call; ``p2pkille.bots.base.Strategy`` implements it with defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Decision, Fact, VoteChoice
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import RedealRule, RuleOptions

FaceOf = Callable[[int], Rank | None]
_TURN = int(Phase.TURN)


class SeatView:
    """Read-only view of ``game`` for ``seat``. Cheap: it reads through to the game."""

    __slots__ = ("_face", "game", "seat")

    def __init__(self, game: Game, seat: int, face: FaceOf) -> None:
        self.game = game
        self.seat = seat
        self._face = face

    @property
    def options(self) -> RuleOptions:
        return self.game.options

    @property
    def position(self) -> int | None:
        """This seat's place in the current hand's turn order (0 = förhand)."""
        g = self.game
        if g.phase == _TURN and g.order[g.turn] == self.seat:
            return g.turn
        return g.position_of(self.seat)

    @property
    def rank(self) -> Rank | None:
        """This seat's own card, when it plays in the hand and its face is known."""
        g = self.game
        if g.phase == _TURN and g.order[g.turn] == self.seat:
            return self._face(g.hold[g.turn])
        pos = g.position_of(self.seat)
        return None if pos is None else self._face(g.hold[pos])

    @property
    def value(self) -> int:
        """Strength of the own card at a showdown: the rank's value, -1 for a kille got by
        a swap (lower than blaren) or an unknown card."""
        g = self.game
        if g.phase == _TURN and g.order[g.turn] == self.seat:
            pos: int | None = g.turn
        else:
            pos = g.position_of(self.seat)
        if pos is None:
            return -1
        rank = self._face(g.hold[pos])
        if rank is None or (rank is Rank.KILLE and g.via_swap[pos]):
            return -1
        return int(rank)

    @property
    def swapped(self) -> bool:
        """Whether the own card came by a swap (a kille got so is the lowest card)."""
        pos = self.position
        return pos is not None and self.game.via_swap[pos]

    @property
    def is_drawer(self) -> bool:
        """Whether a swap now goes to the stock (no live player after this seat)."""
        pos = self.position
        return pos is not None and self.game.is_drawer(pos)

    @property
    def can_redeal(self) -> bool:
        return self.game.can_ask_redeal() and self.game.expect_seat == self.seat

    @property
    def buyers(self) -> list[int]:
        """Seats this seat may offer its card to now (card selling)."""
        g = self.game
        return g.sale_buyers() if g.expect_seat == self.seat else []

    @property
    def can_depend(self) -> bool:
        """Whether "det beror på" is a legal vote now."""
        g = self.game
        return g.phase == Phase.VOTE and g.options.redeal is RedealRule.FRAGE_KILLE and (
            g.votes_in == 0
        )

    @property
    def price(self) -> int:
        """The buy-in price offered to this seat now (AFTER phase), else 0."""
        g = self.game
        return g.after_price() if g.phase == Phase.AFTER else 0

    @property
    def sale(self) -> tuple[int, int] | None:
        """(seller, price) of the card sale offered to this seat, if any."""
        g = self.game
        if g.phase != Phase.SALE:
            return None
        return g.order[g.turn], g.sale[1]

    @property
    def chips(self) -> int:
        return self.game.chips[self.seat]

    @property
    def pot(self) -> int:
        return self.game.pot

    @property
    def live(self) -> int:
        """Live players in the current hand."""
        return self.game.n_alive


class DecisionPending(Exception):
    """Raised by a decider that has no answer yet (a person still choosing).

    A table node then sends nothing for that seat and asks again on its next
    ``receive`` or ``wake``; whoever holds the answer makes the node run again
    (``Driver.poke``). The referee, which plays at full speed, does not accept it.
    """


class Decider(Protocol):
    """What the drivers ask a seat's strategy. Every answer must be legal.

    A method may raise :class:`DecisionPending` when driven by a table node.
    """

    def turn(self, view: SeatView) -> Decision:
        """Keep, Swap (with a pick where allowed), AskRedeal or Sell."""
        ...

    def vote(self, view: SeatView) -> VoteChoice:
        """Answer a redeal request (DEPENDS only when ``view.can_depend``)."""
        ...

    def answer_sale(self, view: SeatView) -> bool:
        """Accept (True) or reject the card sale in ``view.sale``."""
        ...

    def cut(self, view: SeatView) -> int:
        """Förhand's cut point: 0 (no cut) .. stock size - 1."""
        ...

    def buyin(self, view: SeatView) -> bool:
        """Buy in at ``view.price`` (only if ``view.chips`` covers it)."""
        ...

    def observe(self, fact: Fact, view: SeatView) -> None:
        """Called after every public fact when the strategy's ``wants_facts`` is true."""
        ...
