"""``p2pkille tables``: the tables heard through zeroconf on an interface.

Every peer of a table advertises itself, so a table is listed while any of its peers is
there. What the adverts say is only a hint (a peer proves its key when one connects).
``--json`` prints ``{"tables": [{"table", "name", "ruleset", "stake", "taken", "wanted",
"transports", "peers": [{"fingerprint", "addresses"}]}]}``; ``--watch`` prints the list
again (with ``--json``, one document a line) each time it changes, until interrupted or
``--seconds`` have passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Final

from p2pkille.net.discovery import Sighting, TableBrowser, open_zeroconf
from protocol import canonical

BAD_ARGS: Final = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "tables", help="list the tables heard on the network (zeroconf)",
        description="Lists the tables advertised through zeroconf, grouped by table id.")
    parser.add_argument("--interface", action="append", default=None, metavar="ADDRESS",
                        help="listen on this address (repeatable; default 127.0.0.1)")
    parser.add_argument("--watch", action="store_true", help="keep listing as tables change")
    parser.add_argument("--seconds", default=None,
                        help="how long to listen (default 3; with --watch: until interrupted)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def listing(groups: dict[bytes, list[Sighting]]) -> list[dict[str, object]]:
    """The JSON list of tables, from :meth:`TableBrowser.tables`."""
    out: list[dict[str, object]] = []
    for table, sightings in sorted(groups.items(), key=lambda kv: (kv[1][0].advert.name,
                                                                   kv[0])):
        first = sightings[0].advert
        out.append({
            "name": first.name, "peers": [{"addresses": [str(p) for p in s.peers],
                                           "fingerprint": s.advert.fingerprint}
                                          for s in sightings],
            "ruleset": first.ruleset, "stake": first.stake,
            "table": canonical.b64encode(table),
            "taken": max(s.advert.seats_taken for s in sightings),
            "transports": sorted({t for s in sightings for t in s.advert.transports}),
            "wanted": first.seats_wanted,
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
        lines.append(f"{t['name']}  {t['ruleset']}  stake {t['stake']}  seats "
                     f"{t['taken']}/{t['wanted']}  {len(peers)} peer(s)  "
                     f"{','.join(map(str, transports))}  [{t['table']}]")
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
                current = listing(browser.tables())
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
                current = listing(browser.tables())
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
