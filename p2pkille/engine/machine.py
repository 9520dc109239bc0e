"""The Byteskille state machine: one transition table, fed public facts.

:class:`Game` holds the whole table state as data. :meth:`Game.apply` looks the
pair ``(phase, type(fact))`` up in :data:`TRANSITIONS`; a missing pair is an
:class:`IllegalMoveError` naming the fact, the phase and whom the game waits for.
Each handler checks everything before it changes anything, so a rejected fact
leaves the state as it was.

The machine never sees a hidden face. Cards are *tokens*: token ``i < n`` is the
card dealt to the ``i``-th live player in turn order, the others lie in the stock
(top first). The machine moves tokens; faces come only from facts (a shown answer,
a kille disclosed as it changes hands, a stock card, the showdown). The referee
(:mod:`p2pkille.engine.referee`) knows every token's face and produces those facts;
a peer (:mod:`p2pkille.engine.peer`) receives them from outside. Both run this
same code, which is the point.

Positions: the hand's players are indexed by their place in turn order
(``0`` = förhand, last = the acting dealer). ``order[pos]`` is the seat playing that
position (a card sale changes it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, NoReturn, TypeAlias

from p2pkille.engine.cards import ANSWERING, DECK_SIZE, Rank
from p2pkille.engine.errors import IllegalMoveError, InvalidSetupError
from p2pkille.engine.events import (
    CALL_BETTER,
    CALL_DEPENDS,
    CALL_DRAW,
    CALL_HUSAR,
    CALL_KAVALL,
    CALL_KEEP,
    CALL_SVINHUGG,
    CALL_VARDSHUS,
    Event,
)
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decline,
    Disclosure,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Showdown,
    StockCard,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.options import (
    BuybackTiming,
    DealerRotation,
    HusuEffect,
    KukuEffect,
    Price,
    RedealRule,
    RuleOptions,
    StockKuku,
    StockPass,
    SwappedKille,
)
from p2pkille.engine.options import Showdown as ShowdownRule


class Phase(IntEnum):
    """What the game waits for. ``Game.phase`` holds the plain int for speed."""

    DEAL = 0  #: a Deal fact (a new hand)
    TURN = 1  #: the player in turn: Keep, Swap, AskRedeal or Sell
    VOTE = 2  #: a Vote on a redeal request
    SALE = 3  #: the offered buyer's SaleAnswer
    CUT = 4  #: förhand's Cut before the hand's first draw
    ANSWER = 5  #: the target's Answer
    DISCLOSE = 6  #: the requester's Disclosure after an exchange
    STOCK = 7  #: the StockCard the drawer turned up
    SHOWDOWN = 8  #: the live players' faces
    AFTER = 9  #: a BuyIn or Decline from a seat that may buy in
    OVER = 10  #: the game is over; nothing is accepted


_DEAL, _TURN, _VOTE, _SALE, _CUT, _ANSWER, _DISCLOSE, _STOCK, _SHOWDOWN, _AFTER, _OVER = range(11)

#: What each phase waits for, for messages.
_WANTS: Final = {
    _DEAL: "the deal",
    _TURN: "keep or swap",
    _VOTE: "a redeal vote",
    _SALE: "an answer to the card sale",
    _CUT: "förhand's cut",
    _ANSWER: "the target's answer",
    _DISCLOSE: "the requester's kille disclosure",
    _STOCK: "the stock card",
    _SHOWDOWN: "the showdown faces",
    _AFTER: "buy in or decline",
    _OVER: "nothing (the game is over)",
}

_KILLE, _KUKU, _HUSAR, _HUSU = Rank.KILLE, Rank.KUKU, Rank.HUSAR, Rank.HUSU
_PASSERS: Final = frozenset({Rank.KAVALL, Rank.VARDSHUS})
_NOT_PLAIN: Final = ANSWERING  # a plain answer claims the card is none of these
_NOT_KILLE: Final = frozenset({Rank.KILLE})

#: An undo record: (kind, a, b, token_a, token_b, via_a, via_b, as_target_a, as_target_b,
#: chain_a, chain_b) with the state of positions a and b before an exchange (kind 0),
#: or before a draw by position a that took token_b from the stock (kind 1, b = -1).
_Rec: TypeAlias = tuple[Any, ...]
_EXCHANGE, _DRAW = 0, 1
#: Buy-in kinds in the after queue.
_REGULAR, _TWO_LEFT = 0, 1


@dataclass(frozen=True, slots=True)
class Expect:
    """What the game waits for next: a phase and, where one seat must act, that seat."""

    phase: Phase
    seat: int | None


@dataclass(frozen=True, slots=True)
class Claim:
    """What a fact says about a hidden card: token ``token`` is ``rank`` (when set), or
    is none of ``excluded``. ``seat`` made the claim; ``index`` is the fact's number
    (0-based, in the game)."""

    index: int
    seat: int
    token: int
    rank: Rank | None
    excluded: frozenset[Rank]
    fact: Fact

    def holds(self, face: Rank) -> bool:
        if self.rank is not None:
            return face == self.rank
        return face not in self.excluded


@dataclass(frozen=True, slots=True)
class HandResult:
    """How one hand ended. ``dealt`` lists the seats dealt a card, in turn order;
    ``held`` the token each of them held at the end (the same order)."""

    number: int
    dealer: int
    forhand: int
    dealt: tuple[int, ...]
    held: tuple[int, ...]
    died: tuple[int, ...]
    redealt: bool
    sold_out: bool


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """A copy of a :class:`Game`'s mutable state (opaque; see :meth:`Game.snapshot`)."""

    state: dict[str, Any]


