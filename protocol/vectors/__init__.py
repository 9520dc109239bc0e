"""Conformance vectors as data: ``protocol/vectors/<name>.json``.

Each generator module ``protocol/vectors/gen_<name>.py`` exposes
``generate() -> dict`` that computes its vectors from a fixed deterministic
seed. The JSON files are the checked-in truth; the tests recompute every vector
and compare byte for byte, and another implementation can read the same files.

Regenerate (only when the protocol changes on purpose, with a version bump of
the affected labels)::

    python -m protocol.vectors --regenerate

``table.json`` (Part II of docs/protocol.md) has no generator here: it is played by
real table nodes, which this package may not import. ``python -m p2pkille.vectors
--regenerate`` rewrites it.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any

VECTOR_DIR = Path(__file__).resolve().parent


def generator_names() -> list[str]:
    """The names of every vector file, from the ``gen_*`` modules present."""
    return sorted(
        info.name.removeprefix("gen_")
        for info in pkgutil.iter_modules([str(VECTOR_DIR)])
        if info.name.startswith("gen_")
    )


def generate(name: str) -> dict[str, Any]:
    module = importlib.import_module(f"protocol.vectors.gen_{name}")
    result: dict[str, Any] = module.generate()
    return result


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def write_or_check(path: Path, doc: dict[str, Any], *, regenerate: bool) -> bool:
    """Rewrite ``path`` with ``doc`` (``regenerate``), or check that it holds it byte for
    byte; says which on stdout (a mismatch on stderr). False on a mismatch."""
    text = dumps(doc)
    if regenerate:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
        return True
    if not path.exists() or path.read_text("utf-8") != text:
        print(f"MISMATCH {path}", file=sys.stderr)
        return False
    print(f"ok {path.name}")
    return True


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((VECTOR_DIR / f"{name}.json").read_text("utf-8"))
    return doc
