"""Constructed situations: a game dealt from a chosen deck, driven through the engine's
public API (the oracle reveals the faces, real bots decide)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from p2pkille.engine.cards import COPIES, DECK_SIZE, RANKS, Rank
from p2pkille.engine.facts import (
    BuyIn,
    Cut,
    Deal,
    Decline,
    Fact,
    SaleAnswer,
    Vote,
)
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from p2pkille.engine.referee import oracle_fact
from p2pkille.engine.view import Decider, SeatView

_ORACLE = (int(Phase.ANSWER), int(Phase.DISCLOSE), int(Phase.STOCK), int(Phase.SHOWDOWN))


def stacked(dealt: Sequence[str], stock: Sequence[str] = ()) -> list[int]:
    """Faces (token -> card index): ``dealt`` in turn order from förhand, then ``stock``
    top first, then every other card."""
    used = [0] * len(RANKS)
    faces: list[int] = []
    for text in [*dealt, *stock]:
        rank = Rank.from_id(text)
        assert used[rank] < COPIES, f"a third {text}"
        faces.append(rank * COPIES + used[rank])
        used[rank] += 1
    faces += [i for i in range(DECK_SIZE) if i not in faces]
    return faces


class Table:
    """One hand from a stacked deck: ``seats`` names, ``dealer`` index, ``bots`` per seat."""

    def __init__(self, ruleset: str, seats: str, dealer: str, bots: Sequence[Decider],
                 dealt: Sequence[str], stock: Sequence[str] = ()) -> None:
        names = seats.split()
        self.game = Game(PRESETS[ruleset], names, stake=10, chips=100,
                         dealer=names.index(dealer), record_events=True)
        self.faces = stacked(dealt, stock)
        self.bots = list(bots)
        self.views = [SeatView(self.game, s, self.face) for s in range(len(names))]
        self.facts: list[Fact] = []
        self.apply(Deal())

    def face(self, token: int) -> Rank:
        return RANKS[self.faces[token] >> 1]

    def next_fact(self) -> Fact:
        g = self.game
        if g.phase in _ORACLE:
            return oracle_fact(g, self.faces)
        seat = g.expect_seat
        assert seat is not None, g.describe()
        bot, view = self.bots[seat], self.views[seat]
        if g.phase == Phase.TURN:
            return bot.turn(view)
        if g.phase == Phase.VOTE:
            return Vote(seat, bot.vote(view))
        if g.phase == Phase.SALE:
            return SaleAnswer(seat, bot.answer_sale(view))
        if g.phase == Phase.CUT:
            return Cut(seat, bot.cut(view))
        assert g.phase == Phase.AFTER, g.describe()
        return BuyIn(seat) if bot.buyin(view) else Decline(seat)

    def apply(self, fact: Fact) -> None:
        self.game.apply(fact)
        self.facts.append(fact)
        for seat, bot in enumerate(self.bots):
            if getattr(bot, "wants_facts", False):
                bot.observe(fact, self.views[seat])

    def play_until(self, done: Callable[[Game], bool]) -> None:
        while not done(self.game):
            self.apply(self.next_fact())

    def until_turn_of(self, name: str) -> SeatView:
        seat = self.game.names.index(name)
        self.play_until(lambda g: g.phase == Phase.TURN and g.expect_seat == seat)
        return self.views[seat]
