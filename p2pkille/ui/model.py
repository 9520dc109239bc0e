"""The table screen as a model: what is shown and what each key does.

:class:`TableScreen` reads the human's node (its game view, outcomes and audits)
and the human decider's pending question. :meth:`TableScreen.render` gives lines of
``(style, text)`` fragments for a window size, :meth:`TableScreen.press` takes one key.
Nothing here draws or reads a terminal, so tests drive it directly; ``app`` wraps it
in a prompt-toolkit application.

The narration is a :class:`~p2pkille.ui.narration.Chronicle` of template lines, said
when drawn: ``l`` switches every line, and the seats' display names come from one
place, :meth:`PlayerTable.seat_names`. The player is always spoken to ("you", "du").
The whole game's narration is kept and wraps to the window; PgUp/PgDn and the arrow
keys scroll it (and the help and audit pages).
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from p2pkille.engine.events import Event
from p2pkille.engine.facts import AskRedeal, Keep, Sell, Swap, VoteChoice
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import BuybackTiming
from p2pkille.runtime.node import HandOutcome, Stage
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import Ask, HumanDecider, Request
from p2pkille.ui.i18n import LANGS, text
from p2pkille.ui.identity import Seated
from p2pkille.ui.layout import MIN_HEIGHT, MIN_WIDTH, Line, para, wrap
from p2pkille.ui.narration import Chronicle, Standing, clash_line, said
from p2pkille.ui.pages import audit_page, help_page
from p2pkille.ui.tableview import LOG_ROOM, card_line, header, seats
from p2pkille.ui.words import Card, Cast, Group, Person, Phrase

__all__ = ["LOG_ROOM", "MIN_HEIGHT", "MIN_WIDTH", "Line", "Mode", "PlayerTable", "SaleDraft",
           "TableScreen", "wrap"]

log = logging.getLogger(__name__)

#: Seconds without progress while waiting for another peer before the screen says so.
VANISH_AFTER: Final = 20.0


class PlayerTable(Protocol):
    """The table as the screen needs it: an in-process :class:`~p2pkille.ui.session.
    LocalTable` or a table formed over the LAN (:class:`~p2pkille.ui.lan.LanTable`)."""

    @property
    def human(self) -> HumanTableNode: ...

    @property
    def decider(self) -> HumanDecider: ...

    def seat_names(self) -> list[str]:
        """Display names in seat order (empty before the genesis seated everyone): the
        one place every screen and every narration line takes names from."""
        ...

    def seated(self) -> list[Seated]:
        """The members in seat order, with their keys, signed names, bot flags and what
        the player's known players say of them (empty before the genesis)."""
        ...

    def gone(self) -> list[int]:
        """Seats whose connection closed while the table plays."""
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
_SCROLL_KEYS: Final = frozenset({"up", "down", "pageup", "pagedown", "home", "end"})
#: Names that are the player's pronoun: shown in the screen's language.
_PRONOUNS: Final = frozenset({"you", "du"})


