"""Strategy against strategy: ``python -m bench.selfplay [--games N] [--seats S]``.

For each ruleset, plays N whole games in the full-information referee between two
strategies (default: threshold against tableaware), half the seats each. Seats
alternate round the table and the pattern flips every game (A B A B, then B A B A),
and the first dealer moves one seat per game, so position and dealing order cancel
out. Reports the games, the wins of each strategy, each one's win rate with a 95%
Wilson interval, the average hands per game, and the average net chips per seat (a
bot that wins more can still spend more on buy-backs). Prints a table; no asserts.
The default N finishes in about a minute on one core.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Final

from p2pkille.bots.tableaware import STRATEGIES, make_bot
from p2pkille.engine.machine import Game
from p2pkille.engine.options import PRESETS
from p2pkille.engine.referee import Referee

STAKE: Final = 10
CHIPS: Final = 100
HAND_CAP: Final = 1000
Z95: Final = 1.959964


def wilson(wins: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


class Tally:
    __slots__ = ("games", "hands", "net", "seats", "undecided", "wins")

    def __init__(self, names: tuple[str, str]) -> None:
        self.games = 0
        self.hands = 0
        self.undecided = 0
        self.wins = dict.fromkeys(names, 0)
        self.net = dict.fromkeys(names, 0)
        self.seats = dict.fromkeys(names, 0)


def play(ruleset: str, pair: tuple[str, str], games: int, seats: int, seed: int) -> Tally:
    tally = Tally(pair)
    options = PRESETS[ruleset]
    names = [f"S{i}" for i in range(seats)]
    for k in range(games):
        rng = random.Random(f"{seed}:{ruleset}:{k}")
        who = [pair[(i + k) % 2] for i in range(seats)]
        game = Game(options, names, stake=STAKE, chips=CHIPS, dealer=k % seats)
        winner = Referee(game, [make_bot(name, rng) for name in who], rng).play(HAND_CAP)
        tally.games += 1
        tally.hands += game.hand_no
        if winner is None:
            tally.undecided += 1
        else:
            tally.wins[who[winner]] += 1
        for seat, name in enumerate(who):
            tally.net[name] += game.chips[seat] - CHIPS
            tally.seats[name] += 1
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.selfplay",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3000, help="games per ruleset (default 3000)")
    parser.add_argument("--seats", type=int, default=4, help="players per game (default 4)")
    parser.add_argument("--bots", default="threshold,tableaware",
                        help=f"two strategies, comma-separated ({', '.join(STRATEGIES)})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    names = args.bots.split(",")
    if len(names) != 2 or any(n not in STRATEGIES for n in names) or names[0] == names[1]:
        parser.error(f"--bots needs two different strategies of {', '.join(STRATEGIES)}")
    pair = (names[0], names[1])
    print(f"Self-play, {args.games} games per ruleset, {args.seats} seats ({pair[0]} and "
          f"{pair[1]} alternating, flipped every game), stake {STAKE}, chips {CHIPS}")
    print(f"{'ruleset':<13} {'strategy':<11} {'wins':>5} {'win rate':>9} {'95% interval':>15} "
          f"{'net chips/seat':>15} {'hands/game':>11} {'seconds':>8}")
    for ruleset in PRESETS:
        seats = min(max(args.seats, PRESETS[ruleset].min_players), PRESETS[ruleset].max_players)
        start = time.perf_counter()
        tally = play(ruleset, pair, args.games, seats, args.seed)
        elapsed = time.perf_counter() - start
        decided = tally.games - tally.undecided
        for i, name in enumerate(pair):
            wins = tally.wins[name]
            low, high = wilson(wins, decided)
            net = tally.net[name] / max(tally.seats[name], 1)
            tail = (f"{tally.hands / tally.games:>11.1f} {elapsed:>8.1f}" if i == 0 else "")
            print(f"{ruleset if i == 0 else '':<13} {name:<11} {wins:>5} "
                  f"{wins / max(decided, 1):>9.1%} {f'{low:.1%} .. {high:.1%}':>15} "
                  f"{net:>+15.1f} {tail}")
        if tally.undecided:
            print(f"{'':<13} ({tally.undecided} games undecided after {HAND_CAP} hands)")


if __name__ == "__main__":
    main()
