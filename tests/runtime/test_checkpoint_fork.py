"""A holder that signs two checkpoint envelopes for one slot, a good one for some peers
and another for the rest, must not split the table (docs/protocol.md II.7, II.10).

Nodes that got the good one can commit at once; nodes that got the other one wait in
the void round for the holders that did not accuse (the committers), learn the good
envelope from them by gap fill (the ``open`` hand of their sync), and commit the same
hand. The fork itself is proven and costs its author the next hand.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import TableNode
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from protocol import canonical
from protocol.envelope import Envelope
from tests.runtime.helpers import misbehave

CHEATER = 1  # seat P2


class SplitCheckpoint(TableNode):
    """In its first hand, sends its good checkpoint envelope only to the peers named in
    ``good``; the others get, for the same chain slot, ``other``: a checkpoint with a
    signature of something else (``bad-signature``), an accuse (``accuse``), or nothing
    at all (``withhold``)."""

    good: ClassVar[frozenset[str]] = frozenset()
    other: ClassVar[str] = "bad-signature"

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.CHECKPOINT or not self._once("split"):
            super()._emit(out, kind, body)
            return
        seq, prev = self.transcript.next_slot(self.identity.public)
        at = len(out)
        super()._emit(out, kind, body)
        sent = out.pop(at)
        assert isinstance(sent, Send)
        if self.other == "accuse":
            fork = Envelope.seal(self.identity, table=self.config.table_id, seq=seq,
                                 prev=prev, kind=msg.ACCUSE, body={
                                     "accusations": [], "disclosed": [], "hand": body["hand"]})
        else:
            fork = Envelope.seal(self.identity, table=self.config.table_id, seq=seq,
                                 prev=prev, kind=kind, body={**body, "sig": canonical.b64encode(
                                     self.identity.sign("checkpoint", b"not our checkpoint"))})
        for name in self.names_of_peers():
            if name in self.good:
                out.append(Send(sent.data, to=name))
            elif self.other != "withhold":
                out.append(Send(fork.wire, to=name))

    def names_of_peers(self) -> list[str]:
        return [n for n in self.peer_names if n != self.name]

    peer_names: ClassVar[tuple[str, ...]] = ()


def _run(peers: int, seed: int, good: int, other: str, faults: str = "") -> TableRun:
    table = build_table(peers, seed=seed, chips=3,
                        faults=Faults.parse(faults) if faults else None)
    cheater = misbehave(table, CHEATER, SplitCheckpoint)
    honest = [n for i, n in enumerate(table.nodes) if i not in table.byzantine]
    # A subclass per run: the class attributes say who gets which envelope.
    split = type("Split", (SplitCheckpoint,), {
        "good": frozenset(n.name for n in honest[:good]), "other": other,
        "peer_names": tuple(n.name for n in table.nodes)})
    cheater.__class__ = split
    return table.run(until=3600.0, max_hands=4)


def _check(run: TableRun) -> None:
    assert run.honest_agree, "honest nodes reached different hands"
    first = run.honest[0].outcomes
    assert not first[0].voided, "the first hand had a good signature of every holder"
    eliminated = [name for o in first for name in o.eliminated]
    assert eliminated == ["P2"], f"only the forking signer pays: {eliminated}"
    voided = [o for o in first if o.voided]
    assert len(voided) == 1, "the fork voids the hand after the one it forked in"
    assert voided[0].hand == first[0].hand + 1
    assert {a["accused"] for a in voided[0].accusations} == {"P2"}
    assert all(a["verdict"] == "proven" for a in voided[0].accusations)
    for node in run.honest:
        assert any(f.kind is FaultKind.EQUIVOCATION and f.seat == CHEATER
                   for f in node.faults) or any(
            a["kind"] == FaultKind.EQUIVOCATION.value for a in voided[0].accusations)


@pytest.mark.parametrize(("peers", "seed", "good"), [
    (4, 1, 1), (4, 2, 2), (4, 3, 1), (5, 4, 2), (5, 5, 3), (5, 6, 1),
])
def test_a_checkpoint_signed_twice_for_one_slot_does_not_split_the_table(
        peers: int, seed: int, good: int) -> None:
    _check(_run(peers, seed, good, "bad-signature"))


@pytest.mark.parametrize(("peers", "seed", "good"), [(4, 11, 1), (5, 12, 2), (5, 13, 3)])
def test_a_checkpoint_forked_with_an_accuse_does_not_split_the_table(
        peers: int, seed: int, good: int) -> None:
    run = _run(peers, seed, good, "accuse")
    assert run.honest_agree, "honest nodes reached different hands"
    eliminated = [name for o in run.honest[0].outcomes for name in o.eliminated]
    assert eliminated == ["P2"]


@pytest.mark.parametrize(("seed", "faults"), [
    (7, "delay=50ms,reorder=0.2"), (8, "drop=0.2,dup=0.05"), (9, "delay=120ms,drop=0.1"),
])
def test_the_fork_heals_under_network_faults(seed: int, faults: str) -> None:
    _check(_run(5, seed, 2, "bad-signature", faults))


def test_a_checkpoint_sent_to_some_and_withheld_from_the_rest_commits_everywhere() -> None:
    # No fork: those without it ask (time-out vote), a holder of it answers seen, and the
    # gap fill of the committed hand brings it.
    run = _run(5, 10, 2, "withhold")
    assert run.honest_agree
    assert not run.honest[0].outcomes[0].voided
