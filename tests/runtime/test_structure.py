"""The runtime's shape: each hand record has one writer, nothing outside the runtime
package touches a private name of it, and no part of it grows past a size one can read."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2pkille.runtime.node import TableNode

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "p2pkille" / "runtime"

#: record (attribute of a Hand) -> the module that writes it; fields of the void record
#: are split between its two writers.
WRITERS = {"deck": "dealing", "shares": "custody", "seals": "custody",
           "forwards": "custody", "play": "play", "claims": "claims", "close": "closing",
           "timeouts": "timeouts"}
VOID_BY_VERDICT = frozenset({"echoed"})
MUTATORS = frozenset({"add", "append", "update", "discard", "pop", "clear", "setdefault",
                      "extend", "remove", "insert", "popitem", "__setitem__", "__delitem__"})


def _record_field(node: ast.expr) -> tuple[str, str] | None:
    """(record, field) if ``node`` is ``<x>.<record>.<field>`` or a subscript of one."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and (node.value.attr in WRITERS or node.value.attr == "void")):
        return node.value.attr, node.attr
    return None


def _writes(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt | ast.expr):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets
                       for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in MUTATORS):
            targets = [node.func.value]
        for target in targets:
            found = _record_field(target)
            if found is not None:
                yield node.lineno, *found


def _writer(record: str, field: str) -> str:
    if record == "void":
        return "verdict" if field in VOID_BY_VERDICT else "accusations"
    return WRITERS[record]


def test_each_hand_record_has_one_writer() -> None:
    wrong = [f"{path.name}:{line}: writes {record}.{field} (its writer: "
             f"{_writer(record, field)}.py)"
             for path in sorted(RUNTIME.glob("*.py"))
             for line, record, field in _writes(ast.parse(path.read_text("utf-8")))
             if path.stem != _writer(record, field)]
    assert not wrong, "\n".join(wrong)


def _private_names() -> set[str]:
    """Every private name the runtime package defines or uses as an attribute."""
    names: set[str] = set()
    for path in RUNTIME.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _defined_elsewhere() -> set[str]:
    """Private names the other packages define for themselves (a transport's own
    ``_pending``): using those is no use of the runtime's."""
    names: set[str] = set()
    for path in sorted((ROOT / "p2pkille").rglob("*.py")) + sorted((ROOT / "cli").rglob("*.py")):
        if RUNTIME in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names


def _outside() -> list[Path]:
    return sorted(p for package in ("p2pkille", "cli", "tests", "bench")
                  for p in (ROOT / package).rglob("*.py") if RUNTIME not in p.parents)


def test_nothing_outside_the_runtime_uses_a_private_name_of_it() -> None:
    private = _private_names() - _defined_elsewhere()
    wrong = []
    for path in _outside():
        tree = ast.parse(path.read_text("utf-8"))
        own = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        own |= {n.attr for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        own |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "p2pkille.runtime"):
                wrong += [f"{path.relative_to(ROOT)}:{node.lineno}: imports {a.name}"
                          for a in node.names if a.name.startswith("_")]
            elif (isinstance(node, ast.Attribute) and node.attr in private
                  and node.attr not in own):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
            elif isinstance(node, ast.ClassDef) and any(
                    isinstance(b, ast.Name) and b.id.endswith("TableNode") for b in node.bases):
                wrong += [f"{path.relative_to(ROOT)}:{f.lineno}: {node.name} overrides {f.name}"
                          for f in node.body if isinstance(f, ast.FunctionDef)
                          and f.name.startswith("_") and not f.name.startswith("__")
                          and hasattr(TableNode, f.name)]
    assert not wrong, "\n".join(wrong)


def _sizes() -> Iterator[tuple[str, str, int]]:
    for path in sorted(RUNTIME.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.end_lineno:
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                yield f"{kind} {path.name}:{node.name}", kind, node.end_lineno - node.lineno + 1


@pytest.mark.parametrize(("kind", "most"), [("class", 800), ("function", 80)])
def test_no_part_of_the_runtime_is_too_long_to_read(kind: str, most: int) -> None:
    long = [f"{name}: {lines} lines" for name, k, lines in _sizes() if k == kind
            and lines > most]
    assert not long, long
    node = next(lines for name, k, lines in _sizes() if name == "class node.py:TableNode")
    assert node < 600
