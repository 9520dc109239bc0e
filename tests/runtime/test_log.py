"""The local log: format, torn tails, corruption, and crash/restart in the simulator."""

from __future__ import annotations

import os
import stat
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.log import (
    MAGIC,
    LogCorrupt,
    LogError,
    LoggedNode,
    load_log,
    restart_from_log,
    verify_log,
)
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.runtime.status import HandStatus
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, build_table
from protocol import canonical


def logged_table(tmp: Path, peers: int, seed: int, **kwargs: object) -> tuple[
        SimTable, list[LoggedNode]]:
    """``build_table`` with every node wrapped in a LoggedNode on a fresh network."""
    plain = build_table(peers, seed=seed, **kwargs)  # type: ignore[arg-type]
    network = SimNetwork(seed, plain.network.faults)
    logged = [LoggedNode(n, tmp / f"{n.name}.log", durable=False) for n in plain.nodes]
    for node in logged:
        network.add(node)
    return SimTable(list(plain.nodes), network, plain.byzantine), logged


def _record(payload: bytes) -> bytes:
    """One record of the log format (p2pkille/runtime/log.py, docs II.12): u32 n,
    u32 crc32(n), the payload, u32 crc32(payload), big-endian."""
    n = struct.pack(">I", len(payload))
    return n + struct.pack(">I", zlib.crc32(n)) + payload + struct.pack(
        ">I", zlib.crc32(payload))


def _at(stage: Stage, reached: Callable[[HandStatus], bool]) -> Callable[[TableNode], bool]:
    """A crash point: the node is at ``stage`` and its hand has ``reached``."""
    def point(node: TableNode) -> bool:
        status = node.status()
        return node.stage == stage and status is not None and reached(status)
    return point


def _checkpoints(node: TableNode) -> list[str]:
    return [o.checkpoint for o in node.outcomes]


def _results(node: TableNode) -> list[tuple[int, list[str], int, dict[str, int]]]:
    """The game's results, hand by hand: the same whatever the network did. Checkpoints
    after the first may differ from a run without the crash, as they name chain
    positions, and how many agreement votes a holder signs before a hand is decided
    depends on when it learns the decision."""
    return [(o.hand, o.died, o.pot, o.chips) for o in node.outcomes]


def test_the_log_holds_every_accepted_envelope_in_order_and_the_keys(tmp_path: Path) -> None:
    table, logged = logged_table(tmp_path, 3, seed=5)
    run = table.run(max_hands=1)
    assert run.honest_agree
    for wrapper in logged:
        wrapper.close()
        node = wrapper.node
        assert stat.S_IMODE(os.stat(wrapper.path).st_mode) == 0o600
        loaded = load_log(wrapper.path)
        assert loaded.envelopes == tuple(e.wire for e in node.transcript.accepted)
        assert loaded.config == node.config
        assert loaded.identity.public == node.identity.public
        assert loaded.delivery.private == node.delivery.private
        assert loaded.name == node.name
        assert loaded.torn == 0
        assert Path(wrapper.path).read_bytes().startswith(MAGIC)


def test_a_log_is_never_overwritten(tmp_path: Path) -> None:
    table = build_table(3, seed=5)
    LoggedNode(table.nodes[0], tmp_path / "a.log", durable=False).close()
    with pytest.raises(FileExistsError):
        LoggedNode(table.nodes[0], tmp_path / "a.log", durable=False)


def _durable_hand(tmp_path: Path, logger: type[LoggedNode] = LoggedNode,
                  ) -> tuple[SimTable, list[LoggedNode]]:
    """Three peers play one hand, each logging durably through ``logger``."""
    plain = build_table(3, seed=5)
    network = SimNetwork(5)
    logged = [logger(n, tmp_path / f"{n.name}.log") for n in plain.nodes]
    for node in logged:
        network.add(node)
    table = SimTable(list(plain.nodes), network)
    table.run(max_hands=1)
    return table, logged


def test_fsync_runs_at_checkpoints_and_decisions(tmp_path: Path) -> None:
    _table, logged = _durable_hand(tmp_path)
    for wrapper in logged:
        # creation, then at least the one checkpoint of hand 1
        assert wrapper.syncs >= 2
        assert wrapper.syncs < wrapper.records


