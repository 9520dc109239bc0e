"""The table screen as a model: what is shown and what each key does.

:class:`TableScreen` reads the human's node (its game view, outcomes and audits)
and the human decider's pending question. :meth:`TableScreen.render` gives lines of
``(style, text)`` fragments for a window size, :meth:`TableScreen.press` takes one key.
Nothing here draws or reads a terminal, so tests drive it directly; ``app`` wraps it
in a prompt-toolkit application.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from p2pkille.engine.cards import RANKS, Rank
from p2pkille.engine.events import Event
from p2pkille.engine.facts import AskRedeal, Keep, Sell, Swap, VoteChoice
from p2pkille.engine.machine import Game, Phase
from p2pkille.runtime.node import Stage
from p2pkille.ui import svenska
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import Ask, HumanDecider, Request
from p2pkille.ui.i18n import LANGS, rank_name, text

__all__ = ["MIN_HEIGHT", "MIN_WIDTH", "Line", "Mode", "Narrator", "PlayerTable", "SaleDraft",
           "TableScreen", "wrap"]

log = logging.getLogger(__name__)

MIN_WIDTH: Final = 72
MIN_HEIGHT: Final = 24
#: Seconds without progress while waiting for another peer before the screen says so.
VANISH_AFTER: Final = 20.0
LOG_KEEP: Final = 1000

Fragment = tuple[str, str]
Line = list[Fragment]


class Narrator(Protocol):
    """Tells one engine event in English: (event, game at that moment, display names in
    seat order, faces the player knows by token, the player's own seat) -> text, possibly
    several lines, or "". The Swedish lines come from :mod:`p2pkille.ui.svenska`; both are
    kept, so ``l`` switches the whole log."""

    def __call__(self, event: Event, game: Game, names: Sequence[str],
                 known: Mapping[int, Rank], me: int | None = None) -> str: ...


class PlayerTable(Protocol):
    """The table as the screen needs it: an in-process :class:`~p2pkille.ui.session.
    LocalTable` or a table formed over the LAN (:class:`~p2pkille.ui.lan.LanTable`)."""

    @property
    def human(self) -> HumanTableNode: ...

    @property
    def decider(self) -> HumanDecider: ...

    def seat_names(self) -> list[str]:
        """Display names in seat order (empty before the genesis seated everyone)."""
        ...

    def decided(self) -> None:
        """The player answered: let the human's node act now."""
        ...


@dataclass(slots=True)
class SaleDraft:
    """A card sale the player is putting together: to whom and for how much."""

    request: Request
    buyers: list[int]
    index: int
    price: str
    typed: bool = False
    """Whether the player typed the price (a first digit replaces the suggestion)."""

    @property
    def buyer(self) -> int:
        return self.buyers[self.index]


class Mode(enum.Enum):
    TABLE = "table"
    HELP = "help"
    AUDIT = "audit"


_STEPS: Final = {Stage.KEYS: "step_keys", Stage.SHUFFLE: "step_shuffle",
                 Stage.DEAL: "step_deal", Stage.REVEAL: "step_reveal",
                 Stage.CHECKPOINT: "step_sign"}
#: The phases in which the node gives a seat ``Timing.decide_limit`` (a person decides).
_DECIDING: Final = frozenset({Phase.TURN, Phase.VOTE, Phase.SALE, Phase.CUT, Phase.AFTER})
_YES: Final = frozenset({"y", "j"})
_NO: Final = frozenset({"n"})


class TableScreen:
    """The screen of one player at a :class:`PlayerTable`; ``clock`` gives seconds."""

    def __init__(self, table: PlayerTable, narrate: Narrator, lang: str,
                 clock: Callable[[], float]) -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
        self.table = table
        self.narrate = narrate
        self.lang = lang
        self.clock = clock
        self.mode = Mode.TABLE
        self._log: dict[str, list[str]] = {lang: [] for lang in LANGS}
        self.notice = ""
        self.failure: str | None = None
        self.quit = False
        self._quit_armed = False
        self.help_scroll = 0
        self._progress: object = None
        self._since = clock()
        self._step_mark: object = None
        self._step_since = clock()
        self.sale: SaleDraft | None = None
        self._receipt: tuple[int, int, int] | None = None
        """(token, seat it came from, hand) of a card the player received face down and
        does not know yet: told once its face arrives."""
        table.human.listener = self._on_event
        table.decider.on_request = self._on_request

    # ------------------------------------------------------------------ inputs

    def _on_event(self, event: Event, game: Game) -> None:
        node = self.table.human
        known = dict(node.view.known) if node.view is not None else {}
        me = node.my_seat
        self._settle_receipt()  # a face that arrived since is told before this event
        told: dict[str, list[str]] = {}
        for lang, narrate in (("en", self.narrate), ("sv", svenska.tell)):
            try:
                said = narrate(event, game, self._names(lang), known, me)
            except Exception as exc:  # a narration bug must not take the table down
                log.exception("narrating %r", event)
                said = f"  {event.kind} ({type(exc).__name__})"
            told[lang] = [line for line in said.split("\n") if line]
        for lang, lines in told.items():
            self._add(lang, lines)
        if event.kind == "exchange" and me is not None and me in (event.seat, event.other):
            pos = game.position_of(me)
            giver = event.other if event.seat == me else event.seat
            if pos is not None and giver is not None:
                self._receipt = (game.hold[pos], giver, game.hand_no)
        self._settle_receipt()

    def _add(self, lang: str, lines: list[str]) -> None:
        self._log[lang].extend(lines)
        del self._log[lang][:-LOG_KEEP]

    def _settle_receipt(self) -> None:
        """Tell the card the player received in a swap once its face is known (it arrives
        after the exchange, with its decryption shares)."""
        receipt, node, game = self._receipt, self.table.human, self.game
        if receipt is None or game is None or node.view is None:
            return
        token, giver, hand = receipt
        pos = None if node.my_seat is None else game.position_of(node.my_seat)
        if game.hand_no != hand or pos is None or game.hold[pos] != token:
            self._receipt = None  # undone by a kuku, or the hand is over
            return
        rank = node.view.known.get(token)
        if rank is None:
            return
        self._receipt = None
        for lang in LANGS:
            names = self.table.seat_names()
            who = names[giver] if 0 <= giver < len(names) else "?"
            self._add(lang, ["  " + text("received", lang, card=rank_name(rank, lang),
                                         who=who, whose=svenska.genitive(who)
                                         if lang == "sv" else f"{who}'s")])

    @property
    def log(self) -> list[str]:
        """The narration so far, in the screen's language."""
        return self._log[self.lang]

    def _on_request(self, request: Request) -> None:
        self.notice = ""

    def fail(self, reason: str) -> None:
        """The table stopped (a bug, a failed peer): shown instead of a traceback."""
        self.failure = reason

    def t(self, name: str, **fields: object) -> str:
        return text(name, self.lang, **fields)

    # ------------------------------------------------------------------ state

    def _names(self, lang: str | None = None) -> list[str]:
        names = self.table.seat_names()
        me = self.table.human.my_seat
        you = text("you", lang or self.lang)
        if me is not None and names and names[me].lower() != you:
            names[me] = f"{names[me]} ({you})"
        return names

    @property
    def game(self) -> Game | None:
        view = self.table.human.view
        return None if view is None else view.game

    def _waiting(self) -> tuple[int, ...]:
        node = self.table.human
        return node.waiting_for() if node.view is not None and node.stage > Stage.ACCEPT else ()

    def _tick(self) -> float:
        """Seconds since the table last moved (a new fact, stage or hand)."""
        node = self.table.human
        game = self.game
        mark = (node.stage, self._waiting(), None if game is None else game.fact_count,
                len(node.outcomes), self.table.decider.request)
        now = self.clock()
        if mark != self._progress:
            self._progress, self._since = mark, now
        return now - self._since

    def _time_left(self, game: Game) -> int:
        """Seconds before this node votes the awaited seat's time out: the node's limit
        (``Timing.decide_limit`` for a decision, else ``Timing.limit``) against when the
        table's current step began, as the screen saw it."""
        node = self.table.human
        stage = node.stage
        hand = node.status()
        deciding = stage == Stage.PLAY and game.phase in _DECIDING
        step = (len(node.outcomes), game.hand_no, int(stage),
                hand is not None and hand.voiding,
                game.fact_count if stage == Stage.PLAY else 0)
        now = self.clock()
        if step != self._step_mark:
            self._step_mark, self._step_since = step, now
        limit = node.timing.decide_limit if deciding else node.timing.limit
        return max(0, math.ceil(limit - (now - self._step_since)))

    # ------------------------------------------------------------------ keys

    def press(self, key: str) -> None:
        """One key (``"k"``, ``"escape"``, ``"up"``, ...); letters in either case."""
        key = key.lower() if len(key) == 1 else key
        if key != "q":
            self._quit_armed = False
        if self.sale is not None and self.mode is Mode.TABLE and key not in ("h", "a", "l", "q"):
            self._sale_key(key, self.sale)
            return
        if key == "q":
            game = self.game
            if self._quit_armed or self.failure is not None or (game is not None and game.over):
                self.quit = True
            else:
                self._quit_armed = True
                self.notice = self.t("quit_confirm")
            return
        if key == "h":
            self.mode = Mode.TABLE if self.mode is Mode.HELP else Mode.HELP
            self.help_scroll = 0
            return
        if key == "a":
            self.mode = Mode.TABLE if self.mode is Mode.AUDIT else Mode.AUDIT
            return
        if key == "escape":
            self.mode = Mode.TABLE
            return
        if key == "l":
            self.lang = LANGS[(LANGS.index(self.lang) + 1) % len(LANGS)]
            return
        if self.mode is Mode.HELP and key in ("up", "down"):
            self.help_scroll = max(0, self.help_scroll + (1 if key == "down" else -1))
            return
        self.mode = Mode.TABLE
        self._move(key)

    def _move(self, key: str) -> None:
        game = self.game
        if game is not None and game.over:
            self.notice = self.t("game_over")
            return
        request = self.table.decider.request
        if request is None:
            waiting = [s for s in self._waiting() if s != self.table.human.my_seat]
            names = self._names()
            if waiting and names:
                self.notice = self.t("why_not_yours",
                                     who=", ".join(names[s] for s in waiting))
            else:
                self.notice = self.t("why_nothing")
            return
        answer, what = self._answer(request, key)
        if answer is None:
            return
        self.table.decider.answer(answer)
        self.notice = self.t("sent", what=what)
        self.table.decided()

    def _answer(self, request: Request, key: str) -> tuple[object, str]:
        """The answer ``key`` gives to ``request`` and its label; (None, "") after
        setting :attr:`notice` to why the key does nothing."""
        view = request.view
        seat = view.seat
        moves = self._moves(request)
        keys = ", ".join(k for k, _ in moves)
        ask = request.ask
        if ask is Ask.TURN:
            drawer = view.is_drawer
            max_pick = view.options.max_pick
            if key == "k":
                return Keep(seat), "«Jag är nöjd!»"
            if key == "s":
                return Swap(seat), "«Jag går i lek!»" if drawer else self.t("l_swap")
            if key.isdigit() and len(key) == 1:
                if not drawer or max_pick == 1:
                    return self._why("why_no_pick")
                pick = int(key)
                if not 1 <= pick <= max_pick:
                    return self._why("why_pick_range", n=max_pick)
                return Swap(seat, pick), f"«Jag går i lek!» ({pick})"
            if key == "r":
                if not view.can_redeal:
                    return self._why("why_no_redeal", n=view.options.redeal_players)
                return AskRedeal(seat), "«Bättre kort!»"
            if key == "b":
                buyers = view.buyers
                if not buyers:
                    return self._why("why_no_sell", rule="enkortskille")
                chips = view.game.chips
                self.sale = SaleDraft(request, list(buyers), 0,
                                      str(min(view.game.stake, chips[buyers[0]])))
                self.notice = ""
                return None, ""
        elif ask is Ask.VOTE:
            if key in _YES:
                return VoteChoice.AGREE, self.t("l_agree")
            if key in _NO:
                return VoteChoice.REFUSE, self.t("l_refuse")
            if key == "d":
                if not view.can_depend:
                    return self._why("why_no_depends")
                return VoteChoice.DEPENDS, "«Det beror på.»"
        elif ask is Ask.SALE:
            sale = view.sale
            if key in _YES and sale is not None:
                if sale[1] > view.chips:
                    return self._why("why_poor", chips=view.chips, price=sale[1])
                return True, self.t("l_buy")
            if key in _NO:
                return False, self.t("l_nobuy")
        elif ask is Ask.CUT:
            if key.isdigit() and len(key) == 1:
                size = len(view.game.stock)
                at = int(key)
                if at >= max(size, 1):
                    return self._why("why_cut_range", n=size, m=max(size - 1, 0))
                return at, self.t("l_cut", n=at)
        elif ask is Ask.BUYIN:
            if key in _YES:
                if view.price > view.chips:
                    return self._why("why_poor", chips=view.chips, price=view.price)
                return True, self.t("l_buyin", price=view.price)
            if key in _NO:
                return False, self.t("l_decline")
        return self._why("why_key", key=key, keys=keys)

    def _sale_key(self, key: str, draft: SaleDraft) -> None:
        """A key while the player puts a sale together (``b``): arrows choose the buyer,
        digits the price, Enter offers, Esc cancels."""
        if not _same(self.table.decider.request, draft.request):
            self.sale = None  # the question went away (a time-out, a voided hand)
            self.press(key)
            return
        if key == "escape":
            self.sale = None
            self.notice = self.t("sale_cancelled")
            return
        if key in ("up", "left", "down", "right"):
            step = -1 if key in ("up", "left") else 1
            draft.index = (draft.index + step) % len(draft.buyers)
            self.notice = ""
            return
        if key.isdigit() and len(key) == 1:
            draft.price = (draft.price + key if draft.typed else key).lstrip("0")[:9] or "0"
            draft.typed = True
            self.notice = ""
            return
        if key == "backspace":
            draft.price, draft.typed = draft.price[:-1], True
            return
        if key != "enter":
            self.notice = self.t("why_sale_key", key=key)
            return
        names = self._names()
        buyer = draft.buyer
        who = names[buyer] if names else "?"
        if not draft.price:
            self.notice = self.t("why_sale_price")
            return
        price = int(draft.price)
        chips = draft.request.view.game.chips[buyer]
        if price > chips:
            self.notice = self.t("why_sale_poor", who=who, chips=chips, price=price)
            return
        self.sale = None
        self.table.decider.answer(Sell(draft.request.view.seat, buyer, price))
        self.notice = self.t("sent", what=self.t("l_sell", who=who, price=price))
        self.table.decided()

    def _sale_lines(self, draft: SaleDraft) -> list[Line]:
        names = self._names()
        buyer = draft.buyer
        who = names[buyer] if names else "?"
        chips = draft.request.view.game.chips[buyer]
        more = len(draft.buyers) > 1
        to = f"◀ {who} ▶" if more else who
        return [
            [("class:moves", self.t("sale_title") + ":")],
            [("class:key", "   " + self.t("sale_to", to=to, chips=chips)
              + ("   " + self.t("sale_more") if more else ""))],
            [("class:key", "   " + self.t("sale_price")), ("class:card", f" {draft.price} "),
             ("class:key", "   " + self.t("sale_price_keys"))],
            [("class:key", "   " + self.t("sale_keys"))],
        ]

    def _why(self, name: str, **fields: object) -> tuple[None, str]:
        self.notice = self.t(name, **fields)
        return None, ""

    def _moves(self, request: Request) -> list[tuple[str, str]]:
        """(key, label) of every move open now."""
        view = request.view
        yes = "j" if self.lang == "sv" else "y"
        names = self._names()
        ask = request.ask
        if ask is Ask.TURN:
            moves = [("k", self.t("k_keep"))]
            drawer = view.is_drawer
            moves.append(("s", self.t("k_draw" if drawer else "k_swap")))
            if drawer and view.options.max_pick > 1:
                moves.append((f"1-{view.options.max_pick}",
                               self.t("k_pick", n=view.options.max_pick)))
            if view.can_redeal:
                moves.append(("r", self.t("k_redeal")))
            if view.buyers:
                moves.append(("b", self.t("k_sell")))
            return moves
        if ask is Ask.VOTE:
            moves = [(yes, self.t("k_agree")), ("n", self.t("k_refuse"))]
            if view.can_depend:
                moves.append(("d", self.t("k_depends")))
            return moves
        if ask is Ask.SALE:
            sale = view.sale
            seller, price = sale if sale is not None else (0, 0)
            who = names[seller] if names else "?"
            return [(yes, self.t("k_buy", who=who, price=price)), ("n", self.t("k_nobuy"))]
        if ask is Ask.CUT:
            top = max(min(len(view.game.stock) - 1, 9), 0)
            return [(f"0-{top}", self.t("k_cut", n=top))]
        return [(yes, self.t("k_buyin", price=view.price)), ("n", self.t("k_decline"))]

    # ------------------------------------------------------------------ rendering

    def render(self, width: int, height: int) -> list[Line]:
        """The screen for a ``width`` x ``height`` window, one list of fragments a line."""
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            message = self.t("too_small", w=width, h=height, mw=MIN_WIDTH, mh=MIN_HEIGHT)
            return [[("class:warn", line)] for line in wrap(message, max(width - 1, 10))]
        if self.mode is Mode.HELP:
            body = self._help(width)
            body = body[self.help_scroll:]
        elif self.mode is Mode.AUDIT:
            body = self._audit(width)
        else:
            body = self._table(width, height)
        lines = [[("class:title", self.t("title"))], *body]
        lines = lines[:height - 1]
        while len(lines) < height - 1:
            lines.append([])
        footer = self.t("footer_back") if self.mode is not Mode.TABLE else self.t("footer")
        lines.append([("class:footer", footer)])
        return lines

    def text(self, width: int = 100, height: int = 40) -> str:
        """The screen as plain text (tests, logs)."""
        return "\n".join("".join(t for _, t in line).rstrip()
                         for line in self.render(width, height))

    def _table(self, width: int, height: int) -> list[Line]:
        self._settle_receipt()
        node = self.table.human
        config = node.config
        out: list[Line] = [[("", self.t("table", table=config.name, ruleset=config.ruleset,
                                         stake=config.stake))]]
        game = self.game
        if self.failure is not None:
            out.append([("class:warn", self.t("failed", reason=self.failure))])
        if game is None or node.stage <= Stage.ACCEPT:
            out.append([("", self.t("starting"))])
            return out
        secs = self._tick()
        names = self._names()
        me = node.my_seat
        out.append([("class:pot", f"{self.t('hand', n=max(game.hand_no, 1))}   "
                                  f"{self.t('pot', pot=game.pot)}")])
        trust = self._trust()
        if trust:
            out.append(trust)
        out.append([("class:rule", "─" * (width - 1))])
        waiting = self._waiting()
        step = self._step(game)
        for seat, name in enumerate(names):
            turn = step is None and seat in waiting and not game.over
            out.append(self._seat_line(game, seat, name, turn))
        out.append([("class:rule", "─" * (width - 1))])
        if game.over and game.winner is not None:
            out.append([("class:winner", self.t("winner", who=names[game.winner]))])
            out.append([("", self.t("game_over"))])
        else:
            if waiting:
                others = [s for s in waiting if s != me]
                left = self._time_left(game)
                if me in waiting and not others:
                    out.append([("class:turn", self.t("waiting_you", left=left))])
                else:
                    who = ", ".join(names[s] for s in others)
                    line = (self.t("waiting_for", who=who, left=left) if step is None
                            else self.t("waiting_step", who=who, step=step, left=left))
                    out.append([("class:wait", line)])
                    if secs >= VANISH_AFTER:
                        out.append([("class:warn", self.t("vanished", who=who, secs=int(secs)))])
                stuck = node.silent_without_majority()
                if stuck:
                    hand = node.status()
                    out.append([("class:warn", self.t(
                        "no_majority", who=", ".join(names[s] for s in stuck),
                        n=len(hand.holders) if hand is not None else len(names)))])
                    out.append([("class:warn", self.t("no_majority_hint"))])
            out.extend(self._card(game))
            out.extend(self._move_lines())
        if self.notice:
            out.append([("class:notice", self.notice)])
        out.append([("class:rule", f"─ {self.t('log')} " + "─" * max(width - 20, 0))])
        room = max(height - 2 - len(out) - 1, 1)
        out.extend([("class:log", line[:width - 1])] for line in self.log[-room:])
        return out

    def _step(self, game: Game) -> str | None:
        """What the protocol does now, or ``None`` when a seat's decision is awaited."""
        stage = self.table.human.stage
        if stage == Stage.PLAY:
            if game.phase == Phase.STOCK:
                return self.t("step_stock")
            if game.phase == Phase.SHOWDOWN:
                return self.t("step_showdown")
            return None
        return self.t(_STEPS.get(stage, "step_keys"))

    def _seat_line(self, game: Game, seat: int, name: str, turn: bool) -> Line:
        marks = []
        if seat == game.dealer:
            marks.append(self.t("dealer"))
        if game.order and game.forhand == seat and game.phase != Phase.DEAL:
            marks.append(self.t("forhand"))
        pos = game.position_of(seat)
        if not game.in_game[seat]:
            state = self.t("out")
        elif pos is not None and not game.alive[pos]:
            state = self.t("dead")
        else:
            state = self.t("alive")
        chips = self.t("chips", chips=game.chips[seat])
        cells = (f"{'▶' if turn else ' '} {name:<16.16} {chips:>10}"
                 f"  {self.t('buybacks', n=game.buybacks[seat]):<14} {state:<6} "
                 f"{' '.join(marks)}")
        style = "class:turnseat" if turn else ("class:deadseat" if state != self.t("alive")
                                               else "")
        return [(style, cells)]

    def _card(self, game: Game) -> list[Line]:
        node = self.table.human
        view = node.view
        me = node.my_seat
        if view is None or me is None:
            return []
        pos = game.position_of(me)
        if pos is None or not game.order:
            return [[("", f"{self.t('your_card')}: {self.t('no_card')}")]]
        rank = view.known.get(game.hold[pos])
        if rank is None:
            return [[("", f"{self.t('your_card')}: {self.t('hidden_card')}")]]
        name = rank_name(rank, self.lang).upper()
        inner = max(len(name) + 4, 14)
        info = self.t("rank_of", n=int(rank) + 1)
        if rank is Rank.KILLE and game.via_swap[pos]:
            info += "  " + self.t("swapped_kille")
        return [
            [("", f"{self.t('your_card')}:  "), ("class:card", "┌" + "─" * inner + "┐")],
            [("", " " * (len(self.t("your_card")) + 3)),
             ("class:card", "│" + name.center(inner) + "│"), ("class:rank", "  " + info)],
            [("", " " * (len(self.t("your_card")) + 3)), ("class:card", "└" + "─" * inner + "┘")],
        ]

    def _move_lines(self) -> list[Line]:
        request = self.table.decider.request
        if request is None:
            return []
        if self.sale is not None:
            if _same(self.sale.request, request):
                return self._sale_lines(self.sale)
            self.sale = None
        out: list[Line] = [[("class:moves", self.t("moves") + ":")]]
        out += [[("class:key", "   " + label)] for _, label in self._moves(request)]
        return out

    def _trust(self) -> Line:
        node = self.table.human
        if not node.outcomes:
            return []
        last = node.outcomes[-1]
        names = self._names()
        pnames = node.names

        def show(p: str) -> str:
            return names[pnames.index(p)] if p in pnames and names else p

        if last.voided:
            if last.accusations:
                acc = last.accusations[0]
                line = self.t("trust_void", n=last.hand, who=show(str(acc["by"])),
                              accused=show(str(acc["accused"])), reason=acc["reason"],
                              verdict=acc["verdict"])
            else:
                line = self.t("trust_void_plain", n=last.hand)
            if last.eliminated:
                line += "  " + self.t("expelled", who=", ".join(show(p) for p in last.eliminated))
            return [("class:warn", line)]
        died = ", ".join(show(p) for p in last.died) or self.t("nobody")
        if sorted(last.agreed_by) == sorted(last.holders):
            trust = self.t("trust_ok", n=last.hand, count=len(last.holders),
                           cp=last.checkpoint[:16])
            style = "class:ok"
        else:
            trust = self.t("trust_partial", n=last.hand, agreed=len(last.agreed_by),
                           count=len(last.holders))
            style = "class:warn"
        return [(style, trust), ("", "   " + self.t("died", n=last.hand, who=died))]

    def _audit(self, width: int) -> list[Line]:
        node = self.table.human
        done = [o for o in node.outcomes if not o.voided and o.hand in node.audits]
        if not done:
            return [[("", self.t("audit_none"))]]
        last = done[-1]
        audit = node.audits[last.hand]
        out: list[Line] = [
            [("class:moves", self.t("audit_title", n=last.hand))],
            [("", self.t("audit_steps", n=audit.shuffle_steps))],
            [("", self.t("audit_shares", n=audit.shares))],
            [("", self.t("audit_sigs", n=audit.signatures, count=len(last.holders)))],
            [("", self.t("audit_cp", cp=audit.checkpoint))],
        ]
        if node.config.mode == "strict":
            out += [[("", line)] for line in wrap(self.t("audit_proofs", n=audit.proofs),
                                                   width - 2)]
        names = self._names()
        if last.faces and audit.dealt and names:
            faces = ", ".join(f"{names[seat]} {RANKS[last.faces[token] >> 1].id}"
                              for token, seat in enumerate(audit.dealt))
            out += [[("", line)] for line in wrap(self.t("audit_faces", faces=faces),
                                                   width - 2)]
        older = ", ".join(f"{o.hand}:{o.checkpoint[:8]}" for o in done[:-1][-6:])
        if older:
            out.append([("", self.t("audit_older", hands=older)[:width - 1])])
        return out

    def _help(self, width: int) -> list[Line]:
        node = self.table.human
        options = node.config.options
        out: list[Line] = [[("class:moves", self.t("help_title"))], []]
        trust = "help_trust_strict" if node.config.mode == "strict" else "help_trust"
        for para in ("help_rules", trust):
            out += [[("", line)] for line in wrap(self.t(para), width - 2)]
            out.append([])
        ranks = ", ".join(rank_name(r, self.lang) for r in reversed(RANKS))
        out += [[("", line)] for line in wrap(self.t("help_order", ranks=ranks), width - 2)]
        out.append([])
        out.append([("class:moves", self.t("help_options", ruleset=node.config.ruleset))])
        for key, value in options.to_json().items():
            out.append([("", f"  {key}: {value}"[:width - 1])])
        out.append([])
        out += [[("", line)] for line in wrap(self.t("help_keys"), width - 2)]
        return out


def _same(a: Request | None, b: Request | None) -> bool:
    """Whether two requests ask the same question (the node asks again on every wake,
    each time with a fresh request)."""
    return a is not None and b is not None and (a.ask, a.at) == (b.ask, b.at)


def wrap(paragraph: str, width: int) -> list[str]:
    """``paragraph`` in lines of at most ``width`` characters (words kept whole)."""
    lines: list[str] = []
    line = ""
    for word in paragraph.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines
