"""The verdict of a void round (docs/protocol.md II.11.1, II.11.5) under slow links, short
limits, losses and misbehaving seats, and against seats that attack it: forked accuses
that frame an honest seat, an accuse that claims to answer a version nobody holds,
malformed verdicts and `seen` lists, and a member without a key that lacks a fork the
holders decided on."""

from __future__ import annotations

import random

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome, VoteStep
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.bodies import AccuseBody, Instance, VoteBody
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import SimTable, build_table
from protocol import canonical
from protocol.envelope import Envelope
from protocol.errors import InvalidEncoding
from protocol.identity import Identity
from protocol.keys import HandContext
from tests.runtime.bots import Restless
from tests.runtime.helpers import StopsForNothing, envelope_in, misbehave

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


def _split_fork(node: TableNode, out: list[Output], seq: int, victim: str,
                peers: tuple[str, ...]) -> list[Output]:
    """``out`` with the two branches of ``node``'s fork at chain slot ``seq`` split: the
    one it took to every peer but ``victim``, the other to ``victim`` alone."""
    taken = node.transcript.chain(node.identity.public)[seq - 1]
    sent: list[Output] = []
    for output in out:
        env = envelope_in(node, output.data) if isinstance(output, Send) else None
        if env is None or env.author != node.identity.public or env.seq != seq:
            sent.append(output)
        elif env.id == taken.id:
            sent += [Send(env.wire, to=name) for name in peers
                     if name not in (node.name, victim)]
        else:
            sent.append(Send(env.wire, to=victim))
    return sent


@pytest.mark.parametrize("seed", [9, 17, 24, 25])
def test_slow_links_and_short_limits_never_split_or_stall_a_void_round(seed: int) -> None:
    run = _table(seed).run(until=4000.0, max_hands=4)
    assert run.honest_agree, [[o.to_json() for o in n.outcomes[:4]] for n in run.honest]
    assert any(o.voided for o in run.honest[0].outcomes)  # the round was played


# -- attacks on the verdict ----------------------------------------------------------


