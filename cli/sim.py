"""``p2pkille sim``: N bot peers play over the simulated network; prints the results.

``--json`` prints one document::

    {"hands": [{"hand", "died", "pot", "chips", "checkpoint", "agreed_by", "voided",
                "eliminated", "accusations": [{"accused", "by", "kind", "reason",
                "verdict"}]}], "winner": seat|null, "honest_agree": bool,
     "stats": {"wall_s", "envelopes", "bytes", "scalar_mults"}}

``--byzantine P2:equivocate`` (repeatable) makes that seat a misbehaving peer
(``p2pkille/sim/byzantine.py``); ``honest_agree`` and the document are over the
honest peers only. Without ``--json`` a line per hand goes to stderr and the
document to stdout. Exit status 0 when every honest peer agrees on every hand, 1
when they do not, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from cli.args import BadArgs as _BadArgs
from cli.args import whole_number
from p2pkille.engine.options import PRESETS
from p2pkille.runtime.config import MODES
from p2pkille.runtime.node import HandOutcome
from p2pkille.sim.byzantine import BEHAVIOURS
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import HAND_CAP, build_table
from protocol import group
from protocol.group import Workers

BAD_ARGS: Final = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sim",
        help="bot peers play a table over the simulated network",
        description=(
            "Runs N bot peers in one process over the simulated network (with optional "
            "faults) and prints the committed hands. Exit 0 when all honest peers agree "
            "on every checkpoint."
        ),
    )
    parser.add_argument("--peers", default="3", help="number of peers (default 3)")
    parser.add_argument("--hands", default="0",
                        help="stop after this many hands (default 0: play to the end, "
                             "at most 1000 hands)")
    parser.add_argument("--ruleset", default="wikipedia",
                        help=f"one of {', '.join(PRESETS)} (default wikipedia)")
    parser.add_argument("--seed", default="1", help="seed of everything (default 1)")
    parser.add_argument("--stake", default="1", help="base stake (default 1)")
    parser.add_argument("--chips", default="10", help="starting chips (default 10)")
    parser.add_argument("--faults", default="none",
                        help="e.g. drop=0.1,dup=0.05,reorder=0.1,delay=50ms (default none)")
    parser.add_argument("--byzantine", action="append", default=[], metavar="SEAT:BEHAVIOUR",
                        help=f"a misbehaving seat, e.g. P2:equivocate; behaviours: "
                             f"{', '.join(BEHAVIOURS)} (repeatable)")
    parser.add_argument("--mode", default="audit",
                        help="audit (commit-reveal, cards public after each hand; default) or "
                             "strict (proved shuffles and answers, no key ever revealed)")
    parser.add_argument("--threads", default="0",
                        help="threads for the large multiplication sums of shuffles and "
                             "proofs (default 0: one per core, at most 4; 1: none); the "
                             "results are the same")
    parser.add_argument("--json", action="store_true", help="print only the JSON document")
    parser.set_defaults(func=run)


def _byzantine(specs: list[str], peers: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for spec in specs:
        seat_text, _, behaviour = str(spec).partition(":")
        seat_text = seat_text.strip().upper()
        if not (seat_text.startswith("P") and seat_text[1:].isdigit()
                and 1 <= int(seat_text[1:]) <= peers):
            raise _BadArgs(f"--byzantine {spec!r}: the seat must be P1..P{peers}")
        if behaviour not in BEHAVIOURS:
            raise _BadArgs(f"--byzantine {spec!r}: unknown behaviour {behaviour!r}; "
                           f"expected one of {', '.join(BEHAVIOURS)}")
        seat = int(seat_text[1:]) - 1
        if seat in out:
            raise _BadArgs(f"--byzantine: seat {seat_text} given twice")
        out[seat] = behaviour
    if out and len(out) >= peers:
        raise _BadArgs("--byzantine: at least one peer must be honest")
    return out


def run(args: argparse.Namespace) -> int:
    try:
        ruleset = str(args.ruleset)
        if ruleset not in PRESETS:
            raise _BadArgs(f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}")
        opts = PRESETS[ruleset]
        peers = whole_number("peers", args.peers, 1)
        if not opts.min_players <= peers <= opts.max_players:
            raise _BadArgs(f"--peers {peers}: {ruleset} plays with "
                           f"{opts.min_players}..{opts.max_players} players")
        hands = whole_number("hands", args.hands, 0)
        seed = whole_number("seed", args.seed, 0)
        stake = whole_number("stake", args.stake, 1)
        chips = whole_number("chips", args.chips, stake)
        try:
            faults = Faults.parse(str(args.faults))
        except ValueError as exc:
            raise _BadArgs(f"--faults: {exc}") from None
        byzantine = _byzantine(list(args.byzantine), peers)
        mode = str(args.mode)
        if mode not in MODES:
            raise _BadArgs(f"--mode {mode!r}: expected one of {', '.join(MODES)}")
        threads = whole_number("threads", args.threads, 0, 64) or min(os.cpu_count() or 1, 4)
    except _BadArgs as exc:
        print(f"p2pkille sim: {exc}", file=sys.stderr)
        return BAD_ARGS

    def progress(outcome: HandOutcome) -> None:
        if args.json:
            return
        if outcome.voided:
            gone = ", ".join(outcome.eliminated) or "nobody"
            print(f"hand {outcome.hand}: VOIDED after {len(outcome.accusations)} "
                  f"accusation(s); eliminated {gone}; pot {outcome.pot}", file=sys.stderr)
            return
        died = ", ".join(outcome.died) or "nobody"
        print(f"hand {outcome.hand}: died {died}; pot {outcome.pot}; checkpoint "
              f"{outcome.checkpoint[:16]} agreed by {len(outcome.agreed_by)}",
              file=sys.stderr)

    group.share_results(True)  # every peer is in this process: each check is made once
    with ThreadPoolExecutor(threads, thread_name_prefix="sim-mult") as pool:
        table = build_table(peers, seed=seed, ruleset=ruleset, stake=stake, chips=chips,
                            faults=faults, byzantine=byzantine, mode=mode,
                            workers=Workers(pool, threads) if threads > 1 else None)
        result = table.run(max_hands=hands or None, on_hand=progress)
    doc = result.document()
    if result.unfinished and not args.json:
        print(f"stopped after {HAND_CAP} hands with the game still on (the players "
              f"agreed to redeal again and again); pass --hands to stop sooner",
              file=sys.stderr)
    print(json.dumps(doc, ensure_ascii=False, sort_keys=True))
    return 0 if doc["honest_agree"] else 1
