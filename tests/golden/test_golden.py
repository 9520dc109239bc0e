"""Every scenario of the golden corpus gives its checked-in document byte for byte."""

from __future__ import annotations

import difflib

import pytest

from tests.golden.scenarios import SCENARIOS, dumps, load, run


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_runtime_does_what_the_golden_corpus_recorded(name: str) -> None:
    want, got = load(name), dumps(run(name))
    if got != want:
        diff = "".join(list(difflib.unified_diff(
            want.splitlines(keepends=True), got.splitlines(keepends=True),
            f"tests/golden/data/{name}.json", "now"))[:80])
        pytest.fail(f"{name} differs from the corpus (python -m tests.golden --regenerate "
                    f"{name} if on purpose):\n{diff}")
