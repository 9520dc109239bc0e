"""``p2pkille chaos``: the chaos sweep over simulated tables (``p2pkille/sim/chaos.py``).

Runs seeds ``S..S+N-1`` (``--seed S --runs N``), each a random table with crashes,
restarts from the log, partitions, clock skew, misbehaving seats, network faults and slow
deciders, and sorts each run into a class. Progress (runs done, counts, ETA) goes to
stderr, with a line for each run that is not ok as it is found. At the end stdout gets the
counts per class (and per 1,000 seeds) and, for every run that is not ok, its detail and
the command that replays it alone (``--seed S --runs 1 --verbose``, which also prints the
run's schedule and each node's record). ``--json`` prints one document instead::

    {"generator", "config": {"seed", "runs", "cpu_cap", "wall_cap"},
     "runs": [{"seed", "class", "classes", "detail", "virtual_s", "replay"?}],
     "counts": {class: n}, "per_1000": {class: x}}

The document does not depend on ``--jobs`` or the machine (a run stopped by a cap
excepted). Exit 0 when every run is ok, 1 when one is not, 2 for bad
arguments, 130 when interrupted (the counts so far are printed).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import multiprocessing
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Final, NoReturn, TextIO

from cli.args import BadArgs, whole_number
from p2pkille.sim.chaos import (
    CPU_CAP,
    GENERATOR,
    WALL_CAP,
    Caps,
    RunClass,
    RunResult,
    run_seed,
)
from protocol import group

BAD_ARGS: Final = 2
NOT_OK: Final = 1
INTERRUPTED: Final = 130
_PROGRESS_EVERY: Final = 5.0  # seconds between progress lines when stderr is no terminal

DESCRIPTION: Final = """\
Runs many random simulated tables, each fixed by one seed: 3 to 15 peers, audit or
strict, any ruleset; partitions into two or three groups and muted nodes (one or two
cuts, short, medium or longer than every limit); nodes crashed for a while and restarted
from their log, or for good; skewed clocks (per-node limits); misbehaving seats; drops,
duplicates, reordering, delay and jitter; slow deciders. Each run is classified, the
counts are printed, and each run that is not ok comes with the command that replays it
alone (its plan, schedule and every node's record with --verbose).
"""

CLASSES_HELP: Final = """\
terms (p2pkille/sim/chaos.py states each in full):
  isolated   a node down, or whose reachable nodes (its partition group, or the unmuted
             nodes; those up) hold no strict majority of the hand's key holders
  cut off    isolated in one hand for one stretch of at least tau = shortest limit -
             (3 * sync interval + 4 * (3 * (delay + jitter) + slowest link's extra)); a
             node never cut off is clean
  reference  per hand, what most clean honest nodes record (most honest live nodes,
             when none is clean)
  W          2 * (longest limit + decide limit + answer limit) + longest slow decision
             + 10: the virtual seconds without a new envelope after which a run stops

classes (a run gets the first that applies):
  error          a node raised (peer input must never crash a node)
  SPLIT          two clean honest nodes record one hand differently
  split-out      an honest node cut off, up at the end, records a hand otherwise than
                 the reference
  wrong-blame    the reference eliminates an honest seat without a time-out against it
  timeout-blame  the reference times out an honest seat in a hand in which it was not
                 cut off
  missed-blame   a misbehaving seat that sent what its honest twin would not have, in a
                 way that must be found (a fork one honest node holds both sides of; a
                 bad envelope or a withheld reveal in a hand the reference commits; a
                 false accusation the reference judges), is never blamed
  stall          the run stopped (nothing new for W, or 6000 s after the last
                 disruption) with an honest live node short of the planned hands,
                 although a strict majority of its hand's key holders were honest and up
                 at the end (every cut heals before)
  slow           finished after E + 10 * Q + (2 + 2 * V) * L + D virtual seconds (E: end
                 of the last disruption, Q: the same table's quiet time, V: voided hands,
                 L: longest limit + decide limit + answer limit, D: slow decisions'
                 delays), or stopped by the CPU-time or the wall-clock cap
  ok             none of these (an unfinished run without such a majority waits, by
                 design)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "chaos",
        help="a sweep of random simulated tables with crashes, partitions and lies",
        description=DESCRIPTION,
        epilog=CLASSES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", default="1", help="first seed (default 1)")
    parser.add_argument("--runs", default="100",
                        help="number of seeds: SEED..SEED+RUNS-1 (default 100)")
    parser.add_argument("--jobs", default="0",
                        help="worker processes (default 0: one per core); results do not "
                             "depend on it")
    parser.add_argument("--cpu-cap", default=str(int(CPU_CAP)),
                        help=f"CPU seconds one run may take before it is stopped and counted "
                             f"slow (default {int(CPU_CAP)}; a busy machine changes it little)")
    parser.add_argument("--wall-cap", default=str(int(WALL_CAP)),
                        help=f"wall-clock seconds one run may take before it is stopped and "
                             f"counted slow (default {int(WALL_CAP)})")
    parser.add_argument("--verbose", action="store_true",
                        help="print each run's plan, schedule and every node's record")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=run)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def _counts_text(counts: Counter[RunClass]) -> str:
    return ", ".join(f"{c.label} {counts[c]}" for c in RunClass if counts[c]) or "none yet"


class _Progress:
    """Progress on stderr: one line rewritten on a terminal, else a line every few seconds
    (and always the last)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.shown = -math.inf

    def update(self, done: int, counts: Counter[RunClass], *, force: bool = False) -> None:
        now = time.monotonic()
        if not (self.tty or force or done == self.total
                or now - self.shown >= _PROGRESS_EVERY):
            return
        self.shown = now
        elapsed = now - self.started
        eta = elapsed / done * (self.total - done) if done else 0.0
        line = (f"chaos: {done}/{self.total} runs, {_counts_text(counts)}; "
                f"{_duration(elapsed)} elapsed" + (f", ETA {_duration(eta)}" if done < self.total
                                                   and done else ""))
        if self.tty:
            self.stream.write("\r\x1b[K" + line + ("\n" if done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def say(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()


def _worker_init() -> None:
    """Ctrl-C reaches every process of the group: the parent alone decides, and ends the
    workers with SIGTERM, which unwinds a run (its temporary logs are removed). A run's
    peers share their raw group results (:func:`protocol.group.share_results`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    group.share_results(True)


def _terminate(_signum: int, _frame: object) -> NoReturn:
    raise SystemExit(INTERRUPTED)


def _results(seeds: range, jobs: int, caps: Caps) -> Iterator[RunResult]:
    """The runs of ``seeds`` as they finish (in ``jobs`` processes when more than one)."""
    if jobs == 1:
        group.share_results(True)  # as in _worker_init
        for seed in seeds:
            yield run_seed(seed, caps)
        return
    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_worker_init)
    try:
        yield from pool.imap_unordered(functools.partial(run_seed, caps=caps), seeds)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def _print_run(result: RunResult, out: TextIO) -> None:
    print(f"seed {result.seed}: {result.cls.label} ({', '.join(c.label for c in result.classes)})"
          f", virtual {result.virtual_s:.1f} s", file=out)
    print("plan:", file=out)
    for line in result.plan:
        print(f"  {line}", file=out)
    print("schedule:", file=out)
    for line in result.schedule or ("(nothing happened)",):
        print(f"  {line}", file=out)
    print("records:", file=out)
    for line in result.outcomes:
        print(f"  {line}", file=out)
    print(f"detail: {result.detail}", file=out)


def run(args: argparse.Namespace) -> int:
    try:
        seed = whole_number("seed", args.seed, 0)
        runs = whole_number("runs", args.runs, 1, 10**7)
        jobs = whole_number("jobs", args.jobs, 0, 256) or (os.cpu_count() or 1)
        caps = Caps(cpu=whole_number("cpu-cap", args.cpu_cap, 1),
                    wall=whole_number("wall-cap", args.wall_cap, 1))
    except BadArgs as exc:
        print(f"p2pkille chaos: {exc}", file=sys.stderr)
        return BAD_ARGS
    seeds = range(seed, seed + runs)
    jobs = min(jobs, runs)
    progress = _Progress(runs, sys.stderr)
    counts: Counter[RunClass] = Counter()
    results: dict[int, RunResult] = {}
    interrupted = False
    try:
        for result in _results(seeds, jobs, caps):
            results[result.seed] = result
            counts[result.cls] += 1
            if result.cls is not RunClass.OK:
                progress.say(f"chaos: seed {result.seed} {result.cls.label}: {result.detail}"
                             f"\n  replay: {result.replay}")
            progress.update(len(results), counts)
    except KeyboardInterrupt:
        interrupted = True
        progress.say(f"chaos: interrupted after {len(results)} of {runs} runs")
    ordered = [results[s] for s in sorted(results)]
    if args.json:
        print(json.dumps(_document(seed, runs, caps, ordered, counts, args.verbose),
                         sort_keys=True, ensure_ascii=False))
    else:
        _report(seed, runs, ordered, counts, args.verbose)
    if interrupted:
        return INTERRUPTED
    return 0 if counts[RunClass.OK] == len(ordered) else NOT_OK


def _per_1000(count: int, total: int) -> float:
    return round(1000.0 * count / total, 1) if total else 0.0


def _document(seed: int, runs: int, caps: Caps, results: list[RunResult],
              counts: Counter[RunClass], verbose: bool) -> dict[str, object]:
    total = len(results)
    return {
        "generator": GENERATOR,
        "config": {"cpu_cap": caps.cpu, "runs": runs, "seed": seed, "wall_cap": caps.wall},
        "runs": [r.to_json(verbose=verbose) for r in results],
        "counts": {c.value: counts[c] for c in RunClass},
        "per_1000": {c.value: _per_1000(counts[c], total) for c in RunClass},
    }


def _report(seed: int, runs: int, results: list[RunResult], counts: Counter[RunClass],
            verbose: bool) -> None:
    out = sys.stdout
    if verbose:
        for result in results:
            _print_run(result, out)
            print(file=out)
    total = len(results)
    last = seed + runs - 1
    print(f"seeds {seed}..{last}: {total} runs ({GENERATOR})", file=out)
    print(f"  {'class':<14} {'runs':>6} {'per 1,000':>10}", file=out)
    for c in RunClass:
        print(f"  {c.label:<14} {counts[c]:>6} {_per_1000(counts[c], total):>10.1f}", file=out)
    bad = [r for r in results if r.cls is not RunClass.OK]
    if bad:
        print("not ok:", file=out)
        for r in bad:
            print(f"  seed {r.seed} {r.cls.label}: {r.detail}", file=out)
            print(f"    {r.replay}", file=out)
