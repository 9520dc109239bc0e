"""Drive the real application (pipe input, dummy output) with a simple player policy."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from prompt_toolkit.application import Application
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput

from cli.play import table_screen
from p2pkille.ui.app import build_app, play
from p2pkille.ui.human import Ask, Request
from p2pkille.ui.model import TableScreen
from p2pkille.ui.session import LocalTable, TableSpec, local_table


class FakeClock:
    """Seconds the test sets by hand (for the time shown and the vanish notice)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def setup(inp: PipeInput, *, bots: int = 3, seed: int = 11, chips: int = 3,
          lang: str = "en", ruleset: str = "wikipedia", output: DummyOutput | None = None,
          name: str = "Tester", mode: str = "audit"
          ) -> tuple[LocalTable, TableScreen, Application[int], FakeClock]:
    spec = TableSpec(bots=bots, seed=seed, chips=chips, ruleset=ruleset, name=name, mode=mode)
    table = local_table(spec)
    clock = FakeClock()
    screen = table_screen(table, spec, lang, clock, None, None)
    app = build_app(screen, input=inp, output=output or DummyOutput(), refresh=0.05)
    return table, screen, app, clock


def default_policy(request: Request) -> str:
    """Swap when the card is low, else keep; no cut; refuse votes and sales; decline
    buy-backs (so the game ends soon)."""
    view = request.view
    if request.ask is Ask.TURN:
        rank = view.rank
        return "s" if rank is None or int(rank) < 10 else "k"
    if request.ask is Ask.CUT:
        return "0"
    return "n"


async def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Until ``condition()``; ``timeout`` only bounds a test that fails (a stuck table),
    it is no margin the test relies on."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def answer_one(screen: TableScreen, inp: PipeInput,
                     policy: Callable[[Request], str] = default_policy) -> Request:
    """Wait for the player's next question and answer it with a key through the pipe."""
    decider = screen.table.decider
    await wait_for(lambda: decider.request is not None or _over(screen))
    request = decider.request
    assert request is not None, screen.text()
    inp.send_text(policy(request))
    # The node asks again on every wake, with a fresh request: wait for another question.
    await wait_for(lambda: not _same(decider.request, request))
    return request


def _same(a: Request | None, b: Request) -> bool:
    return a is not None and (a.ask, a.at) == (b.ask, b.at)


def _over(screen: TableScreen) -> bool:
    game = screen.game
    return game is not None and game.over


async def run_with(app: Application[int], table: LocalTable, screen: TableScreen,
                   body: Callable[[], Awaitable[None]], timeout: float = 240.0) -> int:
    """Run the application and the peers while ``body()`` (a coroutine) plays; then quit
    (unless the body made the player leave). The exit status ``play`` returned."""
    task = asyncio.create_task(play(table, screen, app))
    try:
        async with asyncio.timeout(timeout):
            await wait_for(lambda: app.is_running or task.done())
            await body()
    finally:
        if app.is_running:
            app.exit(result=0)
        status = await task
    return status