class Game:
    """One game of Byteskille, from the stakes to the winner, as a state machine.

    ``seats`` are the players' names, clockwise; ``dealer`` indexes the first dealer.
    Every seat pays ``stake`` into the pot at once. Feed facts with :meth:`apply`;
    :attr:`expecting` says what comes next.

    Public state (read it, never write it; only facts change the game): ``chips``,
    ``pot``, ``in_game``, ``buybacks``, ``buybacks_closed`` (regular buy-backs have
    ended for good: once the game has had ``options.buybacks_close_at`` players or
    fewer), ``sold`` (per seat: it sold its card and may never buy back), ``dealer``,
    ``winner``, ``hand_no``, ``phase`` (a :class:`Phase` value) and ``expect_seat``; for
    the current hand ``order`` (seat per position), ``dealt``, ``forhand``, ``hold``
    (token per position), ``alive``, ``via_swap`` (the card came by a swap),
    ``as_target`` (got it as a target), ``stock`` (tokens, top first), ``turn``,
    ``req``/``tgt`` (requester and target positions of the pending offer),
    ``draw_index``, ``n_alive``, ``n_in``, ``redeal_refused`` (a redeal request was
    refused: no other in this hand); and ``result`` (:class:`HandResult`) once a hand
    has ended.
    """

    __slots__ = (
        "after",
        "after_i",
        "alive",
        "as_target",
        "aside",
        "buybacks",
        "buybacks_closed",
        "chain",
        "chips",
        "claims",
        "cut_done",
        "dealer",
        "dealt",
        "died",
        "discard",
        "draw_index",
        "events",
        "expect_seat",
        "expelled",
        "fact_count",
        "forhand",
        "hand_no",
        "hold",
        "in_game",
        "kille_to_req",
        "log",
        "n_alive",
        "n_in",
        "names",
        "options",
        "order",
        "phase",
        "pick",
        "pot",
        "pre_done",
        "redeal_ok",
        "redeal_refused",
        "req",
        "result",
        "sale",
        "sold",
        "stake",
        "started",
        "stock",
        "tgt",
        "turn",
        "via_swap",
        "voters",
        "votes_in",
        "winner",
    )

    def __init__(  # noqa: PLR0915  the game's whole state, declared in one place
        self,
        options: RuleOptions,
        seats: Sequence[str],
        *,
        stake: int,
        chips: int | Sequence[int],
        dealer: int = 0,
        record_events: bool = False,
        record_claims: bool = False,
    ) -> None:
        names = tuple(seats)
        n = len(names)
        if not options.min_players <= n <= options.max_players:
            raise InvalidSetupError(
                f"{n} seats: this ruleset plays with {options.min_players}.."
                f"{options.max_players} players"
            )
        if not all(isinstance(name, str) and name for name in names) or len(set(names)) != n:
            raise InvalidSetupError(f"seat names must be distinct non-empty strings: {names!r}")
        if type(stake) is not int or stake < 1:
            raise InvalidSetupError(f"stake must be a whole number >= 1, got {stake!r}")
        start = [chips] * n if isinstance(chips, int) else list(chips)
        if len(start) != n or not all(type(c) is int and c >= stake for c in start):
            raise InvalidSetupError(
                f"every seat needs whole chips >= the stake {stake}, got {chips!r}"
            )
        if type(dealer) is not int or not 0 <= dealer < n:
            raise InvalidSetupError(f"dealer must be a seat index 0..{n - 1}, got {dealer!r}")
        self.options: Final = options
        self.names: Final = names
        self.stake: Final = stake
        # Everyone pays the base stake once, when the game starts (rulings: the pot).
        self.chips = [c - stake for c in start]
        self.pot = stake * n
        self.started: Final = tuple(start)
        self.in_game = [True] * n
        self.n_in = n
        self.buybacks = [0] * n
        self.expelled = [False] * n  # removed for a fault: never back (sale, buy-back)
        self.sold = [False] * n  # sold its card: never a buy-back
        self.buybacks_closed = False
        _note_count(self)
        self.dealer = dealer
        self.winner: int | None = None
        self.hand_no = 0
        self.events: list[Event] | None = [] if record_events else None
        self.claims: list[Claim] | None = [] if record_claims else None
        #: Facts applied so far, counted only where claims are recorded (the peer view).
        self.fact_count = 0
        self.result: HandResult | None = None
        self.phase = _DEAL
        self.expect_seat: int | None = None
        # Hand state; _deal sets these for real.
        self.order: list[int] = []
        self.dealt: tuple[int, ...] = ()
        self.forhand = 0
        self.hold: list[int] = []
        self.alive: list[bool] = []
        self.via_swap: list[bool] = []
        self.as_target: list[bool] = []
        self.chain: list[tuple[_Rec, ...]] = []
        self.stock: list[int] = []
        self.aside: list[int] = []
        self.discard: list[int] = []
        self.log: list[_Rec] = []
        self.n_alive = 0
        self.turn = 0
        self.req = 0
        self.tgt = 0
        self.pick = 1
        self.draw_index = 0
        self.cut_done = False
        self.pre_done = False
        self.redeal_ok = False
        self.redeal_refused = False
        self.kille_to_req = False
        self.voters: list[int] = []
        self.votes_in = 0
        self.sale: tuple[int, int] = (0, 0)
        self.died: list[int] = []
        self.after: list[tuple[int, int]] = []
        self.after_i = 0

    # ----------------------------------------------------------------- queries

    @property
    def expecting(self) -> Expect:
        """What the game waits for next."""
        return Expect(Phase(self.phase), self.expect_seat)

    @property
    def over(self) -> bool:
        return self.phase == _OVER

    def position_of(self, seat: int) -> int | None:
        """The position ``seat`` plays in the current hand, if any."""
        try:
            return self.order.index(seat)
        except ValueError:
            return None

    def token_of(self, seat: int) -> int | None:
        """The token ``seat`` holds in the current hand, if it plays in it."""
        pos = self.position_of(seat)
        return None if pos is None else self.hold[pos]

    def is_drawer(self, pos: int) -> bool:
        """Whether an offer from ``pos`` goes to the stock (no live player after it)."""
        alive = self.alive
        return not any(alive[pos + 1 :])

    def can_ask_redeal(self) -> bool:
        return self.phase == _TURN and self.redeal_ok and not self.pre_done and (
            not self.redeal_refused and self.n_alive == len(self.order)
        )

    def may_buy_back(self, seat: int) -> bool:
        """Whether ``seat``, out of the game, may ever buy back in (regular or two-left):
        not if it was expelled or sold its card."""
        return not self.expelled[seat] and not self.sold[seat]

    def sale_buyers(self) -> list[int]:
        """Seats the player in turn may offer its card to now."""
        if self.phase != _TURN or not self.options.card_selling or self.pre_done:
            return []
        seller = self.order[self.turn]
        buyers = [s for s in range(len(self.names))
                  if not self.in_game[s] and not self.expelled[s]]
        if self.n_in == 2:
            buyers += [
                self.order[p]
                for p in range(len(self.order))
                if self.alive[p] and self.order[p] != seller
            ]
        return sorted(buyers)

    def after_price(self) -> int:
        """The price for the seat asked to buy in now (AFTER phase)."""
        seat, kind = self.after[self.after_i]
        if kind == _TWO_LEFT:
            return Price.TWICE_POT.amount(self.stake, self.pot)
        prices = self.options.buyback_prices
        return prices[min(self.buybacks[seat], len(prices) - 1)].amount(self.stake, self.pot)

    def tokens_in_play(self) -> list[int]:
        """Every token of the current hand, wherever it lies (conservation checks)."""
        return [*self.hold, *self.stock, *self.aside, *self.discard]

    def describe(self) -> str:
        """The state in words, for messages: hand, phase and whom the game waits for."""
        who = "" if self.expect_seat is None else f" from {self.names[self.expect_seat]}"
        return (
            f"hand {self.hand_no}, phase {Phase(self.phase).name.lower()}: "
            f"waiting for {_WANTS[self.phase]}{who}"
        )

    def _illegal(self, fact: Fact, reason: str) -> IllegalMoveError:
        text = _fact_text(fact, self.names)
        return IllegalMoveError(f"{text} rejected: {reason} ({self.describe()})")

    # ----------------------------------------------------------------- runtime support

    def snapshot(self) -> GameSnapshot:
        """The whole mutable state, copied: :meth:`restore` brings it back (a voided
        hand returns chips, pot and buy-backs to what they were before its deal)."""
        return GameSnapshot({name: copy.deepcopy(getattr(self, name))
                             for name in _MUTABLE})

    def restore(self, snapshot: GameSnapshot) -> None:
        for name, value in snapshot.state.items():
            setattr(self, name, copy.deepcopy(value))

    def expel(self, seat: int) -> None:
        """Remove ``seat`` from the game between hands (a proven cheater or a seat that
        timed out): no buy-back, its stakes already in the pot stay there. The last
        seat left wins the pot."""
        if self.phase != _DEAL:
            raise InvalidSetupError(f"expel {seat}: only between hands ({self.describe()})")
        if type(seat) is not int or not 0 <= seat < len(self.names):
            raise InvalidSetupError(f"expel: no seat {seat!r}")
        self.expelled[seat] = True
        if not self.in_game[seat]:
            return
        self.in_game[seat] = False
        self.n_in -= 1
        _note_count(self)
        if self.events is not None:
            self.events.append(Event("expel", seat=seat))
        if self.n_in == 1:
            _finish_game(self, self.in_game.index(True))
        elif self.n_in == 0:
            self.phase = _OVER
            self.expect_seat = None

    # ----------------------------------------------------------------- input

    def apply(self, fact: Fact) -> None:
        """Apply one public fact, or raise :class:`IllegalMoveError` leaving the state as is."""
        handler = _BY_PHASE[self.phase].get(type(fact))
        if handler is None:
            raise self._illegal(fact, "not expected now")
        handler(self, fact)

    # ----------------------------------------------------------------- helpers

    def _emit(self, event: Event) -> None:
        if self.events is not None:
            self.events.append(event)

    def _claim(self, seat: int, token: int, rank: Rank | None,
               excluded: frozenset[Rank], fact: Fact) -> None:
        if self.claims is not None:
            self.claims.append(Claim(self.fact_count, seat, token, rank, excluded, fact))


