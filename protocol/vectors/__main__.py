"""``python -m protocol.vectors [--regenerate]``: check or rewrite the Part I vector files.

``table.json`` (Part II, the table protocol) is made by real table nodes and
``lobby.json`` (Part III, finding and joining a table) by the real lobby and transports,
which ``protocol/`` may not import: ``python -m p2pkille.vectors [--regenerate]``.
"""

from __future__ import annotations

import argparse
import sys

from protocol.vectors import VECTOR_DIR, generate, generator_names, write_or_check

PART_II = ("table.json (Part II) and lobby.json (Part III) are checked and rewritten by "
           "python -m p2pkille.vectors [--regenerate].")


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.vectors",
        description="Check (default) or rewrite the Part I vector files (gen_*.py). "
                    f"{PART_II}")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the JSON files")
    args = parser.parse_args()
    status = 0
    for name in generator_names():
        if not write_or_check(VECTOR_DIR / f"{name}.json", generate(name),
                              regenerate=args.regenerate):
            status = 1
    print(PART_II)
    return status


if __name__ == "__main__":
    sys.exit(main())
