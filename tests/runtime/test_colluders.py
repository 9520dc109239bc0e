"""Two colluding holders cannot stall a hand (docs/protocol.md II.11.3).

One withholds its envelope of a stage (its key, shuffle step, deal, reveal, checkpoint
signature or tally); the other plays honestly but never votes the first one out, so that
one's time-out never has every other holder's vote. A holder's answer to a voted step is
now a step of its own at every stage: the honest holders, a majority, vote the shield out
for not answering and time both out together, and the game goes on without them. Every
table here stalled on the code before. At four holders (two honest) no set of two can be
agreed: that table still waits, as any table whose honest holders are no majority.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Output
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.table import SimTable, build_table
from tests.runtime.helpers import misbehave

WITHHOLDER, SHIELD = 1, 2  # P2 withholds, P3 shields it


class Withhold(TableNode):
    """Never sends its envelope of kind ``KIND`` in hand 1."""

    KIND: ClassVar[str] = ""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if body.get("hand") == 1 and kind == self.KIND:
            return
        super()._emit(out, kind, body)


class Shield(TableNode):
    """Plays honestly, but never votes the withholder out in hand 1."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if body.get("hand") == 1 and kind == msg.TIMEOUT and body.get("seat") == WITHHOLDER:
            return
        super()._emit(out, kind, body)


class StoppingShield(Shield):
    """Also stops hand 1 with a bare accuse once every other holder signed it (so that
    there is a void round whose tally the withholder can withhold)."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if body.get("hand") == 1 and kind == msg.CHECKPOINT:
            return
        super()._emit(out, kind, body)

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.number == 1 and self.stage == Stage.CHECKPOINT
                and not hand.voiding and all(
                    k in hand.signed for k, s in enumerate(hand.holders) if s != SHIELD)):
            hand.voiding = True
        return super()._act(out)


def _table(peers: int, kind: str, seed: int) -> SimTable:
    table = build_table(peers, seed=seed, chips=3, timing=Timing(limit=2.0, answer_limit=10.0))
    withholder = type("Withhold" + kind.title(), (Withhold,), {"KIND": kind})
    misbehave(table, WITHHOLDER, withholder)
    misbehave(table, SHIELD, StoppingShield if kind == msg.TALLY else Shield)
    return table


@pytest.mark.parametrize("kind", [msg.KEY, msg.SHUFFLE, msg.DEAL, msg.REVEAL, msg.CHECKPOINT,
                                  msg.TALLY])
@pytest.mark.parametrize("peers", [5, 6])
def test_a_withholder_and_its_shield_are_timed_out_together(peers: int, kind: str) -> None:
    table = _table(peers, kind, seed=peers)
    run = table.run(until=2000.0, max_hands=3)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.hand == 1
    assert first.voided
    assert set(first.eliminated) == {f"P{WITHHOLDER + 1}", f"P{SHIELD + 1}"}
    timed_out = {a["accused"] for a in first.accusations if a["kind"] == "timeout"}
    assert timed_out == {f"P{WITHHOLDER + 1}", f"P{SHIELD + 1}"}
    assert all(len(n.outcomes) >= 3 or n.done for n in run.honest), "the game went on"


def test_at_four_holders_the_two_honest_ones_agree_nothing() -> None:
    # Two of four are no majority: they cannot tell the colluders from a partition.
    table = _table(4, msg.KEY, seed=1)
    run = table.run(until=2000.0, max_hands=2)
    assert all(not n.outcomes and n.hand is not None and not n.hand.timed_out
               for n in run.honest)


def test_a_silent_signer_shielded_by_the_one_that_stopped_the_hand_is_timed_out() -> None:
    # Session 4's attack on the void round at five holders: one stops the hand with a bare
    # accuse once every honest holder signed, the other neither signs nor accuses, and
    # neither votes the other out. The honest three time both out and play on.
    from tests.runtime.test_review_session4 import C_SEAT, D_SEAT, Silent, Trigger

    table = build_table(5, seed=1, chips=3)
    misbehave(table, C_SEAT, Silent)
    misbehave(table, D_SEAT, Trigger)
    run = table.run(until=3000.0, max_hands=3)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert set(first.eliminated) == {f"P{C_SEAT + 1}", f"P{D_SEAT + 1}"}
    assert all(len(n.outcomes) >= 3 or n.done for n in run.honest)
