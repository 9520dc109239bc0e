"""The design card's layering: imports go cli -> p2pkille -> protocol, never back.

Also: protocol and the rules engine are sans-I/O, so they must not import
sockets, clocks, asyncio or global randomness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN_LAYERS = {
    "protocol": {"p2pkille", "cli"},
    "p2pkille": {"cli"},
    "cli": set[str](),
}
# Modules that would give pure code I/O, time or hidden randomness.
IMPURE = {"socket", "asyncio", "time", "datetime", "random", "secrets", "os", "subprocess",
          "threading", "selectors", "ssl", "zeroconf", "aiomqtt", "prompt_toolkit"}
# The one place the protocol may touch the OS: the production RNG.
IMPURE_ALLOWED = {("protocol", "rng.py", "secrets")}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN_LAYERS))
def test_imports_go_one_way(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _files(package)
        for name in _imports(path) & FORBIDDEN_LAYERS[package]
    ]
    assert not bad, bad


@pytest.mark.parametrize("package", ["protocol", "p2pkille/engine"])
def test_pure_layers_do_no_io(package: str) -> None:
    bad = []
    for path in _files(package):
        for name in _imports(path) & IMPURE:
            if (package, path.name, name) not in IMPURE_ALLOWED:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, bad


def test_layering_check_sees_a_violation(tmp_path: Path) -> None:
    # The checker itself must be able to fail.
    sample = tmp_path / "x.py"
    sample.write_text("import cli.main\nfrom p2pkille import engine\nimport socket\n")
    assert _imports(sample) == {"cli", "p2pkille", "socket"}
