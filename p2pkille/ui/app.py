"""The prompt-toolkit application around a :class:`~p2pkille.ui.model.TableScreen`.

One full-screen window whose text is the model rendered for the current terminal
size; every key goes to :meth:`TableScreen.press`. :func:`play` runs the table's
peers and the application on the same asyncio loop; when the peers fail, the
screen says why (never a traceback) and ``q`` leaves. Ctrl-C is a key here (the
terminal is in raw mode): it asks as ``q`` does on a screen that has ``interrupt``,
else leaves at once; the application's result is the exit status a shell expects,
0 after ``q`` and :data:`INTERRUPTED` (130) after Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final, Protocol

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from p2pkille.net.peer import LEAVE_LINGER
from p2pkille.ui.lan import LanLobby
from p2pkille.ui.model import Line, TableScreen
from p2pkille.ui.session import LocalTable

__all__ = ["INTERRUPTED", "STYLE", "Screen", "build_app", "describe_failure", "play",
           "play_lan"]

log = logging.getLogger(__name__)

STYLE: Final = Style.from_dict({
    "title": "bold",
    "pot": "bold",
    "rule": "#888888",
    "turnseat": "reverse bold",
    "deadseat": "#888888",
    "turn": "bold #00aa00",
    "wait": "#aaaa00",
    "warn": "bold #ff4444",
    "ok": "#00aa00",
    "card": "bold #ffffff bg:#004488",
    "rank": "bold",
    "moves": "bold underline",
    "key": "",
    "notice": "italic #ffaa00",
    "winner": "bold reverse",
    "footer": "reverse",
    "log": "",
})

#: The exit status after Ctrl-C: 128 + SIGINT, as a shell reports an interrupted command.
INTERRUPTED: Final = 130

#: Keys the screen understands by name; anything else is passed as its character.
_NAMED: Final = {Keys.Escape: "escape", Keys.Up: "up", Keys.Down: "down", Keys.Left: "left",
                 Keys.Right: "right", Keys.ControlM: "enter", Keys.ControlJ: "enter",
                 Keys.ControlH: "backspace", Keys.Backspace: "backspace",
                 Keys.ControlI: "tab", Keys.PageUp: "pageup", Keys.PageDown: "pagedown",
                 Keys.Home: "home", Keys.End: "end"}


class Screen(Protocol):
    """What the application shows and feeds keys to (a table or the lobby)."""

    notice: str
    quit: bool

    def render(self, width: int, height: int) -> list[Line]: ...

    def press(self, key: str) -> None: ...


def _status(screen: Screen) -> int:
    return INTERRUPTED if getattr(screen, "interrupted", False) else 0


def build_app(screen: Screen, *, input: Input | None = None,
              output: Output | None = None, refresh: float = 0.25) -> Application[int]:
    """The application; ``input``/``output`` default to the terminal (tests pass a pipe
    input and a dummy output)."""

    def fragments() -> StyleAndTextTuples:
        size = app.output.get_size()
        out: StyleAndTextTuples = []
        try:
            lines = screen.render(size.columns, size.rows)
        except Exception as exc:  # a bug here must not end the game with a traceback
            log.exception("render")
            lines = [[("class:warn", describe_failure(exc))], [("", "q: quit")]]
        for i, line in enumerate(lines):
            if i:
                out.append(("", "\n"))
            out.extend(line)
        return out

    bindings = KeyBindings()

    @bindings.add(Keys.Any)
    @bindings.add(Keys.Escape)
    @bindings.add(Keys.Up)
    @bindings.add(Keys.Down)
    @bindings.add(Keys.Left)
    @bindings.add(Keys.Right)
    @bindings.add(Keys.ControlM)
    @bindings.add(Keys.ControlJ)
    @bindings.add(Keys.ControlH)
    @bindings.add(Keys.Backspace)
    @bindings.add(Keys.ControlI)
    @bindings.add(Keys.PageUp)
    @bindings.add(Keys.PageDown)
    @bindings.add(Keys.Home)
    @bindings.add(Keys.End)
    def _key(event: KeyPressEvent) -> None:
        press = event.key_sequence[0]
        key = _NAMED.get(press.key) if isinstance(press.key, Keys) else press.data
        if key is None:
            return
        try:
            screen.press(key)
        except Exception as exc:  # a bug here must not end the game with a traceback
            log.exception("key %r", key)
            screen.notice = describe_failure(exc)
        if screen.quit:
            event.app.exit(result=_status(screen))

    @bindings.add(Keys.ControlC)
    def _interrupt(event: KeyPressEvent) -> None:
        ask = getattr(screen, "interrupt", None)
        if callable(ask):
            try:
                ask()
            except Exception as exc:  # a bug here must not keep the player in
                log.exception("interrupt")
                screen.notice = describe_failure(exc)
                screen.quit = True
            if screen.quit:
                event.app.exit(result=_status(screen))
            return
        screen.quit = True
        event.app.exit(result=INTERRUPTED)

    app: Application[int] = Application(
        layout=Layout(Window(FormattedTextControl(fragments), wrap_lines=False)),
        key_bindings=bindings, style=STYLE, full_screen=True, refresh_interval=refresh,
        input=input, output=output)
    return app


def describe_failure(exc: BaseException) -> str:
    """One line for the player: the innermost error's kind and message."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = str(exc) or "no details"
    return f"{type(exc).__name__}: {message}"


async def play(table: LocalTable, screen: TableScreen, app: Application[int]) -> int:
    """Run the peers and the screen until the player quits; the exit status."""
    peers = asyncio.create_task(table.run(), name="table peers")

    def ended(task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("the table failed", exc_info=exc)
            screen.fail(describe_failure(exc))
            app.invalidate()

    peers.add_done_callback(ended)
    try:
        status = await app.run_async()
    finally:
        table.stop()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(2):
                await peers
        if not peers.done():
            peers.cancel()
    return int(status or 0)  # a test's bare app.exit() gives None


async def play_lan(lan: LanLobby, screen: Screen, app: Application[int]) -> int:
    """Run the LAN lobby (browsing, then the player's table) and the screen until the
    player quits; the exit status."""
    lobby = asyncio.create_task(lan.run(), name="lan lobby")

    def ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("the lobby failed", exc_info=task.exception())
            lan.failure = describe_failure(task.exception() or Exception())
            app.invalidate()

    lobby.add_done_callback(ended)
    try:
        status = await app.run_async()
    finally:
        lan.stop()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            # At a table the player's peers sign their leaves and linger for them.
            async with asyncio.timeout(LEAVE_LINGER + 5):
                await lobby
        if not lobby.done():
            lobby.cancel()
    return int(status or 0)
