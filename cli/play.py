"""``p2pkille play``: the terminal game.

``p2pkille play --bots N`` starts a table of the player and N bot peers at once, each
a real peer of the protocol with its own keys, all in this process, and opens the
full-screen table. The narration reuses ``p2pkille selfplay``'s wording (the
traditional calls with an English gloss). Bad arguments exit with status 2 and one
line on stderr; a terminal the game cannot use exits with status 1 and one line.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Final, cast

from cli import selfplay
from cli.args import BadArgs as _BadArgs
from cli.args import whole_number
from p2pkille.engine.cards import Rank
from p2pkille.engine.events import Event
from p2pkille.engine.machine import Game
from p2pkille.engine.options import PRESETS
from p2pkille.engine.referee import Referee
from p2pkille.ui.app import build_app, play
from p2pkille.ui.i18n import LANGS, default_lang
from p2pkille.ui.model import TableScreen
from p2pkille.ui.session import BOT_NAMES, TableSpec, local_table

BAD_ARGS: Final = 2
DEFAULT_BOTS: Final = 3
DEFAULT_PACE: Final = 0.7


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play Byteskille in the terminal (with --bots N: against N bot peers)",
        description=(
            "Opens the full-screen table. --bots N starts a table with N bot peers at "
            "once, each a real peer of the protocol. Keys are shown on screen; h shows "
            "the rules and keys. Exit status 2 and one line on stderr for bad arguments."
        ),
    )
    parser.add_argument("--bots", default=str(DEFAULT_BOTS),
                        help=f"bot peers at your table (default {DEFAULT_BOTS})")
    parser.add_argument("--ruleset", default="wikipedia",
                        help=f"one of {', '.join(PRESETS)} (default wikipedia)")
    parser.add_argument("--stake", default="1", help="base stake (default 1)")
    parser.add_argument("--chips", default="10", help="starting chips per seat (default 10)")
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--lang", default=None, choices=LANGS,
                        help="sv or en (default from the locale)")
    parser.add_argument("--interface", action="append", default=[], metavar="ADDR",
                        help="limit LAN discovery to this address (repeatable); a table "
                             "with bots runs inside this process and needs no network")
    parser.add_argument("--seed", default=None,
                        help="derive every key and secret from this number (reproducible "
                             "games for tests; default: fresh randomness)")
    parser.add_argument("--pace", default=str(DEFAULT_PACE), metavar="SECONDS",
                        help=f"how long each bot takes over a decision, so you can follow "
                             f"(default {DEFAULT_PACE}; 0: at once)")
    parser.add_argument("--log", default=None, metavar="FILE",
                        help="write diagnostics to FILE (default: nowhere)")
    parser.set_defaults(func=run)


def spec_from(args: argparse.Namespace) -> tuple[TableSpec, str]:
    """The table and the language the arguments ask for (``_BadArgs`` if they are bad)."""
    ruleset = str(args.ruleset)
    if ruleset not in PRESETS:
        raise _BadArgs(f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}")
    options = PRESETS[ruleset]
    bots = whole_number("bots", args.bots, 1)
    low, high = options.min_players, min(options.max_players, len(BOT_NAMES) + 1)
    if not low <= bots + 1 <= high:
        raise _BadArgs(f"--bots {bots}: {ruleset} at this table plays with {low}..{high} "
                       f"players, you included, so {low - 1}..{high - 1} bots")
    stake = whole_number("stake", args.stake, 1)
    chips = whole_number("chips", args.chips, 1)
    if chips < stake:
        raise _BadArgs(f"--chips {chips} must cover the stake {stake}")
    seed = None if args.seed is None else whole_number("seed", args.seed, 0)
    try:
        pace = float(args.pace)
    except ValueError:
        raise _BadArgs(f"--pace must be a number of seconds, got {args.pace!r}") from None
    if not 0 <= pace <= 30:
        raise _BadArgs(f"--pace must be 0..30 seconds, got {args.pace}")
    lang = args.lang or default_lang(os.environ)
    name = args.name if args.name is not None else ("Du" if lang == "sv" else "You")
    name = name.strip()
    if not name or len(name) > 16 or name in BOT_NAMES:
        raise _BadArgs(f"--name {name!r}: need 1..16 characters, not a bot's name")
    return TableSpec(bots=bots, ruleset=ruleset, stake=stake, chips=chips, name=name,
                     seed=seed, pace=pace), lang


class _Hidden:
    """A face the player does not know, for the narration's exchange line."""

    id = "?"


class _Faces:
    """The referee's ``face_of`` as far as this player knows faces."""

    def __init__(self, known: Mapping[int, Rank]) -> None:
        self.known = known

    def face_of(self, token: int) -> Rank | _Hidden:
        return self.known.get(token, _Hidden())


def narrate(event: Event, game: Game, names: Sequence[str], known: Mapping[int, Rank]) -> str:
    """``selfplay``'s words for ``event``, with the player's names and known faces."""
    teller = selfplay._Teller(game, cast(Referee, _Faces(known)), cast(selfplay._Setup, None))
    teller.names = tuple(names) if names else game.names
    said = teller.tell(event, {})
    if event.kind == "deal":
        said = said.split("\n")[0]  # the faces line: a peer sees only its own card
    return said.rstrip()


def run(args: argparse.Namespace) -> int:
    try:
        spec, lang = spec_from(args)
    except _BadArgs as exc:
        print(exc, file=sys.stderr)
        return BAD_ARGS
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("p2pkille play needs a terminal (stdin and stdout a tty)", file=sys.stderr)
        return 1
    if args.log:
        logging.basicConfig(filename=args.log, level=logging.INFO)
    else:
        # The full screen owns the terminal: nothing may print over it.
        logging.getLogger().addHandler(logging.NullHandler())
        logging.lastResort = None
    return asyncio.run(_main(spec, lang))


async def _main(spec: TableSpec, lang: str) -> int:
    table = local_table(spec)
    loop = asyncio.get_running_loop()
    screen = TableScreen(table, narrate, lang, loop.time)
    app = build_app(screen)
    await play(table, screen, app)
    return 0
