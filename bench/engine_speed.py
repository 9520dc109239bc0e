"""Full-information hands per second: ``python -m bench.engine_speed [--seconds S] [--profile]``.

For each ruleset, 8 seats play whole games in the referee (the one transition table
of ``p2pkille.engine.machine``, no second copy of the rules), bots deciding every
turn: first threshold bots, then table-aware bots. A finished game is replaced by
a new one with the next seed, so the figure covers whole games (deals, swaps, draws,
showdowns, buy-backs). One process, one core. Prints a table; no asserts. The goal
stated in issue 2 is 10,000 hands/s with threshold bots.

``--profile`` adds a cProfile summary (top 10 functions by own time) of the
threshold-bot run of each ruleset.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import time
from typing import Final

from p2pkille.bots.tableaware import make_bot
from p2pkille.engine.machine import Game
from p2pkille.engine.options import PRESETS
from p2pkille.engine.referee import Referee

SEATS: Final = 8
STAKE: Final = 10
CHIPS: Final = 200
GOAL: Final = 10_000


def hands_per_second(ruleset: str, bot: str, seconds: float) -> tuple[float, int, int]:
    """(hands/s, hands, games started) playing whole games for about ``seconds``."""
    options = PRESETS[ruleset]
    names = [f"S{i}" for i in range(SEATS)]
    hands = games = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        rng = random.Random(seed)
        seed += 1
        game = Game(options, names, stake=STAKE, chips=CHIPS, dealer=seed % SEATS)
        referee = Referee(game, [make_bot(bot, rng) for _ in range(SEATS)], rng)
        games += 1
        play_hand = referee.play_hand
        while play_hand() is not None:
            hands += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return hands / elapsed, hands, games


def profile(ruleset: str, seconds: float) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    hands_per_second(ruleset, "threshold", seconds)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(10)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    # Keep the totals line and the table itself.
    body = [line for line in lines if "function calls" in line or "ncalls" in line
            or line.lstrip()[:1].isdigit()]
    return "\n".join(body)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="time per ruleset and bot (default 2)")
    parser.add_argument("--profile", action="store_true",
                        help="add a cProfile summary per ruleset (threshold bots)")
    args = parser.parse_args()
    print(f"Full-information hands per second, {SEATS} seats, stake {STAKE}, chips {CHIPS}, "
          f"one core (goal {GOAL:,} with threshold bots)")
    print(f"{'ruleset':<14} {'bots':<11} {'hands/s':>9} {'hands':>8} {'games':>6} "
          f"{'hands/game':>10}  goal")
    for ruleset in PRESETS:
        for bot in ("threshold", "tableaware"):
            rate, hands, games = hands_per_second(ruleset, bot, args.seconds)
            mark = ("met" if rate >= GOAL else "missed") if bot == "threshold" else "-"
            print(f"{ruleset:<14} {bot:<11} {rate:>9,.0f} {hands:>8,} {games:>6,} "
                  f"{hands / games:>10.1f}  {mark}")
    if args.profile:
        for ruleset in PRESETS:
            print(f"\nProfile, {ruleset}, threshold bots ({args.seconds:g} s):")
            print(profile(ruleset, args.seconds))


if __name__ == "__main__":
    main()
