"""``p2pkille replay FILE``: play a scripted game and print the result as JSON.

FILE holds the replay input described in ``p2pkille/replay.py`` (``-`` reads
stdin). On success one JSON document goes to stdout and the status is 0. On bad
input (an unreadable file, text that is not JSON, a game the rules reject) the
status is 2, stdout stays empty and stderr gets exactly one line, so scripts can
tell a bad game from a crash and show the reason as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import NoReturn

from p2pkille.replay import ReplayError, run_replay

BAD_INPUT = 2


class _BadInput(Exception):
    """Input that cannot be replayed; the message is the one line for stderr."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a scripted game with every card known and print the result as JSON",
        description=(
            "Replay a scripted Byteskille game in the full-information view and print "
            "one JSON document (see docs/rules.md). Exit status 2 and one line on "
            "stderr for bad input."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="replay input as JSON, or - for stdin")
    parser.set_defaults(func=run)


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN and Infinity; JSON (RFC 8259) does not.
    raise ValueError(f"{name} is not a JSON value")


def _read(file: str) -> str:
    try:
        if file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(file, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        raise _BadInput(f"cannot read {file}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _BadInput(f"cannot read {file}: not UTF-8 text ({exc.reason})") from exc


def _parse(text: str, file: str) -> object:
    try:
        doc: object = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _BadInput(f"{file} is not JSON: {exc.msg} at line {exc.lineno}") from exc
    except RecursionError as exc:
        raise _BadInput(f"{file} is not JSON this tool can read: nested too deeply") from exc
    except ValueError as exc:  # NaN, or an integer beyond Python's digit limit
        raise _BadInput(f"{file} is not JSON this tool can read: {_one_line(str(exc))}") from exc
    return doc


def _one_line(text: str) -> str:
    return " ".join(text.split())


def run(args: argparse.Namespace) -> int:
    file: str = args.file
    try:
        doc = _parse(_read(file), "stdin" if file == "-" else file)
        result = run_replay(doc)
    except (_BadInput, ReplayError) as exc:
        print(_one_line(str(exc)), file=sys.stderr)
        return BAD_INPUT
    try:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the interpreter's
        # final flush from raising again on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0
