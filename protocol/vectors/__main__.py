"""``python -m protocol.vectors [--regenerate]``: check or rewrite the vector files."""

from __future__ import annotations

import argparse
import sys

from protocol.vectors import VECTOR_DIR, dumps, generate, generator_names


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m protocol.vectors")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the JSON files")
    args = parser.parse_args()
    status = 0
    for name in generator_names():
        path = VECTOR_DIR / f"{name}.json"
        text = dumps(generate(name))
        if args.regenerate:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
        elif not path.exists() or path.read_text("utf-8") != text:
            print(f"MISMATCH {path}", file=sys.stderr)
            status = 1
        else:
            print(f"ok {path.name}")
    return status


if __name__ == "__main__":
    sys.exit(main())
