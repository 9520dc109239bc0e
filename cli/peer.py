"""``p2pkille peer``: one headless bot peer, as its own process, at a table over the network.

It finds (or with ``--create`` creates) the table named ``--table``, waits until ``--seats``
seats are filled, plays ``--hands`` hands (or to the end) and, with ``--json``, prints its
own view on stdout::

    {"seat": "P2", "hands": [{"hand", "died", "pot", "chips", "checkpoint", "agreed_by",
                              "voided", "accusations", "eliminated"}],
     "winner": seat|null, "spectated_from": hand|null, "left": [seat], "quit": bool}

each hand in the shape of ``p2pkille sim --json``. Progress goes to stderr. With ``--log
FILE`` the node logs every envelope it accepts; started again with a log that exists, the
peer resumes that game (its keys and table come from the log) and catches up from the
others. Back after ``--limit`` (the table voted its time out and eliminated it), it follows
the rest of the game holding no key: ``spectated_from`` is the first hand it only watched.
A joiner takes a seat only from the creator it chose: ``--creator FINGERPRINT`` (as
``p2pkille tables`` shows it), or the only creator offering the table's name; when two or
more offer it, the joiner lists them and exits with status 2 for the user to pick one. A
creator seats anybody, first come, or with ``--admit FINGERPRINT`` (repeatable) only those
keys. ``--name`` is the display name the peer signs into the lobby (the others' screens show
it, marked as a bot; without it they show the key's fingerprint). At the end a ``traffic:``
line on stderr says what the peer refused and dropped
(syncs from non-members or unsigned, gap fill over a member's budget, full queues).
Ctrl-C or SIGTERM leaves the table: the peer signs a leave, which the others settle at once
(its decisions default, a hand it holds a key in is voided and it is eliminated), waits a
few seconds for them to hold it, prints its result (``"quit": true``) and exits with 130 or
143; ``left`` lists every seat whose leave the peer holds. Before the table is formed it
just exits so. Exit status 0 once played, 1 when no table formed or the game did not
finish within ``--timeout``, 2 for bad arguments or a table name that several creators
offer.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from cli.args import BadArgs as _BadArgs
from cli.args import whole_number
from p2pkille.bots import STRATEGIES
from p2pkille.engine.options import PRESETS
from p2pkille.net.lobby import Offer, player_name_problem
from p2pkille.net.mesh import PeerAddress
from p2pkille.net.mqtt import BrokerUrl
from p2pkille.net.peer import (
    AmbiguousTable,
    KeyFileError,
    PeerError,
    PeerQuit,
    PeerResult,
    PeerSettings,
    load_key,
    run_peer,
)
from p2pkille.runtime.config import MODES
from p2pkille.runtime.node import Timing

BAD_ARGS: Final = 2
FAILED: Final = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "peer",
        help="one bot peer at a table over the network (mesh or MQTT)",
        description=(
            "Runs one bot peer: finds or creates the table, waits until every seat is "
            "filled, plays, and prints its own view. Discovery uses zeroconf on --interface; "
            "--peer HOST:PORT dials a peer directly where multicast does not work."
        ),
    )
    parser.add_argument("--table", required=True, help="the table's name")
    parser.add_argument("--seats", required=True, help="seats at the table")
    parser.add_argument("--create", action="store_true", help="create the table")
    parser.add_argument("--ruleset", default=None,
                        help=f"one of {', '.join(PRESETS)} (creator default wikipedia; a "
                             "joiner only accepts this ruleset)")
    parser.add_argument("--mode", default=None,
                        help="audit or strict (creator default audit: commit-reveal, cards "
                             "public after each hand; strict: proved shuffles and answers, no "
                             "key ever revealed); a joiner only accepts this mode")
    parser.add_argument("--stake", default=None, help="base stake (creator default 1)")
    parser.add_argument("--chips", default=None, help="starting chips (creator default 10)")
    parser.add_argument("--transport", default="mesh", help="mesh (default) or mqtt")
    parser.add_argument("--broker", default=None,
                        help="mqtt://[USER[:PASSWORD]@]HOST[:PORT] (mqtts:// for TLS)")
    parser.add_argument("--peer", action="append", default=[], metavar="HOST:PORT",
                        help="dial this peer (repeatable)")
    parser.add_argument("--interface", default="127.0.0.1",
                        help="address to listen and discover on (default 127.0.0.1; give "
                             "your LAN address to play across machines)")
    parser.add_argument("--port", default="0", help="mesh port (default: any free port)")
    parser.add_argument("--no-discovery", action="store_true",
                        help="no zeroconf: only --peer addresses")
    parser.add_argument("--bot", default="threshold",
                        help=f"strategy: one of {', '.join(STRATEGIES)} (default threshold)")
    parser.add_argument("--hands", default="0",
                        help="stop after this many hands (default 0: play to the end)")
    parser.add_argument("--key", default=None, metavar="FILE",
                        help="identity key file (created if missing); default a fresh key")
    parser.add_argument("--log", default=None, metavar="FILE",
                        help="log every accepted envelope here; if the file exists, resume "
                             "the game it holds (a restart after a crash)")
    parser.add_argument("--timeout", default="300", help="give up after SECONDS (default 300)")
    parser.add_argument("--limit", default=None, metavar="SECONDS",
                        help="wait this long for a seat's cryptographic step before voting "
                             f"its time out (default {Timing().limit:g}; a seat the table "
                             "times out is eliminated)")
    parser.add_argument("--decide-limit", default=None, metavar="SECONDS",
                        help="wait this long for a seat's decision before voting that it "
                             "gets the default: keep, decline (default "
                             f"{Timing().decide_limit:g})")
    parser.add_argument("--creator", default=None, metavar="FINGERPRINT",
                        help="a joiner takes a roster only from the creator with this key "
                             "fingerprint (16 hex digits, as `p2pkille tables` shows it); "
                             "without it, from the only creator offering --table")
    parser.add_argument("--admit", action="append", default=None, metavar="FINGERPRINT",
                        help="a creator seats only joiners with this key fingerprint "
                             "(repeatable; default: anybody, first come)")
    parser.add_argument("--name", default=None,
                        help="display name signed into the lobby, shown to the others as a "
                             "bot's (1-16 printable characters; default: none, the key's "
                             "fingerprint is shown)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--verbose", action="store_true", help="log the transport on stderr")
    parser.set_defaults(func=run)


def _peer_int(name: str, text: str | None, low: int, high: int = 10**12) -> int:
    return whole_number(name, text, low, high)


def _seconds(option: str, text: str | None, default: float) -> float:
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise _BadArgs(f"{option} must be a number of seconds, got {text!r}") from None
    if not 0 < value < 10**6:
        raise _BadArgs(f"{option} {text}: need a positive number of seconds")
    return value


def settings_from(args: argparse.Namespace) -> PeerSettings:
    """The settings of ``args``; raises ``_BadArgs`` with a one-line reason (about the
    first bad option, in the order below)."""
    offer = _offer(args)
    transport, broker = _transport(args)
    try:
        peers = tuple(PeerAddress.parse(p) for p in args.peer)
    except ValueError as exc:
        raise _BadArgs(f"--peer: {exc}") from None
    if args.bot not in STRATEGIES:
        raise _BadArgs(f"unknown --bot {args.bot!r}: expected one of {', '.join(STRATEGIES)}")
    interface = str(args.interface)
    if not interface or any(c.isspace() for c in interface):
        raise _BadArgs(f"--interface {interface!r}: give an IP address")
    try:
        timeout = float(args.timeout)
    except ValueError:
        raise _BadArgs(f"--timeout must be a number of seconds, got {args.timeout!r}") from None
    if not 0 < timeout < 10**6:
        raise _BadArgs(f"--timeout {args.timeout}: need a positive number of seconds")
    limit = _seconds("--limit", args.limit, Timing().limit)
    decide_limit = _seconds("--decide-limit", args.decide_limit, Timing().decide_limit)
    creator, admit = _pins(args, offer.seats)
    log = Path(args.log) if args.log is not None else None
    if log is not None and not log.exists() and not log.parent.is_dir():
        raise _BadArgs(f"--log {str(log)!r}: no such directory")
    player = _player(args)
    identity = None
    if args.key is not None:
        try:
            identity = load_key(args.key)
        except (KeyFileError, OSError) as exc:
            raise _BadArgs(f"--key: {exc}") from None
    return PeerSettings(
        offer=offer, create=bool(args.create), transport=transport, broker=broker,
        peers=peers, interface=interface, port=_peer_int("port", args.port, 0, 65535),
        discover=not args.no_discovery, bot=str(args.bot),
        hands=_peer_int("hands", args.hands, 0), log=log, timeout=timeout, identity=identity,
        limit=limit, decide_limit=decide_limit, creator=creator, admit=admit, player=player,
        bot_seat=True)


def _offer(args: argparse.Namespace) -> Offer:
    """The table asked for; a creator's unset terms get their defaults."""
    seats = _peer_int("seats", args.seats, 2, 32)
    ruleset = args.ruleset
    if ruleset is None and args.create:
        ruleset = "wikipedia"
    if ruleset is not None and ruleset not in PRESETS:
        raise _BadArgs(f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}")
    stake = _peer_int("stake", args.stake, 1) if args.stake is not None else (
        1 if args.create else None)
    chips = _peer_int("chips", args.chips, stake or 1) if args.chips is not None else (
        10 if args.create else None)
    if chips is not None and stake is not None and chips < stake:
        raise _BadArgs(f"--chips {chips} must be at least the stake {stake}")
    mode = args.mode
    if mode is None and args.create:
        mode = "audit"
    if mode is not None and mode not in MODES:
        raise _BadArgs(f"--mode {mode!r}: expected one of {', '.join(MODES)}")
    try:
        return Offer(str(args.table), seats, ruleset, stake, chips, mode)
    except ValueError as exc:
        raise _BadArgs(str(exc)) from None