def test_a_vote_is_on_disk_before_it_is_sent(tmp_path: Path) -> None:
    # A vote is its clock's call, which a restart cannot make again: lost in a power cut
    # after it left, the node would sign another at that slot (a fork of its own).
    from collections.abc import Sequence

    from p2pkille.runtime import messages as msg
    from p2pkille.runtime.io import Output, Send
    from tests.runtime.helpers import envelope_in

    unsynced: list[str] = []

    class Watched(LoggedNode):
        def _calls(self, out: Sequence[Output], before: int) -> Sequence[Output]:
            me = self.node.identity.public
            for o in out:
                if isinstance(o, Send) and o.to is None:
                    env = envelope_in(self.node, o.data)
                    if (env is not None and env.author == me
                            and env.kind in msg.AGREEMENT_KINDS and self.syncs == before):
                        unsynced.append(env.kind)
            return out

        def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
            before = self.syncs
            return self._calls(super().receive(sender, data, now), before)

        def wake(self, now: float) -> Sequence[Output]:
            before = self.syncs
            return self._calls(super().wake(now), before)

    table, _logged = _durable_hand(tmp_path, Watched)
    assert any(e.kind == msg.VOTE for e in table.nodes[0].transcript.accepted)
    assert unsynced == []


def _one_log(tmp_path: Path) -> Path:
    table, logged = logged_table(tmp_path, 3, seed=5)
    table.run(max_hands=1)
    for wrapper in logged:
        wrapper.close()
    return Path(logged[0].path)


def test_a_torn_tail_is_dropped_and_appending_resumes_after_the_good_part(
        tmp_path: Path) -> None:
    path = _one_log(tmp_path)
    full = load_log(path)
    data = path.read_bytes()
    for cut in (1, 5, 9, 30):
        path.write_bytes(data[:-cut])
        loaded = load_log(path)
        assert loaded.envelopes == full.envelopes[:-1]
        assert loaded.torn > 0
        assert loaded.size + loaded.torn == len(data) - cut
    # A tail of zeros (a file extended but never written) is torn too.
    path.write_bytes(data + bytes(100))
    assert load_log(path).envelopes == full.envelopes
    # Reopening truncates the torn tail, so new records follow the last good one.
    path.write_bytes(data[:-5])
    wrapper = restart_from_log(path, ThresholdBot(), durable=False)
    wrapper.close()
    assert path.stat().st_size == len(data) - len(full.envelopes[-1]) - 13
    assert load_log(path).torn == 0


def test_corruption_is_a_clear_error(tmp_path: Path) -> None:
    path = _one_log(tmp_path)
    data = path.read_bytes()
    middle = data.index(load_log(path).envelopes[3])
    flipped = bytearray(data)
    flipped[middle + 10] ^= 1
    path.write_bytes(bytes(flipped))
    with pytest.raises(LogCorrupt, match=r"record 4 at offset .*checksum mismatch"):
        load_log(path)
    # The last record too: complete but wrong is corruption, not a torn write.
    flipped = bytearray(data)
    flipped[-6] ^= 1
    path.write_bytes(bytes(flipped))
    with pytest.raises(LogCorrupt, match="checksum"):
        load_log(path)
    flipped = bytearray(data)
    flipped[len(MAGIC) + 200] ^= 0x40  # in the header's length-protected frame
    flipped[len(MAGIC) + 1] ^= 0x01    # its length field
    path.write_bytes(bytes(flipped))
    with pytest.raises(LogCorrupt, match="bad length"):
        load_log(path)
    path.write_bytes(b"not a log at all")
    with pytest.raises(LogError, match="bad magic"):
        load_log(path)
    path.write_bytes(MAGIC)
    with pytest.raises(LogError, match="no header"):
        load_log(path)


def test_a_header_that_lies_about_the_member_is_refused(tmp_path: Path) -> None:
    table = build_table(3, seed=5)
    node = table.nodes[0]
    other = table.nodes[1]
    LoggedNode(node, tmp_path / "real.log", durable=False).close()
    real = (tmp_path / "real.log").read_bytes()[len(MAGIC):]  # its header record alone
    assert real == _record(real[8:-4])
    header = {"config": node.config.to_json(),
              "delivery": canonical.b64encode(other.delivery.private), "format": 1,
              "identity": canonical.b64encode(node.identity.private_bytes()),
              "name": "n1", "seed": canonical.b64encode(bytes(32))}
    path = tmp_path / "x.log"
    path.write_bytes(MAGIC + _record(b"H" + canonical.encode(header)))
    with pytest.raises(LogError, match="delivery key"):
        load_log(path)
    header["format"] = 2
    path.write_bytes(MAGIC + _record(b"H" + canonical.encode(header)))
    with pytest.raises(LogError, match="format"):
        load_log(path)


