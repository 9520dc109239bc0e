"""A decider that cannot answer at once (a person) must not stall or change the game.

The table node honours :class:`DecisionPending`: it sends nothing for that seat and
asks again on its next receive or wake.
"""

from __future__ import annotations

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision, VoteChoice
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.sim.table import build_table
from tests.runtime.helpers import node_results


class Hesitant(ThresholdBot):
    """Says "not yet" to the first ask of every decision, then answers as the bot would."""

    def __init__(self) -> None:
        super().__init__()
        self.pending = 0
        self._asked = False

    def _hesitate(self) -> None:
        if not self._asked:
            self._asked = True
            self.pending += 1
            raise DecisionPending("thinking")
        self._asked = False

    def turn(self, view: SeatView) -> Decision:
        self._hesitate()
        return super().turn(view)

    def vote(self, view: SeatView) -> VoteChoice:
        self._hesitate()
        return super().vote(view)

    def buyin(self, view: SeatView) -> bool:
        self._hesitate()
        return super().buyin(view)


def test_pending_decisions_are_asked_again_and_change_nothing() -> None:
    plain = build_table(4, seed=11).run(max_hands=3)
    hesitant = [Hesitant() for _ in range(4)]
    slow = build_table(4, seed=11, deciders=lambda i: hesitant[i]).run(max_hands=3)
    assert slow.honest_agree
    assert sum(d.pending for d in hesitant) > 0
    for node in slow.nodes:
        assert node.faults == []
    assert node_results(slow.nodes[0]) == node_results(plain.nodes[0])
    assert [o.checkpoint for o in slow.nodes[0].outcomes] == [
        o.checkpoint for o in plain.nodes[0].outcomes]