def _transport(args: argparse.Namespace) -> tuple[str, BrokerUrl | None]:
    transport = str(args.transport)
    if transport not in ("mesh", "mqtt"):
        raise _BadArgs(f"--transport {transport!r}: expected mesh or mqtt")
    if transport != "mqtt":
        if args.broker is not None:
            raise _BadArgs("--broker only goes with --transport mqtt")
        return transport, None
    if args.broker is None:
        raise _BadArgs("--transport mqtt needs --broker mqtt://HOST:PORT")
    try:
        return transport, BrokerUrl.parse(str(args.broker))
    except ValueError as exc:
        raise _BadArgs(f"--broker: {exc}") from None


def _pins(args: argparse.Namespace, seats: int) -> tuple[str | None, frozenset[str] | None]:
    """A joiner's ``--creator`` and a creator's ``--admit``."""
    creator = None
    if args.creator is not None:
        if args.create:
            raise _BadArgs("--creator is for a joiner: a creator is its own creator")
        creator = _fingerprint("--creator", str(args.creator), "the creator's")
    admit = None
    if args.admit is not None:
        if not args.create:
            raise _BadArgs("--admit is for a creator: a joiner sits where it is seated")
        admit = frozenset(_fingerprint("--admit", str(a), "a joiner's") for a in args.admit)
        if len(admit) > seats - 1:
            raise _BadArgs(f"--admit names {len(admit)} keys for {seats - 1} open seats")
    return creator, admit