# -- crash and restart ------------------------------------------------------------------------

CrashPoint = Callable[[TableNode], bool]

CRASH_POINTS: dict[str, CrashPoint] = {
    "genesis": lambda n: n.stage == Stage.NONCE,
    "keys": _at(Stage.KEYS, lambda h: bool(h.keys)),
    "shuffle": _at(Stage.SHUFFLE, lambda h: bool(h.shuffled)),
    "swap-round": _at(Stage.PLAY, lambda h: len(h.facts) >= 3),
    "audit": _at(Stage.REVEAL, lambda h: bool(h.revealed)),
    "checkpoint": lambda n: n.stage == Stage.CHECKPOINT,
    "between-hands": lambda n: len(n.outcomes) == 1 and n.stage == Stage.KEYS,
}


@pytest.mark.parametrize("point", sorted(CRASH_POINTS))
@pytest.mark.parametrize("victim", [0, 2])
def test_a_node_crashed_mid_game_restarts_from_its_log_and_catches_up(
        tmp_path: Path, point: str, victim: int) -> None:
    seed, hands = 7, 2
    baseline = build_table(3, seed=seed).run(max_hands=hands)
    assert baseline.honest_agree
    want = _results(baseline.nodes[0])[:hands]

    table, logged = logged_table(tmp_path, 3, seed=seed)
    network = table.network
    node = table.nodes[victim]
    stop = network.run(stop=lambda _: CRASH_POINTS[point](node))
    assert stop.value == "stopped", f"never reached {point}"
    name = node.name
    network.crash(name)
    # The others go on without it (and their messages to it are lost) for a while.
    network.run(until=network.now + 2.0)
    logged[victim].close()
    restarted = restart_from_log(logged[victim].path, ThresholdBot(), durable=False)
    assert restarted.node.transcript.heads() == node.transcript.heads()
    network.restart(name, restarted)
    table.nodes[victim] = restarted.node
    run = table.run(max_hands=hands)
    assert run.honest_agree
    for n in table.nodes:
        assert _results(n)[:hands] == want
        assert _checkpoints(n)[:hands] == _checkpoints(table.nodes[0])[:hands]
        assert n.faults == []
    # Nothing was sent twice under one chain slot: no peer saw a fork.
    assert all(not n.transcript.equivocations for n in table.nodes)
    restarted.close()
    assert load_log(restarted.path).envelopes == tuple(
        e.wire for e in restarted.node.transcript.accepted)


def test_a_restart_from_a_torn_log_re_derives_what_was_lost(tmp_path: Path) -> None:
    seed = 7
    want = _checkpoints(build_table(3, seed=seed).run(max_hands=1).nodes[0])
    table, logged = logged_table(tmp_path, 3, seed=seed)
    network = table.network
    node = table.nodes[1]
    network.run(stop=lambda _: node.stage == Stage.PLAY)
    network.crash(node.name)
    logged[1].close()
    path = Path(logged[1].path)
    mine = [e for e in node.transcript.accepted if e.author == node.identity.public]
    # Lose everything after the node's own last envelope was written, and half of it.
    data = path.read_bytes()
    end = data.index(mine[-1].wire) + len(mine[-1].wire)
    path.write_bytes(data[:end - 20])
    restarted = restart_from_log(path, ThresholdBot(), durable=False)
    assert len(restarted.node.transcript.chain(node.identity.public)) == len(mine) - 1
    network.restart(node.name, restarted)
    table.nodes[1] = restarted.node
    assert table.run(max_hands=1).honest_agree
    assert all(_checkpoints(n)[:1] == want[:1] for n in table.nodes)
    assert all(not n.transcript.equivocations for n in table.nodes)


