"""The checkpoint round against a stale envelope and against colluders (docs/protocol.md
II.7, II.11.1).

- A member without a key sends one envelope with a stale hand number, to some peers at
  once and to the rest late: every node consumes it as a fault when it arrives. The cut
  of a member without a key in the checkpoint is its last decision the hand applied,
  else its cut in the last counted checkpoint, so that envelope never makes the honest
  nodes' checkpoints differ.
- Two colluding holders (one stops the hand, the other neither signs nor accuses) cannot
  get an honest signer timed out while it waits to accuse: the table does not wait for a
  signer while another holder has neither signed, accused nor timed out. The one that
  stops the hand votes in the verdict's agreement as an honest holder would, so with the
  two honest holders it is a strict majority: the silent one is timed out and the table
  goes on.
"""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.table import build_table
from tests.runtime.bots import Restless
from tests.runtime.helpers import C_SEAT, D_SEAT, Silent, Trigger, envelope_in, misbehave


class StaleKeyless(Behaviour):
    """Once it holds no key (hand 2 on), signs an ``act`` for the hand before; half the
    peers get it during play, the rest once it reached the checkpoint stage."""

    def __init__(self, peers: tuple[str, ...]) -> None:
        self.peers = peers
        self.fired: int | None = None
        """The hand it sent the stale envelope in."""
        self.later: list[Output] = []

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.fired is not None or status is None or status.me is not None
                or status.number < 2 or node.stage != Stage.PLAY):
            return []
        self.fired = status.number
        return [(msg.ACT, {"hand": status.number - 1})]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        sent: list[Output] = []
        for output in out:
            env = envelope_in(node, output.data) if isinstance(output, Send) else None
            if (env is None or env.author != node.identity.public or env.kind != msg.ACT
                    or self.fired is None or env.body.get("hand") != self.fired - 1):
                sent.append(output)
                continue
            others = [n for n in self.peers if n != node.name]
            half = others[: len(others) // 2]
            sent += [Send(env.wire, to=n) for n in half]
            self.later = [Send(env.wire, to=n) for n in others if n not in half]
        if self.later and node.stage == Stage.CHECKPOINT:
            sent += self.later
            self.later = []
        return sent


@pytest.mark.parametrize(("seed", "cheat"), [(1, 0), (1, 2), (2, 1), (3, 3)])
def test_a_stale_envelope_of_a_member_without_a_key_does_not_split_the_table(
        seed: int, cheat: int) -> None:
    table = build_table(4, seed=seed, chips=2, deciders=lambda _i: Restless())
    stale = StaleKeyless(tuple(n.name for n in table.nodes))
    node = misbehave(table, cheat, stale)
    run = table.run(until=900.0, max_hands=6)
    assert stale.fired is not None, "it held no key in some hand"
    wires = [e.wire for e in node.transcript.chain(node.identity.public)
             if e.kind == msg.ACT and e.body.get("hand") == stale.fired - 1
             and "fact" not in e.body]
    assert wires, "it signed the stale envelope"
    assert not stale.later, "every peer got it"
    assert run.honest_agree
    for honest in run.honest:
        assert [f.evidence for f in honest.faults if f.seat == cheat] == wires


@pytest.mark.parametrize("seed", [1, 2])
def test_colluders_cannot_get_a_signer_timed_out_while_it_waits_to_accuse(seed: int) -> None:
    table = build_table(4, seed=seed, chips=3)
    misbehave(table, C_SEAT, Silent)
    misbehave(table, D_SEAT, Trigger)
    run = table.run(until=200.0, max_hands=2)
    honest = {f"P{s + 1}" for s in range(4)} - {f"P{C_SEAT + 1}", f"P{D_SEAT + 1}"}
    assert run.honest_agree
    for node in run.honest:
        first = node.outcomes[0]
        assert first.voided, "the bare accuse stopped hand 1"
        assert not {name for o in node.outcomes for name in o.eliminated} & honest
        assert first.eliminated == [f"P{C_SEAT + 1}"]  # the silent one: timed out
