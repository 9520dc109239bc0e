"""A holder that signs two different accuses for one slot, one for each part of the
table, must not split it (docs/protocol.md II.11.1).

Every node that joins a void round because of another holder's accuse carries that
accuse (its root cause) in its own accuse. So the versions that made honest nodes stop
reach every node before its verdict: one version cited is the one every node counts;
two versions cited prove the fork, and its author is blamed with its accuse counted
for nothing. Before, each half cited the version it held by id, and each blamed the
other half for an accuse without a cause.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from protocol.envelope import Envelope
from tests.runtime.helpers import misbehave

CHEATER = 1  # seat P2


class SplitAccuse(TableNode):
    """Once play starts in its first hand, stops the hand for nothing with an accuse
    that accuses nobody and cites no cause, signed in two versions for one chain slot:
    ``first`` (its disclosures) goes to the peers named in ``half``, ``second`` to the
    rest. ``second`` is ``"bare"`` (no disclosures) or ``"false"`` (a made-up
    accusation of seat P1)."""

    half: ClassVar[frozenset[str]] = frozenset()
    second: ClassVar[str] = "bare"
    peer_names: ClassVar[tuple[str, ...]] = ()
    late: list[tuple[str, bytes]]

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.number == 1 and self.stage == Stage.PLAY
                and not hand.voiding and self._once("split-accuse")):
            hand.voiding = True
            self.late = []
        if getattr(self, "late", None) and len(self.transcript.equivocations) == 0 and (
                self._version > self.late_after):
            # "late": the rest get the other version only once the first has reached
            # them carried by others (they hold the fork; nobody carries the second).
            out += [Send(wire, to=name) for name, wire in self.late]
            self.late = []
        return super()._act(out)

    late_after = 0

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.ACCUSE or not self._once("split"):
            super()._emit(out, kind, body)
            return
        seq, prev = self.transcript.next_slot(self.identity.public)
        at = len(out)
        super()._emit(out, kind, body)
        sent = out.pop(at)
        assert isinstance(sent, Send)
        other: dict[str, object] = {**body, "disclosed": []}
        if self.second in ("false", "late"):
            other["accusations"] = [msg.Accusation(
                0, "illegal-act", "made up", sent.data).to_json()]
        fork = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                             kind=kind, body=other)
        if self.second == "late":
            # The made-up accusation goes first, to some; the rest get the bare one late.
            self.late = [(name, sent.data) for name in self.peer_names
                         if name != self.name and name not in self.half]
            self.late_after = self._version + 40
            out += [Send(fork.wire, to=name) for name in self.half]
            return
        for name in self.peer_names:
            if name != self.name:
                out.append(Send(sent.data if name in self.half else fork.wire, to=name))


def _run(peers: int, seed: int, half: int, second: str, faults: str = "") -> TableRun:
    table = build_table(peers, seed=seed, chips=3,
                        faults=Faults.parse(faults) if faults else None)
    cheater = misbehave(table, CHEATER, SplitAccuse)
    honest = [n for i, n in enumerate(table.nodes) if i not in table.byzantine]
    cheater.__class__ = type("Split", (SplitAccuse,), {
        "half": frozenset(n.name for n in honest[:half]), "second": second,
        "peer_names": tuple(n.name for n in table.nodes)})
    return table.run(until=3600.0, max_hands=3)


def _check(run: TableRun) -> None:
    assert run.honest_agree, "honest nodes reached different hands"
    first = run.honest[0].outcomes
    assert first[0].voided, "the cheater stopped the first hand"
    eliminated = [name for o in first for name in o.eliminated]
    assert eliminated == ["P2"], f"only the forking accuser pays: {eliminated}"


@pytest.mark.parametrize(("peers", "seed", "half", "second"), [
    (4, 1, 1, "bare"), (4, 2, 2, "bare"), (5, 3, 2, "bare"), (6, 4, 3, "bare"),
    (4, 5, 1, "false"), (5, 6, 2, "false"), (5, 7, 3, "false"),
])
def test_an_accuse_signed_twice_for_one_slot_does_not_split_the_table(
        peers: int, seed: int, half: int, second: str) -> None:
    _check(_run(peers, seed, half, second))


@pytest.mark.parametrize(("peers", "seed", "half"), [(4, 31, 1), (5, 32, 2), (6, 33, 2)])
def test_an_accuse_version_carried_by_others_counts_where_the_other_was_taken(
        peers: int, seed: int, half: int) -> None:
    """Some get a made-up accusation, the rest the bare version only after the first
    reached them carried by the others: every node counts the carried version, however
    it learnt of the fork. Its author's chain breaks there for the nodes that hold the
    carried version (its next envelope links to the other), so its tally never comes:
    the holders time it out at the tally step, and its accuse counts for nothing."""
    run = _run(peers, seed, half, "late")
    _check(run)
    voided = run.honest[0].outcomes[0]
    assert [(a["accused"], a["by"], a["kind"]) for a in voided.accusations] == [
        ("P2", None, "timeout")]


@pytest.mark.parametrize("faults", ["drop=0.1,dup=0.05", "reorder=0.2,delay=80ms"])
def test_an_accuse_fork_under_faults(faults: str) -> None:
    _check(_run(5, 21, 2, "bare", faults))


# -- the tally round (docs/protocol.md II.11.1) -------------------------------------------


class ForkJoin(TableNode):
    """Joins a void round with an accuse signed in two versions for one slot, sent only
    once every other holder has accused (so nobody carries it): the honest join (accuses
    nothing) to the first half of the peers, a made-up accusation of seat P1 to the rest."""

    peer_names: ClassVar[tuple[str, ...]] = ()
    held: list[Send] | None = None
    forked_in: int | None = None

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        hand = self.hand
        if (kind != msg.ACCUSE or hand is None or self.forked_in is not None
                or "cause" not in body or body.get("accusations")):
            super()._emit(out, kind, body)
            return
        self.forked_in = hand.number
        seq, prev = self.transcript.next_slot(self.identity.public)
        first = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                              kind=kind, body=body)
        self._took(self.transcript.receive_own(first))
        other = {k: v for k, v in body.items() if k not in ("cause", "root")}
        other["accusations"] = [msg.Accusation(0, "illegal-act", "made up",
                                               first.wire).to_json()]
        second = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                               kind=kind, body=other)
        names = [n for n in self.peer_names if n != self.name]
        half = set(names[: len(names) // 2])
        self.held = [Send(first.wire if n in half else second.wire, to=n) for n in names]

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if self.held is not None and hand is not None and hand.number == self.forked_in:
            others = [k for k in range(len(hand.holders)) if k != hand.me]
            if sum(k in hand.accuses for k in others) >= len(others) - 1:
                out += self.held
                self.held = None
        return super()._act(out)


class StopsForNothing(TableNode):
    """Stops hand 1 once play starts, with an accuse that accuses nobody."""

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.number == 1 and self.stage == Stage.PLAY
                and not hand.voiding and self._once("stop")):
            hand.voiding = True
        return super()._act(out)


def test_a_joining_accuse_forked_after_every_other_accuse_does_not_split_the_table() -> None:
    table = build_table(5, seed=1, chips=3)
    misbehave(table, 2, StopsForNothing)
    forker = misbehave(table, CHEATER, ForkJoin)
    names = tuple(n.name for n in table.nodes)
    forker.__class__ = type("NamedForkJoin", (ForkJoin,), {"peer_names": names})
    run = table.run(until=300.0, max_hands=1)
    assert isinstance(forker, ForkJoin)
    assert forker.forked_in == 1
    first = [[o.to_json() for o in node.outcomes[:1]] for node in run.honest]
    assert all(len(hands) == 1 for hands in first)
    assert all(hands == first[0] for hands in first)  # before the tally: two verdicts


@pytest.mark.parametrize("seed", [1, 2])
def test_a_slow_holder_reaches_the_verdict_that_times_it_out(seed: int) -> None:
    # P3 stops hand 1 for nothing once play starts; P2 is honest, but from then on its
    # messages take 3 s to P1 and 20 s to the others, whose limit is 1 s. P2 holds every
    # accuse at once; the others vote its time out before its accuse reaches them.
    table = build_table(4, seed=seed, chips=3)
    order = table.seats()
    slow = table.nodes[order[1]]
    misbehave(table, 2, StopsForNothing)
    for seat in (0, 2, 3):
        table.nodes[order[seat]].timing = Timing(limit=1.0)
    table.network.run(until=3600.0, stop=lambda _: all(
        n.stage == Stage.PLAY for n in table.nodes))
    for seat, delay in ((0, 3.0), (2, 20.0), (3, 20.0)):
        table.network.set_link(slow.name, table.nodes[order[seat]].name,
                               Faults(delay=delay), one_way=True)
    run = table.run(until=3600.0, max_hands=1)
    first = [node.outcomes[0].eliminated for node in run.honest]
    assert ["P2"] in first
    assert all(eliminated == first[0] for eliminated in first)  # before the tally: P2 said P3


@pytest.mark.parametrize("seed", [1, 2])
def test_an_impatient_slow_holder_still_gets_the_tallies_of_those_who_decided(
        seed: int) -> None:
    # P2's messages take 3 s and it gives up after 0.5 s: it votes the others' time out
    # at the tally step before their tallies (which wait for its accuse) come, so it
    # holds them back until a seen. The others, patient, decide and deal on; a node
    # that voided the hand answers such a vote (before, P2 waited for ever).
    table = build_table(4, seed=seed, chips=3)
    order = table.seats()
    slow = table.nodes[order[1]]
    misbehave(table, 2, StopsForNothing)
    slow.timing = Timing(limit=0.5)
    table.network.run(until=3600.0, stop=lambda _: all(
        n.stage == Stage.PLAY for n in table.nodes))
    for node in table.nodes:
        if node is not slow:
            table.network.set_link(slow.name, node.name, Faults(delay=3.0), one_way=True)
    run = table.run(until=3600.0, max_hands=2)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert first.eliminated == ["P3"]  # it stopped the hand for nothing; nobody timed out
    votes = [e for e in slow.transcript.chain(slow.identity.public)
             if e.kind == msg.TIMEOUT and e.body.get("stage") == 12]
    assert votes, "the slow node voted at the tally step"


def test_a_false_bad_key_accusation_citing_a_forked_key_is_judged_alike() -> None:
    # P2 signs two keys for one slot; P1 accuses it of a bad key, citing the good one.
    # A node holding the other branch found the accusation proven ("two envelopes for
    # one slot") and the others false: P2 out at one node, P1 at the rest (fault
    # generator SPLIT seed 716). A bad-key accusation is now judged on its evidence.
    timings = {0: Timing(limit=2.0, decide_limit=3.0, answer_limit=65.0),
               1: Timing(limit=5.0, decide_limit=6.0, answer_limit=65.0),
               2: Timing(limit=20.0, decide_limit=60.0, answer_limit=120.0),
               3: Timing(limit=20.0, decide_limit=2.0, answer_limit=90.0)}
    table = build_table(4, seed=716, chips=3, ruleset="enkortskille",
                        faults=Faults(drop=0.05), timings=timings,
                        byzantine={1: "equivocate", 0: "false-accuse"})
    run = table.run(until=3000.0, max_hands=4)
    assert run.honest_agree
    for node in run.honest:
        # The scenario: the equivocator's fork reached the node, and P1 cited a key of it.
        assert node.transcript.equivocations
        first = node.outcomes[0]
        assert [(a["accused"], a["by"], a["kind"], a["verdict"])
                for a in first.accusations] == [("P2", "P1", "bad-key", "false")]
        assert first.eliminated == ["P1"]
        assert node.outcomes[1].eliminated == ["P2"]