_FIXED: Final = frozenset({"options", "names", "stake", "started"})
_MUTABLE: Final = tuple(name for name in Game.__slots__ if name not in _FIXED)


def _fact_text(fact: Fact, names: Sequence[str]) -> str:
    seat = getattr(fact, "seat", None)
    who = f" by {names[seat]}" if isinstance(seat, int) and 0 <= seat < len(names) else ""
    return f"{fact!r}{who}"


def _out_of_turn(g: Game, fact: Fact, seat: int) -> NoReturn:
    want = "nobody" if g.expect_seat is None else g.names[g.expect_seat]
    name = g.names[seat] if 0 <= seat < len(g.names) else f"seat {seat}"
    raise g._illegal(fact, f"out of turn: {name} may not act now, {want} is expected")


# --------------------------------------------------------------------- the deal


def _h_deal(g: Game, fact: Deal) -> None:
    n_seats = len(g.names)
    order = [
        s for s in ((g.dealer + k) % n_seats for k in range(1, n_seats + 1)) if g.in_game[s]
    ]
    n = len(order)
    g.hand_no += 1
    g.order = order
    g.dealt = tuple(order)
    g.forhand = order[0]
    g.hold = list(range(n))
    g.stock = list(range(n, DECK_SIZE))
    g.aside = []
    g.discard = []
    g.log = []
    g.alive = [True] * n
    g.n_alive = n
    g.via_swap = [False] * n
    g.as_target = [False] * n
    g.chain = [()] * n
    g.died = []
    g.turn = 0
    g.cut_done = not g.options.forhand_cuts
    g.pre_done = False
    opts = g.options
    g.redeal_ok = opts.redeal is not RedealRule.NONE and n == opts.redeal_players
    g.redeal_refused = False
    g.result = None
    g.phase = _TURN
    g.expect_seat = order[0]
    if g.events is not None:
        g.events.append(Event("deal", seat=g.dealer, other=order[0], amount=g.hand_no))


