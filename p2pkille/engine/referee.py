"""The referee: the full-information view.

It is the same :class:`~p2pkille.engine.machine.Game` as a peer's, plus an oracle
that knows the face of every token and produces the facts a table would reveal
(targets' answers, kille disclosures, stock cards, showdown faces); strategies
supply the decisions. Randomness is injected: ``rng`` is any object with
``random()`` returning a float in [0, 1) (``random.Random`` fits). The deal is a
Fisher-Yates shuffle done lazily: the dealt cards' faces are drawn the first time
anything needs one, stock cards one by one as they are drawn, so a hand pays only
for the cards it looks at. (``int(random() * k)`` for k <= 42 is uniform to within
2**-47, far below anything a simulation can see.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

from p2pkille.engine.cards import ANSWERING, DECK_SIZE, RANKS, Rank
from p2pkille.engine.errors import EngineError
from p2pkille.engine.facts import (
    Answer,
    BuyIn,
    Cut,
    Deal,
    Decline,
    Disclosure,
    Fact,
    SaleAnswer,
    Showdown,
    StockCard,
    Vote,
)
from p2pkille.engine.machine import Game, HandResult, Phase
from p2pkille.engine.view import Decider, SeatView

UNKNOWN: Final = -1
DEAL: Final = Deal()

# Plain ints: the game keeps its phase as an int for speed.
_ANSWER, _DISCLOSE, _STOCK, _SHOWDOWN = (
    int(Phase.ANSWER), int(Phase.DISCLOSE), int(Phase.STOCK), int(Phase.SHOWDOWN)
)
_TURN, _VOTE, _SALE, _CUT, _AFTER = (
    int(Phase.TURN), int(Phase.VOTE), int(Phase.SALE), int(Phase.CUT), int(Phase.AFTER)
)
_DEAL, _OVER = int(Phase.DEAL), int(Phase.OVER)


class Shuffler(Protocol):
    """Injected randomness for dealing (``random.Random`` fits)."""

    def random(self) -> float: ...


class FaceUnknown(EngineError):
    """The oracle was asked for a face it was not given (a replay's stock too short)."""

    def __init__(self, token: int, message: str) -> None:
        super().__init__(message)
        self.token = token


# Facts are immutable values: share one object per distinct value on the hot path.
_ANSWERS: dict[tuple[int, Rank | None], Answer] = {}
_DISCLOSURES: dict[tuple[int, bool], Disclosure] = {}
_STOCKS: dict[tuple[int, Rank], StockCard] = {}


def _answer(seat: int, shown: Rank | None) -> Answer:
    fact = _ANSWERS.get((seat, shown))
    if fact is None:
        fact = _ANSWERS[seat, shown] = Answer(seat, shown)
    return fact


def _disclosure(seat: int, kille: bool) -> Disclosure:
    fact = _DISCLOSURES.get((seat, kille))
    if fact is None:
        fact = _DISCLOSURES[seat, kille] = Disclosure(seat, kille)
    return fact


def _stock_card(seat: int, rank: Rank) -> StockCard:
    fact = _STOCKS.get((seat, rank))
    if fact is None:
        fact = _STOCKS[seat, rank] = StockCard(seat, rank)
    return fact


def _face(faces: Sequence[int], token: int) -> Rank:
    index = faces[token]
    if index < 0:
        raise FaceUnknown(token, f"the face of token {token} is not known")
    return RANKS[index >> 1]


def oracle_fact(game: Game, faces: Sequence[int]) -> Fact:
    """The fact the table reveals now, from ``faces`` (token -> card index, -1 unknown).

    Only for the phases the cards decide: ANSWER, DISCLOSE, STOCK, SHOWDOWN.
    """
    phase = game.phase
    if phase == _ANSWER:
        rank = _face(faces, game.hold[game.tgt])
        return _answer(game.order[game.tgt], rank if rank in ANSWERING else None)
    if phase == _DISCLOSE:
        # The requester's old card now lies with the target.
        rank = _face(faces, game.hold[game.tgt])
        return _disclosure(game.order[game.req], rank is Rank.KILLE)
    if phase == _STOCK:
        token = game.stock[game.draw_index]
        if faces[token] < 0:
            raise FaceUnknown(
                token,
                f"the stock is too short: the draw needs its card number {game.draw_index + 1}",
            )
        return _stock_card(game.order[game.req], _face(faces, token))
    if phase == _SHOWDOWN:
        alive = game.alive
        hold = game.hold
        return Showdown(tuple(_face(faces, hold[p]) for p in range(len(alive)) if alive[p]))
    raise EngineError(f"the cards decide nothing now ({game.describe()})")


class Referee:
    """Plays a game with every card known: strategies decide, the oracle reveals."""

    __slots__ = ("_producers", "_resolved", "deciders", "faces", "game", "observers", "rng",
                 "views")

    def __init__(self, game: Game, deciders: Sequence[Decider], rng: Shuffler) -> None:
        if len(deciders) != len(game.names):
            raise ValueError(f"need one decider per seat ({len(game.names)})")
        self.game = game
        self.deciders = list(deciders)
        self.rng = rng
        #: token -> card index (0..41); tokens below ``_resolved`` are dealt this hand.
        self.faces = list(range(DECK_SIZE))
        self._resolved = DECK_SIZE
        self.views = [SeatView(game, seat, self.face_of) for seat in range(len(game.names))]
        self.observers = [
            seat for seat, d in enumerate(self.deciders) if getattr(d, "wants_facts", False)
        ]
        # One producer per phase, so the hot loop indexes instead of testing phases.
        producers: dict[int, Callable[[], Fact]] = {
            _DEAL: lambda: DEAL,
            _TURN: self._turn,
            _VOTE: self._vote,
            _SALE: self._sale,
            _CUT: self._cut,
            _ANSWER: self._answer,
            _DISCLOSE: self._disclose,
            _STOCK: self._oracle,
            _SHOWDOWN: self._showdown,
            _AFTER: self._after,
            _OVER: self._nothing,
        }
        self._producers = [producers[phase] for phase in range(len(Phase))]

    def _resolve(self, token: int) -> None:
        i = self._resolved
        if token < i:
            return
        # Every dealt card is needed by the showdown anyway: fix them all at once.
        last = max(token, len(self.game.hold) - 1)
        faces = self.faces
        random = self.rng.random
        while i <= last:
            j = i + int(random() * (DECK_SIZE - i))
            faces[i], faces[j] = faces[j], faces[i]
            i += 1
        self._resolved = i

    def resolve_all(self) -> list[int]:
        """Fix every face of the current hand (for audits); returns ``faces``."""
        self._resolve(DECK_SIZE - 1)
        return self.faces

    def face_of(self, token: int) -> Rank:
        """The face of a token of the current hand."""
        if token >= self._resolved:
            self._resolve(token)
        return RANKS[self.faces[token] >> 1]

    def next_fact(self) -> Fact:
        """The next fact: a decision from the seat in turn, or what the cards reveal."""
        return self._producers[self.game.phase]()

    def _seat(self) -> int:
        seat = self.game.expect_seat
        assert seat is not None
        return seat

    def _turn(self) -> Fact:
        seat = self.game.expect_seat
        assert seat is not None
        return self.deciders[seat].turn(self.views[seat])

    def _vote(self) -> Fact:
        seat = self._seat()
        return Vote(seat, self.deciders[seat].vote(self.views[seat]))

    def _sale(self) -> Fact:
        seat = self._seat()
        return SaleAnswer(seat, self.deciders[seat].answer_sale(self.views[seat]))

    def _cut(self) -> Fact:
        seat = self._seat()
        return Cut(seat, self.deciders[seat].cut(self.views[seat]))

    def _after(self) -> Fact:
        seat = self._seat()
        return BuyIn(seat) if self.deciders[seat].buyin(self.views[seat]) else Decline(seat)

    def _answer(self) -> Fact:
        g = self.game
        token = g.hold[g.tgt]
        if token >= self._resolved:
            self._resolve(token)
        rank = RANKS[self.faces[token] >> 1]
        return _answer(g.order[g.tgt], rank if rank in ANSWERING else None)

    def _disclose(self) -> Fact:
        g = self.game
        token = g.hold[g.tgt]
        if token >= self._resolved:
            self._resolve(token)
        return _disclosure(g.order[g.req], self.faces[token] >> 1 == Rank.KILLE)

    def _oracle(self) -> Fact:
        g = self.game
        needed = g.stock[g.draw_index] if g.phase == _STOCK else max(g.hold)
        if needed >= self._resolved:
            self._resolve(needed)
        return oracle_fact(g, self.faces)

    def _showdown(self) -> Fact:
        g = self.game
        hold = g.hold
        top = max(hold)
        if top >= self._resolved:
            self._resolve(top)
        faces = self.faces
        alive = g.alive
        return Showdown(tuple([RANKS[faces[t] >> 1] for t, a in zip(hold, alive, strict=True)
                               if a]))

    def _nothing(self) -> Fact:
        raise EngineError(f"nothing to decide ({self.game.describe()})")

    def apply(self, fact: Fact) -> None:
        """Apply a fact; a Deal shuffles the deck first (the referee deals)."""
        if type(fact) is Deal:
            self._resolved = 0
        self.game.apply(fact)
        for seat in self.observers:
            self.deciders[seat].observe(fact, self.views[seat])

    def play_hand(self) -> HandResult | None:
        """Play from the deal to the next deal (after buy-ins) or the game's end."""
        g = self.game
        if g.phase == _OVER:
            return None
        self.apply(self.next_fact())
        producers = self._producers
        # Without observers nothing but the game needs each fact: skip a call layer.
        apply = self.apply if self.observers else g.apply
        phase = g.phase
        while phase != _DEAL and phase != _OVER:  # noqa: PLR1714 (hot loop)
            apply(producers[phase]())
            phase = g.phase
        return g.result

    def play(self, max_hands: int) -> int | None:
        """Play up to ``max_hands`` hands; the winner, or None if the game goes on."""
        for _ in range(max_hands):
            if self.play_hand() is None:
                break
        return self.game.winner
