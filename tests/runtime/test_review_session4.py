"""Regressions from the session-4 review of the runtime (docs/protocol.md II.7, II.11.1).

- A member without a key sends one envelope with a stale hand number, to some peers at
  once and to the rest late: every node consumes it as a fault when it arrives, and the
  checkpoint's cut for that member used to count it, so the honest nodes' checkpoints
  differed (a split, honest holders timed out). The cut of a member without a key is now
  its last decision the hand applied, else its cut in the last counted checkpoint.
- Two colluding holders (one stops the hand, the other neither signs nor accuses) used to
  get every honest signer timed out while it waited to accuse: the table no longer waits
  for a signer while another holder has neither signed, accused nor timed out. (At four
  holders the colluders can still stall that hand, two honest holders being no majority;
  they cannot get an honest seat expelled. At five or more both are timed out:
  test_colluders.py.)
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.table import build_table
from protocol.envelope import Envelope
from tests.runtime.bots import Restless
from tests.runtime.helpers import misbehave


class StaleKeyless(TableNode):
    """Once it holds no key (hand 2 on), signs an ``act`` for the hand before; half the
    peers get it during play, the rest once it reached the checkpoint stage."""

    peer_names: ClassVar[tuple[str, ...]] = ()
    fired: int | None = None
    later: list[Send]

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.me is None and hand.number > 1 and self.fired is None
                and self.stage == Stage.PLAY):
            self.fired = hand.number
            seq, prev = self.transcript.next_slot(self.identity.public)
            env = Envelope.seal(self.identity, table=self.config.table_id, seq=seq,
                                prev=prev, kind=msg.ACT, body={"hand": hand.number - 1})
            self._took(self.transcript.receive_own(env))
            others = [n for n in self.peer_names if n != self.name]
            half = others[: len(others) // 2]
            out += [Send(env.wire, to=n) for n in half]
            self.later = [Send(env.wire, to=n) for n in others if n not in half]
        if getattr(self, "later", None) and self.stage == Stage.CHECKPOINT:
            out += self.later
            self.later = []
        return super()._act(out)


@pytest.mark.parametrize(("seed", "cheat"), [(1, 0), (1, 2), (2, 1), (3, 3)])
def test_a_stale_envelope_of_a_member_without_a_key_does_not_split_the_table(
        seed: int, cheat: int) -> None:
    table = build_table(4, seed=seed, chips=2, deciders=lambda _i: Restless())
    node = misbehave(table, cheat, StaleKeyless)
    node.__class__ = type("Stale", (StaleKeyless,), {
        "peer_names": tuple(n.name for n in table.nodes)})
    run = table.run(until=900.0, max_hands=6)
    assert isinstance(node, StaleKeyless)
    assert node.fired is not None, "it held no key in some hand"
    assert run.honest_agree


C_SEAT, D_SEAT = 1, 2


class Silent(TableNode):
    """Never signs hand 1's checkpoint, never accuses in it, never votes D out."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if body.get("hand") == 1 and (kind in (msg.CHECKPOINT, msg.ACCUSE) or (
                kind == msg.TIMEOUT and body.get("seat") == D_SEAT)):
            return
        super()._emit(out, kind, body)


class Trigger(TableNode):
    """Once every honest holder signed hand 1, stops it with a bare accuse; never signs,
    never votes C out."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if body.get("hand") == 1 and (kind == msg.CHECKPOINT or (
                kind == msg.TIMEOUT and body.get("seat") == C_SEAT)):
            return
        super()._emit(out, kind, body)

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.number == 1 and self.stage == Stage.CHECKPOINT
                and not hand.voiding):
            honest = [k for k, s in enumerate(hand.holders) if s not in (C_SEAT, D_SEAT)]
            if all(k in hand.signed for k in honest):
                hand.voiding = True
        return super()._act(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_colluders_cannot_get_a_signer_timed_out_while_it_waits_to_accuse(seed: int) -> None:
    table = build_table(4, seed=seed, chips=3)
    misbehave(table, C_SEAT, Silent)
    misbehave(table, D_SEAT, Trigger)
    run = table.run(until=200.0, max_hands=2)
    honest = {f"P{s + 1}" for s in range(4)} - {f"P{C_SEAT + 1}", f"P{D_SEAT + 1}"}
    for node in run.honest:
        assert node.hand is not None
        assert node.hand.voiding, "the bare accuse stopped hand 1"
        assert not {name for o in node.outcomes for name in o.eliminated} & honest
        assert not node.hand.timed_out & {0, 3}
