"""``python -m bench.pet_ops``: what a proved answer (protocol/pet.py) costs on this machine.

For |B| = 12 (an exchange answer) and |B| = 2 (a kille given) it measures making a
claim, parsing and checking it, making a response and parsing and checking one; then
one peer's whole part in an answer for 3, 9 and 20 key holders: the claim checked, its
own response made, every other response checked, the test run. Each is compared with
its group operations (counted by ``protocol.group.counters``) run as bare rbcl calls
right next to it in the same round; the issue's goal is <= 1.5x. No pass/fail: it
prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import rbcl

from bench.protocol_ops import us
from protocol import group
from protocol.deck import Ciphertext, Deck, mask
from protocol.group import Scalar, counters
from protocol.keys import HandContext, JointKey, KeyShare, joint_key
from protocol.pet import PetClaim, PetContext, PetShare, pet_matches
from protocol.rng import SystemRng

DECK = Deck(tuple(f"card-{i:02d}" for i in range(42)))
HAND = HandContext(b"bench-table", 1)
Job = tuple[Callable[[], object], int]


@dataclass(frozen=True, slots=True)
class Row:
    """A composite: best time per call, best time of its bare group operations, and the
    median over rounds of the ratio of the two measured back to back."""

    name: str
    seconds: float
    priced: float
    ratio: float
    counts: dict[str, int]


def _best(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def _counted(fn: Callable[[], object]) -> dict[str, int]:
    counters.reset()
    fn()
    out = {k: v for k, v in counters.snapshot().items() if v}
    counters.reset()
    return out


def _table(holders: int) -> tuple[list[KeyShare], JointKey, Ciphertext]:
    rng = SystemRng()
    keys = [KeyShare.generate(i, rng) for i in range(holders)]
    joint = joint_key(HAND, [k.announce(HAND, rng) for k in keys])
    return keys, joint, mask(DECK.encodings[3], Scalar.random(rng), joint.public)


def _jobs(m: int, holders: int, scale: int) -> dict[str, Job]:
    rng = SystemRng()
    keys, joint, ct = _table(holders)
    excluded = DECK.encodings[42 - m:]
    ctx = PetContext(HAND, 0, 0, b"answer", 1)
    claim = PetClaim.make(ctx, ct, excluded, keys[0], rng)
    wire = claim.to_bytes()
    shares = [PetShare.make(claim, k, rng) for k in keys[1:]]
    share_wire = shares[0].to_bytes()
    publics = joint.shares

    def check_claim() -> None:
        PetClaim.from_bytes(ctx, wire, m).verify(ct, excluded, publics[0])

    def check_share() -> None:
        PetShare.from_bytes(claim, 1, share_wire).verify(claim, publics[1])

    def answer() -> None:
        # One peer (seat 1): check the claim, respond, check the others, test.
        got = PetClaim.from_bytes(ctx, wire, m)
        got.verify(ct, excluded, publics[0])
        PetShare.make(got, keys[1], rng)
        for s in shares[1:]:
            PetShare.from_bytes(got, s.seat, s.to_bytes()).verify(got, publics[s.seat])
        if pet_matches(got, shares, holders=holders):
            raise AssertionError("an honest claim failed")

    tag = f"m={m},n={holders}"
    return {
        f"make claim {tag}": (lambda: PetClaim.make(ctx, ct, excluded, keys[0], rng), scale),
        f"check claim {tag}": (check_claim, scale),
        f"make response {tag}": (lambda: PetShare.make(claim, keys[1], rng), 5 * scale),
        f"check response {tag}": (check_share, 5 * scale),
        f"one peer's answer {tag}": (answer, max(1, scale // 2)),
    }


def measure(
    rounds: int = 7, scale: int = 10, holders: tuple[int, ...] = (3, 9, 20)
) -> tuple[dict[str, float], list[Row]]:
    """The raw operations' costs, and every composite against its own group operations.

    The machine is shared and its load changes within a run, so each composite is
    timed right next to a loop of bare rbcl calls in exactly its counted numbers, and
    the ratio of each such pair is taken per round (its median is reported).
    """
    s = rbcl.crypto_core_ristretto255_scalar_random()
    p = rbcl.crypto_core_ristretto255_random()
    q = rbcl.crypto_core_ristretto255_random()
    bare: dict[str, Callable[[], object]] = {
        "base_mults": lambda: rbcl.crypto_scalarmult_ristretto255_base(s),
        "var_mults": lambda: rbcl.crypto_scalarmult_ristretto255(s, p),
        "adds": lambda: rbcl.crypto_core_ristretto255_add(p, q),
        "decodes": lambda: rbcl.crypto_core_ristretto255_is_valid_point(p),
        "hashes_to_group": lambda: rbcl.crypto_core_ristretto255_from_hash(bytes(64)),
    }
    composite: dict[str, Job] = {}
    for m in (12, 2):
        jobs = _jobs(m, 3, scale)
        composite |= {k: v for k, v in jobs.items() if "answer" not in k}
    for n in holders:
        composite |= {k: v for k, v in _jobs(12, n, scale).items() if "answer" in k}
    counts = {name: _counted(fn) for name, (fn, _) in composite.items()}

    def ops(c: dict[str, int]) -> Callable[[], None]:
        plan = [(bare[k], n) for k, n in c.items()]

        def run() -> None:
            for fn, n in plan:
                for _ in range(n):
                    fn()
        return run

    priced_jobs = {name: ops(c) for name, c in counts.items()}
    raw = dict.fromkeys(bare, float("inf"))
    best = dict.fromkeys(composite, float("inf"))
    best_priced = dict.fromkeys(composite, float("inf"))
    ratios: dict[str, list[float]] = {name: [] for name in composite}
    for _ in range(rounds):
        for name, fn in bare.items():
            raw[name] = min(raw[name], _best(fn, 20 * scale))
        for name, (fn, number) in composite.items():
            took = _best(fn, number)
            cost = _best(priced_jobs[name], number)
            best[name] = min(best[name], took)
            best_priced[name] = min(best_priced[name], cost)
            ratios[name].append(took / cost)
    rows = [
        Row(name, best[name], best_priced[name], statistics.median(ratios[name]), counts[name])
        for name in composite
    ]
    return raw, rows


def main() -> None:
    group.share_results(False)  # each peer pays for its own checks (protocol.group)
    parser = argparse.ArgumentParser(prog="python -m bench.pet_ops")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    raw, rows = measure(args.rounds)
    print(f"pet_ops: ristretto255 via rbcl, best of {args.rounds} interleaved rounds\n")
    for name, cost in raw.items():
        print(f"  raw {name:30}{us(cost)}")
    print(f"\n{'composite':36}{'measured':>14}{'bare ops':>14}{'ratio':>8}  counts")
    for row in rows:
        print(f"  {row.name:34}{us(row.seconds)}{us(row.priced)}{row.ratio:7.2f}x  {row.counts}")
    print("\nwire: claim 32 m + 160 bytes "
          f"({PetClaim.size(12)} for m = 12, {PetClaim.size(2)} for m = 2), "
          f"response {PetShare.SIZE}")


if __name__ == "__main__":
    main()
