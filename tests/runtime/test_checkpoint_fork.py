"""A holder that signs two checkpoint envelopes for one slot, a good one for some peers
and another for the rest, must not split the table (docs/protocol.md II.7, II.10).

Nodes that got the good one can commit at once; nodes that got the other one wait in
the void round for the holders that did not accuse (the committers), learn the good
envelope from them by gap fill (the ``open`` hand of their sync), and commit the same
hand. The fork itself is proven and costs its author the next hand.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import TableNode
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from protocol import canonical
from tests.runtime.bots import Restless, sealed_next
from tests.runtime.helpers import misbehave

CHEATER = 1  # seat P2


class SplitCheckpoint(Behaviour):
    """In its first hand, sends its good checkpoint envelope only to the peers named in
    ``good``; the others get, for the same chain slot, ``other``: a checkpoint with a
    signature of something else (``bad-signature``), two such checkpoints, each of
    another thing (``two-bad``), an accuse (``accuse``), or nothing at all
    (``withhold``)."""

    def __init__(self, good: frozenset[str], other: str, peer_names: tuple[str, ...]
                 ) -> None:
        self.good = good
        self.other = other
        self.peer_names = peer_names
        self.sends: dict[bytes, list[str]] | None = None
        """The wires of the split slot and who gets each; None once sent."""
        self.split = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != msg.CHECKPOINT or self.split:
            return [body]
        self.split = True
        good = sealed_next(node, kind, body).wire

        def bad(what: bytes) -> bytes:
            sig = canonical.b64encode(node.identity.sign("checkpoint", what))
            return sealed_next(node, kind, {**body, "sig": sig}).wire

        if self.other == "accuse":
            fork = sealed_next(node, msg.ACCUSE, {"accusations": [], "disclosed": [],
                                                  "hand": body["hand"]}).wire
        else:
            fork = bad(b"not our checkpoint")
        # "two-bad": every other peer holds the fork before the good one comes (a slot's
        # evidence is recorded once: the good one must count without a fork event).
        peers = [n for n in self.peer_names if n != node.name]
        rest = [n for n in peers if n not in self.good]
        self.sends = {good: [n for n in peers if n in self.good]}
        if self.other != "withhold":
            self.sends[fork] = rest
        if self.other == "two-bad":
            self.sends[bad(b"another one")] = rest
        return [body]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        sends = self.sends
        if sends is None:
            return out
        sent: list[Output] = []
        for o in out:
            if isinstance(o, Send) and o.to is None and o.data in sends and self.sends:
                # The node's own send of its checkpoint, once: it passes on a fork it
                # finds later as every node does.
                sent += [Send(data, to=name) for data, names in sends.items()
                         for name in names]
                self.sends = None
            else:
                sent.append(o)
        return sent


def _run(peers: int, seed: int, good: int, other: str, faults: str = "",
         restless: bool = False, mode: str = "audit") -> TableRun:
    table = build_table(peers, seed=seed, chips=3,
                        faults=Faults.parse(faults) if faults else None,
                        deciders=(lambda _i: Restless()) if restless else None, mode=mode)
    index = table.seats()[CHEATER]
    honest = [n for i, n in enumerate(table.nodes) if i != index]
    split = SplitCheckpoint(frozenset(n.name for n in honest[:good]), other,
                            tuple(n.name for n in table.nodes))
    misbehave(table, CHEATER, split)
    run = table.run(until=3600.0, max_hands=4)
    assert split.split, "the checkpoint was signed"
    assert split.sends is None, "and its slot split"
    return run


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
    # take the signer's later envelopes and compute the same checkpoints, also in a hand
    # where the signer holds no key.
    run = _run(4 + seed % 2, seed, 1 + seed % 2, other, restless=True)
    assert run.honest_agree
    node = run.honest[0]
    signer = node.members[node.member_of[CHEATER]]
    # Every node holds the same envelopes of the signer (some may hold more of them).
    chains = [[e.id for e in n.transcript.chain(signer)] for n in run.honest]
    common = min(len(c) for c in chains)
    assert common > 0
    assert all(c[:common] == chains[0][:common] for c in chains)


class LateSigner(Behaviour):
    """In the first hand where some member holds no key, withholds its checkpoint and
    stays silent until just after its time limit, then sends the checkpoint only to the
    members without a key. ``clock`` is the network's time."""

    def __init__(self, clock: Callable[[], float], names_by_member: dict[int, str]) -> None:
        self.clock = clock
        self.names_by_member = names_by_member
        self.held: Body | None = None
        self.wire = b""
        self.release_at: float | None = None
        self.spectators: tuple[str, ...] = ()
        self.released = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        status = node.status()
        if (kind == msg.CHECKPOINT and self.held is None and status is not None
                and len(status.holders) < len(node.members)):
            self.held = body
            self.wire = sealed_next(node, kind, body).wire
            self.release_at = self.clock() + node.timing.limit + 0.3
            self.spectators = tuple(name for m, name in self.names_by_member.items()
                                    if node.seat_of[m] not in status.holders)
            return []
        if self.release_at is not None:
            return []  # silent until the release (its chain stays unforked)
        return [body]

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        if (self.held is None or self.release_at is None
                or self.clock() < self.release_at):
            return []
        self.release_at = None
        return [(msg.CHECKPOINT, self.held)]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if self.released or self.held is None or self.release_at is not None:
            return out
        sent: list[Output] = []
        for o in out:
            if isinstance(o, Send) and o.to is None and o.data == self.wire:
                sent += [Send(o.data, to=name) for name in self.spectators]
                self.released = True
            else:
                sent.append(o)
        return sent


@pytest.mark.parametrize("seed", [6, 8, 11, 13, 16])
def test_a_signature_sent_after_its_agreed_time_out_commits_nothing(seed: int) -> None:
    # The holders agree its time-out and decide the void; the members without a key get
    # the late signature, even before any holder's vote reaches them, and the late signer
    # holds every signature. None of them counts the hand: it counts only on a majority's
    # precommits, which went to the void (docs/protocol.md II.7, II.11.5).
    table = build_table(4, seed=seed, chips=2, deciders=lambda _i: Restless())
    members = table.nodes[0].members
    late = LateSigner(lambda: table.network.now, {
        members.index(n.identity.public): n.name for n in table.nodes})
    misbehave(table, CHEATER, late)
    run = table.run(until=900.0, max_hands=4)
    assert run.honest_agree
    assert late.held is not None, "a hand had a member without a key"
    assert late.released, "the late signature was sent"
    voided = next(o for o in run.honest[0].outcomes if o.hand == late.held["hand"])
    assert voided.voided
    assert voided.eliminated == ["P2"]