class Framer(Behaviour):
    """Once armed (an honest seat forwarded it a card), stops the hand with an accuse
    signed in two versions too big to be carried: padding alone to that seat (so its own
    accuse leaves that forward out), padding and a "bad-seal" accusation of the forward to
    the rest. Then says nothing more."""

    def __init__(self, peers: tuple[str, ...]) -> None:
        self.peers = peers
        self.armed = False
        self.victim = ""
        self.victim_seat = -1
        self.forward = b""
        self.stopped = False
        self.fired: int | None = None
        """The chain slot of its forked accuse."""

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (not self.armed or self.stopped or status is None or node.stage != Stage.PLAY
                or status.voiding):
            return []
        self.stopped = True
        return [(msg.ACCUSE, {"accusations": [], "disclosed": node.disclosures(),
                              "hand": status.number})]

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if self.fired is not None:
            return []
        if kind != msg.ACCUSE:
            return [body]
        status = node.status()
        assert status is not None
        self.fired = node.transcript.next_slot(node.identity.public)[0]
        other = next(s for s in status.holders if s not in (node.my_seat, self.victim_seat))
        pad = [msg.Accusation(other, "illegal-act", "x" * 200, self.forward).to_json()
               for _ in range(max(1, 53000 // (len(self.forward) * 4 // 3 + 300)))]
        framed = [msg.Accusation(self.victim_seat, "bad-seal", "box did not open",
                                 self.forward).to_json()]
        return [{**body, "accusations": framed + pad}, {**body, "accusations": pad}]

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if self.fired is None:
            return out
        return _split_fork(node, out, self.fired, self.victim, self.peers)


def _forward_to(node: TableNode) -> bytes:
    """A forward of the current hand to ``node``'s seat that ``node`` holds, or b""."""
    status = node.status()
    for member in node.members:
        for env in node.transcript.chain(member):
            if (env.kind == msg.FORWARD and status is not None
                    and env.body.get("hand") == status.number
                    and env.body.get("to") == node.my_seat):
                return env.wire
    return b""


@pytest.mark.parametrize(("seed", "peers", "delay"), [(3, 4, 0.0), (2, 4, 3.0), (3, 5, 3.0)])
def test_an_honest_seat_framed_by_a_forked_accuse_is_not_blamed(
        seed: int, peers: int, delay: float) -> None:
    table = build_table(peers, seed=seed, chips=3, deciders=lambda _i: Restless())
    framing = Framer(tuple(n.name for n in table.nodes))
    framer = misbehave(table, 2, framing)
    table.network.run(until=600.0, stop=lambda _: framer.stage == Stage.PLAY and bool(
        _forward_to(framer)))
    wire = _forward_to(framer)
    assert wire
    author = next(n for n in table.nodes if n.transcript.chain(n.identity.public)
                  and any(e.wire == wire for e in n.transcript.chain(n.identity.public)))
    framing.armed, framing.victim, framing.forward = True, author.name, wire
    framing.victim_seat = author.my_seat if author.my_seat is not None else -1
    for node in table.nodes:
        if node is not author:
            table.network.set_link(author.name, node.name, Faults(delay=delay), one_way=True)
    status = framer.status()
    framer_hand = status.number if status is not None else 0
    run = table.run(until=900.0, max_hands=framer_hand + 1)
    assert framing.fired is not None
    held = {n.name: n.transcript.get(framer.identity.public, framing.fired)
            for n in run.honest}
    assert {name: e is not None and "bad-seal" in str(e.body["accusations"])
            for name, e in held.items()} == {name: name != author.name for name in held}, (
        "the framed version reached every honest seat but its victim")
    assert run.honest_agree
    voided = run.honest[0].outcomes[framer_hand - 1]
    assert voided.voided
    assert "P3" in voided.eliminated
    assert f"P{framing.victim_seat + 1}" not in voided.eliminated  # not framed


@pytest.mark.parametrize("seen", [
    "not a list", [], [None], ["AAAA"], [None, 7], [None] * msg.MAX_SEATS + ["A" * 43 + "="],
])
def test_a_malformed_seen_list_is_refused_as_the_peers_fault(seen: object) -> None:
    body = AccuseBody(1, (), ()).to_json()
    with pytest.raises(InvalidEncoding):
        AccuseBody.parse(_signed(msg.ACCUSE, {**body, "seen": seen}))


def test_an_accuse_says_what_it_saw_and_reads_back() -> None:
    seen = (None, bytes(range(32)), None)
    body = AccuseBody(1, (), (), seen=seen)
    assert AccuseBody.parse(_signed(msg.ACCUSE, body.to_json())).seen == seen
    assert "seen" not in AccuseBody(1, (), (), seen=(None, None)).to_json()


@pytest.mark.parametrize("value", [
    "verdict:", "verdict:-", "verdict:-;;;", "verdict:-,;;", "verdict:" + "ab" * 31 + ";;",
    "verdict:-;1,1;", "verdict:-;01;", "verdict:-;;2,1", "verdict:" + ",".join(["-"] * 65) + ";;",
])
def test_a_malformed_verdict_is_refused_as_the_peers_fault(value: str) -> None:
    with pytest.raises(InvalidEncoding):
        VoteBody.parse(_signed(msg.VOTE, {"hand": 1, "of": "verdict", "round": 0,
                                          "step": "prevote", "value": value}))


def test_a_verdict_reads_back_and_names_its_agreement() -> None:
    value = Outcome.verdict([bytes(32), None, b"\x01" * 32], {1, 4}, {0})
    assert Outcome.from_text(str(value)) == value
    assert eval(repr(value)) == value
    vote = VoteBody(3, 0, VoteStep.PREVOTE, value, instance=Instance.VERDICT)
    assert VoteBody.parse(_signed(msg.VOTE, vote.to_json())) == vote
    with pytest.raises(InvalidEncoding):
        VoteBody.parse(_signed(msg.VOTE, {**vote.to_json(), "of": "tally"}))


def _signed(kind: str, body: Body) -> Envelope:
    identity = Identity.from_seed(bytes(32))
    return Envelope.seal(identity, table=bytes(16), seq=1, prev=bytes(32), kind=kind,
                         body=body)


class ClaimsToHaveSeen(StopsForNothing):
    """Stops hand 1 for nothing; its accuse says it saw a version of another holder's
    accuse that nobody holds (a made-up id)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        status = node.status()
        if kind != msg.ACCUSE or status is None or status.me is None:
            return [body]
        other = (status.me + 1) % len(status.holders)
        seen: list[object] = [None] * len(status.holders)
        seen[other] = canonical.b64encode(bytes(range(32)))
        return [{**body, "seen": seen}]


def test_an_accuse_that_answers_a_version_nobody_holds_is_timed_out() -> None:
    # Its disclosures may answer an accusation nobody else can see: the others wait for
    # that version for a limit, as for an accuse that has not come, and then count it out.
    table = build_table(4, seed=2, chips=3, timing=Timing(limit=2.0))
    misbehave(table, 2, ClaimsToHaveSeen)
    run = table.run(until=600.0, max_hands=2)
    assert run.honest_agree
    first = run.honest[0].outcomes[0]
    assert first.voided
    assert first.eliminated == ["P3"]
    assert [(a["accused"], a["kind"]) for a in first.accusations] == [("P3", "timeout")]


class ForksAfterAccusing(Behaviour):
    """In hand 2, once past its key: falsely accuses the next holder and makes a second
    key envelope for its key slot (``fork``, sent by the test to chosen holders)."""

    def __init__(self) -> None:
        self.fork = b""

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status, key = node.status(), node.own_key()
        if (self.fork or status is None or status.number != 2 or status.me is None
                or key is None or node.stage <= Stage.KEYS):
            return []
        victim = status.holders[(status.me + 1) % len(status.holders)]
        theirs = next(e for e in node.transcript.chain(node.members[node.member_of[victim]])
                      if e.kind == msg.KEY and e.body.get("hand") == 2)
        mine = next(e for e in node.transcript.chain(node.identity.public)
                    if e.kind == msg.KEY and e.body.get("hand") == 2)
        other = key.announce(HandContext(node.config.table_id, 2), node.rng("fork", 2))
        self.fork = Envelope.seal(
            node.identity, table=node.config.table_id, seq=mine.seq, prev=mine.prev,
            kind=msg.KEY, body={**mine.body, "share": canonical.b64encode(other.to_bytes())}
        ).wire
        made_up = msg.Accusation(victim, "bad-key", "made up", theirs.wire)
        return [(msg.ACCUSE, {"accusations": [made_up.to_json()], "disclosed": [],
                              "hand": 2})]



def test_a_member_without_a_key_takes_the_holders_verdict_over_a_fork_it_lacks() -> None:
    # Six peers, one seat sold out of hand 2: a member M without a key. A holder F falsely
    # accuses another; once M holds every accuse it is cut off, and F's second key envelope
    # reaches only the other holders. They hold F forked (its accuse counts for nothing),
    # decide a verdict that counts nothing of F, and deal on. M never gets the other
    # branch: it carries out the decided verdict, which says F's accuse counts for
    # nothing, and keeps the holders' record (counting F's accuse, it would expel the
    # seat F accused; reading F's none as a time-out, it would expel F in hand 2).
    timing = Timing(limit=2.0, answer_limit=10.0)
    table = build_table(6, seed=2, chips=1, timing=timing, faults=Faults(delay=0.05))
    net = table.network

    def number(node: TableNode) -> int:
        status = node.status()
        return 0 if status is None else status.number

    net.run(stop=lambda _: all(number(n) >= 2 for n in table.nodes), until=2000.0)
    status = table.nodes[0].status()
    holders = status.holders if status is not None else ()
    (member,) = [s for s in range(6) if s not in holders]
    seats = table.seats()
    forker, m = table.nodes[seats[holders[0]]], table.nodes[seats[member]]
    forking = ForksAfterAccusing()
    forker.behaviour = forking

    def accused(node: TableNode) -> int:
        status = node.status()
        return 0 if status is None else len(status.accused)

    net.run(stop=lambda _: bool(forking.fork) and accused(m) == len(holders),
            until=net.now + 500.0)
    assert accused(m) == len(holders)
    net.partition([m.name], [n.name for n in table.nodes if n is not m])
    for seat in holders[1:]:
        net.inject(forker.name, forking.fork, to=table.nodes[seats[seat]].name)
    honest = [n for n in table.nodes if n is not forker and n is not m]
    net.run(until=net.now + 120.0, stop=lambda _: all(n.done for n in honest))
    net.heal()
    net.run(until=net.now + 3 * timing.answer_limit)
    assert all(m.transcript.covers(n.transcript.heads()) for n in honest)
    assert all(n.done for n in honest)
    record = [(o.hand, o.voided, o.eliminated) for o in honest[0].outcomes]
    assert all([(o.hand, o.voided, o.eliminated) for o in n.outcomes] == record for n in honest)
    f_name = f"P{holders[0] + 1}"
    assert (2, True, [f_name]) in record  # F, for its fork: not the seat it accused
    assert [(o.hand, o.voided, o.eliminated) for o in m.outcomes] == record[:len(m.outcomes)]
    assert len(m.outcomes) >= 2, "M took the verdict of hand 2"