# --------------------------------------------------------------------- turns


def _advance(g: Game) -> None:
    """The turn passes to the next live player after the one in turn, or to the showdown."""
    alive = g.alive
    t = g.turn + 1
    n = len(alive)
    while t < n and not alive[t]:
        t += 1
    if t >= n:
        _to_showdown(g)
        return
    g.turn = t
    g.pre_done = False
    g.phase = _TURN
    g.expect_seat = g.order[t]


def _to_showdown(g: Game) -> None:
    g.phase = _SHOWDOWN
    g.expect_seat = None


def _h_keep(g: Game, fact: Keep) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    if g.events is not None:
        g.events.append(Event("keep", seat=fact.seat, call=CALL_KEEP))
    _advance(g)


def _h_swap(g: Game, fact: Swap) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    pick = fact.pick
    max_pick = g.options.max_pick
    if pick is not None and pick > max_pick:
        if max_pick == 1:
            raise g._illegal(fact, "this ruleset has no picking: the drawer takes the top card")
        raise g._illegal(fact, f"the drawer may pick the 1st..{max_pick}th card only")
    pos = g.turn
    g.req = pos
    g.pick = pick or 1
    alive = g.alive
    n = len(alive)
    t = pos + 1
    while t < n and not alive[t]:
        t += 1
    if t >= n:
        if g.events is not None:
            g.events.append(Event("draw", seat=fact.seat, call=CALL_DRAW))
        _begin_draw(g)
        return
    g.tgt = t
    g.phase = _ANSWER
    g.expect_seat = g.order[t]
    if g.events is not None:
        g.events.append(Event("offer", seat=fact.seat, other=g.order[t]))


def _exchange(g: Game, a: int, b: int) -> None:
    """Position ``a`` (requester) and ``b`` (target) exchange cards face down."""
    hold, via, at, chain = g.hold, g.via_swap, g.as_target, g.chain
    rec = (_EXCHANGE, a, b, hold[a], hold[b], via[a], via[b], at[a], at[b], chain[a], chain[b])
    hold[a], hold[b] = hold[b], hold[a]
    # The card moves on along its svinhugg chain when its holder got it as a target.
    chain[b] = (*chain[a], rec) if at[a] else (rec,)
    chain[a] = ()
    at[a] = False
    at[b] = True
    via[a] = via[b] = True
    g.log.append(rec)


