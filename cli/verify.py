"""``p2pkille verify LOG``: replay a node's whole game log offline and check everything.

The log's own member is rebuilt from the keys in its header, every envelope is
taken back and consumed with the node's own checks (signatures, key proofs,
shuffles, seals, shares, rules, audits, checkpoints). Prints the hands, their
checkpoints and the winner, or the first fault with the seat to blame and why.
``--json`` prints one document::

    {"clean", "complete", "fault": {"kind", "accused", "hand", "reason"} | null,
     "faults": [...], "hands": [...], "members", "name", "records", "seat",
     "torn_bytes", "winner"}

Exit status 0 for a clean log, 1 for a log that shows a fault (including a record
that is not an authentic envelope), 2 for an unreadable log (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Final

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.runtime.log import LogError, load_log, verify_log

CLEAN: Final = 0
FAULT: Final = 1
UNREADABLE: Final = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a game log offline: signatures, proofs, shuffles, rules",
        description=(
            "Replays a node's game log offline with the node's own checks and prints the "
            "result or the first fault with the seat to blame. Exit 0 clean, 1 fault, "
            "2 unreadable."
        ),
    )
    parser.add_argument("log", help="the log file a node wrote (private: it holds keys)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        loaded = load_log(args.log)
    except (LogError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"p2pkille verify: {args.log}: unreadable: {reason}".replace("\n", " "),
              file=sys.stderr)
        return UNREADABLE
    verdict = verify_log(loaded, ThresholdBot())
    if args.json:
        print(json.dumps(verdict.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        seat = verdict.seat or "no seat yet"
        print(f"{args.log}: {verdict.name} ({seat}) of {verdict.members} members, "
              f"{verdict.records} records" + (f", {verdict.torn} torn bytes dropped"
                                              if verdict.torn else ""))
        for hand in verdict.hands:
            died = ", ".join(str(d) for d in hand["died"]) or "nobody"  # type: ignore[attr-defined]
            print(f"hand {hand['hand']}: died {died}; pot {hand['pot']}; "
                  f"checkpoint {hand['checkpoint']}")
        if verdict.fault is not None:
            f = verdict.fault
            print(f"FAULT {f['kind']} in hand {f['hand']} by {f['accused'] or 'nobody named'}: "
                  f"{f['reason']}")
        else:
            state = "game over" if verdict.complete else "game not finished in this log"
            print(f"clean: {len(verdict.hands)} hands, winner {verdict.winner or 'none'} "
                  f"({state})")
    return CLEAN if verdict.clean else FAULT
