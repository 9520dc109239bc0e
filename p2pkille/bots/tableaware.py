"""The table-aware bot: decides by the chance of dying, from what the seat has seen.

Byteskille is a game of survival: each hand some live players die, and the last
player standing takes the pot. So on its turn the bot estimates, for *keep* and for
*swap* (or *draw* as the acting dealer), the probability that it dies this hand,
and picks the smaller (ties keep). Everything it uses is public, or its own card:

What it remembers (per hand, by *token*: the machine's public name for one
physical card, which follows the card through every swap and revert):

- cards shown: a target's answer (kuku, husar, husu, kavall, vardshus, kille), a
  kille changing hands, every stock card turned up; each is that token's face;
- plain exchanges: the card a requester received is none of the answering cards,
  and a disclosure "not a kille" says the same of the card it gave;
- its own cards: the one it holds and every one it held before (so after the right
  neighbour swaps with it, it knows the card that neighbour now holds);
- who kept (that seat's card is probably at or above its keep threshold) and who
  asked for a redeal (probably below it).

The ranks still unseen form the *pool*; a hidden card is drawn from the pool,
restricted by what is known about that token.

What it remembers over the game: for each other seat, the lowest card it was
seen keeping and the highest it was seen giving away (from the showdowns and the
cards it received), which bound that seat's keep threshold (prior: the 8, the
break-even of the field notes); and, per number of live players, how many die in
a hand (the baseline risk of a fresh deal).

The model of a hand. A player who has acted keeps its card. A player still to act
keeps if its card reaches its threshold, otherwise it swaps and ends with a plain
card from the pool (or, blocked, with its own). At the showdown the bot dies if it
holds the lowest card (``wikipedia``); under the killing-cards rules only if at
least one killing card is out (an unswapped kille, husu, husar, and kuku in
``enkortskille``), and then the two lowest die when two or more are out, and nobody
may die if the deaths would take every live player. Opponents' cards are treated
as independent, and a small dynamic programme over "players below me" and
"killing cards out" gives the probability.

A swap is valued over the target's possible cards under the table's options: a
plain card is taken (and the target then holds the bot's old card); husar kills;
husu kills (or, under svinhugg when the bot got its card as a target, undoes the
chain and hands back the card it held before); kuku stops the swapping (the
players after it cannot improve) or, in ``enkortskille``, undoes every swap; a kille
got by a swap is death in ``wikipedia`` and the lowest card elsewhere; kavall and
vardshus pass the offer on, to the stock past the acting dealer. A draw is valued
over the pool with the ruleset's stock rules (no exchange, draw the next, kille is
the highest, ...). The 1st-4th pick and förhand's cut do not matter: nobody has
seen the stock's order, so every stock position looks the same to every seat; the
bot takes the top card and never cuts.

Other decisions:

- Redeal (three players): ask, or agree to one, when the own risk beats the
  table's observed death rate per player by a margin; within the margin, the first
  voter of Fråge-Kille says "det beror på" and lets the third player decide.
- Buy-back: only when affordable and worth it in chips: after paying, the seat is
  one of ``n + 1`` equal players for a pot grown by the price, so buy when
  ``(pot + price) / (n + 1) >= price``. The first cheap buy-backs pass, a whole-pot
  buy-back or the two-left buy-in at twice the pot never does.
- Card sale (``enkortskille``): sell when the own risk this hand is high (a card
  that most likely loses), asking half a seat's share of the pot,
  ``pot / (2 n)``; as a buyer, accept up to that price (a card for sale is most
  likely a bad one) and never more than half the own chips.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

from p2pkille.bots.base import Strategy, keep, swap
from p2pkille.bots.randombot import RandomBot
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.cards import COPIES, RANKS, Rank
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    Deal,
    Decision,
    Disclosure,
    Fact,
    Keep,
    Sell,
    Showdown,
    StockCard,
    Swap,
    VoteChoice,
)
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import (
    HusuEffect,
    KukuEffect,
    RuleOptions,
    StockKuku,
    StockPass,
    SwappedKille,
)
from p2pkille.engine.options import Showdown as ShowdownRule
from p2pkille.engine.view import SeatView

#: Values are indexed 0..21: 0 is a kille got by a swap (lower than blaren), ``rank + 1``
#: otherwise (so 21 is a dealt or drawn kille, the highest card).
N_VALUES: Final = 22
SWAPPED_KILLE: Final = 0
#: A keep threshold as a rank value (the field notes' break-even, as the threshold bot).
DEFAULT_THRESHOLD: Final = int(Rank.EIGHT)
#: Margin by which the own risk must exceed the table's baseline to want a redeal.
REDEAL_MARGIN: Final = 0.1
#: Own risk from which a card is worth selling.
SELL_RISK: Final = 0.6

_PLAIN_MAX: Final = int(Rank.TWELVE)  # a plain exchange shows a card no higher than the 12
_KILLE, _KUKU, _HUSAR, _HUSU = Rank.KILLE, Rank.KUKU, Rank.HUSAR, Rank.HUSU
_PASSERS: Final = (Rank.KAVALL, Rank.VARDSHUS)
_PHASE_ANSWER, _PHASE_STOCK, _PHASE_SHOWDOWN = (
    int(Phase.ANSWER), int(Phase.STOCK), int(Phase.SHOWDOWN)
)

Dist = list[float]
#: Per value index: the 9 probabilities of (others below me: 0, 1, 2+) x (killing cards
#: among the others: 0, 1, 2+), index ``below * 3 + killers``.
States = tuple[float, float, float, float, float, float, float, float, float]


def value_index(rank: Rank, via_swap: bool) -> int:
    """The strength index of a card for its holder (a swapped kille is 0)."""
    return SWAPPED_KILLE if rank is _KILLE and via_swap else int(rank) + 1


def _killers(options: RuleOptions) -> tuple[bool, ...]:
    """Which value indexes are killing cards at this table's showdown."""
    rule = options.showdown
    if rule is ShowdownRule.LOWEST:
        return (False,) * N_VALUES
    killing = {int(_HUSU) + 1, int(_HUSAR) + 1, int(_KILLE) + 1}
    if rule is ShowdownRule.KILLING_CARDS_KUKU:
        killing.add(int(_KUKU) + 1)
    return tuple(i in killing for i in range(N_VALUES))


