"""``python -m bench.strict_ops``: what a strict table's shuffle proofs cost on this machine.

Part 1 prices one 42-card proof and its check: the group operations each
performs are counted (``protocol.group.counters``), the same numbers of bare
rbcl var mults, base mults, adds and point validations are timed in the same
interleaved rounds, and the ratio measured/priced is printed (the goal is
<= 1.5x each).

Part 2 runs a strict shuffle phase with 3, 9 and 20 peers, all in this one
process: every peer in turn shuffles and proves, and every OTHER peer decodes
(validates) the new deck and the proof bytes and checks the proof. Two ways of
checking are timed: each proof as it arrives (``verify_shuffle``), and each peer
checking all the others' proofs at once before the deal (``verify_shuffles``,
where step k's output deck is step k+1's input and is multiplied once). Wall
and CPU time are printed next to the anchor: libTMCG's poker test (9 players,
52 cards, 2048-bit group, Groth's shuffle proofs) spent 2.3 s per process in its
shuffle phase on this kind of machine.

With ``--threads N`` (N > 1) parts 1 and 2 run twice, on one thread and with
``protocol.group.Workers`` of a pool of N threads (rbcl releases the GIL, so a
large sum's chunks run side by side), and print both; a table between them prices
the hand-over to the pool and single products split or not (the figures behind
``MIN_PARALLEL_PRODUCTS``); part 3 then prices a bare
``mult_sum`` of 2,000 terms both ways and, for comparison, 72 whole checks
spread over the pool (one check per thread instead of one check split).
No pass/fail: it prints tables.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import rbcl

from protocol import group
from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    decode_deck,
    encode_deck,
    initial_deck,
)
from protocol.group import (
    MIN_PARALLEL_PRODUCTS,
    Point,
    Scalar,
    Workers,
    counters,
    mult_sum,
    products,
)
from protocol.keys import HandContext, KeyShare, joint_key
from protocol.rng import SystemRng
from protocol.shuffle_proof import (
    ShuffleProof,
    ShuffleStatement,
    proof_size,
    prove_shuffle,
    shuffle_with_proof,
    verify_shuffle,
    verify_shuffles,
)

CARDS = 42
ROUNDS = 5
ANCHOR_S = 2.3
RAW_KEYS = ("base_mults", "var_mults", "adds", "decodes")


def _setup(seats: int, hand: int) -> tuple[HandContext, Point, tuple[Ciphertext, ...]]:
    rng = SystemRng()
    ctx = HandContext(b"bench-strict", hand)
    keys = [KeyShare.generate(i, rng) for i in range(seats)]
    joint = joint_key(ctx, [k.announce(ctx, rng) for k in keys]).public
    return ctx, joint, initial_deck(Deck(tuple(f"card-{i:02d}" for i in range(CARDS))), joint)


def counted(fn: Callable[[], object]) -> dict[str, int]:
    counters.reset()
    fn()
    out = {k: v for k, v in counters.snapshot().items() if v}
    counters.reset()
    return out


def part1(workers: Workers | None) -> dict[str, float]:
    rng = SystemRng()
    hctx, joint, start = _setup(3, 1)
    # A middle step: its input was shuffled before, so every C1 differs (the usual case).
    first, _, _ = shuffle_with_proof(start, joint, ShuffleContext(hctx, 0, 0), rng)
    ctx = ShuffleContext(hctx, 1, 1)
    step, witness, proof = shuffle_with_proof(first.deck, joint, ctx, rng)
    wire = proof.to_bytes()
    s0 = ShuffleContext(hctx, 0, 0)
    step0, _, proof0 = shuffle_with_proof(start, joint, s0, rng)

    def on(w: Workers | None) -> dict[str, Callable[[], object]]:
        return {
            "prove": lambda: prove_shuffle(ctx, joint, first.deck, step.deck, witness, rng,
                                           workers=w),
            "verify": lambda: verify_shuffle(ctx, joint, first.deck, step.deck, proof, workers=w),
            "verify step 0": lambda: verify_shuffle(s0, joint, start, step0.deck, proof0,
                                                    workers=w),
            "parse proof": lambda: ShuffleProof.from_bytes(wire, CARDS),
        }

    s = rbcl.crypto_core_ristretto255_scalar_random()
    p = rbcl.crypto_core_ristretto255_random()
    q = rbcl.crypto_core_ristretto255_random()
    single = on(None)
    counts = {name: counted(fn) for name, fn in single.items()}

    def bare(c: dict[str, int]) -> Callable[[], None]:
        nb, nv, na, nd = (c.get(k, 0) for k in RAW_KEYS)

        def run() -> None:
            for _ in range(nb):
                rbcl.crypto_scalarmult_ristretto255_base(s)
            for _ in range(nv):
                rbcl.crypto_scalarmult_ristretto255(s, p)
            for _ in range(na):
                rbcl.crypto_core_ristretto255_add(p, q)
            for _ in range(nd):
                rbcl.crypto_core_ristretto255_is_valid_point(p)
        return run

    jobs: dict[str, Callable[[], object]] = dict(single)
    for name in list(jobs):
        jobs["bare " + name] = bare(counts[name])
    if workers is not None:
        for name, fn in on(workers).items():
            if name != "parse proof":
                jobs["threaded " + name] = fn
    jobs["var mult"] = lambda: rbcl.crypto_scalarmult_ristretto255(s, p)
    jobs["base mult"] = lambda: rbcl.crypto_scalarmult_ristretto255_base(s)
    jobs["add"] = lambda: rbcl.crypto_core_ristretto255_add(p, q)
    best = dict.fromkeys(jobs, float("inf"))
    for _ in range(ROUNDS):
        for name, fn in jobs.items():
            number = 200 if name in ("var mult", "base mult", "add") else 3
            began = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - began) / number)

    print(f"strict_ops: proof of a shuffle, {CARDS} cards, ristretto255 via rbcl, "
          f"best of {ROUNDS} interleaved rounds")
    print(f"  raw: var mult {best['var mult'] * 1e6:.1f} us, base mult "
          f"{best['base mult'] * 1e6:.1f} us, add {best['add'] * 1e6:.1f} us\n")
    extra = "" if workers is None else f"{f'{workers.count} threads':>12}{'speedup':>9}"
    print(f"  {'':22}{'measured':>11}{'bare ops':>11}{'ratio':>8}{extra}  counts")
    for name in ("prove", "verify", "verify step 0", "parse proof"):
        took, cost = best[name], best["bare " + name]
        threaded = ""
        if "threaded " + name in best:
            t = best["threaded " + name]
            threaded = f"{t * 1e3:9.2f} ms{took / t:8.2f}x"
        elif workers is not None:
            threaded = " " * 21
        print(f"  {name:22}{took * 1e3:8.2f} ms{cost * 1e3:8.2f} ms{took / cost:7.2f}x"
              f"{threaded}  {counts[name]}")
    print("  (prove excludes the shuffle itself; 'verify step 0' checks the first step, whose\n"
          "   input is the public initial deck with C1 = G everywhere, merged into one base mult;\n"
          "   'measured', 'bare ops' and 'ratio' are on one thread)")
    print(f"  proof size: {proof_size(CARDS)} bytes for {CARDS} cards "
          f"(deck: {CARDS * Ciphertext.SIZE} bytes)\n")
    return {"base_mults": best["base mult"], "var_mults": best["var mult"], "adds": best["add"],
            "decodes": best["bare parse proof"] / max(1, counts["parse proof"]["decodes"])}


def phase(
    peers: int, batched: bool, workers: Workers | None = None
) -> tuple[float, float, int, int, dict[str, int]]:
    """One strict shuffle phase; returns wall s, CPU s, proofs made and checked, op counts."""
    rng = SystemRng()
    hctx, joint, deck = _setup(peers, 2)
    counters.reset()
    wall, cpu = time.perf_counter(), time.process_time()
    statements: list[list[ShuffleStatement | None]] = [[None] * peers for _ in range(peers)]
    checked = 0
    for seat in range(peers):
        ctx = ShuffleContext(hctx, seat, seat)
        step, _, proof = shuffle_with_proof(deck, joint, ctx, rng, workers=workers)
        deck_wire, proof_wire = encode_deck(step.deck), proof.to_bytes()
        for peer in range(peers):
            if peer == seat:
                continue
            # Every receiver validates the bytes it got, then checks (now or at the end).
            got_deck = decode_deck(deck_wire, CARDS)
            got_proof = ShuffleProof.from_bytes(proof_wire, CARDS)
            if batched:
                prev = statements[peer][seat - 1] if seat else None
                deck_in = prev.deck_out if prev is not None else deck
                statements[peer][seat] = ShuffleStatement(ctx, deck_in, got_deck, got_proof)
            else:
                verify_shuffle(ctx, joint, deck, got_deck, got_proof, workers=workers)
                checked += 1
        deck = step.deck
    if batched:
        for peer in range(peers):
            todo = [st for st in statements[peer] if st is not None]
            verify_shuffles(joint, todo, workers=workers)
            checked += len(todo)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, peers, checked, counters.snapshot()


def part2(sizes: list[int], raw: dict[str, float], workers: Workers | None) -> None:
    print(f"strict shuffle phase, {CARDS} cards, all peers in one process "
          f"(anchor: libTMCG 9 players, 52 cards: {ANCHOR_S} s)")
    print(f"  {'peers':>5} {'checking':>10} {'threads':>7} {'proofs':>7} {'checks':>7} "
          f"{'wall':>8} {'cpu':>8}{'vs anchor':>11}{'per peer':>10}{'ops priced':>12}"
          f"{'speedup':>9}")
    for peers in sizes:
        for batched in (False, True):
            single_wall = 0.0
            for w in (None, workers) if workers is not None else (None,):
                wall, cpu, made, checked, counts = phase(peers, batched, w)
                priced = sum(raw[k] * counts[k] for k in RAW_KEYS)
                mode = "at end" if batched else "each step"
                threads = 1 if w is None else w.count
                speedup = "" if w is None else f"{single_wall / wall:8.2f}x"
                single_wall = wall
                print(f"  {peers:5d} {mode:>10} {threads:7d} {made:7d} {checked:7d} {wall:7.2f}s"
                      f" {cpu:7.2f}s{wall / ANCHOR_S:10.2f}x{cpu / peers:9.2f}s{priced:11.2f}s"
                      f"{speedup}")
    print("  ('each step': every proof checked on arrival with verify_shuffle; 'at end': each\n"
          "   peer checks the others' proofs in one verify_shuffles call before the deal;\n"
          "   'per peer': CPU / peers, one peer's own share (1 proof + peers-1 checks), which\n"
          "   is what each of libTMCG's separate processes spent its 2.3 s on; 'ops priced': the\n"
          "   phase's counted group operations at the raw costs of part 1, i.e. its floor on\n"
          "   this machine on one thread when nothing else runs; 'speedup': wall of the\n"
          "   one-thread row over this row's)\n")


def dispatch(workers: Workers) -> None:
    """What handing work to the pool costs, and single products split or not.

    The figures behind ``MIN_PARALLEL_PRODUCTS``: a proof's check has 4 products
    (a decryption share or a PET response: 1 base-point and 3 variable-base) or
    29 (a PET claim excluding 12 encodings); below the threshold they stay on
    the calling thread.
    """
    rounds = 15

    def noop() -> None:
        return None

    best_noop = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        for _ in range(200):
            workers.pool.submit(noop).result()
        best_noop = min(best_noop, (time.perf_counter() - began) / 200)
    rng = SystemRng()
    sizes = (2, 4, 8, 16, 29)
    pairs = [(Point.from_hash("bench-products", bytes([i])), Scalar.random(rng))
             for i in range(max(sizes))]
    pairs[0] = (Point.GENERATOR, pairs[0][1])  # a proof's checks have one base-point product
    # Every size is split for the measure: the threshold is lowered and put back.
    saved, group.MIN_PARALLEL_PRODUCTS = group.MIN_PARALLEL_PRODUCTS, 0
    times: dict[tuple[int, bool], list[float]] = {}
    try:
        for _ in range(rounds):
            for n in sizes:
                for split in (False, True):
                    began = time.perf_counter()
                    for _ in range(10):
                        products(pairs[:n], workers if split else None)
                    times.setdefault((n, split), []).append((time.perf_counter() - began) / 10)
    finally:
        group.MIN_PARALLEL_PRODUCTS = saved
    print(f"hand-over to the pool and back (submit + result of a no-op), best of {rounds}: "
          f"{best_noop * 1e6:.1f} us")
    print(f"products (1 base-point + n-1 variable-base), {rounds} rounds; best and median us:")
    print(f"  {'n':>3} {'1 thread':>18} {f'{workers.count} threads':>18} {'median gain':>12}")
    for n in sizes:
        one, many = sorted(times[(n, False)]), sorted(times[(n, True)])
        mid = len(one) // 2
        print(f"  {n:3d} {one[0] * 1e6:8.1f} {one[mid] * 1e6:8.1f} "
              f"{many[0] * 1e6:8.1f} {many[mid] * 1e6:8.1f} {(one[mid] - many[mid]) * 1e6:11.1f}")
    print(f"  (MIN_PARALLEL_PRODUCTS = {MIN_PARALLEL_PRODUCTS}: products worth that many "
          "additions, 3 per variable-base product and 1 per base-point one, are split)\n")


def part3(workers: Workers) -> None:
    terms = [
        (Point.from_hash("bench-strict", i.to_bytes(4, "little")), Scalar.random(SystemRng()))
        for i in range(2000)
    ]
    best = {1: float("inf"), workers.count: float("inf")}
    for _ in range(ROUNDS):
        for w in (None, workers):
            began = time.perf_counter()
            mult_sum(terms, w)
            took = time.perf_counter() - began
            key = 1 if w is None else w.count
            best[key] = min(best[key], took)
    print(f"mult_sum of 2,000 terms, best of {ROUNDS}: 1 thread {best[1] * 1e3:.1f} ms, "
          f"{workers.count} threads {best[workers.count] * 1e3:.1f} ms "
          f"({best[1] / best[workers.count]:.2f}x)")

    rng = SystemRng()
    hctx, joint, deck = _setup(9, 3)
    work = []
    for seat in range(9):
        ctx = ShuffleContext(hctx, seat, seat)
        step, _, proof = shuffle_with_proof(deck, joint, ctx, rng)
        work += [(ctx, deck, step.deck, proof)] * 8
        deck = step.deck

    def check(item: tuple[ShuffleContext, tuple[Ciphertext, ...], tuple[Ciphertext, ...],
                          ShuffleProof]) -> None:
        verify_shuffle(item[0], joint, item[1], item[2], item[3])

    began = time.perf_counter()
    for item in work:
        check(item)
    one = time.perf_counter() - began
    began = time.perf_counter()
    list(workers.pool.map(check, work))
    spread = time.perf_counter() - began
    print(f"72 checks of 42-card proofs: 1 thread {one:.2f} s, spread over the pool of "
          f"{workers.count} {spread:.2f} s ({one / spread:.2f}x)")


def main() -> None:
    group.share_results(False)  # each peer pays for its own checks (protocol.group)
    parser = argparse.ArgumentParser(prog="python -m bench.strict_ops")
    parser.add_argument("--peers", type=int, nargs="*", default=[3, 9, 20])
    parser.add_argument("--threads", type=int, default=1,
                        help="also run with protocol.group.Workers of this many threads")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.threads == 1:
        raw = part1(None)
        part2(args.peers, raw, None)
        return
    with ThreadPoolExecutor(args.threads) as pool:
        workers = Workers(pool, args.threads)
        raw = part1(workers)
        dispatch(workers)
        part2(args.peers, raw, workers)
        part3(workers)


if __name__ == "__main__":
    main()
