"""The peer runtime per hand: ``python -m bench.runtime [--peers 3,5,9,15,20] [--hands H]
[--mode audit|strict] [--threads N]``.

For each table size, N bot peers play in one process over the simulated network
(no faults; ``wikipedia`` up to 15 seats, ``enkortskille`` above). After the genesis,
each hand from its first key share to the last node committing its checkpoint is
timed: wall and CPU time, scalar multiplications (base and variable), envelopes
and bytes sent. The floor is the time those multiplications and point additions
alone take, measured in the same process right after the hand with the raw rbcl
calls (the group wrapper's checks count as our overhead); ``wall/floor`` is
everything else. Each table is played twice with the same seed (the simulation is
deterministic, so the hands are the same; the counts are checked equal, else the
bench stops): wall and CPU time and the floor come from the first pass, which wraps
nothing; the figures below that need wrappers around every call (about a
microsecond each) come from the second. Additions matter for strict tables: a
shuffle proof check does about as many as multiplications, each a third of a
multiplication's cost.

The floor prices the counted operations at their best-of-rounds cost, a lower
bound; the operations run slower inside a hand (caches, a shared machine). So the
time each raw rbcl call of a multiplication or addition really took in the hand
is also measured (``ops s``: the group module's calls are timed, per thread, and
summed: elapsed time inside the calls, so with threads it grows with their number and
counts waits for the GIL and the cores) and ``w/ops`` is the first pass's wall time
over it (two runs of one hand: on a shared machine this ratio swings more than
``wall/floor``);
``sig s`` is the time of Ed25519 signature checks, which neither figure counts.

The critical path is for separate machines: the multiplications that must happen
one after another, counted per phase from each node's own work (every node's
production and consumption of each envelope kind is metered):

- ``keys``, ``deal``: every holder makes its part at once, then checks the others'
  in parallel: max over nodes of production + max over nodes of consumption;
- ``shuffle``: the chain is sequential across holders: the sum of every holder's
  production + the max consumption;
- ``play``: turns are sequential: the sum of all production + max consumption (an
  upper bound: draws and shows are made in parallel);
- ``audit``: every node recomputes the hand on its own: max over nodes (reveals'
  consumption, which runs the audit);
- ``checkpoint``: signatures only, no group multiplications.

Prints a table; no pass/fail.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

import rbcl

import protocol.group as group_module
from p2pkille.runtime import messages as msg
from p2pkille.sim.table import SimTable, build_table
from protocol import group
from protocol.group import Workers, counters

PHASES: Final = ("keys", "shuffle", "deal", "play", "audit", "checkpoint")
PHASE_OF: Final = {
    msg.KEY: "keys", msg.SHUFFLE: "shuffle", msg.DEAL: "deal", msg.ACT: "play",
    msg.ANSWER: "play", msg.DISCLOSE: "play", msg.FORWARD: "play", msg.DRAW: "play",
    msg.SHOW: "play", msg.PET: "play", msg.REVEAL: "audit", msg.CHECKPOINT: "checkpoint",
}
SEQUENTIAL: Final = frozenset({"shuffle", "play"})


@dataclass
class Meter:
    """Scalar multiplications a node spends producing and consuming each phase."""

    made: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    used: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class MeterProbe:
    """A node's :class:`~p2pkille.runtime.behaviour.Probe`: the multiplications each of its
    moves (by the kind of the first envelope it signs) and each consumption cost."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.before = 0

    def start(self) -> None:
        self.before = counters.scalar_mults

    def moved(self, kinds: Sequence[str]) -> None:
        spent = counters.scalar_mults - self.before
        if spent:
            self.meter.made[PHASE_OF.get(kinds[0], "play") if kinds else "play"] += spent

    def consumed(self, kind: str) -> None:
        self.meter.used[PHASE_OF.get(kind, "keys")] += counters.scalar_mults - self.before