def _undo(g: Game, rec: _Rec) -> None:
    kind, a, b, ta, tb, va, vb, aa, ab, ca, cb = rec
    g.hold[a] = ta
    g.via_swap[a] = va
    g.as_target[a] = aa
    g.chain[a] = ca
    if kind == _EXCHANGE:
        g.hold[b] = tb
        g.via_swap[b] = vb
        g.as_target[b] = ab
        g.chain[b] = cb
    else:
        # The drawer gets its old card back; the taken stock card is put aside.
        g.discard.remove(ta)
        g.aside.append(tb)


def _revert_all(g: Game) -> None:
    log = g.log
    count = len(log)
    for rec in reversed(log):
        _undo(g, rec)
    log.clear()
    if g.events is not None:
        g.events.append(Event("revert", amount=count))


def _svinhugg(g: Game, pos: int) -> None:
    """Husu met the card offered from ``pos``: undo its chain, kill the chain's originator."""
    if not g.as_target[pos]:
        _kill(g, (pos,), "svinhugg")
        return
    chain = g.chain[pos]
    for rec in reversed(chain):
        _undo(g, rec)
    undone = {id(rec) for rec in chain}
    g.log = [rec for rec in g.log if id(rec) not in undone]
    if g.events is not None:
        g.events.append(Event("revert", amount=len(chain)))
    _kill(g, (chain[0][1],), "svinhugg")


def _kill(g: Game, positions: Sequence[int], cause: str) -> None:
    """Kill these positions together, unless that would leave nobody alive."""
    alive = g.alive
    victims = [p for p in dict.fromkeys(positions) if alive[p]]
    if not victims:
        return
    if len(victims) >= g.n_alive:
        if g.events is not None:
            for p in victims:
                g.events.append(Event("spared", seat=g.order[p], cause=cause))
        return
    for p in victims:
        alive[p] = False
        g.died.append(g.order[p])
        if g.events is not None:
            g.events.append(Event("died", seat=g.order[p], cause=cause))
    g.n_alive -= len(victims)


# One branch per answer card, each its own rule.
def _h_answer(g: Game, fact: Answer) -> None:  # noqa: PLR0912, PLR0915
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    shown = fact.shown
    req, tgt = g.req, g.tgt
    ev = g.events
    if g.claims is not None:
        g._claim(fact.seat, g.hold[tgt], shown, _NOT_PLAIN, fact)
    if shown is None:
        _exchange(g, req, tgt)
        g.kille_to_req = False
        g.phase = _DISCLOSE
        g.expect_seat = g.order[req]
        if ev is not None:
            ev.append(Event("exchange", seat=g.order[req], other=fact.seat))
        return
    if shown is _KILLE:
        if ev is not None:
            ev.append(Event("exchange", seat=g.order[req], other=fact.seat))
            ev.append(Event("kille_moves", seat=fact.seat, other=g.order[req], rank=_KILLE))
        _exchange(g, req, tgt)
        g.kille_to_req = True
        g.phase = _DISCLOSE
        g.expect_seat = g.order[req]
        return
    opts = g.options
    if shown is _KUKU:
        if ev is not None:
            ev.append(Event("kuku", seat=fact.seat, other=g.order[req], rank=_KUKU,
                            call=opts.kuku_call))
        if opts.kuku is KukuEffect.REVERT_ALL:
            _revert_all(g)
        _to_showdown(g)
        return
    if shown is _HUSAR:
        if ev is not None:
            ev.append(Event("husar", seat=fact.seat, other=g.order[req], rank=_HUSAR,
                            call=CALL_HUSAR))
        _kill(g, (req,), "husar")
        _advance(g)
        return
    if shown is _HUSU:
        if ev is not None:
            ev.append(Event("svinhugg", seat=fact.seat, other=g.order[req], rank=_HUSU,
                            call=CALL_SVINHUGG))
        if opts.husu is HusuEffect.SVINHUGG:
            _svinhugg(g, req)
        else:
            _kill(g, (req,), "husu")
        _advance(g)
        return
    # kavall or vardshus: "förbi", the offer passes to the next live player or the stock.
    if ev is not None:
        call = CALL_KAVALL if shown is Rank.KAVALL else CALL_VARDSHUS
        ev.append(Event("pass", seat=fact.seat, rank=shown, call=call))
    alive = g.alive
    n = len(alive)
    t = tgt + 1
    while t < n and not alive[t]:
        t += 1
    if t >= n:
        if ev is not None:
            ev.append(Event("draw", seat=g.order[req], call=CALL_DRAW))
        _begin_draw(g)
        return
    g.tgt = t
    g.expect_seat = g.order[t]


def _h_disclose(g: Game, fact: Disclosure) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    req, tgt = g.req, g.tgt
    if g.claims is not None:
        g._claim(fact.seat, g.hold[tgt], _KILLE if fact.kille else None, _NOT_KILLE, fact)
    if fact.kille and g.events is not None:
        g.events.append(Event("kille_moves", seat=fact.seat, other=g.order[tgt], rank=_KILLE))
    if g.options.swapped_kille is SwappedKille.DIES:
        victims = [req] if g.kille_to_req else []
        if fact.kille:
            victims.append(tgt)
        if victims:
            _kill(g, victims, "kille")
    _advance(g)


