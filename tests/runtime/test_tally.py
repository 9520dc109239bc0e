"""The tally round of a void round (docs/protocol.md II.11.1) under slow links, short
limits, losses and misbehaving seats: the seeds below split or stalled a table on the
way to it (17 and 24 split it before the round: a node decided while the others were
still timing a seat out; 9 and 24 stalled it in a first version of the round: an
impatient node held back tallies nobody answered for once the others had dealt on)."""

from __future__ import annotations

import random
from typing import ClassVar, cast

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import SimTable, build_table
from protocol import canonical
from protocol.envelope import Envelope
from protocol.errors import InvalidEncoding
from tests.runtime.bots import Restless
from tests.runtime.helpers import misbehave
from tests.runtime.test_accuse_fork import StopsForNothing

BEHAVIOURS = ("withhold", "false-accuse", "equivocate", "wrong-share", "bad-shuffle",
              "false-answer", "out-of-turn", "garbage", None)


def _table(seed: int) -> SimTable:
    """A table drawn from ``seed``: 3-6 peers, a misbehaving seat or none, lossy links,
    limits from 0.5 s to 30 s, and often one peer whose messages take up to 8 s."""
    r = random.Random(seed * 7919)
    peers = r.choice([3, 4, 5, 6])
    mode = r.choice(["audit", "audit", "strict"])
    behaviour = r.choice(BEHAVIOURS)
    byzantine = {r.randrange(peers): behaviour} if behaviour else {}
    faults = Faults(drop=r.choice([0, 0, 0.05, 0.1]), dup=r.choice([0, 0.05]),
                    reorder=r.choice([0, 0.1]), delay=r.choice([0, 0.02, 0.05]))
    timings = {i: Timing(limit=r.choice([0.5, 1.0, 2.0, 5.0, 30.0])) for i in range(peers)}
    restless = r.random() < 0.5
    table = build_table(peers, seed=seed, chips=3, mode=mode, faults=faults,
                        byzantine=byzantine, timings=timings,
                        deciders=(lambda _i: Restless()) if restless else None)
    slow = table.nodes[r.randrange(peers)]
    if r.random() < 0.6:
        most = r.choice([1.0, 3.0, 8.0])
        for other in table.nodes:
            if other is not slow:
                table.network.set_link(slow.name, other.name,
                                       Faults(delay=most * r.random()), one_way=True)
    return table


@pytest.mark.parametrize("seed", [9, 17, 24, 25])
def test_slow_links_and_short_limits_never_split_or_stall_a_void_round(seed: int) -> None:
    run = _table(seed).run(until=4000.0, max_hands=4)
    assert run.honest_agree, [[o.to_json() for o in n.outcomes[:4]] for n in run.honest]
    assert any(o.voided for o in run.honest[0].outcomes)  # the round was played


# -- attacks on the tally round (an independent review's scripts) ----------------------


class ForkTally(StopsForNothing):
    """Stops hand 1 for nothing, then signs two tallies for one slot: the true one to
    every peer but ``victim``, one with an id nulled to the victim."""

    victim: ClassVar[str] = ""
    peer_names: ClassVar[tuple[str, ...]] = ()
    forked = False

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.TALLY or self.forked:
            super()._emit(out, kind, body)
            return
        self.forked = True
        seq, prev = self.transcript.next_slot(self.identity.public)
        first = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                              kind=kind, body=body)
        self._took(self.transcript.receive_own(first))
        ids = list(cast(list[object], body["ids"]))
        ids[next(i for i, v in enumerate(ids) if v is not None)] = None
        second = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                               kind=kind, body={**body, "ids": ids})
        out += [Send(second.wire if name == self.victim else first.wire, to=name)
                for name in self.peer_names if name != self.name]


@pytest.mark.parametrize(("peers", "seed"), [(4, 1), (5, 2), (6, 4)])
def test_a_tally_signed_twice_strands_nobody(peers: int, seed: int) -> None:
    # The victim holds the wrong branch and waits for a tally that matches: the nodes that
    # decided answer its vote with a seen and the tally they hold, the victim finds the
    # fork and waits no longer for that seat, whose accuse still counts as tallied.
    table = build_table(peers, seed=seed, chips=3)
    forker = misbehave(table, 2, ForkTally)
    forker.__class__ = type("NamedForkTally", (ForkTally,), {
        "victim": table.nodes[table.seats()[0]].name,
        "peer_names": tuple(n.name for n in table.nodes)})
    run = table.run(until=600.0, max_hands=2)
    assert run.honest_agree
    assert run.honest[0].outcomes[0].eliminated == ["P3"]