def _make_point(index: int) -> Dist:
    dist = [0.0] * N_VALUES
    dist[index] = 1.0
    return dist


#: Shared point distributions (never mutated): a card known exactly.
_POINTS: Final[tuple[Dist, ...]] = tuple(_make_point(i) for i in range(N_VALUES))


def _point(index: int) -> Dist:
    return _POINTS[index]


def _step(s: States, bl: float, bk: float, ak: float) -> States:
    """Add one player who is below me, not killing (``bl``) or killing (``bk``), or not
    below me and killing (``ak``); counts stop at 2."""
    ab = 1.0 - bl - bk - ak
    s0, s1, s2, s3, s4, s5, s6, s7, s8 = s
    return (
        s0 * ab,
        s1 * ab + s0 * ak,
        s2 * ab + (s1 + s2) * ak,
        s3 * ab + s0 * bl,
        s4 * ab + s3 * ak + s1 * bl + s0 * bk,
        s5 * ab + (s4 + s5) * ak + s2 * bl + (s1 + s2) * bk,
        s6 * ab + (s3 + s6) * bl,
        s7 * ab + s6 * ak + (s4 + s7) * bl + (s3 + s6) * bk,
        s8 * ab + (s7 + s8) * ak + (s5 + s8) * bl + (s4 + s5 + s7 + s8) * bk,
    )


_START: Final[States] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
Prefix = tuple[list[float], list[float], float]


def _prefix(dist: Dist, killers: tuple[bool, ...]) -> Prefix:
    """Cumulative sums: mass strictly below each value (not killing, killing), and the
    whole killing mass."""
    below = [0.0] * (N_VALUES + 1)
    below_k = [0.0] * (N_VALUES + 1)
    b = k = 0.0
    for i in range(N_VALUES):
        p = dist[i]
        if killers[i]:
            k += p
        else:
            b += p
        below[i + 1] = b
        below_k[i + 1] = k
    return below, below_k, k


