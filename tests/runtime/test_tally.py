"""The tally round of a void round (docs/protocol.md II.11.1) under slow links, short
limits, losses and misbehaving seats: the seeds below split or stalled a table on the
way to it (17 and 24 split it before the round: a node decided while the others were
still timing a seat out; 9 and 24 stalled it in a first version of the round: an
impatient node held back tallies nobody answered for once the others had dealt on)."""

from __future__ import annotations

import random

import pytest

from p2pkille.runtime.node import Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import SimTable, build_table
from tests.runtime.bots import Restless

BEHAVIOURS = ("withhold", "false-accuse", "equivocate", "wrong-share", "bad-shuffle",
              "false-answer", "out-of-turn", "garbage", None)


def _table(seed: int) -> SimTable:
    """A table drawn from ``seed``: 3-6 peers, a misbehaving seat or none, lossy links,
    limits from 0.5 s to 30 s, and often one peer whose messages take up to 8 s."""
    r = random.Random(seed * 7919)
    peers = r.choice([3, 4, 5, 6])
    mode = r.choice(["audit", "audit", "strict"])
    behaviour = r.choice(BEHAVIOURS)
    byzantine = {r.randrange(peers): behaviour} if behaviour else {}
    faults = Faults(drop=r.choice([0, 0, 0.05, 0.1]), dup=r.choice([0, 0.05]),
                    reorder=r.choice([0, 0.1]), delay=r.choice([0, 0.02, 0.05]))
    timings = {i: Timing(limit=r.choice([0.5, 1.0, 2.0, 5.0, 30.0])) for i in range(peers)}
    restless = r.random() < 0.5
    table = build_table(peers, seed=seed, chips=3, mode=mode, faults=faults,
                        byzantine=byzantine, timings=timings,
                        deciders=(lambda _i: Restless()) if restless else None)
    slow = table.nodes[r.randrange(peers)]
    if r.random() < 0.6:
        most = r.choice([1.0, 3.0, 8.0])
        for other in table.nodes:
            if other is not slow:
                table.network.set_link(slow.name, other.name,
                                       Faults(delay=most * r.random()), one_way=True)
    return table


@pytest.mark.parametrize("seed", [9, 17, 24, 25])
def test_slow_links_and_short_limits_never_split_or_stall_a_void_round(seed: int) -> None:
    run = _table(seed).run(until=4000.0, max_hands=4)
    assert run.honest_agree, [[o.to_json() for o in n.outcomes[:4]] for n in run.honest]
    assert any(o.voided for o in run.honest[0].outcomes)  # the round was played
