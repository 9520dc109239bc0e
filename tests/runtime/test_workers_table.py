"""Threads for the large multiplication sums (``TableNode.workers``) change no result."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from p2pkille.sim.table import build_table
from protocol.group import Workers


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_table_with_threads_reaches_the_same_hands_at_the_same_cost(mode: str) -> None:
    plain = build_table(4, seed=11, mode=mode).run(max_hands=2)
    with ThreadPoolExecutor(2) as pool:
        threaded = build_table(4, seed=11, mode=mode, workers=Workers(pool, 2)).run(
            max_hands=2)
    assert plain.honest_agree
    assert threaded.honest_agree
    assert [o.to_json() for o in threaded.honest[0].outcomes[:2]] == [
        o.to_json() for o in plain.honest[0].outcomes[:2]]
    assert threaded.scalar_mults == plain.scalar_mults
    assert threaded.bytes == plain.bytes


def test_a_bad_shuffle_is_named_alike_with_threads() -> None:
    with ThreadPoolExecutor(2) as pool:
        run = build_table(4, seed=3, mode="strict", byzantine={2: "bad-shuffle"},
                          workers=Workers(pool, 2)).run(max_hands=2)
    assert run.honest_agree
    voided = run.honest[0].outcomes[0]
    assert voided.voided
    assert voided.eliminated == ["P3"]
    assert {a["kind"] for a in voided.accusations} == {"bad-proof"}