class _Model:
    """The showdown model of one decision: who else is live and what they will hold."""

    __slots__ = ("cache", "extras", "killers", "lowest", "memo", "n_live", "prefixes")

    def __init__(self, dists: Sequence[Dist], killers: tuple[bool, ...], lowest: bool,
                 n_live: int) -> None:
        self.killers = killers
        self.lowest = lowest
        self.n_live = n_live
        self.prefixes = [_prefix(d, killers) for d in dists]
        self.cache: dict[int, States] = {}
        # Keyed by the extra distribution's identity: those live as long as the decision.
        self.memo: dict[tuple[int, int], float] = {}
        self.extras: dict[int, Prefix] = {}

    def states(self, v: int) -> States:
        """The others' (below, killers) distribution for my value index ``v``."""
        cached = self.cache.get(v)
        if cached is not None:
            return cached
        states = _START
        for below, below_k, total_k in self.prefixes:
            bk = below_k[v]
            states = _step(states, below[v], bk, total_k - bk)
        self.cache[v] = states
        return states

    def risk(self, v: int, extra: Dist | None = None) -> float:
        """The chance I die at the showdown holding value ``v``; ``extra`` is one more
        live player's distribution (the target, whose card depends on my choice)."""
        if self.n_live <= 1:
            return 0.0  # the last live player of a hand cannot die in it
        key = (v, 0 if extra is None else id(extra))
        known = self.memo.get(key)
        if known is not None:
            return known
        states = self.states(v)
        if extra is not None:
            prefix = self.extras.get(id(extra))
            if prefix is None:
                prefix = self.extras[id(extra)] = _prefix(extra, self.killers)
            below, below_k, total_k = prefix
            bk = below_k[v]
            states = _step(states, below[v], bk, total_k - bk)
        if self.lowest:
            # The lowest card dies, ties included: nobody may be strictly below me.
            risk = states[0] + states[1] + states[2]
        else:
            mine = 1 if self.killers[v] else 0
            risk = 0.0
            for b in range(2):
                for k in range(3):
                    out = k + mine
                    if out == 0 or (out == 1 and b > 0):
                        continue
                    if out >= 2 and self.n_live <= 2:
                        continue  # both would die: deaths may not empty the hand
                    risk += states[b * 3 + k]
        self.memo[key] = risk
        return risk