class OpTimer:
    """Seconds spent inside the group module's raw rbcl calls, per thread (pool threads
    run them too) so that no update is lost; installed while a hand runs."""

    OPS: Final = ("_base_mult", "_var_mult", "_add", "_sub")
    SIG: Final = ("_ed_verify",)

    def __init__(self) -> None:
        self._local = threading.local()
        self._all: list[dict[str, float]] = []
        self._lock = threading.Lock()
        self._saved: dict[str, Callable[..., Any]] = {}

    def _spent(self) -> dict[str, float]:
        spent: dict[str, float] | None = getattr(self._local, "spent", None)
        if spent is None:
            spent = defaultdict(float)
            self._local.spent = spent
            with self._lock:
                self._all.append(spent)
        return spent

    def install(self) -> None:
        for name in self.OPS + self.SIG:
            raw = getattr(group_module, name)
            self._saved[name] = raw

            def timed(*args: Any, _raw: Callable[..., Any] = raw, _name: str = name) -> Any:
                start = time.perf_counter()
                try:
                    return _raw(*args)
                finally:
                    self._spent()[_name] += time.perf_counter() - start

            setattr(group_module, name, timed)

    def remove(self) -> None:
        for name, raw in self._saved.items():
            setattr(group_module, name, raw)
        self._saved.clear()

    def total(self, names: tuple[str, ...]) -> float:
        with self._lock:
            return sum(spent.get(n, 0.0) for spent in self._all for n in names)


def op_costs(samples: int = 200, rounds: int = 5) -> tuple[float, float, float]:
    """Seconds per base and per variable-base multiplication and per addition, raw rbcl:
    the best of ``rounds`` (the machine is shared; the fastest round is the operation's
    own cost)."""
    scalar = bytes([7] * 31 + [0])
    point = rbcl.crypto_scalarmult_ristretto255_base(scalar)
    base = var = add = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(samples):
            rbcl.crypto_core_ristretto255_add(point, point)
        add = min(add, (time.perf_counter() - start) / samples)
        start = time.perf_counter()
        for _ in range(samples):
            rbcl.crypto_scalarmult_ristretto255_base(scalar)
        base = min(base, (time.perf_counter() - start) / samples)
        start = time.perf_counter()
        for _ in range(samples):
            rbcl.crypto_scalarmult_ristretto255(scalar, point)
        var = min(var, (time.perf_counter() - start) / samples)
    return base, var, add


@dataclass
class HandFigures:
    peers: int
    hand: int
    wall: float
    cpu: float
    base: int
    var: int
    adds: int
    envelopes: int
    bytes: int
    floor: float
    critical: dict[str, int]
    ops: float
    sig: float


def _critical(meters: list[Meter]) -> dict[str, int]:
    out = {}
    for phase in PHASES:
        made = [m.made.get(phase, 0) for m in meters]
        used = max(m.used.get(phase, 0) for m in meters)
        out[phase] = (sum(made) if phase in SEQUENTIAL else max(made)) + used
    return out


def _play(peers: int, hands: int, seed: int, mode: str, workers: Workers | None,
          metered: bool) -> list[_Pass]:
    """Play ``hands`` hands of a fresh table; per hand, what one pass measures.

    Unmetered: wall and CPU time and the counts, nothing wrapped. Metered: the time
    inside the raw rbcl calls and each node's multiplications per phase (the
    wrappers cost time of their own, so this pass's wall time is not reported)."""
    ruleset = "wikipedia" if peers <= 15 else "enkortskille"
    table: SimTable = build_table(peers, seed=seed, ruleset=ruleset, chips=1000, mode=mode,
                                  workers=workers)
    nodes = table.nodes
    net = table.network
    net.run(stop=lambda _: all(n.status() is not None for n in nodes))
    out = []
    for k in range(1, hands + 1):
        meters = [Meter() for _ in nodes]
        timer = OpTimer()
        if metered:
            for node, meter in zip(nodes, meters, strict=True):
                node.probe = MeterProbe(meter)
            timer.install()
        counters.reset()
        sent = sum(n.sent_envelopes for n in nodes), sum(n.sent_bytes for n in nodes)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        def committed(_: object, k: int = k) -> bool:
            return all(len(n.outcomes) >= k or n.done for n in nodes)

        try:
            net.run(stop=committed)
        finally:
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            timer.remove()
        for node in nodes:  # the next hand meters anew
            node.probe = None
        counts = (counters.base_mults, counters.var_mults, counters.adds)
        costs = op_costs() if not metered else (0.0, 0.0, 0.0)
        out.append(_Pass(
            wall, cpu, counts, costs,
            sum(n.sent_envelopes for n in nodes) - sent[0],
            sum(n.sent_bytes for n in nodes) - sent[1],
            _critical(meters), timer.total(OpTimer.OPS), timer.total(OpTimer.SIG)))
        if any(n.done for n in nodes):
            break
    return out