# --------------------------------------------------------------------- the stock


def _begin_draw(g: Game) -> None:
    if not g.cut_done:
        g.phase = _CUT
        g.expect_seat = g.order[0]
        return
    g.draw_index = g.pick - 1
    _next_stock(g)


def _next_stock(g: Game) -> None:
    if g.draw_index >= len(g.stock):
        # The stock ran out during the draw: no exchange (rulings, "The dealer's draw").
        if g.events is not None:
            g.events.append(Event("stock_empty", seat=g.order[g.req]))
        _advance(g)
        return
    g.phase = _STOCK
    g.expect_seat = g.order[g.req]


def _h_cut(g: Game, fact: Cut) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    stock = g.stock
    if fact.at and fact.at >= len(stock):
        raise g._illegal(fact, f"the stock has {len(stock)} cards: cut at 0..{len(stock) - 1}")
    if fact.at:
        g.stock = stock[fact.at :] + stock[: fact.at]
    g.cut_done = True
    if g.events is not None:
        g.events.append(Event("cut", seat=fact.seat, amount=fact.at))
    g.draw_index = g.pick - 1
    _next_stock(g)


# One branch per stock card, each its own rule.
def _h_stock(g: Game, fact: StockCard) -> None:  # noqa: PLR0912, PLR0915
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    rank = fact.rank
    index = g.draw_index
    token = g.stock.pop(index)
    req = g.req
    opts = g.options
    ev = g.events
    if g.claims is not None:
        g._claim(fact.seat, token, rank, frozenset(), fact)
    if ev is not None:
        ev.append(Event("stock_card", seat=fact.seat, rank=rank, amount=index + 1))
    if rank in _PASSERS:
        g.aside.append(token)
        if opts.stock_pass is StockPass.DRAW_NEXT:
            if ev is not None:
                call = CALL_KAVALL if rank is Rank.KAVALL else CALL_VARDSHUS
                ev.append(Event("pass", rank=rank, call=call))
            _next_stock(g)
            return
        _advance(g)
        return
    if rank is _KUKU:
        g.aside.append(token)
        if opts.stock_kuku is StockKuku.REVERT_ALL:
            if ev is not None:
                ev.append(Event("kuku", rank=_KUKU, other=fact.seat, call=opts.kuku_call))
            _revert_all(g)
            _to_showdown(g)
            return
        _advance(g)
        return
    if rank is _HUSAR:
        g.aside.append(token)
        if ev is not None:
            ev.append(Event("husar", rank=_HUSAR, other=fact.seat, call=CALL_HUSAR))
        _kill(g, (req,), "husar")
        _advance(g)
        return
    if rank is _HUSU:
        g.aside.append(token)
        if ev is not None:
            ev.append(Event("svinhugg", rank=_HUSU, other=fact.seat, call=CALL_SVINHUGG))
        if opts.husu is HusuEffect.SVINHUGG:
            _svinhugg(g, req)
        else:
            _kill(g, (req,), "husu")
        _advance(g)
        return
    # Taken: the old card leaves play face down; a kille from the stock is the highest card.
    old = g.hold[req]
    g.log.append((_DRAW, req, -1, old, token, g.via_swap[req], False, g.as_target[req],
                  False, g.chain[req], ()))
    g.discard.append(old)
    g.hold[req] = token
    g.via_swap[req] = False
    g.as_target[req] = False
    g.chain[req] = ()
    if ev is not None:
        ev.append(Event("take", seat=fact.seat, rank=rank))
    _advance(g)


# --------------------------------------------------------------------- showdown


def _h_showdown(g: Game, fact: Showdown) -> None:
    alive = g.alive
    live = [p for p in range(len(alive)) if alive[p]]
    ranks = fact.ranks
    if len(ranks) != len(live):
        raise g._illegal(fact, f"{len(live)} live players must show, got {len(ranks)} faces")
    via = g.via_swap
    order = g.order
    if g.claims is not None:
        for p, r in zip(live, ranks, strict=True):
            g._claim(order[p], g.hold[p], r, frozenset(), fact)
    # A kille got by a swap is lower than blaren.
    values = [-1 if r is _KILLE and via[p] else int(r) for p, r in zip(live, ranks, strict=True)]
    rule = g.options.showdown
    threshold: int | None
    if rule is ShowdownRule.LOWEST:
        threshold = min(values)
    else:
        killers = 0
        for p, r in zip(live, ranks, strict=True):
            if r is _HUSU or r is _HUSAR or (r is _KILLE and not via[p]) or (
                r is _KUKU and rule is ShowdownRule.KILLING_CARDS_KUKU
            ):
                killers += 1
        if killers == 0:
            threshold = None
        elif killers == 1 or len(values) == 1:
            threshold = min(values)
        else:
            threshold = sorted(values)[1]
    if g.events is not None:
        g.events.append(Event("showdown", call=g.options.showdown_call,
                              seats=tuple(order[p] for p in live), ranks=ranks))
    if threshold is not None and len(live) > 1:
        _kill(g, [p for p, v in zip(live, values, strict=True) if v <= threshold], "showdown")
    _end_hand(g)


