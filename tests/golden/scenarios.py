"""The scenarios of the golden corpus and the trace each one records (see the package doc).

Only public names of the runtime are used, so the corpus outlives any reshaping of it.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.facts import Decision, VoteChoice, fact_to_dict
from p2pkille.engine.view import DecisionPending, SeatView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.log import LoggedNode, load_log, restart_from_log, verify_log
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork
from p2pkille.sim.table import SimTable, TableRun, build_table
from protocol import canonical
from tests.runtime.bots import Restless

DATA = Path(__file__).resolve().parent / "data"
NOISY = "drop=0.1,dup=0.05,reorder=0.1,delay=50ms"
Doc = dict[str, Any]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def trace(node: TableNode) -> Doc:
    """What one node did and holds at the end, in a form that diffs readably."""
    names = node.names
    own = node.transcript.chain(node.identity.public)
    votes = [f"{env.kind} {env.body.get('hand')}:{env.body.get('seat')}/"
             f"{env.body.get('stage')}/{env.body.get('at')}"
             for env in own if env.kind in (msg.TIMEOUT, msg.SEEN)]
    control = [f"{env.kind} {env.body.get('hand')} #{_digest(env.wire)}"
               for env in own if env.kind in (msg.ACCUSE, msg.REWOUND, msg.OVER)]
    accepted = hashlib.sha256()
    for env in node.transcript.accepted:
        accepted.update(env.id)
    hands = []
    for o in node.outcomes:
        hand = o.to_json()
        hand.update(facts=[canonical.encode(fact_to_dict(f)).decode() for f in o.facts],
                    faces=list(o.faces), dealt=list(o.dealt), checked=o.checked,
                    holders=o.holders)
        hands.append(hand)
    return {
        "name": node.name,
        "seat": node.my_seat,
        "stage": int(node.stage),
        "done": node.done,
        "hands": hands,
        "faults": [f"{f.kind.value} {None if f.seat is None else names[f.seat]} "
                   f"h{f.hand}: {f.reason} #{_digest(f.evidence)}" for f in node.faults],
        "timed_decisions": [list(t) for t in node.timed_decisions],
        "rewinds": node.rewinds,
        "rebuilds": node.rebuilds,
        "dropped": node.dropped,
        "sent": [node.sent_envelopes, node.sent_bytes],
        "heads": list(node.transcript.heads().heads),
        "accepted": [len(node.transcript.accepted), accepted.hexdigest()[:32]],
        "equivocations": len(node.transcript.equivocations),
        "own_kinds": dict(sorted(Counter(env.kind for env in own).items())),
        "votes": votes,
        "control": control,
        "waiting_for": list(node.waiting_for()),
        "silent_without_majority": list(node.silent_without_majority()),
    }


def result(table: SimTable, run: TableRun | None = None, **extra: object) -> Doc:
    doc: Doc = {}
    if run is not None:
        document = run.document()
        stats = document["stats"]
        assert isinstance(stats, dict)
        del stats["wall_s"]
        doc.update(document=document, stop=run.stop.value)
    doc.update(virtual_s=round(table.network.now, 9), network=table.network.trace_digest(),
               nodes=[trace(n) for n in table.nodes], **extra)
    return doc


def sim(peers: int, hands: int | None, *, seed: int = 1, **kwargs: Any) -> Doc:
    until = kwargs.pop("until", 36000.0)
    table = build_table(peers, seed=seed, **kwargs)
    return result(table, table.run(max_hands=hands, until=until))


# -- deciders that steer a table into its slow paths ---------------------------------------

class Clock:
    """The virtual clock of a table built after its deciders."""

    def __init__(self) -> None:
        self.network: SimNetwork | None = None

    def now(self) -> float:
        assert self.network is not None
        return self.network.now


class Dawdler(ThresholdBot):
    """Takes ``delay`` virtual seconds over its decisions number ``slow`` (1-based): the
    table defaults them, and its own node rewinds the late one."""

    def __init__(self, clock: Clock, slow: frozenset[int], delay: float) -> None:
        super().__init__()
        self.clock, self.slow, self.delay = clock, slow, delay
        self.count = 0
        self.since: float | None = None

    def _wait(self) -> None:
        if self.since is None:
            self.count += 1
            if self.count not in self.slow:
                return
            self.since = self.clock.now()
        if self.clock.now() - self.since < self.delay:
            raise DecisionPending("dawdling")
        self.since = None

    def turn(self, view: SeatView) -> Decision:
        self._wait()
        return super().turn(view)

    def vote(self, view: SeatView) -> VoteChoice:
        self._wait()
        return super().vote(view)

    def buyin(self, view: SeatView) -> bool:
        self._wait()
        return super().buyin(view)


def dawdling(peers: int, hands: int, *, seed: int, slow_seat_index: int, slow: set[int],
             delay: float, **kwargs: Any) -> Doc:
    clock = Clock()

    def make(i: int) -> ThresholdBot:
        return Dawdler(clock, frozenset(slow), delay) if i == slow_seat_index else ThresholdBot()

    table = build_table(peers, seed=seed, deciders=make, timing=QUICK,
                        faults=Faults.parse(SLOW_LINKS), **kwargs)
    clock.network = table.network
    return result(table, table.run(max_hands=hands, until=20000.0))


# -- crashes, partitions, logs --------------------------------------------------------------

QUICK = Timing(limit=2.0, decide_limit=5.0, answer_limit=10.0)
SLOW_LINKS = "delay=20ms,jitter=10ms"


def _facts(table: SimTable, count: int) -> Callable[[SimNetwork], bool]:
    """Stop once every node has applied ``count`` facts of its first hand (or counted it)."""
    def reached(_: SimNetwork) -> bool:
        return all(n.outcomes or (n.view is not None and n.view.game.fact_count >= count)
                   for n in table.nodes)
    return reached


def crash_for_good(peers: int, *, seed: int, victims: int, at: int, mode: str = "audit",
                   hands: int = 2, faults: str = SLOW_LINKS, **kwargs: Any) -> Doc:
    table = build_table(peers, seed=seed, mode=mode, chips=3, timing=QUICK,
                        faults=Faults.parse(faults), **kwargs)
    net = table.network
    net.run(stop=_facts(table, at), until=20000.0)
    for node in table.nodes[:victims]:
        net.crash(node.name)
    live = table.nodes[victims:]
    net.run(until=20000.0,
            stop=lambda _: all(len(n.outcomes) >= hands or n.done for n in live))
    return result(table)


def partition(peers: int, *, seed: int, groups: list[int], at: int, heal_after: float,
              hands: int = 2, mode: str = "audit", **kwargs: Any) -> Doc:
    table = build_table(peers, seed=seed, mode=mode, chips=3, timing=QUICK,
                        faults=Faults.parse(SLOW_LINKS), **kwargs)
    net = table.network
    net.run(stop=_facts(table, at), until=20000.0)
    at_ = net.now
    names = [n.name for n in table.nodes]
    cuts, start = [], 0
    for size in groups:
        cuts.append(names[start:start + size])
        start += size
    net.partition(*cuts)
    net.run(until=at_ + heal_after)
    net.heal()
    net.run(until=20000.0,
            stop=lambda _: all(len(n.outcomes) >= hands or n.done for n in table.nodes))
    return result(table)


def cut_at_checkpoint(peers: int, *, seed: int, cut: int, hands: int = 3) -> Doc:
    """The first ``cut`` nodes lose their way to the rest (one way) once they are about to
    sign the first hand's checkpoint, and get it back much later."""
    table = build_table(peers, seed=seed, chips=3, timing=QUICK,
                        faults=Faults.parse(SLOW_LINKS))
    net = table.network
    names = [n.name for n in table.nodes]
    few, rest = names[:cut], names[cut:]
    net.run(stop=lambda _: all(table.nodes[i].stage == Stage.CHECKPOINT for i in range(cut)),
            until=20000.0)
    for a in few:
        for b in rest:
            net.set_link(a, b, Faults(drop=1.0), one_way=True)
    net.run(until=net.now + 300.0)
    for a in few:
        for b in rest:
            net.set_link(a, b, None, one_way=True)
    net.run(until=20000.0,
            stop=lambda _: all(len(n.outcomes) >= hands or n.done for n in table.nodes))
    return result(table)


