"""The ``p2pkille`` command: one subcommand per module in :data:`COMMANDS`.

Each command module exposes ``register(subparsers)`` that adds its parser and
sets ``func`` to a callable taking the parsed namespace and returning an exit
status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from p2pkille import __version__

# One line per command module under cli/ (add yours here).
COMMANDS: tuple[str, ...] = (
    "play",
    "peer",
    "replay",
    "selfplay",
    "sim",
    "chaos",
    "tables",
    "verify",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p2pkille",
        description="Byteskille peer to peer: no server, no trusted dealer.",
    )
    parser.add_argument("--version", action="version", version=f"p2pkille {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
