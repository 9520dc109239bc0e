"""The lobby screen of ``p2pkille play``: the tables on the LAN, the form to create one,
the wait until it is formed, then the table screen.

The list has one row per table name and creator, with the creator's key fingerprint;
joining a row binds to that creator. While a created table waits, every player asking for
a seat is shown by its key fingerprint, oldest first: ``a`` lets the first one in, ``r``
turns it away (the player's bots sit down without asking).

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
from p2pkille.ui.i18n import LANGS, text
from p2pkille.ui.lan import LanLobby, LanSession, LanTable, Listed, NewTable, Phase
from p2pkille.ui.model import MIN_HEIGHT, MIN_WIDTH, Line, TableScreen, wrap

__all__ = ["FIELDS", "Form", "LobbyScreen", "View"]

RULESETS: Final = tuple(PRESETS)
#: The form's fields in order: (name, text key).
FIELDS: Final = (("name", "form_name"), ("ruleset", "form_ruleset"), ("stake", "form_stake"),
                 ("chips", "form_chips"), ("seats", "form_seats"), ("bots", "form_bots"))
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
    field: int = 0

    def value(self) -> NewTable:
        """The table asked for (``ValueError`` naming the bad field)."""
        numbers = {}
        for name in ("stake", "chips", "seats", "bots"):
            raw = getattr(self, name)
            if not raw.isdigit():
                raise ValueError(f"{name}: type a whole number")
            numbers[name] = int(raw)
        return NewTable(self.name.strip(), self.ruleset, numbers["stake"], numbers["chips"],
                        numbers["seats"], numbers["bots"])


class LobbyScreen:
    """What ``p2pkille play`` shows before a table: see the module doc."""

    def __init__(self, lan: LanLobby, lang: str,
                 make_table: Callable[[LanTable], TableScreen]) -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
        self.lan = lan
        self.lang = lang
        self.make_table = make_table
        self.view = View.LIST
        self.selected = 0
        self.form = Form(text("form_default", lang, who=lan.player)[:64])
        self.notice = ""
        self.table_screen: TableScreen | None = None
        self._quit = False

    # ------------------------------------------------------------------ the app's view

    @property
    def quit(self) -> bool:
        return self._quit or (self.table_screen is not None and self.table_screen.quit)

    @quit.setter
    def quit(self, value: bool) -> None:
        self._quit = value

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
            except ValueError as exc:
                self.notice = self.t("form_bad", reason=str(exc))
        elif key == "l":
            self.lang = LANGS[(LANGS.index(self.lang) + 1) % len(LANGS)]
        else:
            self.notice = self.t("lan_key", key=key)

    def _form_key(self, key: str) -> None:
        form = self.form
        field = FIELDS[form.field][0]
        self.notice = ""
        if key == "escape":
            self.view = View.LIST
        elif key in ("up", "down", "tab"):
            step = -1 if key == "up" else 1
            form.field = (form.field + step) % len(FIELDS)
        elif key in ("left", "right"):
            step = -1 if key == "left" else 1
            if field == "ruleset":
                form.ruleset = RULESETS[(RULESETS.index(form.ruleset) + step) % len(RULESETS)]
            elif field != "name":
                raw = getattr(form, field)
                number = int(raw) if raw.isdigit() else 0
                setattr(form, field, str(min(max(number + step, 0), MAX_NUMBER)))
        elif key == "backspace":
            if field in ("name", "stake", "chips", "seats", "bots"):
                setattr(form, field, getattr(form, field)[:-1])
        elif key == "enter":
            try:
                new = form.value()
                self._watch(self.lan.create(new))
            except ValueError as exc:
                self.notice = self.t("form_bad", reason=str(exc))
        elif len(key) == 1 and key.isprintable():
            if field == "name":
                if len((form.name + key).encode()) <= 64:
                    form.name += key
            elif field == "ruleset":
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
                session.accept(waiting[0])
            else:
                session.refuse(waiting[0])
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
            body = self._list_lines(width)
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

    def _list_lines(self, width: int) -> list[Line]:
        lan = self.lan
        where = ", ".join(lan.interfaces) if lan.interfaces is not None else self.t("lan_all")
        out: list[Line] = [[("class:moves", self.t("lan_title", where=where))]]
        if lan.failure is not None:
            out.append([("class:warn", self.t("lan_broken", reason=lan.failure))])
        tables = lan.tables
        if not tables:
            out.append([("", self.t("lan_none"))])
        else:
            out.append([("class:rule", self.t("lan_head"))])
            self.selected = min(self.selected, len(tables) - 1)
            for i, listed in enumerate(tables):
                out.append(self._listed_line(listed, i == self.selected))
        out += [[], [("class:footer", self.t("lan_keys"))]]
        return out

    def _listed_line(self, listed: Listed, chosen: bool) -> Line:
        seats = f"{listed.taken}/{listed.wanted}"
        if listed.full:
            seats += " " + self.t("lan_full")
        creator = listed.creator if listed.creator_heard else (
            f"{listed.creator} {self.t('lan_gone')}")
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
            shown = f"◀ {value} ▶" if field == "ruleset" else value + ("_" if chosen else "")
            out.append([("class:turnseat" if chosen else "",
                         f"{'▶' if chosen else ' '} {self.t(label) + ':':<16} {shown}")])
        try:
            new = form.value()
            open_seats = new.seats - 1 - new.bots
            if open_seats > 0:
                out.append([("class:rule", "  " + self.t("form_open", n=open_seats))])
        except ValueError:
            pass
        out += [[], [("class:footer", self.t("form_keys"))]]
        return out

    def _wait_lines(self) -> list[Line]:
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
                    out.append([("class:notice", self.t("wait_asks", who=waiting[0]))])
                    if len(waiting) > 1:
                        out.append([("", self.t("wait_more", n=len(waiting) - 1))])
            elif session.settings.creator is not None:
                out.append([("", self.t("wait_join_by", table=offer.name,
                                        creator=session.settings.creator))])
            else:
                out.append([("", self.t("wait_join", table=offer.name))])
        out += [[], [("class:footer", self.t("wait_keys"))]]
        return out


def _quoted(name: str) -> str:
    """``name`` as a shell word, readable: in double quotes where that is enough."""
    quoted = shlex.quote(name)
    if quoted == name or any(c in name for c in '"$`\\!'):
        return quoted
    return f'"{name}"'
