"""``python -m tests.golden [--regenerate] [NAME ...]``: compare (or rewrite) the corpus."""

from __future__ import annotations

import argparse
import sys
import time

from tests.golden.scenarios import SCENARIOS, dumps, load, path_of, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden")
    parser.add_argument("--regenerate", action="store_true",
                        help="write the documents instead of comparing them")
    parser.add_argument("names", nargs="*", help="scenarios (default: every one)")
    args = parser.parse_args(argv)
    names = args.names or sorted(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    differ = []
    for i, name in enumerate(names, 1):
        start = time.perf_counter()
        text = dumps(run(name))
        took = time.perf_counter() - start
        if args.regenerate:
            path_of(name).write_text(text, encoding="utf-8")
            state = "written"
        else:
            state = "same" if load(name) == text else "DIFFERS"
            if state == "DIFFERS":
                differ.append(name)
        print(f"[{i}/{len(names)}] {name}: {state} ({took:.1f} s)", file=sys.stderr)
    if differ:
        print(f"{len(differ)} differ: {' '.join(differ)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
