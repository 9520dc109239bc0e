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

Part 3 notes what two threads give for the 9-peer checks (rbcl releases the
GIL in part); protocol/ itself never uses threads.
No pass/fail: it prints tables.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import rbcl

from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    decode_deck,
    encode_deck,
    initial_deck,
)
from protocol.group import Point, counters
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


def part1() -> dict[str, float]:
    rng = SystemRng()
    hctx, joint, start = _setup(3, 1)
    # A middle step: its input was shuffled before, so every C1 differs (the usual case).
    first, _, _ = shuffle_with_proof(start, joint, ShuffleContext(hctx, 0, 0), rng)
    ctx = ShuffleContext(hctx, 1, 1)
    step, witness, proof = shuffle_with_proof(first.deck, joint, ctx, rng)
    wire = proof.to_bytes()
    s0 = ShuffleContext(hctx, 0, 0)

    def prove() -> object:
        return prove_shuffle(ctx, joint, first.deck, step.deck, witness, rng)

    def verify() -> None:
        verify_shuffle(ctx, joint, first.deck, step.deck, proof)

    def parse() -> object:
        return ShuffleProof.from_bytes(wire, CARDS)

    step0, _, proof0 = shuffle_with_proof(start, joint, s0, rng)

    def verify_step0() -> None:
        verify_shuffle(s0, joint, start, step0.deck, proof0)

    s = rbcl.crypto_core_ristretto255_scalar_random()
    p = rbcl.crypto_core_ristretto255_random()
    q = rbcl.crypto_core_ristretto255_random()
    counts = {
        "prove": counted(prove),
        "verify": counted(verify),
        "verify step 0": counted(verify_step0),
        "parse proof": counted(parse),
    }

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

    jobs: dict[str, Callable[[], object]] = {
        "prove": prove, "verify": verify, "verify step 0": verify_step0, "parse proof": parse,
    }
    for name in list(jobs):
        jobs["bare " + name] = bare(counts[name])
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
    print(f"  {'':22}{'measured':>11}{'bare ops':>11}{'ratio':>8}  counts")
    for name in ("prove", "verify", "verify step 0", "parse proof"):
        took, cost = best[name], best["bare " + name]
        print(f"  {name:22}{took * 1e3:8.2f} ms{cost * 1e3:8.2f} ms{took / cost:7.2f}x  "
              f"{counts[name]}")
    print("  (prove excludes the shuffle itself; 'verify step 0' checks the first step, whose\n"
          "   input is the public initial deck with C1 = G everywhere, merged into one base mult)")
    print(f"  proof size: {proof_size(CARDS)} bytes for {CARDS} cards "
          f"(deck: {CARDS * Ciphertext.SIZE} bytes)\n")
    return {"base_mults": best["base mult"], "var_mults": best["var mult"], "adds": best["add"],
            "decodes": best["bare parse proof"] / max(1, counts["parse proof"]["decodes"])}


def phase(peers: int, batched: bool) -> tuple[float, float, int, int, dict[str, int]]:
    """One strict shuffle phase; returns wall s, CPU s, proofs made and checked, op counts."""
    rng = SystemRng()
    hctx, joint, deck = _setup(peers, 2)
    counters.reset()
    wall, cpu = time.perf_counter(), time.process_time()
    statements: list[list[ShuffleStatement | None]] = [[None] * peers for _ in range(peers)]
    checked = 0
    for seat in range(peers):
        ctx = ShuffleContext(hctx, seat, seat)
        step, _, proof = shuffle_with_proof(deck, joint, ctx, rng)
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
                verify_shuffle(ctx, joint, deck, got_deck, got_proof)
                checked += 1
        deck = step.deck
    if batched:
        for peer in range(peers):
            todo = [st for st in statements[peer] if st is not None]
            verify_shuffles(joint, todo)
            checked += len(todo)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, peers, checked, counters.snapshot()


def part2(sizes: list[int], raw: dict[str, float]) -> None:
    print(f"strict shuffle phase, {CARDS} cards, all peers in one process "
          f"(anchor: libTMCG 9 players, 52 cards: {ANCHOR_S} s)")
    print(f"  {'peers':>5} {'checking':>10} {'proofs':>7} {'checks':>7} {'wall':>8} {'cpu':>8}"
          f"{'vs anchor':>11}{'per peer':>10}{'ops priced':>12}")
    for peers in sizes:
        for batched in (False, True):
            wall, cpu, made, checked, counts = phase(peers, batched)
            priced = sum(raw[k] * counts[k] for k in RAW_KEYS)
            mode = "at end" if batched else "each step"
            print(f"  {peers:5d} {mode:>10} {made:7d} {checked:7d} {wall:7.2f}s {cpu:7.2f}s"
                  f"{wall / ANCHOR_S:10.2f}x{cpu / peers:9.2f}s{priced:11.2f}s")
    print("  ('each step': every proof checked on arrival with verify_shuffle; 'at end': each\n"
          "   peer checks the others' proofs in one verify_shuffles call before the deal;\n"
          "   'per peer': CPU / peers, one peer's own share (1 proof + peers-1 checks), which\n"
          "   is what each of libTMCG's separate processes spent its 2.3 s on; 'ops priced': the\n"
          "   phase's counted group operations at the raw costs of part 1, i.e. its floor on\n"
          "   this machine when nothing else runs)\n")


def part3() -> None:
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
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(check, work))
    two = time.perf_counter() - began
    print(f"threads (bench only): 72 checks of 42-card proofs: 1 thread {one:.2f} s, "
          f"2 threads {two:.2f} s ({one / two:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.strict_ops")
    parser.add_argument("--peers", type=int, nargs="*", default=[3, 9, 20])
    parser.add_argument("--no-threads", action="store_true")
    args = parser.parse_args()
    raw = part1()
    part2(args.peers, raw)
    if not args.no_threads:
        part3()


if __name__ == "__main__":
    main()
