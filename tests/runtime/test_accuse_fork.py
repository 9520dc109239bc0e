"""A holder that signs two different accuses for one slot, one for each part of the
table, must not split it (docs/protocol.md II.11.1).

Every node that joins a void round because of another holder's accuse carries that
accuse (its root cause) in its own accuse. So the versions that made honest nodes stop
reach every node before its verdict: one version cited is the one every node counts;
two versions cited prove the fork, and its author is blamed with its accuse counted
for nothing.
"""

from __future__ import annotations

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import TableRun, build_table
from tests.runtime.bots import StopsForNothing, bare_accuse, sealed_next
from tests.runtime.helpers import misbehave

__all__ = ["StopsForNothing"]

CHEATER = 1  # seat P2


class SplitAccuse(Behaviour):
    """Once play starts in its first hand, stops the hand for nothing with an accuse
    that accuses nobody and cites no cause, signed in two versions for one chain slot:
    the first (its disclosures) goes to the peers named in ``half``, the other to the
    rest. ``second`` says which the other is: ``"bare"`` (no disclosures) or ``"false"``
    (a made-up accusation of seat P1). ``"hidden"``: the made-up one goes to ``half``
    and the first to nobody (it is only in the accuser's own chain)."""

    def __init__(self, half: frozenset[str], second: str, peer_names: tuple[str, ...]
                 ) -> None:
        self.half = half
        self.second = second
        self.peer_names = peer_names
        self.stopped = False
        self.first: bytes | None = None
        self.fork: bytes | None = None
        self.sent: set[str] = set()
        """Who got the first version, the other one (``"first"``, ``"other"``)."""

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.stopped or status is None or status.number != 1 or status.voiding
                or node.stage != Stage.PLAY):
            return []
        self.stopped = True
        return [(msg.ACCUSE, bare_accuse(node))]

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != msg.ACCUSE or self.first is not None:
            return [body]
        self.first = sealed_next(node, kind, body).wire
        other: Body = {**body, "disclosed": []}
        if self.second in ("false", "hidden"):
            other["accusations"] = [msg.Accusation(
                0, "illegal-act", "made up", self.first).to_json()]
        self.fork = sealed_next(node, kind, other).wire
        return [body, other]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if self.first is None or len(self.sent) == 2:
            return out  # the node passes on both later, as it does any fork it finds
        rest = [n for n in self.peer_names if n != node.name and n not in self.half]
        to = {self.first: [] if self.second == "hidden" else sorted(self.half),
              self.fork: sorted(self.half) if self.second == "hidden" else rest}
        sent: list[Output] = []
        for o in out:
            if isinstance(o, Send) and o.to is None and o.data in to:
                self.sent.add("first" if o.data == self.first else "other")
                sent += [Send(o.data, to=n) for n in to.pop(o.data)]
            else:
                sent.append(o)
        return sent


def _run(peers: int, seed: int, half: int, second: str, faults: str = "") -> TableRun:
    table = build_table(peers, seed=seed, chips=3,
                        faults=Faults.parse(faults) if faults else None)
    index = table.seats()[CHEATER]
    honest = [n for i, n in enumerate(table.nodes) if i != index]
    split = SplitAccuse(frozenset(n.name for n in honest[:half]), second,
                        tuple(n.name for n in table.nodes))
    misbehave(table, CHEATER, split)
    run = table.run(until=3600.0, max_hands=3)
    assert split.sent == {"first", "other"}, "the accuse was signed twice and sent"
    return run


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
    """Some get a made-up accusation, the rest nothing: they learn of the other version
    only once the made-up one, carried by the others, reaches its author, whose node
    passes on both branches of the fork it finds (as every node does). The verdict
    counts neither version and blames their author, whichever version a node took and
    however it learnt of the fork: nothing else is held against anyone."""
    run = _run(peers, seed, half, "hidden")
    _check(run)
    for node in run.honest:
        assert any(f.kind is FaultKind.EQUIVOCATION and f.seat == CHEATER
                   for f in node.faults), "the fork reached every node"
    voided = run.honest[0].outcomes[0]
    assert {(a["accused"], a["kind"], a["verdict"]) for a in voided.accusations} == {
        ("P2", "equivocation", "proven")}


@pytest.mark.parametrize("faults", ["drop=0.1,dup=0.05", "reorder=0.2,delay=80ms"])
def test_an_accuse_fork_under_faults(faults: str) -> None:
    _check(_run(5, 21, 2, "bare", faults))


# -- the verdict (docs/protocol.md II.11.1, II.11.5) ---------------------------------------