def test_a_restarted_node_knows_the_forks_it_saw_and_logs_them_once(tmp_path: Path) -> None:
    from p2pkille.runtime import messages as msg
    from p2pkille.runtime.faults import FaultKind
    from protocol.envelope import Envelope

    table, logged = logged_table(tmp_path, 3, seed=6)
    table.run(max_hands=1)
    victim, cheater = logged[0], table.nodes[2]
    fork = Envelope.seal(cheater.identity, table=cheater.config.table_id, seq=1,
                         prev=bytes(32), kind=msg.COMMIT,
                         body={"commit": canonical.b64encode(bytes(32)), "hand": 0})
    victim.receive("n3", fork.wire, 100.0)
    victim.close()
    restarted = restart_from_log(victim.path, ThresholdBot(), durable=False)
    restarted.start(200.0)
    kinds = [(f.kind, f.seat) for f in restarted.node.faults]
    assert (FaultKind.EQUIVOCATION, cheater.my_seat) in kinds
    restarted.close()
    assert len(load_log(victim.path).evidence) == 1


@pytest.mark.parametrize(("seed", "k"), [(7, 0), (8, 2), (9, 1), (10, 2)])
def test_a_node_crashed_right_after_its_accuse_does_not_accuse_again(
        tmp_path: Path, seed: int, k: int) -> None:
    # Its accuse depends on what it had taken when it wrote it (its cause, the forwards
    # it discloses); after the restart it holds more, so writing it again made a second,
    # different accuse: "a second accusation" of an honest seat.
    from p2pkille.runtime import messages as msg
    from p2pkille.runtime.faults import FaultKind

    table, logged = logged_table(tmp_path, 4, seed=seed, byzantine={1: "false-accuse"})
    network = table.network
    victim = [i for i in range(4) if i not in table.byzantine][k]  # the k-th honest node
    node = table.nodes[victim]

    def accused(n: TableNode) -> bool:
        return any(e.kind == msg.ACCUSE for e in n.transcript.chain(n.identity.public))

    assert network.run(stop=lambda _: accused(node)).value == "stopped"
    name = node.name
    network.crash(name)
    network.run(until=network.now + 2.0)  # the others' accuses come in meanwhile
    logged[victim].close()
    restarted = restart_from_log(logged[victim].path, ThresholdBot(), durable=False)
    network.restart(name, restarted)
    table.nodes[victim] = restarted.node
    run = table.run(max_hands=2)
    assert run.honest_agree
    for n in run.honest:
        assert not n.transcript.equivocations
        assert not [f for f in n.faults if f.kind is FaultKind.ILLEGAL_ACT
                    and f.seat == restarted.node.my_seat]
    mine = [e for e in restarted.node.transcript.chain(restarted.node.identity.public)
            if e.kind == msg.ACCUSE]
    assert len({e.body["hand"] for e in mine}) == len(mine)
    restarted.close()
    # verify replays the log one envelope at a time: it takes the logged accuse as the
    # node's own (re-deriving another, it would blame the node for equivocation).
    verdict = verify_log(load_log(restarted.path), ThresholdBot())
    assert not [f for f in verdict.faults if f["kind"] == FaultKind.EQUIVOCATION.value]