def rebuild() -> Doc:
    """A holder cut off as the checkpoint signatures went out counts the hand, which the
    others void: the late votes make it take its transcript back from the start."""
    timings = {0: Timing(limit=1.0, decide_limit=3.0, answer_limit=2.0),
               1: Timing(limit=5.0, decide_limit=60.0, answer_limit=120.0),
               2: Timing(limit=1.0, decide_limit=3.0, answer_limit=40.0),
               3: Timing(limit=1.0, decide_limit=60.0, answer_limit=2.0),
               4: Timing(limit=2.0, decide_limit=60.0, answer_limit=2.0)}
    table = build_table(5, seed=53, chips=3, faults=Faults(delay=0.02), timings=timings)
    net = table.network
    for other, delay in {0: 12.0, 1: 0.8, 2: 0.8, 4: 12.0}.items():
        net.set_link("n4", f"n{other + 1}", Faults(delay=delay), one_way=True)
    net.run(stop=lambda _: all(n.stage >= Stage.KEYS for n in table.nodes), until=3000.0)
    net.run(until=net.now + 60.0)
    net.partition(["n4", "n1"], ["n2", "n3", "n5"])
    net.run(until=net.now + 6.0)
    net.heal()
    net.run(stop=lambda _: all(n.done for n in table.nodes), until=net.now + 20000.0)
    return result(table)


