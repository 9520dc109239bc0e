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
from tests.runtime.bots import Restless
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
        # "two-bad": two different bad ones for every other peer, which so hold the fork
        # before the good one comes (a slot's evidence is recorded once: the good one
        # must be counted without a fork event).
        second = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                               kind=kind, body={**body, "sig": canonical.b64encode(
                                   self.identity.sign("checkpoint", b"another one"))})
        for name in self.names_of_peers():
            if name in self.good:
                out.append(Send(sent.data, to=name))
            elif self.other != "withhold":
                out.append(Send(fork.wire, to=name))
                if self.other == "two-bad":
                    out.append(Send(second.wire, to=name))

    def names_of_peers(self) -> list[str]:
        return [n for n in self.peer_names if n != self.name]

    peer_names: ClassVar[tuple[str, ...]] = ()


def _run(peers: int, seed: int, good: int, other: str, faults: str = "",
         restless: bool = False, mode: str = "audit") -> TableRun:
    table = build_table(peers, seed=seed, chips=3,
                        faults=Faults.parse(faults) if faults else None,
                        deciders=(lambda _i: Restless()) if restless else None, mode=mode)
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


@pytest.mark.parametrize(("peers", "seed", "good", "other"), [
    (4, 41, 1, "bad-signature"), (5, 42, 2, "bad-signature"), (4, 43, 2, "bad-signature"),
    (4, 44, 1, "accuse"), (5, 45, 2, "accuse"), (5, 46, 3, "accuse")])
def test_a_strict_hand_healed_from_a_forked_checkpoint_discloses_nothing(
        peers: int, seed: int, good: int, other: str) -> None:
    # A bad checkpoint signature counts as a missing one: the nodes that took it wait for
    # the good one (or vote its time out) and send no accuse, whose disclosures would make
    # the committed hand's exchanged cards public (docs/protocol.md II.7). A node that
    # signed and then took an accuse in that slot waits for every other holder's
    # signature or accuse, and then discloses forwards only to its accusers: here, none
    # (its deal boxes are disclosed, each one share of another's card, which stays hidden).
    run = _run(peers, seed, good, other, mode="strict")
    _check(run)
    forked = run.honest[0].outcomes[0].hand
    accuses = 0
    for node in run.honest:
        own = [e for e in node.transcript.chain(node.identity.public)
               if e.body["hand"] == forked]
        deal = {(b.token, b.sender, b.recipient) for e in own if e.kind == msg.DEAL
                for b in msg.get_boxes(e.body, e.wire)}
        for accuse in (e for e in own if e.kind == msg.ACCUSE):
            accuses += 1
            assert {(t, e.sender, e.recipient)
                    for t, e, _ in msg.get_disclosed(accuse.body, accuse.wire)} <= deal
    if other == "bad-signature":
        assert accuses == 0, "a bad signature counts as a missing one: nobody accuses"


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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_checkpoint_slot_signed_three_times_does_not_stall_the_table(seed: int) -> None:
    run = _run(4, seed, 1, "two-bad")
    assert run.honest_agree
    assert [n for o in run.honest[0].outcomes for n in o.eliminated] == ["P2"]


@pytest.mark.parametrize(("seed", "other"), [
    (20, "bad-signature"), (21, "bad-signature"), (22, "bad-signature"),
    (23, "bad-signature"), (24, "accuse"), (25, "accuse")])
def test_a_healed_fork_leaves_every_node_with_the_same_chain(seed: int, other: str) -> None:
    # Nodes that took the bad branch hold the good one after the hand commits, so they
    # take the signer's later envelopes and compute the same checkpoints (before, the
    # table split or stalled in the next hand when the signer held no key there).
    run = _run(4 + seed % 2, seed, 1 + seed % 2, other, restless=True)
    assert run.honest_agree
    node = run.honest[0]
    signer = node.members[node.member_of[CHEATER]]
    # Every node holds the same envelopes of the signer (some may hold more of them).
    chains = [[e.id for e in n.transcript.chain(signer)] for n in run.honest]
    common = min(len(c) for c in chains)
    assert common > 0
    assert all(c[:common] == chains[0][:common] for c in chains)


class LateSigner(TableNode):
    """In the first hand where some member holds no key, withholds its checkpoint until
    just after its time limit, then sends it only to the members without a key."""

    release_at: float | None = None
    held: Envelope | None = None
    spectators: tuple[str, ...] = ()
    names_by_member: ClassVar[dict[int, str]] = {}
    clock = 0.0

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        hand = self.hand
        if (kind == msg.CHECKPOINT and hand is not None and self.held is None
                and len(hand.holders) < len(self.members)):
            seq, prev = self.transcript.next_slot(self.identity.public)
            self.held = Envelope.seal(self.identity, table=self.config.table_id, seq=seq,
                                      prev=prev, kind=kind, body=body)
            self.release_at = self.clock + self.timing.limit + 0.3
            self.spectators = tuple(name for m, name in self.names_by_member.items()
                                    if self.seat_of[m] not in hand.holders)
            return
        if self.release_at is not None:
            return  # silent until the release (its chain stays unforked)
        super()._emit(out, kind, body)

    def receive(self, sender: str, data: bytes, now: float) -> list[Output]:
        self.clock = now
        return list(super().receive(sender, data, now))

    def wake(self, now: float) -> list[Output]:
        self.clock = now
        out = list(super().wake(now))
        if self.held is not None and self.release_at is not None and now >= self.release_at:
            self.release_at = None
            self._accept(self.held.wire)
            out += [Send(self.held.wire, to=name) for name in self.spectators]
        return out


@pytest.mark.parametrize("seed", [6, 8, 11, 13, 16])
def test_a_signature_sent_after_its_agreed_time_out_commits_nothing(seed: int) -> None:
    # The holders agreed its time-out and void the hand; the members without a key got
    # the late signature and used to commit the hand, at once when it reached them
    # before any holder's vote (seed 6). They now wait until the holders' chains show
    # a later hand, by which time their votes are in (docs/protocol.md II.7).
    table = build_table(4, seed=seed, chips=2, deciders=lambda _i: Restless())
    node = misbehave(table, CHEATER, LateSigner)
    node.__class__ = type("Late", (LateSigner,), {"names_by_member": {
        node.members.index(n.identity.public): n.name for n in table.nodes}})
    run = table.run(until=900.0, max_hands=4)
    assert run.honest_agree
    assert isinstance(node, LateSigner)
    assert node.held is not None, "a hand had a member without a key"
    late = next(o for o in run.honest[0].outcomes
                if o.hand == node.held.body["hand"])
    assert late.voided
    assert late.eliminated == ["P2"]
