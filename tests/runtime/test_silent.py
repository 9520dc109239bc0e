"""Known limitation (docs II.11.3): two key holders that go silent together stall the table.

Each one's time-out needs the other's vote. This test is expected to fail (strict xfail:
once a fix lands it passes, and the marker must go); it shows the limitation is real and
keeps it in sight. A crashed node that restarts from its log ends the wait (the log tests).
"""

from __future__ import annotations

import pytest

from p2pkille.sim.table import build_table


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="two silent key holders stall the table (II.11.3)")
def test_two_holders_crashed_together_after_the_genesis_are_timed_out() -> None:
    table = build_table(5, seed=3, chips=3)
    net = table.network
    net.run(stop=lambda _: all(n.hand is not None for n in table.nodes))
    for node in table.nodes[:2]:
        net.crash(node.name)
    live = table.nodes[2:]
    # Ten minutes of virtual time: far beyond every limit (20 s, decisions 60 s).
    net.run(stop=lambda _: all(len(n.outcomes) >= 2 for n in live), until=net.now + 600.0)
    assert all(len(n.outcomes) >= 2 for n in live), (
        f"the table stalled: {[len(n.outcomes) for n in live]} hands, waiting for "
        f"{[n.waiting_for() for n in live]}")