def _logged(tmp: Path, peers: int, seed: int, **kwargs: Any) -> tuple[SimTable, list[LoggedNode]]:
    plain = build_table(peers, seed=seed, **kwargs)
    network = SimNetwork(seed, plain.network.faults)
    logged = [LoggedNode(n, tmp / f"{n.name}.log", durable=False) for n in plain.nodes]
    for node in logged:
        network.add(node)
    return SimTable(list(plain.nodes), network, plain.byzantine), logged


def restart(peers: int, *, seed: int, crash_when: Callable[[TableNode], bool],
            down_for: float, hands: int = 2, **kwargs: Any) -> Doc:
    with tempfile.TemporaryDirectory() as tmp:
        table, logged = _logged(Path(tmp), peers, seed, **kwargs)
        net = table.network
        victim = table.nodes[1]
        assert net.run(stop=lambda _: crash_when(victim), until=20000.0).value == "stopped"
        net.crash(victim.name)
        net.run(until=net.now + down_for)
        logged[1].close()
        again = restart_from_log(logged[1].path, ThresholdBot(), durable=False)
        net.restart(victim.name, again)
        table.nodes[1] = again.node
        run = table.run(max_hands=hands, until=20000.0)
        for log in logged:
            log.close()
        again.close()
        return result(table, run)


def verify(peers: int, *, seed: int, hands: int = 2, **kwargs: Any) -> Doc:
    with tempfile.TemporaryDirectory() as tmp:
        table, logged = _logged(Path(tmp), peers, seed, **kwargs)
        run = table.run(max_hands=hands, until=20000.0)
        for log in logged:
            log.close()
        verdicts = [verify_log(load_log(log.path), ThresholdBot()).to_json() for log in logged]
        return result(table, run, verdicts=verdicts)


# -- the corpus -----------------------------------------------------------------------------

BEHAVIOURS = ("equivocate", "bad-shuffle", "wrong-share", "false-answer", "withhold",
              "replay", "out-of-turn", "garbage", "false-accuse")

