"""Randomized tables (the protocol testers' view): for each seed a random size, mode,
misbehaving peer and network faults; every run must end with the honest nodes in
agreement. Each configuration is fixed by its seed, so a failure replays exactly."""

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


# 613: a node sees a fork before the hand begins (it must not wait for the forked seat's
# accuse); 630: a node still before the deal judges a sealed-box dispute (it must prove it
# as the others do).
@pytest.mark.parametrize("seed", [*range(200, 212), 613, 630])
def test_a_random_table_ends_in_agreement(seed: int) -> None:
    c = configuration(seed)
    table = build_table(c.peers, seed=seed, chips=4, mode=c.mode,
                        faults=Faults.parse(c.faults), byzantine=c.byzantine,
                        deciders=(lambda _i: Restless()) if c.restless else None)
    run = table.run(until=3000.0, max_hands=4)
    assert run.honest_agree, c