@pytest.mark.parametrize("seed", [2, 3, 10, 18])
def test_restarts_after_a_void_catch_up_and_verify_takes_the_logged_accuse(
        tmp_path: Path, seed: int) -> None:
    # Random crashes and restarts. In seeds 2 and 10 a node restarts after a first hand
    # voided by an audit fault: its replay takes the accuses (read ahead) before it has
    # consumed the play to its end, and it must still go on to the reveals its audit
    # needs. In seeds 3 and 18 a restarted node's accuse says what it had taken then,
    # which verify's one-by-one replay does not reproduce: verify takes the logged accuse
    # and reports no equivocation of the honest node.
    import random

    from p2pkille.runtime.faults import FaultKind
    from p2pkille.sim.byzantine import BEHAVIOURS
    from p2pkille.sim.faults import Faults
    from tests.runtime.bots import Restless

    r = random.Random(seed * 31 + 7)
    peers = r.choice([3, 4, 5])
    behaviour = r.choice([*sorted(BEHAVIOURS), None, None, None])
    byzantine = {r.randrange(peers): behaviour} if behaviour else {}
    faults = r.choice(["", "drop=0.1,dup=0.05,reorder=0.1,delay=50ms"])
    mode = r.choice(["audit", "strict"])
    table, logged = logged_table(tmp_path, peers, seed, chips=2, mode=mode,
                                 deciders=lambda _i: Restless(), byzantine=byzantine,
                                 faults=Faults.parse(faults) if faults else None)
    network = table.network
    for _ in range(r.choice([1, 2])):
        victim = r.choice([i for i in range(peers) if i not in table.byzantine])
        network.run(until=network.now + r.uniform(0.2, 8.0))
        name = table.nodes[victim].name
        network.crash(name)
        network.run(until=network.now + r.uniform(0.0, 3.0))
        logged[victim].close()
        restarted = restart_from_log(logged[victim].path, Restless(), durable=False)
        network.restart(name, restarted)
        table.nodes[victim] = restarted.node
        logged[victim] = restarted
    run = table.run(until=3000.0, max_hands=6)
    assert run.honest_agree
    for i in range(peers):
        if i in table.byzantine:
            continue
        logged[i].close()
        verdict = verify_log(load_log(logged[i].path), Restless())
        assert not [f for f in verdict.faults if f["kind"] == FaultKind.EQUIVOCATION.value
                    and f["accused"] == verdict.seat]


class Sends(Behaviour):
    """Sends ``made`` (kind, body) before the node's next move, once."""

    def __init__(self) -> None:
        self.made: list[tuple[str, Body]] = []

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        made, self.made = self.made, []
        return made


def test_a_node_never_appends_a_step_of_a_hand_its_chain_has_left() -> None:
    # A forward owed in hand 1 must not go out after the node's hand-2 key (a peer process
    # restarted from its log could re-derive one): every peer, and `verify` of their
    # logs, would record it as the node's fault. A step of a hand the node's own chain
    # has left is never sent; votes and seens of past hands still are.
    from p2pkille.runtime import messages as msg

    table = build_table(3, seed=7)
    node = table.nodes[0]
    sends = Sends()
    node.behaviour = sends
    net = table.network
    net.run(stop=lambda _: node.my_seat is not None
            and _at(Stage.KEYS, lambda h: h.number == 2 and bool(h.keys))(node))
    mine = node.transcript.chain(node.identity.public)
    assert mine[-1].body.get("hand") == 2

    def sent(kind: str, body: Body) -> list[tuple[str, object]]:
        """What the node adds to its chain when its behaviour makes this envelope."""
        before = len(node.transcript.chain(node.identity.public))
        sends.made = [(kind, body)]
        node.wake(net.now)
        assert not sends.made
        return [(e.kind, e.body.get("hand"))
                for e in node.transcript.chain(node.identity.public)[before:]]

    forward: Body = {"boxes": [], "hand": 1, "to": 1, "token": 0}
    assert (msg.FORWARD, 1) not in sent(msg.FORWARD, forward)
    seen: Body = {"at": 0, "hand": 1, "seat": 1, "stage": int(Stage.CHECKPOINT)}
    assert (msg.SEEN, 1) in sent(msg.SEEN, seen)
    # A late seen of hand 1 now ends the chain: hand 1 stays left (any envelope of a later
    # hand in the chain counts, not only its last).
    assert node.transcript.chain(node.identity.public)[-1].body.get("hand") == 1
    assert (msg.FORWARD, 1) not in sent(msg.FORWARD, forward)


