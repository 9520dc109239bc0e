"""Randomized tables (the protocol testers' view): for each seed a random size, mode,
misbehaving peer and network faults; every run must end with the honest nodes in
agreement. Each configuration is fixed by its seed, so a failure replays exactly;
two of the regressions in test_strict.py and test_byzantine.py were found this way."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from p2pkille.sim.byzantine import BEHAVIOURS
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import build_table
from tests.runtime.bots import Restless

NOISY = "drop=0.1,dup=0.05,reorder=0.1,delay=50ms"


@dataclass(frozen=True, slots=True)
class Configuration:
    peers: int
    mode: str
    byzantine: dict[int, str]
    faults: str
    restless: bool


def configuration(seed: int) -> Configuration:
    r = random.Random(seed)
    peers = r.choice([3, 4, 5])
    behaviour = r.choice([*sorted(BEHAVIOURS), None])
    return Configuration(peers, r.choice(["audit", "strict"]),
                         {r.randrange(peers): behaviour} if behaviour else {},
                         r.choice(["none", NOISY]), r.random() < 0.5)


# 613 and 630 failed once: a node that saw a fork before the hand began waited for the
# forked seat's accuse forever; a node still before the deal judged a sealed-box dispute
# "unproven" while the others proved it.
@pytest.mark.parametrize("seed", [*range(200, 212), 613, 630])
def test_a_random_table_ends_in_agreement(seed: int) -> None:
    c = configuration(seed)
    table = build_table(c.peers, seed=seed, chips=4, mode=c.mode,
                        faults=Faults.parse(c.faults), byzantine=c.byzantine,
                        deciders=(lambda _i: Restless()) if c.restless else None)
    run = table.run(until=3000.0, max_hands=4)
    assert run.honest_agree, c
