"""Two or more key holders that go silent together are timed out (docs II.11.3).

Each holder's time-out needs the votes of the holders outside the silent set only, which
must be a strict majority, and a holder that does not answer a voted step for a whole
limit is voted out in turn (a respond step), so two silent holders never wait for each
other's vote while the rest of the table waits for ever. A minority never agrees anything:
half a table cut off from the other half waits, and both halves play on alike once the
link heals. Cuts, crashes and slow links at the awkward moments (a decision on its way, the
signatures going out, a void round) leave every node with the same record.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from p2pkille.bots.base import keep
from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision
from p2pkille.engine.view import SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.log import LoggedNode, load_log, verify_log
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.runtime.status import HandStatus
from p2pkille.runtime.steps import Step
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import DeciderFactory, SimTable, build_table
from protocol.envelope import Envelope
from tests.runtime.helpers import envelope_in, own_envelopes


def _status(node: TableNode) -> HandStatus:
    status = node.status()
    assert status is not None, f"{node.name} has no hand yet"
    return status


def _dealt(nodes: list[TableNode]) -> bool:
    return all(n.status() is not None for n in nodes)


def _voted(node: TableNode, number: int, step: Step) -> bool:
    """Has ``node`` voted the time out of ``step`` in hand ``number``?"""
    return any(msg.get_step(e.body, e.wire) == step
               for e in own_envelopes(node, msg.TIMEOUT, number))


def _agree(live: list[TableNode]) -> None:
    outs = [[(o.hand, o.checkpoint, o.voided, o.chips) for o in n.outcomes] for n in live]
    common = min(len(o) for o in outs)
    assert all(o[:common] == outs[0][:common] for o in outs)


def _play_on(table: SimTable, dead: list[int], hands: int, within: float) -> list[TableNode]:
    net = table.network
    live = [n for i, n in enumerate(table.nodes) if i not in dead]
    target = min(len(n.outcomes) for n in live) + hands
    net.run(stop=lambda _: all(len(n.outcomes) >= target or n.done for n in live),
            until=net.now + within)
    assert all(len(n.outcomes) >= target or n.done for n in live), (
        f"the table stalled at {net.now:.0f} s: {[len(n.outcomes) for n in live]} hands, "
        f"waiting for {[n.waiting_for() for n in live]}")
    _agree(live)
    return live


@pytest.mark.parametrize(("peers", "dead"), [(5, [0, 1]), (6, [1, 4]), (7, [0, 2, 5])])
def test_holders_crashed_together_after_the_genesis_are_timed_out(
        peers: int, dead: list[int]) -> None:
    table = build_table(peers, seed=3, chips=3)
    net = table.network
    net.run(stop=lambda _: _dealt(table.nodes))
    for i in dead:
        net.crash(table.nodes[i].name)
    live = _play_on(table, dead, hands=2, within=3600.0)
    first = live[0].outcomes[0]
    assert first.voided
    timed_out = {a["accused"] for a in first.accusations if a["kind"] == "timeout"}
    crashed = {f"P{seat + 1}" for seat, index in enumerate(table.seats()) if index in dead}
    assert timed_out == crashed
    assert all(n.silent_without_majority() == () for n in live)  # a majority ended it


def test_two_of_four_silent_are_named_as_a_wait_no_majority_can_end() -> None:
    # The two live holders of four cannot time the other two out (that could be a split
    # network); each node names them so that its player knows why the table waits.
    table = build_table(4, seed=3, chips=3)
    net = table.network
    net.run(stop=lambda _: _dealt(table.nodes))
    assert all(n.silent_without_majority() == () for n in table.nodes)
    for i in (0, 1):
        net.crash(table.nodes[i].name)
    net.run(until=net.now + 600.0)
    live = table.nodes[2:]
    assert not any(n.outcomes for n in live)
    crashed = tuple(sorted(seat for seat, index in enumerate(table.seats()) if index < 2))
    assert all(n.silent_without_majority() == crashed for n in live)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_decision_no_majority_can_default_is_named_too(seed: int) -> None:
    # Two of three crash while one of them owes a decision: its default needs the other
    # crashed holder's vote, so the last one waits for ever, and says whom for.
    table = build_table(3, seed=seed, chips=3)
    net = table.network
    net.run(stop=lambda _: all(n.stage >= Stage.PLAY for n in table.nodes), until=500.0)
    for i in (0, 1):
        net.crash(table.nodes[i].name)
    net.run(until=net.now + 600.0)
    last = table.nodes[2]
    assert not last.outcomes
    assert last.silent_without_majority() == tuple(sorted(
        seat for seat, index in enumerate(table.seats()) if index < 2))


@pytest.mark.parametrize("seed", [2, 17, 21])
def test_holders_crashed_at_any_stage_together_or_apart_never_stall_the_table(
        seed: int) -> None:
    # Tables drawn from the seed: 5-7 peers, both modes, two or three crashed (fewer than
    # half), at once or a few seconds apart, at a random moment of play, with network
    # faults and limits from 1 to 30 s.
    r = random.Random(seed * 104729)
    peers = r.choice([4, 5, 6, 7])
    k = r.choice([2, 2, 3]) if peers >= 5 else 2
    assert 2 * k < peers, "a seed for a table that keeps a majority"
    mode = r.choice(["audit", "audit", "strict"])
    faults = Faults(drop=r.choice([0, 0, 0.05]), dup=r.choice([0, 0.05]),
                    reorder=r.choice([0, 0.1]), delay=r.choice([0, 0.02, 0.05]))
    timings = {i: Timing(limit=r.choice([1.0, 2.0, 5.0, 30.0])) for i in range(peers)}
    table = build_table(peers, seed=seed, chips=3, mode=mode, faults=faults, timings=timings)
    net = table.network
    net.run(stop=lambda _: _dealt(table.nodes), until=3000.0)
    net.run(until=net.now + r.uniform(0, 20))
    dead = r.sample(range(peers), k)
    apart = r.choice(["together", "apart"]) == "apart"
    for i, d in enumerate(dead):
        if apart and i:
            net.run(until=net.now + r.uniform(0, 10))
        net.crash(table.nodes[d].name)
    _play_on(table, dead, hands=2, within=20000.0)


@pytest.mark.parametrize(("peers", "cut"), [(4, 2), (6, 3)])
def test_half_a_table_cut_off_agrees_nothing_and_both_halves_agree_after_the_heal(
        peers: int, cut: int) -> None:
    # Neither half is a strict majority: neither may time the other out, or each half
    # would deal on without the other (two games). Each waits; once the link heals the
    # late envelopes count (some holder saw them) and every node reaches the same results.
    table = build_table(peers, seed=4, chips=3)
    net = table.network
    net.run(stop=lambda _: _dealt(table.nodes))
    names = [n.name for n in table.nodes]
    net.partition(names[:cut], names[cut:])
    net.run(until=net.now + 900.0)  # far beyond every limit, the respond steps' too
    assert all(n.status() is None or not _status(n).timed_out for n in table.nodes)
    net.heal()
    live = _play_on(table, [], hands=2, within=3600.0)
    assert all(not any(a["kind"] == "timeout" for o in n.outcomes for a in o.accusations)
               for n in live)


class CutAtTheCheckpoint(Behaviour):
    """An honest node of ``cut`` whose links to ``rest`` go down (the network's, one
    way) as the first checkpoint signature leaves it, that one lost too."""

    def __init__(self, net: SimNetwork, cut: list[str], rest: list[str]) -> None:
        self.net, self.cut, self.rest = net, cut, rest

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if any(isinstance(o, Send) and (env := envelope_in(node, o.data)) is not None
               and env.kind == msg.CHECKPOINT for o in out):
            for a in self.cut:
                for b in self.rest:
                    self.net.set_link(a, b, Faults(drop=1.0), one_way=True)
        return out


@pytest.mark.parametrize("seed", [1, 2])
def test_two_holders_cut_off_once_their_signatures_are_due_are_timed_out_by_the_rest(
        seed: int) -> None:
    # Two of five lose their way to the other three just as they sign the checkpoint
    # (they still hear the three). The three, a strict majority, decide the void with
    # both timed out and play on. The two hold every signature but not a majority's
    # precommits: they count nothing, and take the three's decision (docs II.11.5), so
    # no node keeps a record of its own of that hand.
    table = build_table(5, seed=seed, chips=3)
    net = table.network
    names = [n.name for n in table.nodes]
    cut, rest = names[:2], names[2:]
    for node in table.nodes[:2]:
        node.behaviour = CutAtTheCheckpoint(net, cut, rest)
    net.run(stop=lambda _: all(table.nodes[i].outcomes for i in (2, 3, 4)), until=3600.0)
    live = _play_on(table, [0, 1], hands=2, within=3600.0)
    first = live[0].outcomes[0]
    assert first.voided
    timed_out = {a["accused"] for a in first.accusations if a["kind"] == "timeout"}
    assert timed_out == {f"P{seat + 1}" for seat, index in enumerate(table.seats())
                         if index in (0, 1)}
    assert all(o.voided for i in (0, 1) for o in table.nodes[i].outcomes[:1])


@pytest.mark.parametrize("seed", [3, 4])
def test_a_late_answer_from_a_holder_voted_out_on_its_respond_step_is_held_back(
        seed: int) -> None:
    # The awaited shuffler crashes; a second holder is cut off (it hears, nobody hears
    # it) until the other three vote it out for not answering their votes. Its answer,
    # arriving then, is held back (only a seen of its respond step releases it), so the
    # three agree both time-outs on the same votes whatever arrives late.
    table = build_table(5, seed=seed, chips=3, timing=Timing(limit=2.0, answer_limit=10.0))
    net = table.network
    nodes = table.nodes
    net.run(stop=lambda _: all(n.stage >= Stage.SHUFFLE for n in nodes), until=600.0)
    hand = _status(nodes[0])
    awaited = hand.holders[hand.shuffled]
    crashed = next(n for n in nodes if n.my_seat == awaited)
    cut = next(n for n in nodes if n is not crashed)
    rest = [n for n in nodes if n not in (crashed, cut)]
    assert cut.my_seat is not None
    net.crash(crashed.name)
    for other in rest:
        net.set_link(cut.name, other.name, Faults(drop=1.0), one_way=True)
    step = Step(awaited, Stage.SHUFFLE, 0)
    respond = step.respond(cut.my_seat)
    net.run(stop=lambda _: any(_voted(n, hand.number, respond) for n in rest),
            until=net.now + 100.0)
    assert any(_voted(n, hand.number, respond) for n in rest)
    for other in rest:
        net.set_link(cut.name, other.name, None, one_way=True)

    def answered(node: TableNode) -> bool:
        return any(e.kind in (msg.TIMEOUT, msg.SEEN) and e.body.get("hand") == hand.number
                   and e.body.get("seat") == awaited
                   for e in node.transcript.chain(cut.identity.public))

    net.run(stop=lambda _: any(answered(n) for n in rest), until=net.now + 30.0)
    holding = [n for n in rest if _status(n).number == hand.number and answered(n)]
    assert holding, "the late answer reached a node still in the hand"
    # The time-outs are agreed by the votes and then decided in the hand's agreement.
    net.run(stop=lambda _: all(_status(n).number != hand.number or _status(n).timed_out
                               for n in holding), until=net.now + 300.0)
    for node in holding:
        status = _status(node)
        assert status.number == hand.number
        assert status.timed_out == {awaited, cut.my_seat}
        k = status.holders.index(cut.my_seat)
        assert k not in status.answers.get(step, frozenset())


@pytest.mark.parametrize("cut", [3, 4])
def test_a_holder_cut_off_one_way_before_play_learns_it_was_timed_out_and_follows_on(
        cut: int) -> None:
    # The holder's deal is out but another holder's never reaches it; then nobody hears
    # it (it cannot even ask for what it lacks) while the rest default its decisions, time
    # it out at a later play step and void the hand. It starts voiding on their accuses
    # before it has reached that step. Once it is heard again it plays on to the step with
    # their acts and the defaults (a voiding node gives defaults too), counts the votes
    # there and agrees the table's record.
    peers = 5
    table = build_table(peers, seed=1, chips=3, timing=Timing(limit=2.0, decide_limit=2.0))
    net = table.network
    nodes = table.nodes
    x, y, other = nodes[cut], nodes[(cut + 1) % peers], nodes[(cut + 2) % peers]
    net.run(stop=lambda _: _dealt(nodes))
    net.set_link(y.name, x.name, Faults(drop=1.0), one_way=True)

    def dealt(_: object) -> bool:
        mine, theirs = x.status(), other.status()
        return (mine is not None and mine.me is not None and theirs is not None
                and mine.me in theirs.dealt)

    net.run(stop=dealt, until=net.now + 100.0)
    assert x.stage in (Stage.DEAL, Stage.PLAY)
    for n in nodes:
        if n is not x:
            net.set_link(x.name, n.name, Faults(drop=1.0), one_way=True)
    net.run(until=net.now + 5.0)
    net.set_link(y.name, x.name, None, one_way=True)
    net.run(until=net.now + 200.0)
    assert _status(x).number == 1
    assert _status(x).voiding
    assert not x.outcomes
    for n in nodes:
        if n is not x:
            net.set_link(x.name, n.name, None, one_way=True)
    net.run(stop=lambda _: all(n.done for n in nodes), until=net.now + 3000.0)
    assert all(n.done for n in nodes), [n.waiting_for() for n in nodes]
    _agree(nodes)
    assert len({len(n.outcomes) for n in nodes}) == 1
    first = x.outcomes[0]
    assert first.voided
    assert x.my_seat is not None
    assert {a["accused"] for a in first.accusations if a["kind"] == "timeout"} == {
        f"P{x.my_seat + 1}"}


def _stress_table(seed: int) -> SimTable:
    """5-7 peers, a misbehaving seat of any kind or none, lossy links, limits of 0.5-5 s
    and answer limits of 3-30 s (shorter than some links' delays, on purpose), one or two
    peers whose messages take up to 20 s."""
    from tests.runtime.bots import Restless
    from tests.runtime.test_verdict import BEHAVIOURS

    r = random.Random(seed * 7919 + 1)
    peers = r.choice([5, 6, 7])
    mode = r.choice(["audit", "audit", "strict"])
    behaviour = r.choice(BEHAVIOURS)
    byzantine = {r.randrange(peers): behaviour} if behaviour else {}
    faults = Faults(drop=r.choice([0, 0.05, 0.1]), dup=r.choice([0, 0.05]),
                    reorder=r.choice([0, 0.1]), delay=r.choice([0, 0.02, 0.05]))
    timings = {i: Timing(limit=r.choice([0.5, 1.0, 2.0, 5.0]),
                         decide_limit=r.choice([2.0, 10.0]),
                         answer_limit=r.choice([3.0, 10.0, 30.0])) for i in range(peers)}
    restless = r.random() < 0.5
    table = build_table(peers, seed=seed, chips=3, mode=mode, faults=faults,
                        byzantine=byzantine, timings=timings,
                        deciders=(lambda _i: Restless()) if restless else None)
    for _ in range(r.choice([1, 2])):
        slow = table.nodes[r.randrange(peers)]
        most = r.choice([1.0, 3.0, 8.0, 20.0])
        for other in table.nodes:
            if other is not slow:
                table.network.set_link(slow.name, other.name,
                                       Faults(delay=most * r.random()), one_way=True)
    return table


@pytest.mark.parametrize("seed", [35])
def test_a_holder_timed_out_while_slow_gets_seens_for_its_late_respond_votes(
        seed: int) -> None:
    # A slow holder the others timed out votes, long after they voided the hand and dealt
    # on, the others' respond steps for a step it lacked, and holds back their late
    # answers to it until a seen of those steps. Nobody in the hand answers any more, so a
    # node that decided a hand answers a late vote on a respond step from the answers it
    # took (and re-sends them), and that holder does not wait for ever.
    run = _stress_table(seed).run(until=6000.0, max_hands=4)
    assert run.honest_agree
    assert all(len(n.outcomes) >= 4 or n.done for n in run.honest), [
        (n.name, len(n.outcomes), n.waiting_for()) for n in run.honest]


def test_late_seens_of_respond_steps_are_bounded_and_only_for_real_answers() -> None:
    # A node that decided a hand answers a late vote on holder Z's respond step for X only
    # when it took Z's answer to X, the voter is another holder, X is another seat's step
    # at a known stage; and at most 256 times per hand, so made-up votes cost their author.
    # The votes and answers are signed by the holders' keys and fed to the node alone.
    table = build_table(5, seed=3, chips=3)
    node = table.nodes[0]
    net = table.network
    net.run(stop=lambda _: bool(node.outcomes) and _status(node).number > node.outcomes[0].hand)
    number = node.outcomes[0].hand
    holders = [node.names.index(name) for name in node.outcomes[0].holders]
    z, voter, other = [s for s in holders if s != node.my_seat][:3]
    seat_nodes = {n.my_seat: n for n in table.nodes}

    def signed(seat: int, kind: str, step: Step) -> None:
        """``seat``'s next envelope as ``node`` holds its chain: ``kind`` of ``step``."""
        author = seat_nodes[seat].identity
        seq, prev = node.transcript.next_slot(author.public)
        env = Envelope.seal(author, table=node.config.table_id, seq=seq, prev=prev,
                            kind=kind, body=step.body(number))
        node.receive(seat_nodes[seat].name, env.wire, net.now)

    def seens() -> int:
        return sum(1 for e in own_envelopes(node, msg.SEEN, number)
                   if msg.get_step(e.body, e.wire).stage == Stage.RESPOND)

    step = Step(other, Stage.DEAL, 0)
    own, done = Step(z, Stage.DEAL, 0), Step(other, Stage.DONE, 0)
    signed(voter, msg.TIMEOUT, step.respond(z))
    assert seens() == 0  # Z's answer to it was never taken
    for answered in (step, own, done):
        signed(z, msg.SEEN, answered)
    signed(z, msg.TIMEOUT, step.respond(z))  # Z votes itself out
    signed(voter, msg.TIMEOUT, own.respond(z))  # on Z's own step
    signed(voter, msg.TIMEOUT, done.respond(z))  # on no step a holder answers
    assert seens() == 0
    signed(voter, msg.TIMEOUT, step.respond(z))
    signed(voter, msg.TIMEOUT, step.respond(z))  # once
    assert seens() == 1
    for at in range(1, 400):
        made_up = Step(other, Stage.PLAY, at)
        signed(z, msg.SEEN, made_up)
        signed(voter, msg.TIMEOUT, made_up.respond(z))
    assert seens() == 256


def test_holders_timed_out_after_a_three_way_cut_take_the_movers_decision() -> None:
    # Five holders cut three ways (P1 with P5, P3 alone, P2 with P4), then P2 and P4 cut
    # off from the rest, each long past every limit; one peer's links are slow. P5, P2 and
    # P4 (a majority) void the hand with P1 and P3 timed out and deal on. P1 and P3 also
    # hold P3's vote that P5 never answered a step while P5 was away: with it their own
    # votes give a second silent set, {P5, P1}, so they would count P5 timed out too. The
    # hand's void is what the majority decided, whatever votes came later, and every
    # node keeps the same record.
    timings = {0: Timing(limit=2.0, decide_limit=2.0, answer_limit=40.0),
               1: Timing(limit=1.0, decide_limit=3.0, answer_limit=120.0),
               2: Timing(limit=1.0, decide_limit=3.0, answer_limit=2.0),
               3: Timing(limit=2.0, decide_limit=60.0, answer_limit=40.0),
               4: Timing(limit=2.0, decide_limit=6.0, answer_limit=40.0)}
    table = build_table(5, seed=270, chips=3, faults=Faults(delay=0.02), timings=timings)
    net = table.network
    for other, delay in (("n1", 27.3), ("n2", 30.6), ("n3", 10.8), ("n4", 0.83)):
        net.set_link("n5", other, Faults(delay=delay), one_way=True)
    net.run(stop=lambda _: _dealt(table.nodes), until=3000.0)
    net.run(until=net.now + 0.66)
    net.partition(["n5", "n1"], ["n3"], ["n2", "n4"])
    net.run(until=net.now + 130.3)
    net.heal()
    net.run(until=net.now + 21.5)
    net.partition(["n2", "n4"], ["n1", "n3", "n5"])
    net.run(until=net.now + 204.2)
    net.heal()
    nodes = table.nodes
    net.run(stop=lambda _: all(n.done for n in nodes), until=net.now + 20000.0)
    assert all(n.done for n in nodes), [(n.name, n.waiting_for()) for n in nodes]
    records = {json.dumps([o.to_json() for o in n.outcomes], sort_keys=True) for n in nodes}
    assert len(records) == 1
    first = nodes[0].outcomes[0]
    assert first.voided
    assert sorted(first.eliminated) == sorted(
        f"P{seat + 1}" for seat, index in enumerate(table.seats()) if index in (2, 4))


def _partitioned(seed: int, timings: dict[int, Timing],
                 slow: tuple[int, dict[int, float]] | None,
                 cuts: list[tuple[float, list[list[str]], float, float]],
                 logs: Path | None = None,
                 deciders: DeciderFactory | None = None) -> SimTable:
    """A table of slow links and cuts: one peer's links slow one way (if ``slow``),
    then cuts, each (wait before, groups, length, wait after the heal); played to its
    end. With ``logs``, each node logs there (``<name>.log``, closed at the end)."""
    table = build_table(len(timings), seed=seed, chips=3, faults=Faults(delay=0.02),
                        timings=timings, deciders=deciders)
    logged = []
    if logs is not None:
        network = SimNetwork(seed, table.network.faults)
        logged = [LoggedNode(n, logs / f"{n.name}.log", durable=False) for n in table.nodes]
        for wrapper in logged:
            network.add(wrapper)
        table = SimTable(list(table.nodes), network, table.byzantine)
    net = table.network
    if slow is not None:
        peer, delays = slow
        for other, delay in delays.items():
            net.set_link(f"n{peer + 1}", f"n{other + 1}", Faults(delay=delay), one_way=True)
    net.run(stop=lambda _: _dealt(table.nodes), until=3000.0)
    for before, groups, length, after in cuts:
        net.run(until=net.now + before)
        net.partition(*groups)
        net.run(until=net.now + length)
        net.heal()
        net.run(until=net.now + after)
    net.run(stop=lambda _: all(n.done for n in table.nodes), until=net.now + 20000.0)
    for wrapper in logged:
        wrapper.close()
    assert all(n.done for n in table.nodes), [(n.name, n.waiting_for()) for n in table.nodes]
    records = {json.dumps([o.to_json() for o in n.outcomes], sort_keys=True)
               for n in table.nodes}
    assert len(records) == 1
    return table


def test_a_holder_cut_off_as_the_signatures_went_out_counts_nothing_and_follows_the_table(
        tmp_path: Path) -> None:
    # n4's links to n1 and n5 are slow one way (12 s), and n4 with n1 is cut off from the
    # rest for 6 s in hand 7. n4 holds every checkpoint signature; the others vote its out,
    # time it out and decide the void. n4 counts nothing without a majority's precommits:
    # it takes the decision when the votes reach it (no start over, no record of its
    # own), and keeps the table's record.
    timings = {0: Timing(limit=1.0, decide_limit=3.0, answer_limit=2.0),
               1: Timing(limit=5.0, decide_limit=60.0, answer_limit=120.0),
               2: Timing(limit=1.0, decide_limit=3.0, answer_limit=40.0),
               3: Timing(limit=1.0, decide_limit=60.0, answer_limit=2.0),
               4: Timing(limit=2.0, decide_limit=60.0, answer_limit=2.0)}
    table = _partitioned(53, timings, (3, {0: 12.0, 1: 0.8, 2: 0.8, 4: 12.0}),
                         [(60.0, [["n4", "n1"], ["n2", "n3", "n5"]], 6.0, 5.0)], tmp_path)
    assert [n.rebuilds for n in table.nodes] == [0, 0, 0, 0, 0]
    voided = [o for o in table.nodes[0].outcomes if o.voided]
    assert any(f"P{table.seats().index(3) + 1}" in o.eliminated for o in voided)
    # Its log, replayed, verifies clean, with the table's record.
    assert [n.faults for n in table.nodes] == [[]] * 5
    for name in ("n4", "n1"):
        verdict = verify_log(load_log(tmp_path / f"{name}.log"), ThresholdBot())
        assert verdict.clean, verdict.fault
        assert verdict.hands == [o.to_json() for o in table.nodes[0].outcomes]


class _KeepsOnce(ThresholdBot):
    """Keeps its card at its ``nth`` turn, whatever it holds: the default decision."""

    def __init__(self, nth: int) -> None:
        super().__init__()
        self.nth = nth
        self.turns = 0

    def turn(self, view: SeatView) -> Decision:
        self.turns += 1
        return keep(view.seat) if self.turns == self.nth else super().turn(view)


def _cut_after_its_decision(cut: float, decide_limit: float, keeps: bool,
                            rewinds: int) -> tuple[SimTable, TableNode]:
    """n2 (seat P4) decides at fact 16 of hand 2 and is cut off from everyone for ``cut``
    seconds, its decision on the way."""
    fast = Timing(limit=2.0, decide_limit=60.0, answer_limit=40.0)
    timings = {0: fast, 1: Timing(limit=5.0, decide_limit=decide_limit, answer_limit=120.0),
               2: fast, 3: Timing(limit=5.0, decide_limit=2.0, answer_limit=40.0),
               4: Timing(limit=5.0, decide_limit=60.0, answer_limit=40.0), 5: fast,
               6: Timing(limit=1.0, decide_limit=6.0, answer_limit=40.0)}
    table = build_table(len(timings), seed=605, chips=3, faults=Faults(delay=0.02),
                        timings=timings,
                        deciders=lambda i: _KeepsOnce(2 if keeps and i == 1 else 0))
    net, n2 = table.network, table.nodes[1]

    def decided() -> bool:
        return any(e.kind == msg.ACT and e.body.get("hand") == 2 and e.body.get("at") == 16
                   for e in n2.transcript.chain(n2.identity.public))

    net.run(stop=lambda _: decided(), until=3000.0)
    assert decided(), "n2 decided at fact 16 of hand 2"
    net.partition(["n2"], [n.name for n in table.nodes if n is not n2])
    net.run(until=net.now + cut)
    net.heal()
    net.run(stop=lambda _: all(n.done for n in table.nodes), until=net.now + 20000.0)
    assert all(n.done for n in table.nodes), [(n.name, n.waiting_for()) for n in table.nodes]
    records = {json.dumps([o.to_json() for o in n.outcomes], sort_keys=True)
               for n in table.nodes}
    assert len(records) == 1
    assert n2.rewinds == rewinds
    return table, n2


@pytest.mark.parametrize("keeps", [False, True])
def test_a_seat_cut_off_after_its_own_decision_takes_the_void_on_its_own_branch(
        keeps: bool) -> None:
    # Cut off for 313 s: the others agree the default at n2's decision, play on, time P4
    # out at a later step and decide the void. Back, n2 takes the decision as it comes:
    # it stops the hand on its own branch (a swap, or the default's) without reaching the
    # step it was timed out at, so it needs no rewind, and follows the table to the end.
    table, n2 = _cut_after_its_decision(313.0, 2.0, keeps, rewinds=0)
    voided = [o for o in n2.outcomes if o.voided]
    assert [(o.hand, o.eliminated) for o in voided] == [(2, [f"P{table.seats().index(1) + 1}"])]


def test_a_late_decision_equal_to_the_default_loses_none_of_the_others_acts() -> None:
    # Cut off for 61.5 s and slow to vote (600 s): n2 keeps, the table defaults it (keep)
    # and plays on; n2 takes the others' acts on its branch, which is theirs, then the last
    # vote and rewinds, not voiding. The acts go back to their chains, and the hand counts.
    _table, n2 = _cut_after_its_decision(61.5, 600.0, keeps=True, rewinds=1)
    assert not any(o.voided for o in n2.outcomes)


def test_holders_cut_off_while_the_rest_counted_and_moved_on_take_the_signatures() -> None:
    # n2 and n5 are cut off for 20 s as the checkpoint signatures of hand 4 go out: they
    # vote the others' signatures out, while the others count the hand and play the game
    # to its end. Nobody there answers a vote of a hand so far back, so no seen comes: a
    # step that the holders which moved on never voted can time nobody out, and its
    # envelope counts.
    timings = {0: Timing(limit=2.0, decide_limit=2.0, answer_limit=120.0),
               1: Timing(limit=5.0, decide_limit=3.0, answer_limit=120.0),
               2: Timing(limit=1.0, decide_limit=3.0, answer_limit=2.0),
               3: Timing(limit=5.0, decide_limit=6.0, answer_limit=2.0),
               4: Timing(limit=5.0, decide_limit=2.0, answer_limit=2.0),
               5: Timing(limit=2.0, decide_limit=3.0, answer_limit=40.0),
               6: Timing(limit=1.0, decide_limit=60.0, answer_limit=2.0)}
    _partitioned(202, timings, (4, {0: 30.0, 1: 0.3, 2: 0.8, 3: 30.0, 5: 0.3, 6: 5.0}),
                 [(20.0, [["n7", "n4", "n6", "n1", "n3"], ["n2", "n5"]], 20.0, 0.0),
                  (0.7, [["n7", "n5", "n3", "n4", "n6", "n2"], ["n1"]], 313.0, 0.0),
                  (3.0, [["n2", "n1", "n3", "n4", "n5"], ["n6", "n7"]], 20.0, 0.0)])


def test_a_node_that_starts_over_keeps_the_forks_it_held() -> None:
    # Starting over replays the accepted envelopes, which hold one branch of each fork:
    # the other branches are given back too, so the forker stays blamed and a log's count
    # of the forks it wrote stays true.
    table = build_table(4, seed=5, chips=4, byzantine={1: "equivocate"})
    run = table.run(until=600.0)
    assert run.honest_agree
    for node in run.honest:
        outcomes = [o.to_json() for o in node.outcomes]
        forks = list(node.transcript.equivocations)
        blamed = [(f.kind, f.seat) for f in node.faults]
        assert forks
        assert blamed
        node.start_over()
        assert node.rebuilds == 1
        assert node.done
        assert [o.to_json() for o in node.outcomes] == outcomes
        assert [(f.kind, f.seat) for f in node.faults] == blamed
        assert {(p.first, p.second) for p in node.transcript.equivocations} == {
            (p.first, p.second) for p in forks}