# --------------------------------------------------------------------- between hands


def _record(g: Game, *, redealt: bool = False, sold_out: bool = False) -> None:
    g.result = HandResult(
        number=g.hand_no,
        dealer=g.dealer,
        forhand=g.forhand,
        dealt=g.dealt,
        held=tuple(g.hold),
        died=tuple(sorted(set(g.died))),
        redealt=redealt,
        sold_out=sold_out,
    )


def _note_count(g: Game) -> None:
    """Buy-backs end for good once the game is down to ``buybacks_close_at`` players or
    fewer; a later two-left buy-in does not reopen them (B "ingen mer chans", R)."""
    if g.n_in <= g.options.buybacks_close_at:
        g.buybacks_closed = True


def _end_hand(g: Game) -> None:
    _record(g)
    in_game = g.in_game
    for seat in set(g.died):
        in_game[seat] = False
    g.n_in = sum(in_game)
    _note_count(g)
    opts = g.options
    n_seats = len(g.names)
    ring = [(g.forhand + k) % n_seats for k in range(n_seats)]
    queue: list[tuple[int, int]] = []
    if opts.two_left_buyin and g.n_in == 2 and g.died:
        # The hand's deaths brought the count down to two (B "om det är t ex fyra kvar som
        # spelar och två av dessa blir utslagna"); a hand that began with two offers nothing.
        queue = [(s, _TWO_LEFT) for s in ring if not in_game[s] and g.may_buy_back(s)]
    elif not g.buybacks_closed:
        limit = opts.buyback_limit
        if opts.buyback_timing is BuybackTiming.IMMEDIATE:
            candidates = set(g.died)
        else:
            candidates = {s for s in ring if not in_game[s]}
        queue = [
            (s, _REGULAR)
            for s in ring
            if s in candidates and g.may_buy_back(s)
            and (limit is None or g.buybacks[s] < limit)
        ]
    g.after = queue
    g.after_i = 0
    _next_after(g)


def _next_after(g: Game) -> None:
    if g.after_i < len(g.after):
        g.phase = _AFTER
        g.expect_seat = g.after[g.after_i][0]
        return
    if g.n_in == 1:
        _finish_game(g, g.in_game.index(True))
        return
    if g.options.dealer_rotation is DealerRotation.FORHAND:
        g.dealer = g.forhand
    else:
        g.dealer = (g.dealer + 1) % len(g.names)
    g.phase = _DEAL
    g.expect_seat = None


def _finish_game(g: Game, winner: int) -> None:
    # The last player standing takes the whole pot.
    g.winner = winner
    if g.events is not None:
        g.events.append(Event("winner", seat=winner, amount=g.pot))
    g.chips[winner] += g.pot
    g.pot = 0
    g.phase = _OVER
    g.expect_seat = None


def _h_buyin(g: Game, fact: BuyIn) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    price = g.after_price()
    seat = fact.seat
    if g.chips[seat] < price:
        raise g._illegal(fact, f"{g.names[seat]} cannot pay {price} (has {g.chips[seat]})")
    g.chips[seat] -= price
    g.pot += price
    g.in_game[seat] = True
    g.n_in += 1
    if g.after[g.after_i][1] == _REGULAR:
        g.buybacks[seat] += 1
    if g.events is not None:
        g.events.append(Event("buyin", seat=seat, amount=price))
    g.after_i += 1
    _next_after(g)


def _h_decline(g: Game, fact: Decline) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    if g.events is not None:
        g.events.append(Event("decline", seat=fact.seat))
    g.after_i += 1
    _next_after(g)


# --------------------------------------------------------------------- redeals and sales


def _h_ask_redeal(g: Game, fact: AskRedeal) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    if not g.can_ask_redeal():
        if g.options.redeal is RedealRule.NONE:
            reason = "this ruleset has no redeals"
        elif g.pre_done:
            reason = "a refused request or sale this turn: keep or swap now"
        elif g.redeal_refused:
            reason = "a redeal was refused earlier in this hand: one redeal request per hand"
        else:
            reason = f"redeals need exactly {g.options.redeal_players} live players"
        raise g._illegal(fact, reason)
    n = len(g.order)
    t = g.turn
    if g.options.redeal is RedealRule.FRAGE_KILLE:
        first = n - 1 if t != n - 1 else 0
        third = next(p for p in range(n) if p not in (t, first))
        g.voters = [first, third]
    else:
        g.voters = [(t + 1) % n, (t + 2) % n]
    g.votes_in = 0
    g.phase = _VOTE
    g.expect_seat = g.order[g.voters[0]]
    if g.events is not None:
        g.events.append(Event("redeal_asked", seat=fact.seat, call=CALL_BETTER))


