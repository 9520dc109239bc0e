"""``p2pkille play``: the terminal game.

``p2pkille play`` opens the lobby: the tables heard on the LAN (zeroconf on the
``--interface`` addresses, default every interface), join one, or create one with a form
(name, ruleset, stake, chips, seats, bots); a created table is formed over the TCP mesh
like ``p2pkille peer --create``, its bots are peers joining over the mesh from this
process. ``p2pkille play --bots N`` starts a table of the player and N bot peers at once,
each a real peer of the protocol with its own keys, all in this process, and opens the
full-screen table. ``--bots`` takes any player count the ruleset allows (wikipedia 3-15
players, bytes-kille 2-38, enkortskille 2-20). Every game of the player's node is logged
in the user's data directory (``p2pkille/games/``; the end screen and the last line
printed say where) for ``p2pkille verify``, a LAN game too.

The player is one identity from game to game: a key and a display name kept in the user's
configuration directory (``identity.json``; ``--identity FILE`` names another), made on
first use (the command says so). ``--name`` plays under that name and keeps it. At a LAN
table the name is signed into the lobby, so the others see it (with the key's
fingerprint); the names met are remembered by key, and a known name under a new key (or a
known key under a new name) is warned of. ``--limit`` and ``--decide-limit`` set how long
the player's peers wait for a silent seat before they vote its time out.

Bad arguments exit with status 2 and one line on stderr; an identity file that cannot be
used, or a terminal the game cannot use, exits with status 1 and one line; leaving with
Ctrl-C exits with status 130, as a shell expects.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from cli.args import BadArgs as _BadArgs
from cli.args import whole_number
from p2pkille.engine.options import PRESETS
from p2pkille.net.lobby import player_name_problem
from p2pkille.runtime.config import MODES
from p2pkille.runtime.node import Timing
from p2pkille.ui.app import build_app, play, play_lan
from p2pkille.ui.gamelog import new_log_path
from p2pkille.ui.i18n import LANGS, default_lang, text
from p2pkille.ui.identity import IdentityError, Profile, open_profile
from p2pkille.ui.lan import LanLobby, LanTable, lan_address
from p2pkille.ui.lobby import LobbyScreen
from p2pkille.ui.model import TableScreen
from p2pkille.ui.session import BOT_NAMES, LocalTable, TableSpec, local_table

BAD_ARGS: Final = 2
DEFAULT_BOTS: Final = 3
DEFAULT_PACE: Final = 0.7


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play Byteskille in the terminal: the LAN lobby, or --bots N at once",
        description=(
            "Without --bots: the lobby lists the tables heard on the LAN; join one, or "
            "create one (name, ruleset, stake, chips, seats, bots); --ruleset, --stake and "
            "--chips fill the form. --bots N starts a table with N bot peers at once, each "
            "a real peer of the protocol. Keys are shown on screen; h shows the rules and "
            "keys. Exit status 2 and one line on stderr for bad arguments."
        ),
    )
    parser.add_argument("--bots", default=None,
                        help="start a table with this many bot peers at once (without it: "
                             "the LAN lobby)")
    parser.add_argument("--ruleset", default="wikipedia",
                        help=f"one of {', '.join(PRESETS)} (default wikipedia)")
    parser.add_argument("--mode", default="audit", choices=MODES,
                        help="audit (default; cards public after each hand's audit) or strict "
                             "(proved shuffles and answers, no key revealed); in the lobby it "
                             "fills the create form")
    parser.add_argument("--stake", default="1", help="base stake (default 1)")
    parser.add_argument("--chips", default="10", help="starting chips per seat (default 10)")
    parser.add_argument("--name", default=None,
                        help="your name at the table, signed so the others see it; kept in "
                             "your identity for the next games (1-16 characters)")
    parser.add_argument("--identity", default=None, metavar="FILE",
                        help="your key and name are kept in FILE (created if missing; "
                             "default identity.json in your configuration directory, e.g. "
                             "~/.config/p2pkille); the names you met are kept beside it")
    parser.add_argument("--lang", default=None, choices=LANGS,
                        help="sv or en (default from the locale)")
    parser.add_argument("--interface", action="append", default=[], metavar="ADDR",
                        help="limit LAN discovery to this address (repeatable; default: "
                             "every interface); your peers listen on the first one. A "
                             "--bots table runs inside this process and needs no network")
    parser.add_argument("--seed", default=None,
                        help="derive every key and secret from this number (reproducible "
                             "games for tests; default: fresh randomness)")
    parser.add_argument("--pace", default=str(DEFAULT_PACE), metavar="SECONDS",
                        help=f"how long each bot takes over a decision, so you can follow "
                             f"(default {DEFAULT_PACE}; 0: at once)")
    parser.add_argument("--limit", default=None, metavar="SECONDS",
                        help="wait this long for a seat's cryptographic step before voting "
                             f"its time out (default {Timing().limit:g})")
    parser.add_argument("--decide-limit", default=None, metavar="SECONDS",
                        help="wait this long for a seat's decision before it gets the "
                             f"default (default {Timing().decide_limit:g})")
    parser.add_argument("--log", default=None, metavar="FILE",
                        help="write diagnostics to FILE (default: nowhere)")
    parser.set_defaults(func=run)


def spec_from(args: argparse.Namespace) -> tuple[TableSpec, str]:
    """The table and the language the arguments ask for (``_BadArgs`` if they are bad)."""
    ruleset = str(args.ruleset)
    if ruleset not in PRESETS:
        raise _BadArgs(f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}")
    options = PRESETS[ruleset]
    bots = whole_number("bots", DEFAULT_BOTS if args.bots is None else args.bots, 1)
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
    name = "Du" if lang == "sv" else "You"  # until the identity's name is known
    if args.name is not None:
        name = str(args.name).strip()
        problem = player_name_problem(name)
        if problem:
            raise _BadArgs(f"--name: {problem}")
        if name in BOT_NAMES:
            raise _BadArgs(f"--name {name!r} is a bot's name: choose another")
    return TableSpec(bots=bots, ruleset=ruleset, stake=stake, chips=chips, name=name,
                     seed=seed, pace=pace, mode=str(getattr(args, "mode", "audit"))), lang


def timing_from(args: argparse.Namespace) -> Timing | None:
    """The ``--limit`` and ``--decide-limit`` asked for (``None``: the defaults)."""
    limits = []
    for option, given, default in (("--limit", args.limit, Timing().limit),
                                   ("--decide-limit", args.decide_limit,
                                    Timing().decide_limit)):
        if given is None:
            limits.append(default)
            continue
        try:
            value = float(given)
        except ValueError:
            raise _BadArgs(f"{option} must be a number of seconds, got {given!r}") from None
        if not 0 < value <= 3600:
            raise _BadArgs(f"{option} {given}: need 0 < SECONDS <= 3600")
        limits.append(value)
    if args.limit is None and args.decide_limit is None:
        return None
    limit, decide = limits
    # The wait for an answer to a vote must outlast every limit (docs II.11.3).
    return Timing(limit=limit, decide_limit=decide,
                  answer_limit=max(Timing().answer_limit, 2 * max(limit, decide)))


def profile_from(args: argparse.Namespace, spec: TableSpec, lang: str
                 ) -> tuple[Profile, list[str]]:
    """The player's identity (made on first use) and what to tell about it; raises
    :class:`IdentityError`."""
    path = Path(args.identity).expanduser() if args.identity is not None else None
    profile = open_profile(path, spec.name if args.name is not None else None)
    said = []
    if profile.created:
        said.append(text("id_created", lang, path=str(profile.path), fp=profile.fingerprint,
                         player=profile.name))
    if profile.renamed_from is not None:
        said.append(text("id_renamed", lang, player=profile.name, old=profile.renamed_from))
    return profile, said


def interfaces_from(given: Sequence[str]) -> list[str]:
    """The ``--interface`` addresses, checked (``_BadArgs``)."""
    out = []
    for given_text in given:
        try:
            out.append(str(ipaddress.ip_address(given_text.strip())))
        except ValueError:
            raise _BadArgs(f"--interface {given_text!r}: give an IP address") from None
    return out


def run(args: argparse.Namespace) -> int:
    try:
        spec, lang = spec_from(args)
        interfaces = interfaces_from(args.interface)
        timing = timing_from(args)
    except _BadArgs as exc:
        print(exc, file=sys.stderr)
        return BAD_ARGS
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("p2pkille play needs a terminal (stdin and stdout a tty)", file=sys.stderr)
        return 1
    try:
        profile, said = profile_from(args, spec, lang)
    except IdentityError as exc:
        print(f"p2pkille play: {exc}", file=sys.stderr)
        return 1
    for line in said:
        print(line, file=sys.stderr, flush=True)
    spec = replace(spec, name=profile.name)
    if args.log:
        logging.basicConfig(filename=args.log, level=logging.INFO)
    else:
        # The full screen owns the terminal: nothing may print over it.
        logging.getLogger().addHandler(logging.NullHandler())
        logging.lastResort = None
    if args.bots is not None:
        return asyncio.run(_main(spec, lang, timing))
    return asyncio.run(_lan(spec, lang, interfaces, timing, profile, " ".join(said)))


def logged_table(spec: TableSpec, timing: Timing | None = None
                 ) -> tuple[LocalTable, Path | None, str | None]:
    """The table with bots, its human node logging to a new file in the user's data
    directory: (table, log path, why there is no log)."""
    try:
        table = local_table(spec, timing, log_to=new_log_path)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        return local_table(spec, timing), None, f"{exc.strerror or exc}{where}"
    return table, table.log_path, None


def table_screen(table: LocalTable, spec: TableSpec, lang: str, clock: Callable[[], float],
                 log: Path | None, problem: str | None) -> TableScreen:
    """The screen of a table with bots (its title says "you and N bots")."""
    return TableScreen(table, lang, clock,
                       title=lambda lang: text("local_title", lang, n=spec.bots),
                       log_path=None if log is None else str(log), log_problem=problem)


async def _main(spec: TableSpec, lang: str, timing: Timing | None = None) -> int:
    table, log, problem = logged_table(spec, timing)
    loop = asyncio.get_running_loop()
    screen = table_screen(table, spec, lang, loop.time, log, problem)
    status = await play(table, screen, build_app(screen))
    if log is not None:
        print(text("log_saved", screen.lang, path=str(log)))
        print(text("log_verify", screen.lang, path=str(log)))
    return status


def lobby_screen(spec: TableSpec, lang: str, interfaces: Sequence[str] | None,
                 timing: Timing | None = None, clock: Callable[[], float] | None = None, *,
                 profile: Profile | None = None, log_to: Callable[[bytes], Path] | None = None,
                 notice: str = "") -> tuple[LanLobby, LobbyScreen]:
    """The LAN lobby and its screen (``interfaces`` None: every interface); call it inside
    the running loop. ``clock`` is the table screen's (default: the loop's); ``profile``
    the player's identity (default: a fresh key each table, no names remembered);
    ``log_to`` names each game's log (default: not logged)."""
    address = interfaces[0] if interfaces else lan_address()
    known = profile.known_players() if profile is not None else None
    if known is not None and known.problem is not None:
        notice = " ".join(filter(None, (notice, text("id_known_problem", lang,
                                                     reason=known.problem))))
    lan = LanLobby(interfaces, address, spec.name, pace=spec.pace, timing=timing,
                   identity=profile.identity if profile is not None else None, known=known,
                   log_to=log_to)
    seconds = clock or asyncio.get_running_loop().time

    def lan_screen(table: LanTable) -> TableScreen:
        return TableScreen(table, lang, seconds,
                           log_path=None if table.log_path is None else str(table.log_path),
                           log_problem=table.log_problem)

    screen = LobbyScreen(lan, lang, lan_screen, notice=notice)
    form = screen.form
    form.ruleset, form.stake, form.chips = spec.ruleset, str(spec.stake), str(spec.chips)
    form.mode = spec.mode
    return lan, screen


async def _lan(spec: TableSpec, lang: str, interfaces: list[str], timing: Timing | None,
               profile: Profile, notice: str) -> int:
    lan, screen = lobby_screen(spec, lang, interfaces or None, timing, profile=profile,
                               log_to=new_log_path, notice=notice)
    status = await play_lan(lan, screen, build_app(screen))
    table = screen.table_screen
    if table is not None and table.log_path is not None:
        print(text("log_saved", screen.lang, path=table.log_path))
        print(text("log_verify", screen.lang, path=table.log_path))
    return status
