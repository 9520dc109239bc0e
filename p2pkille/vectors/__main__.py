"""``python -m p2pkille.vectors [--regenerate] [table] [lobby]``: check or rewrite the
vector files made by p2pkille code: protocol/vectors/table.json (Part II) and lobby.json
(Part III)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p2pkille.vectors import LOBBY_VECTORS, TABLE_VECTORS
from p2pkille.vectors import lobby as lobby_vectors
from p2pkille.vectors import table as table_vectors
from protocol.vectors import write_or_check

#: Each file, where it lives and what makes it.
FILES: dict[str, tuple[Path, Callable[[], dict[str, Any]]]] = {
    "table": (TABLE_VECTORS, table_vectors.generate),
    "lobby": (LOBBY_VECTORS, lobby_vectors.generate),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m p2pkille.vectors",
        description="Check (default) or rewrite the vectors of Part II (protocol/vectors/"
                    "table.json) and Part III (lobby.json). The Part I files: python -m "
                    "protocol.vectors.")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the JSON files")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help=f"which files ({', '.join(FILES)}; default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.files if name not in FILES]
    if unknown:
        parser.error(f"unknown vector file {unknown[0]!r}: choose from {', '.join(FILES)}")
    status = 0
    for name in args.files or list(FILES):
        path, make = FILES[name]
        print(f"making {path.name} ...", file=sys.stderr)
        if not write_or_check(path, make(), regenerate=args.regenerate):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