class _Walk:
    """What follows the bot's choice on its own turn (:meth:`TableAwareBot.risks`): the
    showdown models of the others and the risks of staying, drawing and each answer to an
    offer, memoised by the distributions they are about (which live as long as the walk)."""

    def __init__(self, game: Game, mine_v: int, pool: Sequence[int], live: list[int],
                 now: dict[int, Dist], final: dict[int, Dist], known: dict[int, Rank],
                 mine: list[int]) -> None:
        opts = game.options
        pos = game.turn
        self.game = game
        self.opts = opts
        self.pos = pos
        self.mine_v = mine_v
        self.pool = pool
        self.now = now
        self.known = known
        self.mine = mine
        killers = _killers(opts)
        lowest = opts.showdown is ShowdownRule.LOWEST
        n_live = len(live) + 1
        self.after = [p for p in live if p > pos]
        target = self.after[0] if self.after else None
        self.target = target
        self.everyone = _Model([final[p] for p in live], killers, lowest, n_live)
        self.others = _Model([final[p] for p in live if p != target], killers, lowest,
                             n_live)
        self.frozen = _Model([now[p] for p in live], killers, lowest, n_live)
        # Only answers use it, and only with a target.
        self.frozen_others = self.frozen if target is None else _Model(
            [now[p] for p in live if p != target], killers, lowest, n_live)
        self.drawn: dict[int, float] = {}
        self.answered: dict[tuple[Rank, int, int, int], float] = {}

    def stay(self, extra: Dist | None) -> float:
        if self.target is not None:
            return self.others.risk(self.mine_v, extra)
        return self.everyone.risk(self.mine_v)

    def previous_value(self) -> int | None:
        if len(self.mine) < 2:
            return None
        old = self.known.get(self.mine[-2])
        return None if old is None else value_index(old, len(self.mine) > 2)

    def dealt_value(self) -> int:
        first = self.known.get(self.mine[0]) if self.mine else None
        return self.mine_v if first is None else int(first) + 1

    def draw(self, pass_dist: Dist | None) -> float:
        """Risk of turning up stock cards (the offer reached the stock)."""
        key = 0 if pass_dist is None else id(pass_dist)
        cached = self.drawn.get(key)
        if cached is None:
            cached = self.drawn[key] = self._draw(pass_dist)
        return cached

    def _draw(self, pass_dist: Dist | None) -> float:
        opts = self.opts
        stock = [float(c) for c in self.pool]
        total = sum(stock)
        if total <= 0.0:
            return self.stay(pass_dist)
        redraw = opts.stock_pass is StockPass.DRAW_NEXT
        if redraw:
            for skipped in _PASSERS:
                total -= stock[skipped]
                stock[skipped] = 0.0
            if total <= 0.0:
                return self.stay(pass_dist)
        risk = 0.0
        for r in range(len(stock)):
            weight = stock[r]
            if not weight:
                continue
            risk += weight / total * self._turned(RANKS[r], pass_dist)
        return risk

    def _turned(self, card: Rank, pass_dist: Dist | None) -> float:
        """Risk once ``card`` is turned up from the stock."""
        if card is _HUSAR:
            return 1.0
        if card is _HUSU:
            return self.svinhugg(pass_dist)
        if card is _KUKU:
            if self.opts.stock_kuku is StockKuku.REVERT_ALL:
                return self.frozen.risk(self.dealt_value())
            return self.stay(pass_dist)
        if card in _PASSERS:
            return self.stay(pass_dist)
        # Taken; a kille from the stock is the highest card.
        v = int(card) + 1
        return self.others.risk(v, pass_dist) if self.target is not None else (
            self.everyone.risk(v))

    def svinhugg(self, extra: Dist | None) -> float:
        if self.opts.husu is not HusuEffect.SVINHUGG or not self.game.as_target[self.pos]:
            return 1.0
        back = self.previous_value()
        if back is None:
            return 1.0
        if self.target is not None:
            return self.others.risk(back, extra)
        return self.everyone.risk(back)

    def answer(self, card: Rank, responder: int, depth: int, held: Dist) -> float:
        """Risk once ``responder`` answers with ``card``; ``held`` is what the target
        ends with if ``responder`` exchanges with me."""
        key = (card, responder, depth, id(held))
        cached = self.answered.get(key)
        if cached is None:
            cached = self.answered[key] = self._answer(card, responder, depth, held)
        return cached

    # One return per kind of answer card, each with its own rule effect.
    def _answer(self, card: Rank, responder: int, depth: int, held: Dist) -> float:  # noqa: PLR0911
        opts, target = self.opts, self.target
        if card is _HUSAR:
            return 1.0
        if card is _HUSU:
            return self.svinhugg(_point(int(_HUSU) + 1) if responder == target else held)
        if card is _KUKU:
            shown = _point(int(_KUKU) + 1) if responder == target else held
            if opts.kuku is KukuEffect.REVERT_ALL:
                return self.frozen_others.risk(self.dealt_value(), shown)
            return self.frozen_others.risk(self.mine_v, shown)
        if card is _KILLE:
            if opts.swapped_kille is SwappedKille.DIES:
                return 1.0
            return self.others.risk(SWAPPED_KILLE, held)
        if card in _PASSERS:
            # "Förbi": the target keeps its card, the offer goes on.
            passer = _point(int(card) + 1) if responder == target else held
            return self._passed(responder, depth, passer)
        # A plain exchange: I take the card.
        return self.others.risk(int(card) + 1, held)

    def _passed(self, responder: int, depth: int, passer: Dist) -> float:
        """Risk once ``responder`` passes the offer on (the next one answers, or the
        stock)."""
        nxt = [p for p in self.after if p > responder]
        if not nxt:
            return self.draw(passer)
        if depth >= 2:
            return self.stay(passer)
        dist = self.now[nxt[0]]
        total = sum(dist)
        if total <= 0.0:
            return self.stay(passer)
        return sum(
            prob * self.answer(_KILLE if i == SWAPPED_KILLE else RANKS[i - 1], nxt[0],
                               depth + 1, passer)
            for i, prob in enumerate(dist) if prob
        ) / total


class Chooser(Protocol):
    """Injected randomness (``random.Random`` fits)."""

    def randrange(self, start: int, /) -> int: ...


