"""``p2pkille tables``: the tables heard through zeroconf on an interface.

One row per table name and creator: two creators offering one name are two rows, each
with its creator's key fingerprint (what ``p2pkille peer --creator`` takes) and the terms
that creator's own signed advert states (``creator heard``); a copy of the name by anybody
else cannot change them. Every peer of a table advertises itself, so a table is listed while
any of its peers is there (once the creator has left, the terms are a member's:
``creator gone``). Where a peer listens is only a hint (a peer proves its key when one
connects). ``--json`` prints ``{"tables": [{"name", "creator", "creator_heard", "table",
"ruleset", "stake", "taken", "wanted", "transports", "peers": [{"fingerprint",
"addresses"}]}]}``; ``--watch`` prints the list again (with ``--json``, one document a line)
each time it changes, until interrupted or ``--seconds`` have passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Final

from p2pkille.net.discovery import Listing, TableBrowser, open_zeroconf
from protocol import canonical

BAD_ARGS: Final = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "tables", help="list the tables heard on the network (zeroconf)",
        description="Lists the tables advertised through zeroconf: one row per table name "
                    "and creator, with the creator's key fingerprint.")
    parser.add_argument("--interface", action="append", default=None, metavar="ADDRESS",
                        help="listen on this address (repeatable; default 127.0.0.1)")
    parser.add_argument("--watch", action="store_true", help="keep listing as tables change")
    parser.add_argument("--seconds", default=None,
                        help="how long to listen (default 3; with --watch: until interrupted)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def listing(rows: list[Listing]) -> list[dict[str, object]]:
    """The JSON list of tables, from :meth:`TableBrowser.listings`."""
    out: list[dict[str, object]] = []
    for row in rows:
        terms = row.advert
        out.append({
            "creator": row.creator, "creator_heard": row.by_creator,
            "name": row.name, "peers": [{"addresses": [str(p) for p in s.peers],
                                         "fingerprint": s.advert.fingerprint}
                                        for s in row.sightings],
            "ruleset": terms.ruleset, "stake": terms.stake,
            "table": canonical.b64encode(row.table),
            "taken": row.taken,
            "transports": sorted({t for s in row.sightings for t in s.advert.transports}),
            "wanted": terms.seats_wanted,
        })
    return out


def _text(tables: list[dict[str, object]]) -> str:
    if not tables:
        return "no tables heard"
    lines = []
    for t in tables:
        peers, transports = t["peers"], t["transports"]
        assert isinstance(peers, list)
        assert isinstance(transports, list)
        heard = "creator" if t["creator_heard"] else "creator gone,"
        lines.append(f"{t['name']}  {t['ruleset']}  stake {t['stake']}  seats "
                     f"{t['taken']}/{t['wanted']}  {heard} {t['creator']}  "
                     f"{len(peers)} peer(s)  {','.join(map(str, transports))}  "
                     f"[{t['table']}]")
    return "\n".join(lines)


async def _listen(interfaces: list[str], seconds: float | None, watch: bool,
                  as_json: bool) -> None:
    zc = open_zeroconf(interfaces)
    try:
        async with TableBrowser(zc) as browser:
            loop = asyncio.get_running_loop()
            end = None if seconds is None else loop.time() + seconds
            last: list[dict[str, object]] | None = None
            while True:
                changed = browser.changed()
                current = listing(browser.listings())
                if watch and current != last:
                    last = current
                    print(json.dumps({"tables": current}, sort_keys=True) if as_json
                          else _text(current) + "\n", flush=True)
                left = None if end is None else end - loop.time()
                if left is not None and left <= 0:
                    break
                try:
                    async with asyncio.timeout(left):
                        await changed
                except TimeoutError:
                    pass
            if not watch:
                current = listing(browser.listings())
                print(json.dumps({"tables": current}, sort_keys=True) if as_json
                      else _text(current), flush=True)
    finally:
        await zc.async_close()


def run(args: argparse.Namespace) -> int:
    interfaces = list(args.interface or ["127.0.0.1"])
    seconds: float | None = None if args.watch else 3.0
    if args.seconds is not None:
        try:
            seconds = float(args.seconds)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < 10**6:
            print(f"p2pkille tables: --seconds {args.seconds!r}: need a positive number",
                  file=sys.stderr)
            return BAD_ARGS
    if any(not i or any(c.isspace() for c in i) for i in interfaces):
        print(f"p2pkille tables: --interface {interfaces!r}: give IP addresses",
              file=sys.stderr)
        return BAD_ARGS
    try:
        asyncio.run(_listen(interfaces, seconds, bool(args.watch), bool(args.json)))
    except OSError as exc:
        print(f"p2pkille tables: {exc}", file=sys.stderr)
        return 1
    return 0
