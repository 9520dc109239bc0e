"""``python -m p2pkille.vectors [--regenerate]``: check or rewrite protocol/vectors/table.json."""

from __future__ import annotations

import argparse
import sys

from p2pkille.vectors import TABLE_VECTORS
from p2pkille.vectors.table import generate
from protocol.vectors import dumps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m p2pkille.vectors",
        description="Check (default) or rewrite the Part II vectors, protocol/vectors/"
                    "table.json. The Part I files: python -m protocol.vectors.")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the JSON file")
    args = parser.parse_args(argv)
    print("playing the vector games ...", file=sys.stderr)
    text = dumps(generate())
    if args.regenerate:
        TABLE_VECTORS.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE_VECTORS}")
        return 0
    if not TABLE_VECTORS.exists() or TABLE_VECTORS.read_text("utf-8") != text:
        print(f"MISMATCH {TABLE_VECTORS}", file=sys.stderr)
        return 1
    print(f"ok {TABLE_VECTORS.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