@dataclass
class _Pass:
    wall: float
    cpu: float
    counts: tuple[int, int, int]
    costs: tuple[float, float, float]  # the raw calls' costs right after the hand
    envelopes: int
    bytes: int
    critical: dict[str, int]
    ops: float
    sig: float


def bench_table(peers: int, hands: int, seed: int, mode: str = "audit",
                workers: Workers | None = None) -> list[HandFigures]:
    """Two passes over the same hands (the simulation is deterministic for a seed): one
    unmetered for wall and CPU time, one metered for the time in the raw calls and the
    critical path. Their counts must agree, or the second pass played other hands."""
    clean = _play(peers, hands, seed, mode, workers, metered=False)
    metered = _play(peers, hands, seed, mode, workers, metered=True)
    out = []
    for k, (a, b) in enumerate(zip(clean, metered, strict=True), start=1):
        if (a.counts, a.envelopes, a.bytes) != (b.counts, b.envelopes, b.bytes):
            raise RuntimeError(f"{peers} peers, hand {k}: the metered pass played another "
                               f"hand ({a.counts} {a.envelopes} vs {b.counts} {b.envelopes})")
        t_base, t_var, t_add = a.costs
        base, var, adds = a.counts
        out.append(HandFigures(
            peers, k, a.wall, a.cpu, base, var, adds, a.envelopes, a.bytes,
            base * t_base + var * t_var + adds * t_add, b.critical, b.ops, b.sig))
    return out


def main(argv: list[str] | None = None) -> None:
    group.share_results(False)  # each peer pays for its own checks (protocol.group)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--peers", default="3,5,9,15,20")
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mode", default="audit", choices=("audit", "strict"))
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for the large sums of multiplications (default 1)")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads {args.threads}: at least 1")
    pool = ThreadPoolExecutor(args.threads) if args.threads > 1 else None
    workers = Workers(pool, args.threads) if pool is not None else None
    t_base, t_var, t_add = op_costs(1000)
    print(f"{args.mode} tables, {args.threads} thread(s); raw rbcl: base mult "
          f"{t_base * 1e6:.1f} us, variable mult {t_var * 1e6:.1f} us, add "
          f"{t_add * 1e6:.1f} us (floor: these costs on one thread)")
    head = (f"{'peers':>5} {'hand':>4} {'wall s':>7} {'cpu s':>7} {'base':>6} {'var':>6} "
            f"{'adds':>6} "
            f"{'env':>5} {'kbytes':>7} {'floor s':>7} {'w/floor':>7} {'c/floor':>7} "
            f"{'ops s':>6} {'w/ops':>6} {'sig s':>6} | critical "
            "path mults: "
            + " ".join(f"{p}" for p in PHASES) + " = total (time)")
    print(head)
    for peers in (int(p) for p in args.peers.split(",")):
        for f in bench_table(peers, args.hands, args.seed, args.mode, workers):
            crit = " ".join(f"{f.critical[p]}" for p in PHASES)
            total = sum(f.critical.values())
            print(f"{f.peers:>5} {f.hand:>4} {f.wall:7.3f} {f.cpu:7.3f} {f.base:6d} {f.var:6d} "
                  f"{f.adds:6d} "
                  f"{f.envelopes:5d} {f.bytes / 1000:7.1f} {f.floor:7.3f} "
                  f"{f.wall / f.floor if f.floor else 0:7.2f} "
                  f"{f.cpu / f.floor if f.floor else 0:7.2f} "
                  f"{f.ops:6.3f} {f.wall / f.ops if f.ops else 0:6.2f} {f.sig:6.3f} "
                  f"| {crit} = {total} "
                  f"(<= {total * t_var:.3f} s)", flush=True)
    if pool is not None:
        pool.shutdown()


if __name__ == "__main__":
    main()