class Framer(TableNode):
    """Once an honest seat forwarded it a card, stops the hand with an accuse signed in two
    versions too big to be carried: padding alone to that seat (so its own accuse leaves
    that forward out), padding and a "bad-seal" accusation of the forward to the rest.
    Then says nothing more."""

    armed: ClassVar[bool] = False
    victim: ClassVar[str] = ""
    victim_seat: ClassVar[int] = -1
    forward: ClassVar[bytes] = b""
    peer_names: ClassVar[tuple[str, ...]] = ()
    fired = False

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (self.armed and hand is not None and self.stage == Stage.PLAY
                and not hand.voiding and self._once("stop")):
            hand.voiding = True
        return bool(super()._act(out))

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if self.fired:
            return
        if kind != msg.ACCUSE:
            super()._emit(out, kind, body)
            return
        self.fired = True
        hand = self.hand
        assert hand is not None
        other = next(s for s in hand.holders if s not in (self.my_seat, self.victim_seat))
        pad = [msg.Accusation(other, "illegal-act", "x" * 200, self.forward).to_json()
               for _ in range(max(1, 53000 // (len(self.forward) * 4 // 3 + 300)))]
        framed = [msg.Accusation(self.victim_seat, "bad-seal", "box did not open",
                                 self.forward).to_json()]
        seq, prev = self.transcript.next_slot(self.identity.public)
        versions = [Envelope.seal(self.identity, table=self.config.table_id, seq=seq,
                                  prev=prev, kind=kind, body={**body, "accusations": acc})
                    for acc in (pad, framed + pad)]
        self._took(self.transcript.receive_own(versions[1]))
        out += [Send(versions[0].wire if name == self.victim else versions[1].wire, to=name)
                for name in self.peer_names if name != self.name]


def _forward_to(node: TableNode) -> bytes:
    """A forward of the current hand to ``node``'s seat that ``node`` holds, or b""."""
    hand = node.hand
    for member in node.members:
        for env in node.transcript.chain(member):
            if (env.kind == msg.FORWARD and hand is not None
                    and env.body.get("hand") == hand.number
                    and env.body.get("to") == node.my_seat):
                return env.wire
    return b""


@pytest.mark.parametrize(("seed", "peers", "delay"), [(3, 4, 0.0), (2, 4, 3.0), (3, 5, 3.0)])
def test_an_honest_seat_framed_by_a_forked_accuse_is_not_blamed(
        seed: int, peers: int, delay: float) -> None:
    table = build_table(peers, seed=seed, chips=3, deciders=lambda _i: Restless())
    framer = misbehave(table, 2, Framer)

    class Armed(Framer):
        peer_names = tuple(n.name for n in table.nodes)

    cls: type[Framer] = Armed
    framer.__class__ = cls
    table.network.run(until=600.0, stop=lambda _: framer.stage == Stage.PLAY and bool(
        _forward_to(framer)))
    wire = _forward_to(framer)
    assert wire
    author = next(n for n in table.nodes if n.transcript.chain(n.identity.public)
                  and any(e.wire == wire for e in n.transcript.chain(n.identity.public)))
    cls.armed, cls.victim, cls.forward = True, author.name, wire
    cls.victim_seat = author.my_seat if author.my_seat is not None else -1
    for node in table.nodes:
        if node is not author:
            table.network.set_link(author.name, node.name, Faults(delay=delay), one_way=True)
    framer_hand = framer.hand.number if framer.hand is not None else 0
    run = table.run(until=900.0, max_hands=framer_hand + 1)
    assert run.honest_agree
    voided = run.honest[0].outcomes[framer_hand - 1]
    assert voided.voided
    assert "P3" in voided.eliminated
    assert f"P{cls.victim_seat + 1}" not in voided.eliminated  # not framed


@pytest.mark.parametrize("ids", [
    "not a list", [], ["AAAA"], [None, 7], [None] * (msg.MAX_SEATS + 1),
])
def test_a_malformed_tally_is_refused_as_the_peers_fault(ids: object) -> None:
    with pytest.raises(InvalidEncoding):
        msg.get_ids({"hand": 1, "ids": ids}, b"")


@pytest.mark.parametrize("buyers", [
    "not a list", [], [-1], [msg.MAX_SEATS], [3, 3], [4, 2], [None], [True],
])
def test_a_malformed_buyers_list_is_refused_as_the_peers_fault(buyers: object) -> None:
    with pytest.raises(InvalidEncoding):
        msg.get_buyers({"hand": 1, "ids": [None], "buyers": buyers}, b"")


def test_a_tally_without_buyers_names_none_and_one_with_them_reads_back() -> None:
    assert msg.get_buyers({"hand": 1, "ids": [None]}, b"") == ()
    assert msg.get_buyers({"hand": 1, "ids": [None], "buyers": [0, 5, 63]}, b"") == (0, 5, 63)


class BadTally(StopsForNothing):
    """Stops hand 1 for nothing, then sends tallies one id short."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind == msg.TALLY:
            body = {**body, "ids": cast(list[object], body["ids"])[:-1]}
        super()._emit(out, kind, body)


def test_a_tally_not_of_every_holder_is_a_fault_and_the_table_goes_on() -> None:
    table = build_table(4, seed=2, chips=3)
    misbehave(table, 2, BadTally)
    run = table.run(until=600.0, max_hands=2)
    assert run.honest_agree
    assert run.honest[0].outcomes[0].eliminated == ["P3"]
    for node in run.honest:
        assert any(f.kind.value == "malformed" and f.seat == 2 and "tally" in f.reason
                   for f in node.faults)


class ForksAfterAccusing(TableNode):
    """In hand 2, once past its key: falsely accuses the next holder, makes a second key
    envelope for its key slot (``fork``, sent by the test to chosen holders) and never
    tallies the hand."""

    fork: ClassVar[dict[str, bytes]] = {}

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.number == 2 and hand.me is not None
                and self.stage > Stage.KEYS and self._once("false-accuse", 2)):
            victim = hand.holders[(hand.me + 1) % len(hand.holders)]
            theirs = next(e for e in self.transcript.chain(self.members[self.member_of[victim]])
                          if e.kind == msg.KEY and e.body.get("hand") == 2)
            self._sent.add(("accuse", 2))
            made_up = msg.Accusation(victim, "bad-key", "made up", theirs.wire)
            self._emit(out, msg.ACCUSE, {"accusations": [made_up.to_json()], "disclosed": [],
                                         "hand": 2})
            mine = next(e for e in self.transcript.chain(self.identity.public)
                        if e.kind == msg.KEY and e.body.get("hand") == 2)
            assert hand.key is not None
            other = hand.key.announce(hand.ctx, self._rng("fork", 2))
            body = {**mine.body, "share": canonical.b64encode(other.to_bytes())}
            self.fork["wire"] = Envelope.seal(
                self.identity, table=self.config.table_id, seq=mine.seq, prev=mine.prev,
                kind=msg.KEY, body=body).wire
            return True
        return super()._act(out)

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.TALLY or body.get("hand") != 2:
            super()._emit(out, kind, body)


def test_a_member_without_a_key_never_takes_the_movers_tally_over_a_fork_it_lacks() -> None:
    # Six peers, one seat sold out of hand 2: a member M without a key. A holder F falsely
    # accuses another and withholds its tally; once M holds every accuse it is cut off, and
    # F's second key envelope reaches only the other holders. They hold F forked (its accuse
    # counts for nothing), tally with F null and deal on. M, which never gets the other
    # branch, counts F's accuse. Taking their tally, M read F's null as a time-out and kept
    # a game where F was eliminated in hand 2 (found by review); now it takes a tally only
    # when every seat it leaves out is gone at M too, so M waits and keeps no other record.
    ForksAfterAccusing.fork.clear()
    timing = Timing(limit=2.0, answer_limit=10.0)
    table = build_table(6, seed=2, chips=1, timing=timing, faults=Faults(delay=0.05))
    net = table.network
    net.run(stop=lambda _: all(n.hand is not None and n.hand.number >= 2 for n in table.nodes),
            until=2000.0)
    holders = table.nodes[0].hand.holders if table.nodes[0].hand is not None else ()
    (member,) = [s for s in range(6) if s not in holders]
    seats = table.seats()
    forker, m = table.nodes[seats[holders[0]]], table.nodes[seats[member]]
    forker.__class__ = ForksAfterAccusing
    net.run(stop=lambda _: "wire" in ForksAfterAccusing.fork and m.hand is not None
            and len(m.hand.accuses) == len(holders), until=net.now + 500.0)
    assert m.hand is not None
    assert len(m.hand.accuses) == len(holders)
    net.partition([m.name], [n.name for n in table.nodes if n is not m])
    for seat in holders[1:]:
        net.inject(forker.name, ForksAfterAccusing.fork["wire"], to=table.nodes[seats[seat]].name)
    net.run(until=net.now + 120.0)
    net.heal()
    net.run(until=net.now + 2000.0)
    honest = [n for n in table.nodes if n is not forker and n is not m]
    assert all(n.done for n in honest)
    record = [(o.hand, o.voided, o.eliminated) for o in honest[0].outcomes]
    assert all([(o.hand, o.voided, o.eliminated) for o in n.outcomes] == record for n in honest)
    f_name = f"P{holders[0] + 1}"
    assert (2, True, []) in record  # nobody blamed in hand 2: F forked, not timed out
    assert any(f_name in e for _, _, e in record)  # and out for the fork later
    assert [(o.hand, o.voided, o.eliminated) for o in m.outcomes] == record[:len(m.outcomes)]