class TableScreen:
    """The screen of one player at a :class:`PlayerTable`; ``clock`` gives seconds.

    ``title`` names the table in a language (default: the table's signed name);
    ``log_path`` is where the player's node logs the game, ``log_problem`` why it does
    not (both told on the end screen)."""

    def __init__(self, table: PlayerTable, lang: str, clock: Callable[[], float], *,
                 title: Callable[[str], str] | None = None, log_path: str | None = None,
                 log_problem: str | None = None) -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
        self.table = table
        self.lang = lang
        self.clock = clock
        self.title = title
        self.log_path = log_path
        self.log_problem = log_problem
        self.mode = Mode.TABLE
        self.chronicle = Chronicle()
        self.notice = ""
        self.failure: str | None = None
        self.quit = False
        self.interrupted = False
        """The player left with Ctrl-C (the command exits with status 130)."""
        self._quit_armed = False
        self.scroll: dict[Mode, int] = dict.fromkeys(Mode, 0)
        """Per page: lines scrolled (the table's log: up from the newest line)."""
        self._page = 10
        self._progress: object = None
        self._since = clock()
        self._step_mark: object = None
        self._step_since = clock()
        self.sale: SaleDraft | None = None
        self.left_for_good = False
        """The player said no to buying back in, leaving the game: never asked again."""
        self._receipt: tuple[int, int, int] | None = None
        """(token, seat it came from, hand) of a card the player received face down and
        does not know yet: told once its face arrives."""
        self._awaited: dict[int, Phrase] = {}
        self._settled: set[tuple[Ask, int]] = set()
        self._timed = 0
        # the log wrapped for (language, names, player's seat, width): lines so far
        self._wkey: tuple[object, ...] = ()
        self._wlines: list[str] = []
        self._wcount = 0
        self._introduced = False
        table.human.listener = self._on_events
        table.human.on_outcome = self._on_outcome
        table.human.on_left = self._on_left
        self._told_left: set[int] = set()
        table.decider.on_request = self._on_request
        table.decider.standing = self._standing

    # ------------------------------------------------------------------ inputs

    def _on_events(self, events: list[Event], game: Game) -> None:
        node = self.table.human
        known = dict(node.view.known) if node.view is not None else {}
        me = node.my_seat
        self._introduce()
        self._settle_receipt()  # a face that arrived since is told before these events
        self._tell_timed()
        if any(e.kind in ("deal", "winner") for e in events):
            self.notice = ""  # what was said about the last hand is over
            self.sale = None
        try:
            self.chronicle.events(events, game, hand=self._next_hand(), known=known, me=me)
        except Exception:  # a narration bug must not take the table down
            log.exception("narrating %r", events)
        for event in events:
            if event.kind == "exchange" and me is not None and me in (event.seat, event.other):
                pos = game.position_of(me)
                giver = event.other if event.seat == me else event.seat
                if pos is not None and giver is not None:
                    self._receipt = (game.hold[pos], giver, game.hand_no)
        self._settle_receipt()
        self._follow()

    def _on_left(self, seats: tuple[int, ...]) -> None:
        """A player quit (its signed leave arrived): said at once, in the log."""
        me = self.table.human.my_seat
        for seat in seats:
            if seat != me and seat not in self._told_left:
                self._told_left.add(seat)
                self.chronicle.add(said("left_table", indent=0, a=Person(seat)))

    def _on_outcome(self, outcome: HandOutcome, before: Standing | None) -> None:
        if not outcome.voided:
            return
        node = self.table.human
        game = self.game
        if game is None:
            return
        seat_of = {name: seat for seat, name in enumerate(node.names)}
        try:
            self.chronicle.void(outcome.hand, outcome.accusations,
                                [seat_of[p] for p in outcome.eliminated if p in seat_of],
                                seat_of, before, game, dict(self._awaited), set(node.left))
        except Exception:
            log.exception("narrating the void of hand %d", outcome.hand)
        self._follow()

    def _introduce(self) -> None:
        """Once the seats are known: warn of every name that clashes with the player's
        known players (a known name under a new key, a known key under a new name, a bot
        under a person's name), first in the log."""
        if self._introduced:
            return
        seated = self.table.seated()
        if not seated:
            return
        self._introduced = True
        for member in seated:
            if member.met is not None:
                self.chronicle.add(clash_line(member.met))

    def _tell_timed(self) -> None:
        """Decisions the table gave their default (the seat did not decide in time)."""
        timed = self.table.human.timed_decisions
        for _, seat, _ in timed[self._timed:]:
            self.chronicle.add(said("timed_decision", a=Person(seat)))
        self._timed = len(timed)

    def _follow(self) -> None:
        """New lines keep a scrolled-up log where it is (the newest stay below)."""
        if self.scroll[Mode.TABLE] and self._wkey:
            before = len(self._wlines)
            width = self._wkey[-1]
            assert isinstance(width, int)
            self.scroll[Mode.TABLE] += max(len(self._wrapped(width)) - before, 0)

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
        me = node.my_seat
        assert me is not None
        self.chronicle.add(said("received", a=Person(me), b=Person(giver), card=Card(rank)))

    def _on_request(self, request: Request) -> None:
        self.notice = ""

    def _standing(self, request: Request) -> object | None:
        """Answers the player settled already: no buy-back after leaving for good, none
        and no purchase the player cannot pay (said once in the log)."""
        view = request.view
        key = (request.ask, request.at)
        me = Person(view.seat)
        if request.ask is Ask.BUYIN:
            if self.left_for_good:
                return False
            if view.price > view.chips:
                if key not in self._settled:
                    self._settled.add(key)
                    self.chronicle.add(said("bb_poor", a=me, price=view.price, n=view.chips))
                return False
        if request.ask is Ask.SALE and view.sale is not None and view.sale[1] > view.chips:
            if key not in self._settled:
                self._settled.add(key)
                self.chronicle.add(said("sale_poor", a=me, b=Person(view.sale[0]),
                                        price=view.sale[1], n=view.chips))
            return False
        return None

    def fail(self, reason: str) -> None:
        """The table stopped (a bug, a failed peer): shown instead of a traceback."""
        self.failure = reason

    def t(self, name: str, **fields: object) -> str:
        return text(name, self.lang, **fields)

    # ------------------------------------------------------------------ state

    @property
    def log(self) -> list[str]:
        """The narration so far, in the screen's language, one line per entry."""
        return self.said_in(self.lang)

    def said_in(self, lang: str) -> list[str]:
        """The narration so far in ``lang``."""
        cast = self.cast()
        return [line.text(lang, cast) for line in self.chronicle.lines]

    def cast(self) -> Cast:
        """Who is who, for every sentence: the table's names and the player's seat."""
        return Cast(self.table.seat_names(), self.table.human.my_seat)

    def _wrapped(self, width: int) -> list[str]:
        """The log in the screen's language wrapped to ``width`` (kept, and extended as
        lines come)."""
        cast = self.cast()
        key = (self.lang, tuple(cast.names), cast.me, self.chronicle.edits, width)
        if key != self._wkey:
            self._wkey, self._wlines, self._wcount = key, [], 0
        for line in self.chronicle.lines[self._wcount:]:
            self._wlines += wrap(line.text(self.lang, cast), width - 1, line.indent + 2,
                                 keep_indent=True)
        self._wcount = len(self.chronicle.lines)
        return self._wlines

    def seat_label(self, seat: int, names: list[str] | None = None) -> str:
        """A seat's name in lists: the player's name with "(you)", or the pronoun."""
        names = self.table.seat_names() if names is None else names
        if not 0 <= seat < len(names):
            return "?"
        name = names[seat]
        if seat != self.table.human.my_seat:
            return name
        you = self.t("you")
        if name.strip().lower() in _PRONOUNS:
            return you.capitalize()
        return f"{name} ({you})"

    @property
    def game(self) -> Game | None:
        view = self.table.human.view
        return None if view is None else view.game

    def _next_hand(self) -> int:
        """The table's number of the hand being dealt: every dealt hand counts, a voided
        one too, so the narration, the header and the audit agree."""
        outcomes = self.table.human.outcomes
        return outcomes[-1].hand + 1 if outcomes else 1

    def hand_number(self) -> int:
        """The table's number of the hand under way (the last one once the game is over)."""
        node = self.table.human
        done = node.outcomes[-1].hand if node.outcomes else 0
        return max(done, 1) if node.stage == Stage.DONE else done + 1

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

    def _in_game(self) -> bool:
        """Whether the player still plays (leaving now makes the others wait)."""
        game, me = self.game, self.table.human.my_seat
        if game is None or me is None:
            return True
        return not game.over and game.in_game[me]

    # ------------------------------------------------------------------ keys

    # One return per key that changes the screen's mode.
    def press(self, key: str) -> None:  # noqa: PLR0911
        """One key (``"k"``, ``"escape"``, ``"up"``, ``"pageup"``, ...; ``"interrupt"``
        for Ctrl-C); letters in either case."""
        key = key.lower() if len(key) == 1 else key
        if key in ("q", "interrupt"):
            self._leave(key)
            return
        self._quit_armed = False
        if self.sale is not None and self.mode is Mode.TABLE and key not in (
                "h", "a", "l", "pageup", "pagedown", "home", "end"):
            self._sale_key(key, self.sale)
            return
        if key == "h":
            self.mode = Mode.TABLE if self.mode is Mode.HELP else Mode.HELP
            self.scroll[Mode.HELP] = 0
            return
        if key == "a":
            self.mode = Mode.TABLE if self.mode is Mode.AUDIT else Mode.AUDIT
            self.scroll[Mode.AUDIT] = 0
            return
        if key == "escape":
            self.mode = Mode.TABLE
            return
        if key == "l":
            self.lang = LANGS[(LANGS.index(self.lang) + 1) % len(LANGS)]
            return
        if key in _SCROLL_KEYS:
            self._scroll(key)
            return
        self.mode = Mode.TABLE
        self._move(key)

    def interrupt(self) -> None:
        """Ctrl-C: as ``q``."""
        self.press("interrupt")

    def _leave(self, key: str) -> None:
        """``q`` or Ctrl-C: leave at once when the game is over or failed, else ask first."""
        game = self.game
        if self._quit_armed or self.failure is not None or (game is not None and game.over):
            self.quit = True
            self.interrupted = key == "interrupt"
            return
        self._quit_armed = True

    def _scroll(self, key: str) -> None:
        page = max(self._page - 1, 1)
        step = {"up": 1, "down": -1, "pageup": page, "pagedown": -page}.get(key, 0)
        if self.mode is not Mode.TABLE:
            step = -step  # pages scroll down from their top; the log up from its bottom
        if key == "home":
            step = 10**9 if self.mode is Mode.TABLE else -10**9
        elif key == "end":
            step = -10**9 if self.mode is Mode.TABLE else 10**9
        self.scroll[self.mode] = max(0, self.scroll[self.mode] + step)

    def _move(self, key: str) -> None:
        game = self.game
        if game is not None and game.over:
            self.notice = self.t("game_over")
            return
        request = self.table.decider.request
        if request is None:
            waiting = [s for s in self._waiting() if s != self.table.human.my_seat]
            if waiting and self.table.seat_names():
                self.notice = self.say("why_not_yours", who=Group(tuple(waiting)))
            else:
                self.notice = self.t("why_nothing")
            return
        answer, what = self._answer(request, key)
        if answer is None:
            return
        self.table.decider.answer(answer)
        self.notice = self.t("sent", what=what)
        self.table.decided()
        if request.ask is Ask.BUYIN and answer is False:
            me = Person(request.view.seat)
            if key == "w":
                self.chronicle.add(said("bb_later", a=me))
            elif request.view.options.buyback_timing is BuybackTiming.ANY_LATER:
                self.left_for_good = True
                self.chronicle.add(said("bb_left", a=me))

    # The key map: one return per request kind and key.
    def _answer(self, request: Request, key: str) -> tuple[object, str]:  # noqa: PLR0911, PLR0912
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
                    return self._why("why_no_sell" if view.options.card_selling
                                     else "why_no_selling")
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
                return True, self.t("l_buyin", price=view.price)
            if key in _NO:
                return False, self.t("l_leave")
            if key == "w" and self._may_wait(view.game):
                return False, self.t("l_wait")
        return self._why("why_key", key=key, keys=keys)

    def _may_wait(self, game: Game) -> bool:
        """Whether a dead seat that says no now may still buy back in before a later hand
        (any-later buy-backs; not the two-left buy-in, which a no ends for good)."""
        opts = game.options
        two_left = opts.two_left_buyin and game.n_in == 2
        return opts.buyback_timing is BuybackTiming.ANY_LATER and not two_left

    # One return per key of the sale being put together.
    def _sale_key(self, key: str, draft: SaleDraft) -> None:  # noqa: PLR0911
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
        buyer = draft.buyer
        if not draft.price:
            self.notice = self.t("why_sale_price")
            return
        price = int(draft.price)
        chips = draft.request.view.game.chips[buyer]
        if price > chips:
            self.notice = self.say("why_sale_poor", a=Person(buyer), n=chips, price=price)
            return
        self.sale = None
        self.table.decider.answer(Sell(draft.request.view.seat, buyer, price))
        self.notice = self.t("sent", what=self.say("l_sell", a=Person(buyer), price=price))
        self.table.decided()

    def say(self, key: str, **fields: object) -> str:
        """A screen text with persons in it (``Person``, ``Group``)."""
        return text(key, self.lang, self.cast(), **fields)

    def _sale_lines(self, draft: SaleDraft, width: int) -> list[Line]:
        buyer = draft.buyer
        who = self.seat_label(buyer)
        chips = draft.request.view.game.chips[buyer]
        more = len(draft.buyers) > 1
        to = f"◀ {who} ▶" if more else who
        out = [[("class:moves", self.t("sale_title") + ":")]]
        out += para("class:key", "   " + self.t("sale_to", to=to, chips=chips)
                     + ("   " + self.t("sale_more") if more else ""), width, 3)
        out.append([("class:key", "   " + self.t("sale_price")), ("class:card", f" {draft.price} "),
                    ("class:key", "   " + self.t("sale_price_keys"))])
        out += para("class:key", "   " + self.t("sale_keys"), width, 3)
        return out

    def _why(self, name: str, **fields: object) -> tuple[None, str]:
        self.notice = self.t(name, **fields)
        return None, ""

    def _moves(self, request: Request) -> list[tuple[str, str]]:
        """(key, label) of every move open now."""
        view = request.view
        yes = "j" if self.lang == "sv" else "y"
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
            return [(yes, self.say("k_buy", a=Person(seller), price=price)),
                    ("n", self.t("k_nobuy"))]
        if ask is Ask.CUT:
            top = max(min(len(view.game.stock) - 1, 9), 0)
            return [(f"0-{top}", self.t("k_cut", n=top))]
        moves = [(yes, self.t("k_buyin", price=view.price, chips=view.chips))]
        if self._may_wait(view.game):
            moves.append(("w", self.t("k_wait")))
            moves.append(("n", self.t("k_leave")))
        else:
            moves.append(("n", self.t("k_decline")))
        return moves

    # ------------------------------------------------------------------ rendering

    def render(self, width: int, height: int) -> list[Line]:
        """The screen for a ``width`` x ``height`` window, one list of fragments a line."""
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            message = self.t("too_small", w=width, h=height, mw=MIN_WIDTH, mh=MIN_HEIGHT)
            return [[("class:warn", line)] for line in wrap(message, max(width - 1, 10))]
        head = self._title(width)
        footer: Line = [("class:footer", self.t("footer_back") if self.mode is not Mode.TABLE
                         else self.t("footer"))]
        room = height - len(head) - 1
        if self.mode is Mode.TABLE:
            body = self._table(width, room)
        else:
            page = help_page(self, width) if self.mode is Mode.HELP else audit_page(self, width)
            self._page = room
            top = min(self.scroll[self.mode], max(len(page) - room, 0))
            self.scroll[self.mode] = top
            body = page[top:top + room]
            if top + room < len(page) and body:
                body[-1] = [("class:rule", self.t("more_below"))]
        lines = [*head, *body][:height - 1]
        while len(lines) < height - 1:
            lines.append([])
        lines.append(footer)
        return lines

    def text(self, width: int = 100, height: int = 40) -> str:
        """The screen as plain text (tests, logs)."""
        return "\n".join("".join(t for _, t in line).rstrip()
                         for line in self.render(width, height))

    def _title(self, width: int) -> list[Line]:
        config = self.table.human.config
        name = self.title(self.lang) if self.title is not None else config.name
        mode = self.t("mode_strict" if config.mode == "strict" else "mode_audit")
        return para("class:title", self.t("table_title", table=name, ruleset=config.ruleset,
                                           stake=config.stake, mode=mode), width)

    def _table(self, width: int, room: int) -> list[Line]:
        self._introduce()
        self._settle_receipt()
        node = self.table.human
        out: list[Line] = []
        game = self.game
        if self.failure is not None:
            out += para("class:warn", self.t("failed", reason=self.failure), width)
        if game is None or node.stage <= Stage.ACCEPT:
            out += para("", self.t("starting"), width)
            out += self._leaving(width)
            return out
        secs = self._tick()
        names = self.table.seat_names()
        out += header(self, width, game)
        out.append([("class:rule", "─" * (width - 1))])
        waiting = self._waiting()
        step = self._step(game)
        self._note_awaited(game, waiting, step)
        out += seats(self, game, names, waiting, step, width, room)
        out.append([("class:rule", "─" * (width - 1))])
        if game.over and game.winner is not None:
            out += para("class:winner", self.say("winner", a=Person(game.winner)), width)
            out += para("", self.t("game_over"), width)
            if self.log_path is not None:
                out += para("class:ok", self.t("log_saved", path=self.log_path), width)
                out += para("class:ok", self.t("log_verify", path=self.log_path), width)
            elif self.log_problem is not None:
                out += para("class:warn", self.t("log_failed", reason=self.log_problem),
                             width)
        else:
            out += self._status(game, waiting, step, secs, width)
            out += self._gone(game, width)
            out += card_line(self, game)
            out += self._move_lines(width)
        if self.notice:
            out += para("class:notice", self.notice, width)
        out += self._leaving(width)
        log_room = max(room - len(out) - 1, 1)
        out += self._log_view(width, log_room)
        return out

    def _leaving(self, width: int) -> list[Line]:
        if not self._quit_armed:
            return []
        key = "quit_confirm_wait" if self._in_game() else "quit_confirm"
        limit = int(self.table.human.timing.decide_limit)
        return para("class:warn", self.t(key, limit=limit), width)

    def _log_view(self, width: int, room: int) -> list[Line]:
        wrapped = self._wrapped(width)
        self._page = room
        top_limit = max(len(wrapped) - room, 0)
        scroll = min(self.scroll[Mode.TABLE], top_limit)
        self.scroll[Mode.TABLE] = scroll
        end = len(wrapped) - scroll
        shown = wrapped[max(end - room, 0):end]
        if scroll:
            hint = self.t("log_scrolled", n=scroll)
        elif top_limit:
            hint = self.t("log_hint")
        else:
            hint = ""
        title = f"─ {self.t('log')} " + (f"({hint}) " if hint else "")
        head: Line = [("class:rule", title + "─" * max(width - 1 - len(title), 0))]
        return [head, *[[("class:log", line)] for line in shown]]

    def _note_awaited(self, game: Game, waiting: tuple[int, ...], step: str | None) -> None:
        """What the table waits for from each seat (said if its time-out voids the hand)."""
        stage = self.table.human.stage
        for seat in waiting:
            if step is None:
                self._awaited[seat] = Phrase("step_decision", {"a": Person(seat)})
            elif stage == Stage.PLAY:
                phase = "step_stock" if game.phase == Phase.STOCK else "step_showdown"
                self._awaited[seat] = Phrase(phase)
            else:
                self._awaited[seat] = Phrase(_STEPS.get(stage, "step_keys"))

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

    def _status(self, game: Game, waiting: tuple[int, ...], step: str | None, secs: float,
                width: int) -> list[Line]:
        node = self.table.human
        me = node.my_seat
        out: list[Line] = []
        if not waiting:
            return out
        others = tuple(s for s in waiting if s != me)
        left = self._time_left(game)
        if me in waiting and not others:
            return para("class:turn", self.t("waiting_you", left=left), width)
        who = Group(others)
        line = (self.say("waiting_for", who=who, left=left) if step is None
                else self.say("waiting_step", who=who, step=step, left=left))
        out += para("class:wait", line, width)
        if secs >= VANISH_AFTER:
            out += para("class:warn", self.say("vanished", who=who, secs=int(secs),
                                                 left=left), width)
        stuck = node.silent_without_majority()
        if stuck:
            hand = node.status()
            out += para("class:warn", self.say(
                "no_majority", who=Group(stuck),
                n=len(hand.holders) if hand is not None else len(self.table.seat_names())),
                width)
            out += para("class:warn", self.t("no_majority_hint"), width)
        return out

    def _gone(self, game: Game, width: int) -> list[Line]:
        """Players whose connection closed while still in the game without a signed leave
        (a crash, or the network between us): said at once, with what the table does
        about it (it waits for their time-out)."""
        left = set(self.table.human.left)  # settled at once: the log said so
        gone = tuple(s for s in self.table.gone() if game.in_game[s] and s not in left)
        if not gone:
            return []
        timing = self.table.human.timing
        return para("class:warn", self.say("gone", who=Group(gone), limit=int(
            max(timing.limit, timing.decide_limit))), width)

    def _move_lines(self, width: int) -> list[Line]:
        request = self.table.decider.request
        if request is None:
            return []
        if self.sale is not None:
            if _same(self.sale.request, request):
                return self._sale_lines(self.sale, width)
            self.sale = None
        out: list[Line] = []
        if request.ask is Ask.BUYIN:
            view = request.view
            game = view.game
            limit = view.options.buyback_limit
            if view.options.two_left_buyin and game.n_in == 2:
                count = self.t("buyin_two_left")
            else:
                count = self.t("buyin_count", nth=game.buybacks[view.seat] + 1,
                               of="" if limit is None else self.t("buyin_of", n=limit))
            out += para("class:moves", self.t("buyin_ask", price=view.price, chips=view.chips,
                                               count=count), width)
        title = self.t("moves") + ":"
        labels = [label for _, label in self._moves(request)]
        rows: list[str] = [title]
        for label in labels:
            if len(rows[-1]) + 3 + len(label) <= width - 1:
                rows[-1] += "   " + label
            else:
                rows.append("   " + label)
        out += [[("class:moves", row[:len(title)]), ("class:key", row[len(title):])]
                if row.startswith(title) else [("class:key", row)] for row in rows]
        return out


def _same(a: Request | None, b: Request | None) -> bool:
    """Whether two requests ask the same question (the node asks again on every wake,
    each time with a fresh request)."""
    return a is not None and b is not None and (a.ask, a.at) == (b.ask, b.at)


