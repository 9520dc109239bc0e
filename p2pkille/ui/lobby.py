"""The lobby screen of ``p2pkille play``: the tables on the LAN, the form to create one,
the wait until it is formed, then the table screen.

The list has one row per table name and creator, with the creator's key fingerprint (and
the name that key played under, if the player met it before); joining a row binds to that
creator. While a created table waits, every player asking for a seat is shown by its
signed name and key fingerprint, oldest first, with a warning if the name or the key
clashes with the players met before: ``a`` lets the first one in, ``r`` turns it away (the
player's bots sit down without asking). The create form's numbers stay within what the
ruleset allows, and every problem is said in the screen's language. Ctrl-C does what ``q``
does: it leaves the lobby, and at a table it asks first.

:class:`LobbyScreen` is a model like :class:`~p2pkille.ui.model.TableScreen` (``render``
gives lines of fragments, ``press`` takes one key) over a :class:`~p2pkille.ui.lan.
LanLobby`. Once the player's table is formed it hands every key and the whole window to
a table screen made by ``make_table``.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from p2pkille.engine.options import PRESETS
from p2pkille.runtime.config import MODES
from p2pkille.ui.i18n import LANGS, text
from p2pkille.ui.identity import Seated
from p2pkille.ui.lan import (
    FormError,
    Label,
    LanLobby,
    LanSession,
    LanTable,
    Listed,
    NewTable,
    Phase,
    most_bots,
    seat_range,
)
from p2pkille.ui.model import MIN_HEIGHT, MIN_WIDTH, Line, TableScreen, wrap
from p2pkille.ui.narration import clash_line
from p2pkille.ui.words import Cast

__all__ = ["FIELDS", "Form", "LobbyScreen", "View"]

RULESETS: Final = tuple(PRESETS)
#: The form's fields in order: (name, text key).
FIELDS: Final = (("name", "form_name"), ("ruleset", "form_ruleset"), ("stake", "form_stake"),
                 ("chips", "form_chips"), ("seats", "form_seats"), ("bots", "form_bots"),
                 ("mode", "form_mode"))
#: The fields that take a number.
NUMBERS: Final = ("stake", "chips", "seats", "bots")
MAX_NUMBER: Final = 10**6


class View(enum.Enum):
    LIST = "list"
    FORM = "form"
    WAIT = "wait"
    TABLE = "table"


@dataclass(slots=True)
class Form:
    """The create form as the player is filling it in (numbers as typed)."""

    name: str
    ruleset: str = "wikipedia"
    stake: str = "1"
    chips: str = "10"
    seats: str = "4"
    bots: str = "3"
    mode: str = "audit"
    field: int = 0

    def value(self) -> NewTable:
        """The table asked for (:class:`FormError` naming the bad field)."""
        numbers = {}
        for name in NUMBERS:
            raw = getattr(self, name)
            if not raw.isdigit():
                raise FormError("form_number", field=Label(next(
                    key for field, key in FIELDS if field == name)))
            numbers[name] = int(raw)
        return NewTable(self.name.strip(), self.ruleset, numbers["stake"], numbers["chips"],
                        numbers["seats"], numbers["bots"], self.mode)

    def step(self, field: str, by: int) -> None:
        """An arrow on ``field``: the next ruleset or mode, or the number one up or down,
        never out of what the table allows (seats within the ruleset's player counts, bots
        at most one fewer than the seats; fewer seats take bots away)."""
        if field == "ruleset":
            self.ruleset = RULESETS[(RULESETS.index(self.ruleset) + by) % len(RULESETS)]
            self._fit()
        elif field == "mode":
            self.mode = MODES[(MODES.index(self.mode) + by) % len(MODES)]
        elif field in NUMBERS:
            raw = getattr(self, field)
            number = int(raw) if raw.isdigit() else 0
            low, high = {"seats": seat_range(self.ruleset), "bots": (0, self._most_bots()),
                         "stake": (1, MAX_NUMBER), "chips": (1, MAX_NUMBER)}[field]
            setattr(self, field, str(min(max(number + by, low), high)))
            if field == "seats":
                self._fit()

    def _most_bots(self) -> int:
        return most_bots(int(self.seats)) if self.seats.isdigit() else 0

    def _fit(self) -> None:
        """Seats into the ruleset's range, bots into the seats'."""
        if self.seats.isdigit():
            low, high = seat_range(self.ruleset)
            self.seats = str(min(max(int(self.seats), low), high))
        if self.bots.isdigit():
            self.bots = str(min(int(self.bots), self._most_bots()))


class LobbyScreen:
    """What ``p2pkille play`` shows before a table: see the module doc."""

    def __init__(self, lan: LanLobby, lang: str,
                 make_table: Callable[[LanTable], TableScreen], *,
                 notice: str = "") -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
        self.lan = lan
        self.lang = lang
        self.make_table = make_table
        self.view = View.LIST
        self.selected = 0
        self.form = Form(text("form_default", lang, who=lan.player)[:64])
        self.notice = notice
        """A line under the screen until the next key (e.g. the identity just made)."""
        self.table_screen: TableScreen | None = None
        self._quit = False
        self._interrupted = False

    # ------------------------------------------------------------------ the app's view

    @property
    def quit(self) -> bool:
        return self._quit or (self.table_screen is not None and self.table_screen.quit)

    @quit.setter
    def quit(self, value: bool) -> None:
        self._quit = value

    @property
    def interrupted(self) -> bool:
        """The player left with Ctrl-C (the command exits with status 130)."""
        return self._interrupted or (self.table_screen is not None
                                     and self.table_screen.interrupted)

    def interrupt(self) -> None:
        """Ctrl-C: at a table, as ``q`` there (it asks first while the game is on); in the
        lobby, leave as ``q`` does."""
        if self.view is View.TABLE and self.table_screen is not None:
            self.table_screen.interrupt()
            return
        self._quit = True
        self._interrupted = True

    @property
    def session(self) -> LanSession | None:
        return self.lan.session

    def t(self, key: str, /, **fields: object) -> str:
        return text(key, self.lang, **fields)

    # ------------------------------------------------------------------ keys

    def press(self, key: str) -> None:
        """One key: ``"enter"``, ``"escape"``, ``"up"``, ..., or a character."""
        if self.view is View.TABLE and self.table_screen is not None:
            self.table_screen.press(key)
            return
        if self.view is View.FORM:
            self._form_key(key)
            return
        key = key.lower() if len(key) == 1 else key
        if self.view is View.WAIT:
            self._wait_key(key)
            return
        self._list_key(key)

    def _list_key(self, key: str) -> None:
        tables = self.lan.tables
        self.notice = ""
        if key in ("q", "escape"):
            self._quit = True
        elif key in ("up", "down"):
            if tables:
                step = -1 if key == "up" else 1
                self.selected = (self.selected + step) % len(tables)
        elif key == "c":
            self.view = View.FORM
        elif key in ("enter", "j"):
            if not tables:
                self.notice = self.t("lan_pick")
                return
            listed = tables[min(self.selected, len(tables) - 1)]
            if listed.full:
                self.notice = self.t("lan_is_full", table=listed.name)
                return
            try:
                self._watch(self.lan.join(listed))
            except FormError as exc:
                self.notice = self.t("lan_cannot_join", reason=exc.say(self.lang))
        elif key == "l":
            self.lang = LANGS[(LANGS.index(self.lang) + 1) % len(LANGS)]
        else:
            self.notice = self.t("lan_key", key=key)

    def _form_key(self, key: str) -> None:  # noqa: PLR0912  one branch per key of the create form
        form = self.form
        field = FIELDS[form.field][0]
        self.notice = ""
        if key == "escape":
            self.view = View.LIST
        elif key in ("up", "down", "tab"):
            step = -1 if key == "up" else 1
            form.field = (form.field + step) % len(FIELDS)
        elif key in ("left", "right"):
            if field != "name":
                form.step(field, -1 if key == "left" else 1)
        elif key == "backspace":
            if field == "name" or field in NUMBERS:
                setattr(form, field, getattr(form, field)[:-1])
        elif key == "enter":
            try:
                new = form.value()
                self._watch(self.lan.create(new))
            except FormError as exc:
                self.notice = self.t("form_bad", reason=exc.say(self.lang))
        elif len(key) == 1 and key.isprintable():
            if field == "name":
                if len((form.name + key).encode()) <= 64:
                    form.name += key
            elif field in ("ruleset", "mode"):
                self.notice = self.t("lan_key", key=key)
            elif key.isdigit() and len(getattr(form, field)) < 7:
                setattr(form, field, getattr(form, field) + key)
            else:
                self.notice = self.t("lan_key", key=key)
        else:
            self.notice = self.t("lan_key", key=key)

    def _wait_key(self, key: str) -> None:
        session = self.session
        waiting = session.waiting() if session is not None else []
        if key in ("a", "r") and session is not None and waiting:
            if key == "a":
                session.accept(waiting[0].fingerprint)
            else:
                session.refuse(waiting[0].fingerprint)
            self.notice = ""
        elif key == "escape":
            self.lan.leave()
            self.view = View.LIST
            self.notice = ""
        elif key == "q":
            self._quit = True
        elif key == "l":
            self.lang = LANGS[(LANGS.index(self.lang) + 1) % len(LANGS)]
        else:
            self.notice = self.t("lan_key", key=key)

    def _watch(self, session: LanSession) -> None:
        self.view = View.WAIT

        def on_table(table: LanTable) -> None:
            if self.lan.session is session:
                self.table_screen = self.make_table(table)
                self.table_screen.lang = self.lang
                self.view = View.TABLE

        def on_failure(reason: str) -> None:
            if self.table_screen is not None and self.lan.session is session:
                self.table_screen.fail(reason)

        session.on_table = on_table
        session.on_failure = on_failure

    # ------------------------------------------------------------------ rendering

    def render(self, width: int, height: int) -> list[Line]:
        if self.view is View.TABLE and self.table_screen is not None:
            return self.table_screen.render(width, height)
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            message = self.t("too_small", w=width, h=height, mw=MIN_WIDTH, mh=MIN_HEIGHT)
            return [[("class:warn", message[:max(width - 1, 10)])]]
        if self.view is View.FORM:
            body = self._form_lines()
        elif self.view is View.WAIT:
            body = self._wait_lines()
        else:
            notice = len(wrap(self.notice, width - 1)) + 1 if self.notice else 0
            body = self._list_lines(width, height - 2 - notice)
        lines: list[Line] = [[("class:title", self.t("title"))], [], *body]
        if self.notice:
            lines += [[], [("class:notice", self.notice)]]
        out: list[Line] = []
        for line in lines:
            if len(line) == 1 and len(line[0][1]) >= width:
                # One long message (a failure, a notice): wrapped, not cut.
                style, chunk = line[0]
                out += [[(style, part[:width - 1])] for part in wrap(chunk, width - 1)]
            else:
                out.append([(style, chunk[:width - 1]) for style, chunk in line])
        return out[:height]

    def text(self, width: int = 100, height: int = 40) -> str:
        """The screen as plain text (tests)."""
        return "\n".join("".join(t for _, t in line).rstrip()
                         for line in self.render(width, height))

    def _list_lines(self, width: int, room: int) -> list[Line]:
        """The tables heard, in ``room`` lines: a list longer than that scrolls with the
        marker (and says how many rows are above and below)."""
        lan = self.lan
        where = ", ".join(lan.interfaces) if lan.interfaces is not None else self.t("lan_all")
        out: list[Line] = [[("class:moves", self.t("lan_title", where=where))]]
        if lan.identity is not None:
            out.append([("", self.t("lan_you_are", player=lan.player,
                                    fp=lan.identity.public.fingerprint))])
        if lan.failure is not None:
            out.append([("class:warn", self.t("lan_broken", reason=lan.failure))])
        tables = lan.tables
        footer: list[Line] = [[], [("class:footer", self.t("lan_keys"))]]
        if not tables:
            out.append([("", self.t("lan_none"))])
            return out + footer
        out.append([("class:rule", self.t("lan_head"))])
        self.selected = min(self.selected, len(tables) - 1)
        rows = max(room - len(out) - len(footer), 3)
        top, end = 0, len(tables)
        if len(tables) > rows:
            shown = rows - 2  # room for "more above" and "more below"
            top = min(max(self.selected - shown // 2, 0), len(tables) - shown)
            end = top + shown
        if top:
            out.append([("class:rule", self.t("lan_above", n=top))])
        out += [self._listed_line(listed, i == self.selected)
                for i, listed in enumerate(tables[top:end], top)]
        if end < len(tables):
            out.append([("class:rule", self.t("lan_below", n=len(tables) - end))])
        return out + footer

    def _listed_line(self, listed: Listed, chosen: bool) -> Line:
        seats = f"{listed.taken}/{listed.wanted}"
        if listed.full:
            seats += " " + self.t("lan_full")
        creator = listed.creator if listed.creator_heard else (
            f"{listed.creator} {self.t('lan_gone')}")
        known = self.lan.known.name_of_fingerprint(listed.creator) \
            if self.lan.known is not None else None
        if known is not None:
            creator += f" {known}"
        cells = (f"{'▶' if chosen else ' '} {listed.name:<24.24} {listed.ruleset:<14.14} "
                 f"{listed.stake:<7} {seats:<10} {creator}  "
                 f"{self.t('lan_peers', n=listed.peers)}")
        return [("class:turnseat" if chosen else ("class:deadseat" if listed.full else ""),
                 cells)]

    def _form_lines(self) -> list[Line]:
        form = self.form
        out: list[Line] = [[("class:moves", self.t("form_title"))], []]
        for i, (field, label) in enumerate(FIELDS):
            value = getattr(form, field)
            chosen = i == form.field
            if field == "mode":
                value = self.t(f"form_mode_{value}")
            shown = f"◀ {value} ▶" if field in ("ruleset", "mode") \
                else value + ("_" if chosen else "")
            out.append([("class:turnseat" if chosen else "",
                         f"{'▶' if chosen else ' '} {self.t(label) + ':':<16} {shown}")])
        try:
            new = form.value()
            open_seats = new.seats - 1 - new.bots
            if open_seats > 0:
                out.append([("class:rule", "  " + self.t("form_open", n=open_seats))])
        except FormError:
            pass
        out += [[], [("class:footer", self.t("form_keys"))]]
        return out

    # One branch per lobby state the waiting screen tells.
    def _wait_lines(self) -> list[Line]:  # noqa: PLR0912
        session = self.session
        out: list[Line] = []
        if session is None:
            return [[("class:footer", self.t("wait_keys"))]]
        offer = session.settings.offer
        if session.phase is Phase.FAILED:
            out.append([("class:warn", self.t("wait_failed", reason=session.failure))])
        else:
            taken, wanted, accepted = session.progress()
            lobby = session.lobby
            if lobby is not None and lobby.formed:
                out.append([("class:ok", self.t("wait_start"))])
            elif lobby is not None and lobby.roster is not None:
                out.append([("", self.t("wait_accept", wanted=wanted, n=accepted))])
            elif session.creating:
                out.append([("", self.t("wait_create", table=offer.name, ruleset=offer.ruleset,
                                        stake=offer.stake, taken=taken, wanted=wanted,
                                        left=wanted - taken))])
                if session.bots:
                    out.append([("", self.t("wait_bots", n=session.bots_seated(),
                                            m=session.bots))])
                if wanted - 1 - session.bots > 0:
                    out.append([("class:rule", self.t("wait_open", table=_quoted(offer.name),
                                                      wanted=wanted))])
                waiting = session.waiting()
                if waiting:
                    out.append([("class:notice", self.t("wait_asks", who=self._who(waiting[0])))])
                    out += self._clash(waiting[0])
                    if len(waiting) > 1:
                        out.append([("", self.t("wait_more", n=len(waiting) - 1))])
            elif session.settings.creator is not None:
                creator = session.creator()
                out.append([("", self.t("wait_join_by", table=offer.name, creator=(
                    self._who(creator) if creator is not None
                    else session.settings.creator)))])
                if creator is not None and lobby is not None and lobby.roster is None:
                    out += self._clash(creator)
            else:
                out.append([("", self.t("wait_join", table=offer.name))])
            members = session.members()
            if members:
                out.append([("", self.t("wait_seated", who="; ".join(
                    self._who(m) for m in members)))])
                for member in members:
                    out += self._clash(member)
        out += [[], [("class:footer", self.t("wait_keys"))]]
        return out

    def _who(self, seated: Seated) -> str:
        """A member by its signed name and key fingerprint (bots marked)."""
        name = self.t("wait_bot", player=seated.name) if seated.bot and seated.name \
            else seated.name or self.t("wait_nameless")
        return self.t("wait_who", player=name, fp=seated.fingerprint)

    def _clash(self, seated: Seated) -> list[Line]:
        if seated.met is None:
            return []
        return [[("class:warn", "  " + clash_line(seated.met).text(self.lang, Cast(())))]]


def _quoted(name: str) -> str:
    """``name`` as a shell word, readable: in double quotes where that is enough."""
    quoted = shlex.quote(name)
    if quoted == name or any(c in name for c in '"$`\\!'):
        return quoted
    return f'"{name}"'