@pytest.mark.parametrize("records", [40, 46, 52])
def test_a_replayed_forward_that_reads_differently_is_not_sent_again(records: int) -> None:
    # tests/runtime/data/restarted_peer.log is the log of a peer process (of
    # tests/net/test_peer_processes.py) killed after hand 1 and its hand-2 key; cut to
    # its first `records` envelopes it is a node killed in play (40), at the checkpoint
    # (46) or after (52). Replaying it, the node re-derives its first forward of hand 1
    # holding more shares of the card than when it wrote it, so the bytes differ. A
    # forward is the same one when it is for the same hand, card and recipient: it is
    # not sent again (a second forward for one card and recipient would be its fault at
    # every peer, and in `verify` of their logs).
    import dataclasses

    from p2pkille.runtime import messages as msg
    from p2pkille.runtime.log import rebuild

    loaded = load_log(Path(__file__).parent / "data" / "restarted_peer.log")
    node = rebuild(dataclasses.replace(loaded, envelopes=loaded.envelopes[:records]),
                   ThresholdBot())
    before = node.transcript.chain(node.identity.public)
    node.start(0.0)
    after = node.transcript.chain(node.identity.public)
    assert after[:len(before)] == before
    assert not [e for e in after[len(before):] if e.kind == msg.FORWARD]
    # What it may disclose of a forward (in an accuse) is what the forward sent held.
    status = node.status()
    assert status is not None
    sent = {(b.token, b.sender, b.recipient, e.body["to"]) for e in after
            if e.kind == msg.FORWARD and e.body.get("hand") == status.number
            for b in msg.get_boxes(e.body, e.wire)}
    assert node.sealed_forwards() <= sent
    assert bool(node.sealed_forwards()) == (status.number == 1)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_node_restarted_after_a_void_with_a_time_out_replays_the_voided_hand(
        tmp_path: Path, seed: int) -> None:
    # Hand 1 is voided: a seat acts out of turn, and a holder crashes before its accuse, so
    # the verdict times it out. A node rebuilt from its log reads the hand's agreement and
    # accuses ahead and is voiding from its first step: nothing of the void round may hold
    # back the crashed holder's key, or the node never reaches the act it must check and
    # stalls in hand 1 for ever.
    timing = Timing(limit=2.0, decide_limit=2.0, answer_limit=8.0)
    table, logged = logged_table(tmp_path, 5, seed=seed, chips=3, timing=timing,
                                 byzantine={1: "out-of-turn"})
    table.network.run(stop=lambda _: any(
        (h := n.status()) is not None and h.stopping for n in table.nodes))
    victim = next(n for n in table.nodes if n.my_seat != 1 and (h := n.status()) is not None
                  and h.me is not None and not h.accusing)  # it found no fault itself
    table.network.crash(victim.name)
    table.run(until=3000.0, max_hands=3)
    voters = [w for w in logged if w.node is not victim and w.node.my_seat != 1]
    first = voters[0].node.outcomes[0]
    assert first.voided
    assert victim.names[victim.my_seat or 0] in first.eliminated
    for wrapper in voters:
        wrapper.close()
        back = restart_from_log(wrapper.path, ThresholdBot(), timing=timing, durable=False)
        back.node.start(0.0)
        assert [o.to_json() for o in back.node.outcomes] == [
            o.to_json() for o in wrapper.node.outcomes]
        back.close()


def test_a_voter_restarted_in_the_void_round_decides_the_verdict_with_the_other_holder(
        tmp_path: Path) -> None:
    # Three holders; the third crashes for good in hand 1 and the other two time it out.
    # The first is restarted from its log during the void round, with a limit of 1 s:
    # it restores its votes of both agreements from its log, and the two, a strict
    # majority, decide one verdict, whichever of them decided first.
    from p2pkille.sim.faults import Faults

    timings = {0: Timing(limit=20.0, decide_limit=3.0, answer_limit=80.0),
               1: Timing(limit=1.0, decide_limit=3.0, answer_limit=25.0),
               2: Timing(limit=20.0, decide_limit=6.0, answer_limit=50.0)}
    table, logged = logged_table(tmp_path, 3, seed=619, chips=3, mode="audit",
                                 faults=Faults(reorder=0.3, delay=0.3), timings=timings)
    network = table.network
    network.run(until=1.77)
    network.crash(table.nodes[2].name)  # for good
    network.run(until=13.74)
    voter = table.nodes[1].name
    network.crash(voter)
    logged[1].close()
    network.run(until=14.04)
    back = restart_from_log(logged[1].path, ThresholdBot(), timing=timings[1], durable=False)
    network.restart(voter, back)
    table.nodes[1] = back.node
    live = table.nodes[:2]
    network.run(until=network.now + 600.0, stop=lambda _: all(n.done for n in live))
    assert all(n.done for n in live)
    assert [o.to_json() for o in live[0].outcomes] == [o.to_json() for o in live[1].outcomes]
    first = live[0].outcomes[0]
    assert first.voided
    assert first.eliminated == [table.nodes[2].names[table.nodes[2].my_seat or 0]]
    back.close()