SCENARIOS: dict[str, Callable[[], Doc]] = {
    # honest tables, every ruleset and mode, 3 to 20 peers
    "honest-wikipedia-audit-3": lambda: sim(3, 3, seed=1),
    "honest-wikipedia-strict-3": lambda: sim(3, 2, seed=2, mode="strict"),
    "honest-bytes-kille-audit-4": lambda: sim(4, 3, seed=3, ruleset="bytes-kille"),
    "honest-bytes-kille-strict-4": lambda: sim(4, 2, seed=4, ruleset="bytes-kille",
                                               mode="strict"),
    "honest-enkortskille-audit-4": lambda: sim(4, 3, seed=5, ruleset="enkortskille"),
    "honest-enkortskille-strict-3": lambda: sim(3, 2, seed=6, ruleset="enkortskille",
                                                mode="strict"),
    "honest-wikipedia-audit-9": lambda: sim(9, 1, seed=7),
    "honest-bytes-kille-audit-20": lambda: sim(20, 1, seed=8, ruleset="bytes-kille"),
    "honest-whole-game-3": lambda: sim(3, None, seed=9, chips=3),
    "honest-bytes-kille-whole-game-4": lambda: sim(4, None, seed=10, chips=3,
                                                   ruleset="bytes-kille"),
    # rarer paths: sales (buyers without a key), redeals
    "restless-enkortskille-audit-5": lambda: sim(5, 3, seed=11, ruleset="enkortskille",
                                                 deciders=lambda _i: Restless()),
    "restless-enkortskille-strict-4": lambda: sim(4, 2, seed=12, ruleset="enkortskille",
                                                  mode="strict",
                                                  deciders=lambda _i: Restless()),
    "restless-bytes-kille-audit-5": lambda: sim(5, 3, seed=13, ruleset="bytes-kille",
                                                deciders=lambda _i: Restless()),
    # network faults
    "noisy-audit-4": lambda: sim(4, 2, seed=14, faults=Faults.parse(NOISY)),
    "noisy-strict-3": lambda: sim(3, 2, seed=15, mode="strict", faults=Faults.parse(NOISY)),
    "lossy-audit-5": lambda: sim(5, 2, seed=16, faults=Faults.parse("drop=0.3,delay=20ms")),
    # decisions that come too late: defaults, rewinds; clocks that disagree
    "dawdler-audit-4": lambda: dawdling(4, 3, seed=17, slow_seat_index=1, slow={2, 3},
                                        delay=30.0),
    "dawdler-rewinds-audit-4": lambda: dawdling(4, 3, seed=17, slow_seat_index=2,
                                                slow={1, 2, 3, 4}, delay=5.02),
    "dawdler-strict-3": lambda: dawdling(3, 2, seed=18, slow_seat_index=0, slow={1, 2},
                                         delay=5.03, mode="strict"),
    "skewed-clocks-noisy-5": lambda: sim(
        5, 2, seed=19, faults=Faults.parse(NOISY),
        timings={i: Timing(limit=1.0 + i, decide_limit=3.0 + 2 * i) for i in range(5)}),
    # crashes for good, partitions, restarts from the log, verify
    "crash-one-audit-4": lambda: crash_for_good(4, seed=20, victims=1, at=3),
    "crash-two-strict-5": lambda: crash_for_good(5, seed=21, victims=2, at=2, mode="strict"),
    "crash-one-late-noisy-5": lambda: crash_for_good(5, seed=22, victims=1, at=6,
                                                     faults=NOISY),
    "partition-2-3-audit": lambda: partition(5, seed=23, groups=[2, 3], at=2,
                                             heal_after=60.0),
    "partition-2-3-long-audit": lambda: partition(5, seed=31, groups=[2, 3], at=3,
                                                  heal_after=400.0, hands=3),
    "partition-1-2-strict": lambda: partition(3, seed=32, groups=[1, 2], at=2,
                                              heal_after=300.0, mode="strict", hands=3),
    "partition-3-groups-audit-7": lambda: partition(7, seed=24, groups=[2, 2, 3], at=4,
                                                    heal_after=40.0),
    "partition-2-2-strict": lambda: partition(4, seed=25, groups=[2, 2], at=1,
                                              heal_after=200.0, mode="strict"),
    "cut-at-checkpoint-5": lambda: cut_at_checkpoint(5, seed=33, cut=2),
    "cut-at-checkpoint-one-4": lambda: cut_at_checkpoint(4, seed=34, cut=1),
    "rebuild-after-late-votes-5": rebuild,
    "restart-in-play-3": lambda: restart(
        3, seed=26, crash_when=lambda n: n.stage == Stage.PLAY and bool(n.outcomes),
        down_for=2.0),
    "restart-late-noisy-4": lambda: restart(
        4, seed=27, crash_when=lambda n: n.stage == Stage.CHECKPOINT, down_for=60.0,
        faults=Faults.parse(NOISY),
        timing=Timing(limit=2.0, decide_limit=5.0, answer_limit=10.0)),
    "verify-honest-3": lambda: verify(3, seed=28),
    "verify-false-answer-4": lambda: verify(4, seed=111, byzantine={1: "false-answer"}),
    "verify-equivocate-strict-3": lambda: verify(3, seed=30, mode="strict",
                                                 byzantine={2: "equivocate"}),
}
# Seeds where the behaviour shows in two hands (a false answer needs a blocking card).
_AUDIT_SEEDS = {"false-answer": 111}


def _byzantine(behaviour: str, mode: str) -> Callable[[], Doc]:
    index = BEHAVIOURS.index(behaviour)
    if mode == "audit":
        seed = _AUDIT_SEEDS.get(behaviour, 100 + index)
        return lambda: sim(4, 2, seed=seed, byzantine={1: behaviour}, until=20000.0)
    return lambda: sim(3, 2, seed=200 + index, mode="strict", byzantine={0: behaviour},
                       until=20000.0)


for _behaviour in BEHAVIOURS:
    SCENARIOS[f"byzantine-{_behaviour}-audit-4"] = _byzantine(_behaviour, "audit")
    SCENARIOS[f"byzantine-{_behaviour}-strict-3"] = _byzantine(_behaviour, "strict")


def run(name: str) -> Doc:
    return SCENARIOS[name]()


def dumps(doc: Doc) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def path_of(name: str) -> Path:
    return DATA / f"{name}.json"


def load(name: str) -> str:
    return path_of(name).read_text(encoding="utf-8")