class ForkJoin(Behaviour):
    """Joins a void round with an accuse signed in two versions for one slot, sent only
    once every other holder but one has accused (so nobody carries it): the honest join
    (accuses nothing) to the first half of the peers, a made-up accusation of seat P1 to
    the rest."""

    def __init__(self, peer_names: tuple[str, ...]) -> None:
        self.peer_names = peer_names
        self.held: list[Send] | None = None
        self.first: bytes | None = None
        self.forked_in: int | None = None

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        status = node.status()
        if (kind != msg.ACCUSE or status is None or self.forked_in is not None
                or "cause" not in body or body.get("accusations")):
            return [body]
        self.forked_in = status.number
        first = sealed_next(node, kind, body)
        other = {k: v for k, v in body.items() if k not in ("cause", "root")}
        other["accusations"] = [msg.Accusation(0, "illegal-act", "made up",
                                               first.wire).to_json()]
        second = sealed_next(node, kind, other)
        names = [n for n in self.peer_names if n != node.name]
        half = set(names[: len(names) // 2])
        self.first = first.wire
        self.held = [Send(first.wire if n in half else second.wire, to=n) for n in names]
        return [body]  # signed into my chain; held back (sending)

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if self.first is not None:
            out = [o for o in out if not (isinstance(o, Send) and o.data == self.first)]
            self.first = None  # held: the node's own send of it, once
        status = node.status()
        if self.held is not None and status is not None and status.number == self.forked_in:
            others = [k for k in range(len(status.holders)) if k != status.me]
            if sum(k in status.accused for k in others) >= len(others) - 1:
                out += self.held
                self.held = None
        return out


def test_a_joining_accuse_forked_after_every_other_accuse_does_not_split_the_table() -> None:
    table = build_table(5, seed=1, chips=3)
    misbehave(table, 2, StopsForNothing)
    forker = ForkJoin(tuple(n.name for n in table.nodes))
    misbehave(table, CHEATER, forker)
    run = table.run(until=300.0, max_hands=1)
    assert forker.forked_in == 1
    assert forker.held is None, "both versions were sent"
    first = [[o.to_json() for o in node.outcomes[:1]] for node in run.honest]
    assert all(len(hands) == 1 for hands in first)
    assert all(hands == first[0] for hands in first)  # one verdict, whichever half


@pytest.mark.parametrize("seed", [1, 2])
def test_a_slow_holder_reaches_the_verdict_that_times_it_out(seed: int) -> None:
    # P3 stops hand 1 for nothing once play starts; P2 is honest, but from then on its
    # messages take 3 s to P1 and 20 s to the others, whose limit is 1 s. P2 holds every
    # accuse at once; the others vote its time out before its accuse reaches them.
    order = build_table(4, seed=seed, chips=3).seats()
    table = build_table(4, seed=seed, chips=3,
                        timings={order[seat]: Timing(limit=1.0) for seat in (0, 2, 3)})
    slow = table.nodes[order[1]]
    misbehave(table, 2, StopsForNothing)
    table.network.run(until=3600.0, stop=lambda _: all(
        n.stage == Stage.PLAY for n in table.nodes))
    for seat, delay in ((0, 3.0), (2, 20.0), (3, 20.0)):
        table.network.set_link(slow.name, table.nodes[order[seat]].name,
                               Faults(delay=delay), one_way=True)
    run = table.run(until=3600.0, max_hands=1)
    first = [node.outcomes[0].eliminated for node in run.honest]
    assert ["P2"] in first
    assert all(eliminated == first[0] for eliminated in first)  # the slow P2 reaches it too


@pytest.mark.parametrize("seed", [1, 2])
def test_an_impatient_slow_holder_times_nobody_out_alone_and_reaches_the_verdict(
        seed: int) -> None:
    # P2's messages take 3 s and it gives up after 0.5 s: its limit for the others'
    # accuses passes before they reach it, so it proposes to time them out. Nobody else
    # finds that valid; the patient others decide the verdict that times nobody out, and
    # P2 takes it too.
    order = build_table(4, seed=seed, chips=3).seats()
    table = build_table(4, seed=seed, chips=3, timings={order[1]: Timing(limit=0.5)})
    slow = table.nodes[order[1]]
    misbehave(table, 2, StopsForNothing)
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
    assert slow.outcomes[0] == first


def test_a_false_bad_key_accusation_citing_a_forked_key_is_judged_alike() -> None:
    # P2 signs two keys for one slot; P1 accuses it of a bad key, citing the good one.
    # A bad-key accusation is judged on its evidence alone: a node holding the other
    # branch must not find it proven by the fork ("two envelopes for one slot") while
    # the others find it false. P3, which holds both keys, proves the fork itself.
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
                for a in first.accusations] == [("P2", "P1", "bad-key", "false"),
                                                ("P2", "P3", "equivocation", "proven")]
        assert first.eliminated == ["P1", "P2"]
