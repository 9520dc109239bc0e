"""One gossip peer as its own OS process, for the multi-process tests.

``python -m tests.net.gossip_peer INDEX N TABLE_HEX mesh`` finds the others through zeroconf
on 127.0.0.1 only; ``... mqtt PORT`` meets them on the mosquitto at 127.0.0.1:PORT. It prints
one JSON line (its name and what it received) once its gossip is complete, then exits 0.
"""

from __future__ import annotations

import asyncio
import json
import sys

from p2pkille.net import Driver, Mesh, peer_name
from p2pkille.net.discovery import Advertiser, TableAdvert, TableBrowser, feed_peers, open_zeroconf
from p2pkille.net.mqtt import BrokerUrl, MqttTransport
from tests.net.nodes import Gossip, identity

LOOPBACK = ["127.0.0.1"]


async def main(index: int, n: int, table: bytes, kind: str, port: int) -> None:
    idents = [identity(i) for i in range(n)]
    me = idents[index]
    names = [peer_name(i.public) for i in idents]
    transport: Mesh | MqttTransport
    if kind == "mesh":
        transport = Mesh(me, table, [i.public for i in idents], backoff_max=0.5)
    else:
        transport = MqttTransport(names[index], table, BrokerUrl("127.0.0.1", port))
    node = Gossip(names[index], names, count=10)
    driver = Driver(node, transport)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(driver.run())
        await transport.wait_ready()
        if isinstance(transport, Mesh):
            zc = open_zeroconf(LOOPBACK)
            advert = TableAdvert(table, "multi-process", "wikipedia", 1, n, n,
                                 me.public.fingerprint)
            async with Advertiser(zc, advert, transport.port, LOOPBACK, me), \
                    TableBrowser(zc) as browser:
                feeder = tg.create_task(feed_peers(browser, table, transport.add_peer,
                                                   exclude=me.public.fingerprint))
                while not node.complete():
                    await asyncio.sleep(0.02)
                # Stay a moment so the others get our acks before we leave.
                await asyncio.sleep(0.5)
                feeder.cancel()
            await zc.async_close()
        else:
            while not node.complete():
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.5)
        driver.stop()
    print(json.dumps({"name": node.name, "seen": sorted(f"{o}|{k}" for o, k in node.first_seen)}),
          flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(int(args[0]), int(args[1]), bytes.fromhex(args[2]), args[3],
                     int(args[4]) if len(args) > 4 else 0))