class TableAwareBot(Strategy):
    """Minimises the chance of dying this hand from everything the seat has seen.

    See the module docstring for the model. Deterministic: the same facts give the
    same decisions. It keeps its memory across hands, so use one instance per seat
    and game.
    """

    name = "tableaware"
    wants_facts = True

    __slots__ = (
        "_asked",
        "_deaths",
        "_hands",
        "_keep_min",
        "_kept",
        "_known",
        "_live_at_showdown",
        "_mine",
        "_not_kille",
        "_offered",
        "_pend_answer",
        "_pend_offer",
        "_pend_stock",
        "_plain",
        "_swap_max",
    )

    def __init__(self) -> None:
        # Per hand, by token.
        self._known: dict[int, Rank] = {}
        self._plain: set[int] = set()
        self._not_kille: set[int] = set()
        self._kept: dict[int, int] = {}
        self._asked: dict[int, int] = {}
        self._offered: dict[int, int] = {}
        self._mine: list[int] = []
        self._pend_answer = -1
        self._pend_offer = -1
        self._pend_stock = -1
        self._live_at_showdown: list[tuple[int, int]] = []
        # Over the game.
        self._keep_min: dict[int, int] = {}
        self._swap_max: dict[int, int] = {}
        self._deaths: dict[int, int] = {}
        self._hands: dict[int, int] = {}

    # ------------------------------------------------------------- what it sees

    # One branch per kind of fact the bot learns from, then the phase it leaves us in.
    def observe(self, fact: Fact, view: SeatView) -> None:  # noqa: PLR0912
        game = view.game
        kind = type(fact)
        if kind is Deal:
            self._new_hand()
        elif kind is Answer:
            assert isinstance(fact, Answer)
            token = self._pend_answer
            if token >= 0:
                if fact.shown is None:
                    self._plain.add(token)
                else:
                    self._known[token] = fact.shown
        elif kind is Disclosure:
            assert isinstance(fact, Disclosure)
            token = self._pend_offer
            if token >= 0:
                if fact.kille:
                    self._known[token] = _KILLE
                else:
                    self._not_kille.add(token)
        elif kind is StockCard:
            assert isinstance(fact, StockCard)
            if self._pend_stock >= 0:
                self._known[self._pend_stock] = fact.rank
        elif kind is Keep:
            assert isinstance(fact, Keep)
            held = game.token_of(fact.seat)
            if held is not None:
                self._kept[held] = fact.seat
        elif kind is AskRedeal:
            assert isinstance(fact, AskRedeal)
            held = game.token_of(fact.seat)
            if held is not None:
                self._asked[held] = fact.seat
        elif kind is Showdown:
            assert isinstance(fact, Showdown)
            self._learn_showdown(fact, game)
        elif kind is Swap:
            # The card the requester offers: what it was willing to give away.
            self._offered[game.hold[game.req]] = game.order[game.req]
        phase = game.phase
        if phase == _PHASE_ANSWER:
            # Facts do not name tokens: note which cards the next answer is about.
            self._pend_answer = game.hold[game.tgt]
            self._pend_offer = game.hold[game.req]
        elif phase == _PHASE_STOCK:
            self._pend_stock = game.stock[game.draw_index]
        elif phase == _PHASE_SHOWDOWN:
            alive = game.alive
            self._live_at_showdown = [
                (game.order[p], game.hold[p]) for p in range(len(alive)) if alive[p]
            ]
        self._see_own(view)

    def _new_hand(self) -> None:
        self._known.clear()
        self._plain.clear()
        self._not_kille.clear()
        self._kept.clear()
        self._asked.clear()
        self._offered.clear()
        self._mine.clear()
        self._pend_answer = self._pend_offer = self._pend_stock = -1
        self._live_at_showdown = []

    def _see_own(self, view: SeatView) -> None:
        pos = view.position
        if pos is None:
            return
        token = view.game.hold[pos]
        mine = self._mine
        if mine and mine[-1] == token:
            return
        rank = view.rank
        if rank is None:
            return
        self._known[token] = rank
        if token in mine:
            # A revert gave an earlier card back.
            del mine[mine.index(token) :]
        mine.append(token)

    def _learn_showdown(self, fact: Showdown, game: Game) -> None:
        for (seat, token), rank in zip(self._live_at_showdown, fact.ranks, strict=False):
            value = int(rank)
            if self._kept.get(token) == seat:
                self._keep_min[seat] = min(self._keep_min.get(seat, value), value)
            offerer = self._offered.get(token)
            if offerer is not None:
                self._swap_max[offerer] = max(self._swap_max.get(offerer, value), value)
        # Cards it was handed also show what the giver was willing to give away.
        for token, offerer in self._offered.items():
            rank_known = self._known.get(token)
            if rank_known is not None and token in self._mine:
                value = int(rank_known)
                self._swap_max[offerer] = max(self._swap_max.get(offerer, value), value)
        result = game.result
        if result is not None and not result.redealt:
            n = len(result.dealt)
            self._deaths[n] = self._deaths.get(n, 0) + len(result.died)
            self._hands[n] = self._hands.get(n, 0) + 1

    # ------------------------------------------------------------- the model

    def threshold(self, seat: int) -> int:
        """The estimated keep threshold (a rank value) of ``seat``."""
        low = self._swap_max.get(seat, -2) + 1
        high = self._keep_min.get(seat, N_VALUES)
        if low > high:
            return DEFAULT_THRESHOLD  # inconsistent play (a random bot): the prior
        return min(max(DEFAULT_THRESHOLD, low), high)

    def baseline(self, n_live: int) -> float:
        """The table's observed chance per player of dying in a hand of ``n_live``."""
        # Prior: one death per hand, worth four hands of evidence.
        deaths = self._deaths.get(n_live, 0) + 4
        hands = self._hands.get(n_live, 0) + 4
        return deaths / (hands * n_live)

    def _pool(self) -> list[int]:
        counts = [COPIES] * len(RANKS)
        for rank in self._known.values():
            if counts[rank] > 0:
                counts[rank] -= 1
        return counts

    def _token_dist(self, token: int, via: bool, pool: list[int], seat: int) -> Dist:
        known = self._known.get(token)
        if known is not None:
            return _point(value_index(known, via))
        weights = [float(c) for c in pool]
        if token in self._plain:
            for r in range(_PLAIN_MAX + 1, len(weights)):
                weights[r] = 0.0
        if via or token in self._not_kille:
            # A kille changes hands face up: an unknown card got by a swap is no kille.
            weights[_KILLE] = 0.0
        kept = self._kept.get(token) == seat
        asked = self._asked.get(token) == seat
        if kept or asked:
            theta = self.threshold(seat)
            narrowed = [w if (r >= theta) == kept else 0.0 for r, w in enumerate(weights)]
            if sum(narrowed) > 0.0:
                weights = narrowed
        total = sum(weights)
        dist = [0.0] * N_VALUES
        if total <= 0.0:
            return dist
        for r, w in enumerate(weights):
            if w:
                dist[value_index(RANKS[r], via)] += w / total
        return dist

    def _plain_dist(self, pool: list[int]) -> tuple[Dist, float]:
        """A plain card from the pool (what a swap usually brings), and its chance."""
        dist = [0.0] * N_VALUES
        plain = sum(pool[: _PLAIN_MAX + 1])
        total = sum(pool)
        if plain == 0:
            return dist, 0.0
        for r in range(_PLAIN_MAX + 1):
            dist[r + 1] = pool[r] / plain
        return dist, plain / total

    def _final(self, now: Dist, seat: int, plain: tuple[Dist, float]) -> Dist:
        """What a player still to act ends with: it keeps at its threshold, otherwise
        swaps for a plain card (or, blocked, stays with its own)."""
        cut = self.threshold(seat) + 1
        low = sum(now[:cut])
        if low == 0.0:
            return now
        plain_dist, p_plain = plain
        out = list(now)
        for i in range(cut):
            out[i] *= 1.0 - p_plain
        for i in range(N_VALUES):
            out[i] += low * p_plain * plain_dist[i]
        return out

    def risks(self, view: SeatView) -> tuple[float, float]:
        """(risk if it keeps, risk if it swaps or draws), on its own turn."""
        game = view.game
        pos = game.turn
        rank = view.rank
        if rank is None:
            return 1.0, 0.5  # its card is unknown (a peer that has not learnt it): swap
        alive = game.alive
        via = game.via_swap
        order = game.order
        mine_v = value_index(rank, view.swapped)
        pool = self._pool()
        plain = self._plain_dist(pool)
        live = [p for p in range(len(alive)) if alive[p] and p != pos]
        if len(live) + 1 == 1:
            return 0.0, 0.0  # the last live player of a hand cannot die in it
        now: dict[int, Dist] = {}
        final: dict[int, Dist] = {}
        for p in live:
            dist = self._token_dist(game.hold[p], via[p], pool, order[p])
            now[p] = dist
            final[p] = dist if p < pos else self._final(dist, order[p], plain)
        walk = _Walk(game, mine_v, pool, live, now, final, self._known, self._mine)
        keep_risk = walk.everyone.risk(mine_v)
        target = walk.target
        if target is None:
            return keep_risk, walk.draw(None)

        # The target ends with my old card: it keeps it at its threshold, else swaps on.
        gets_mine = self._final(_point(mine_v), order[target], plain)
        dist = now[target]
        mass = sum(dist)
        if mass <= 0.0:
            return keep_risk, walk.stay(final[target])
        swap_risk = 0.0
        for i, prob in enumerate(dist):
            if prob:
                card = _KILLE if i == SWAPPED_KILLE else RANKS[i - 1]
                swap_risk += prob / mass * walk.answer(card, target, 0, gets_mine)
        return keep_risk, swap_risk

    def _current_risk(self, view: SeatView) -> float:
        game = view.game
        if game.phase == int(Phase.TURN) and game.expect_seat == view.seat:
            return min(self.risks(view))
        return self._held_risk(view)

    def _held_risk(self, view: SeatView) -> float:
        """Risk with the card it holds now, as if it kept (outside its own turn)."""
        game = view.game
        pos = view.position
        rank = view.rank
        if pos is None or rank is None:
            return self.baseline(max(game.n_alive, 1))
        opts = game.options
        pool = self._pool()
        plain = self._plain_dist(pool)
        alive, via, order = game.alive, game.via_swap, game.order
        dists = []
        for p in range(len(alive)):
            if alive[p] and p != pos:
                dist = self._token_dist(game.hold[p], via[p], pool, order[p])
                dists.append(dist if p < game.turn else self._final(dist, order[p], plain))
        model = _Model(dists, _killers(opts), opts.showdown is ShowdownRule.LOWEST,
                       len(dists) + 1)
        return model.risk(value_index(rank, view.swapped))

    # ------------------------------------------------------------- decisions

    def turn(self, view: SeatView) -> Decision:
        seat = view.seat
        keep_risk, swap_risk = self.risks(view)
        best = min(keep_risk, swap_risk)
        game = view.game
        if view.can_redeal and best > self.baseline(game.n_alive) + REDEAL_MARGIN:
            return AskRedeal(seat)
        buyers = view.buyers
        if buyers and best >= SELL_RISK:
            buyer = max(buyers, key=lambda s: (game.chips[s], -s))
            price = min(self.sale_price(game), game.chips[buyer])
            if price > 0:
                return Sell(seat, buyer, price)
        return keep(seat) if keep_risk <= swap_risk else swap(seat)

    @staticmethod
    def sale_price(game: Game) -> int:
        """Half a seat's share of the pot: what a buyer pays for a card it cannot see."""
        return max(1, game.pot // (2 * max(game.n_in, 1)))

    def vote(self, view: SeatView) -> VoteChoice:
        risk = self._current_risk(view)
        base = self.baseline(view.game.n_alive)
        if view.can_depend and abs(risk - base) <= REDEAL_MARGIN:
            return VoteChoice.DEPENDS
        return VoteChoice.AGREE if risk > base + REDEAL_MARGIN else VoteChoice.REFUSE

    def answer_sale(self, view: SeatView) -> bool:
        sale = view.sale
        if sale is None:
            return False
        price = sale[1]
        return price <= view.chips // 2 and price <= self.sale_price(view.game)

    def buyin(self, view: SeatView) -> bool:
        price = view.price
        if not 0 < price <= view.chips:
            return False
        players = view.game.n_in + 1
        return view.pot + price >= price * players


# ------------------------------------------------------------------ by name

StrategyFactory = Callable[[Chooser], Strategy]

#: Strategies by name; each factory takes the game's injected randomness (only the
#: random bot uses it).
STRATEGIES: Final[dict[str, StrategyFactory]] = {
    "threshold": lambda rng: ThresholdBot(),
    "tableaware": lambda rng: TableAwareBot(),
    "random": RandomBot,
}


def make_bot(name: str, rng: Chooser) -> Strategy:
    """A new strategy instance by name; ``KeyError`` names the known strategies."""
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise KeyError(
            f"unknown strategy {name!r}: expected one of {', '.join(STRATEGIES)}"
        ) from None
    return factory(rng)