def _h_vote(g: Game, fact: Vote) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    choice = fact.choice
    if choice is VoteChoice.DEPENDS and not (
        g.options.redeal is RedealRule.FRAGE_KILLE and g.votes_in == 0
    ):
        raise g._illegal(fact, "only the first voter of Fråge-Kille may say it depends")
    if g.events is not None:
        call = CALL_DEPENDS if choice is VoteChoice.DEPENDS else None
        g.events.append(Event("redeal_vote", seat=fact.seat, other=g.order[g.turn],
                              cause=choice.value, call=call))
    if choice is VoteChoice.REFUSE:
        # One request per hand: an ordinary swap round and the showdown follow (B "då
        # blir det i stället en sedvanlig bytesrunda och efter den är det 'upp till bevis'").
        g.pre_done = True
        g.redeal_refused = True
        g.phase = _TURN
        g.expect_seat = g.order[g.turn]
        if g.events is not None:
            g.events.append(Event("redeal_refused", seat=g.order[g.turn]))
        return
    g.votes_in += 1
    if g.votes_in < len(g.voters):
        g.expect_seat = g.order[g.voters[g.votes_in]]
        return
    # Everyone accepted: nobody dies, no chips move, the same dealer deals again.
    if g.events is not None:
        g.events.append(Event("redeal", seat=g.dealer))
    g.died = []
    _record(g, redealt=True)
    g.phase = _DEAL
    g.expect_seat = None


def _h_sell(g: Game, fact: Sell) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    if not g.options.card_selling:
        raise g._illegal(fact, "this ruleset has no card sales")
    if g.pre_done:
        raise g._illegal(fact, "a refused request or sale this turn: keep or swap now")
    if fact.buyer not in g.sale_buyers():
        raise g._illegal(
            fact,
            "the buyer must be out of the game (or, with two left, the other player)",
        )
    g.sale = (fact.buyer, fact.price)
    g.phase = _SALE
    g.expect_seat = fact.buyer
    if g.events is not None:
        g.events.append(Event("sell", seat=fact.seat, other=fact.buyer, amount=fact.price))


def _h_sale_answer(g: Game, fact: SaleAnswer) -> None:
    if fact.seat != g.expect_seat:
        _out_of_turn(g, fact, fact.seat)
    buyer, price = g.sale
    seller = g.order[g.turn]
    if not fact.accept:
        g.pre_done = True
        g.phase = _TURN
        g.expect_seat = seller
        if g.events is not None:
            g.events.append(Event("sale_rejected", seat=seller, other=buyer))
        return
    if g.chips[buyer] < price:
        raise g._illegal(fact, f"{g.names[buyer]} cannot pay {price} (has {g.chips[buyer]})")
    g.chips[buyer] -= price
    g.chips[seller] += price
    if g.events is not None:
        g.events.append(Event("sale_accepted", seat=seller, other=buyer, amount=price))
    # The seller leaves the game without dying: it uses no buy-back and may never buy
    # back in (R "Pot, buy-backs and the end", card sale). Like any seat out of the game
    # it may still be offered a card (E "sälja sitt kort till någon utslagen").
    g.in_game[seller] = False
    g.sold[seller] = True
    if g.in_game[buyer]:
        # With two left a sale ends the game: the buyer wins.
        g.n_in = 1
        _record(g, sold_out=True)
        _finish_game(g, buyer)
        return
    g.in_game[buyer] = True
    g.order[g.turn] = buyer
    g.pre_done = True
    g.phase = _TURN
    g.expect_seat = buyer


Handler: TypeAlias = Callable[[Game, Any], None]

#: The one transition table: (phase, fact type) -> handler. Docs can be generated from it.
TRANSITIONS: Final[dict[tuple[int, type[Any]], Handler]] = {
    (_DEAL, Deal): _h_deal,
    (_TURN, Keep): _h_keep,
    (_TURN, Swap): _h_swap,
    (_TURN, AskRedeal): _h_ask_redeal,
    (_TURN, Sell): _h_sell,
    (_VOTE, Vote): _h_vote,
    (_SALE, SaleAnswer): _h_sale_answer,
    (_CUT, Cut): _h_cut,
    (_ANSWER, Answer): _h_answer,
    (_DISCLOSE, Disclosure): _h_disclose,
    (_STOCK, StockCard): _h_stock,
    (_SHOWDOWN, Showdown): _h_showdown,
    (_AFTER, BuyIn): _h_buyin,
    (_AFTER, Decline): _h_decline,
}


# TRANSITIONS indexed by phase first: one list lookup and one dict lookup per fact.
_BY_PHASE: Final[list[dict[type[Any], Handler]]] = [
    {cls: handler for (ph, cls), handler in TRANSITIONS.items() if ph == phase}
    for phase in range(len(Phase))
]


def transition_rows() -> list[tuple[str, str, str]]:
    """The table as (phase, fact type, handler) rows, e.g. to draw a diagram."""
    return [
        (Phase(phase).name, cls.__name__, handler.__name__.removeprefix("_h_"))
        for (phase, cls), handler in TRANSITIONS.items()
    ]