def _player(args: argparse.Namespace) -> str:
    if args.name is None:
        return ""
    player = str(args.name)
    problem = player_name_problem(player)
    if problem:
        raise _BadArgs(f"--name: {problem}")
    return player


def _fingerprint(option: str, text: str, whose: str) -> str:
    value = text.strip().lower()
    if len(value) != 16 or any(c not in "0123456789abcdef" for c in value):
        raise _BadArgs(f"{option} {text!r}: give {whose} key fingerprint (16 hex digits)")
    return value


# One exit status per way the peer ends (docs in the module doc).
def run(args: argparse.Namespace) -> int:  # noqa: PLR0911
    try:
        settings = settings_from(args)
    except _BadArgs as exc:
        print(f"p2pkille peer: {exc}", file=sys.stderr)
        return BAD_ARGS
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(name)s: %(message)s", stream=sys.stderr)

    def progress(line: str) -> None:
        print(f"peer: {line}", file=sys.stderr, flush=True)

    caught: list[int] = []
    try:
        result = asyncio.run(_until_quit(settings, progress, caught))
    except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
        print("p2pkille peer: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    except PeerQuit as exc:
        print(f"p2pkille peer: {exc}", file=sys.stderr)
        return 128 + caught[0]
    except AmbiguousTable as exc:
        print(f"p2pkille peer: {len(exc.offers)} creators offer a table called "
              f"{exc.name!r}; choose one with --creator FINGERPRINT:", file=sys.stderr)
        for terms in exc.offers:
            print(f"  --creator {terms}", file=sys.stderr)
        return BAD_ARGS
    except PeerError as exc:
        print(f"p2pkille peer: {exc}", file=sys.stderr)
        return FAILED
    except OSError as exc:
        print(f"p2pkille peer: {exc}", file=sys.stderr)
        return FAILED
    doc = result.document()
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, sort_keys=True), flush=True)
    else:
        print(f"seat {result.seat}; {len(result.hands)} hands; winner "
              f"{result.winner or 'none yet'}; last checkpoint "
              f"{result.hands[-1].checkpoint if result.hands else '-'}"
              f"{'; left the table' if result.quit else ''}"
              f"{'; left: ' + ', '.join(result.left) if result.left else ''}", flush=True)
    return 128 + caught[0] if result.quit and caught else 0


async def _until_quit(settings: PeerSettings, progress: Callable[[str], None],
                      caught: list[int]) -> PeerResult:
    """The peer, with Ctrl-C and SIGTERM leaving the table (the signal's number goes into
    ``caught``). The first one asks; a second one acts as if no handler were set."""
    quit = asyncio.Event()
    loop = asyncio.get_running_loop()
    numbers = (signal.SIGINT, signal.SIGTERM)

    def on_signal(number: int) -> None:
        caught.append(number)
        quit.set()
        for each in numbers:
            loop.remove_signal_handler(each)

    for number in numbers:
        loop.add_signal_handler(number, on_signal, int(number))
    try:
        return await run_peer(dataclasses.replace(settings, quit=quit), progress)
    finally:
        if not caught:
            for number in numbers:
                loop.remove_signal_handler(number)
