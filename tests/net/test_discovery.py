"""Discovery over real multicast DNS, bound to 127.0.0.1 only, and TXT parsing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Coroutine
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from zeroconf.asyncio import AsyncServiceInfo

from p2pkille.net import Driver, Mesh, PeerAddress
from p2pkille.net.discovery import (
    SERVICE_TYPE,
    Advertiser,
    BadAdvert,
    TableAdvert,
    TableBrowser,
    feed_peers,
    open_zeroconf,
)
from p2pkille.net.mesh import peer_name
from tests.net.nodes import SLACK, Gossip, identity, until

LOOPBACK = ["127.0.0.1"]


def run(coro: Coroutine[Any, Any, None], timeout: float = 40 * SLACK) -> None:
    # A backstop only: each wait inside a test has its own bound, stretched by SLACK on a
    # busy machine; a fixed 30 s for the whole test was shorter than their sum.
    async def bounded() -> None:
        async with asyncio.timeout(timeout):
            await coro

    asyncio.run(bounded())


def advert(index: int, table: bytes, **changes: Any) -> TableAdvert:
    """Identity ``index``'s advert, signed (as an :class:`Advertiser` signs it)."""
    fields: dict[str, Any] = {
        "table": table, "name": "Fredagskille på Ön", "ruleset": "wikipedia", "stake": 5,
        "seats_taken": 1, "seats_wanted": 4,
        "fingerprint": identity(index).public.fingerprint, "transports": ("mesh", "mqtt")}
    fields.update(changes)
    return TableAdvert(**fields).signed(identity(index))


def txt_of(ad: TableAdvert) -> dict[bytes, bytes | None]:
    return {k.encode(): v.encode() for k, v in ad.to_txt().items()}


def test_advert_txt_round_trip_fits_txt_items() -> None:
    ad = advert(0, b"\x01" * 64, name="x" * 64, creator=identity(3).public.fingerprint)
    txt = ad.to_txt()
    assert all(len(k) + 1 + len(v.encode()) <= 255 for k, v in txt.items())
    assert TableAdvert.from_txt(txt_of(ad)) == ad
    assert eval(repr(ad)) == ad
    assert ad.fingerprint in ad.instance
    assert len(ad.instance.encode()) <= 63
    assert ad.creator == identity(3).public.fingerprint
    assert not ad.by_creator
    # Without a creator, the advertising peer is the creator.
    assert advert(1, b"t").creator == identity(1).public.fingerprint


def test_an_advert_speaks_only_for_the_key_that_signed_it() -> None:
    """Terms under another peer's fingerprint cannot be made up: the TXT record is signed
    by the key whose fingerprint it carries (a replay of that peer's own record is all a
    stranger can advertise in its name)."""
    honest = advert(0, b"t")
    unsigned = TableAdvert(b"t", "x", "wikipedia", 1, 1, 4, identity(0).public.fingerprint)
    with pytest.raises(BadAdvert, match="missing"):
        TableAdvert.from_txt(txt_of(unsigned))
    # Identity 1 signs terms under identity 0's fingerprint.
    forged = txt_of(honest)
    forged[b"stake"] = b"999999"
    with pytest.raises(BadAdvert, match="bad signature"):
        TableAdvert.from_txt(forged)
    theirs = txt_of(TableAdvert(b"t", "Fredagskille på Ön", "wikipedia", 999999, 1, 4,
                                identity(1).public.fingerprint).signed(identity(1)))
    theirs[b"fp"] = honest.fingerprint.encode()
    with pytest.raises(BadAdvert, match="carries the key of"):
        TableAdvert.from_txt(theirs)
    with pytest.raises(ValueError, match="signed by"):
        unsigned.signed(identity(1))


@pytest.mark.parametrize(("key", "value", "reason"), [
    (b"stake", b"-1", "not a number"), (b"stake", b"007", "not a number"),
    (b"taken", b"5", "seats 5/4"), (b"wanted", b"1", "seats 1/1"),
    (b"fp", b"XYZ", "fingerprint"), (b"table", b"!!", "table"), (b"table", b"", "table"),
    (b"name", b"\xff\xfe", "not UTF-8"), (b"name", b"a\nb", "table name"),
    (b"ruleset", b"Wiki Pedia", "ruleset"), (b"tr", b"", "transports"),
    (b"v", b"0", "protocol version"), (b"v", None, "missing"),
    (b"cr", b"nobody", "creator"), (b"key", b"!", "key"), (b"key", b"AAAA", "key"),
    (b"sig", b"AAAA", "signature"), (b"sig", None, "missing"),
])
def test_malformed_txt_is_refused(key: bytes, value: bytes | None, reason: str) -> None:
    props = txt_of(advert(0, b"t"))
    props[key] = value
    with pytest.raises(BadAdvert, match=reason):
        TableAdvert.from_txt(props)


VALID_TXT = txt_of(advert(0, b"t"))
TXT_VALUES = (st.none() | st.binary(max_size=40) | st.text(max_size=70).map(str.encode)
              | st.sampled_from([b"1", b"4", b"0", b"99999999999999999", b"dA", b"mesh",
                                 b"0123456789abcdef", b"mesh,,mqtt"]))


@given(st.dictionaries(st.sampled_from(sorted(VALID_TXT)) | st.binary(max_size=8), TXT_VALUES,
                       max_size=4))
def test_txt_parsing_only_ever_raises_bad_advert(changes: dict[bytes, bytes | None]) -> None:
    with contextlib.suppress(BadAdvert):
        ad = TableAdvert.from_txt(VALID_TXT | changes)
        assert TableAdvert.from_txt({k.encode(): v.encode() for k, v in ad.to_txt().items()}) \
            == ad


def test_two_advertisers_are_listed_live_and_a_bad_record_is_ignored(
        caplog: pytest.LogCaptureFixture) -> None:
    table = os.urandom(16)  # other tests on this host may advertise too
    bad_name = f"p2pkille-{os.urandom(8).hex()}-bad"

    async def main() -> None:
        zcs = [open_zeroconf(LOOPBACK) for _ in range(3)]
        try:
            browser_zc, one, two = zcs
            async with TableBrowser(browser_zc) as browser:
                bad = AsyncServiceInfo(
                    SERVICE_TYPE, f"{bad_name}.{SERVICE_TYPE}", port=9,
                    properties={"v": "1", "table": "%%%", "stake": "lots"},
                    parsed_addresses=LOOPBACK)
                await (await one.async_register_service(bad))
                ad1, ad2 = advert(1, table), advert(2, table, seats_taken=2)
                async with Advertiser(one, ad1, 4001, LOOPBACK, identity(1)), \
                        Advertiser(two, ad2, 4002, LOOPBACK, identity(2)) as adv2:

                    def both(b: TableBrowser) -> bool:
                        return len(b.tables().get(table, [])) == 2

                    await browser.wait_for(both, 10 * SLACK)
                    seen = browser.tables()[table]
                    assert {s.advert for s in seen} == {ad1, ad2}
                    assert {s.peers for s in seen} == {(PeerAddress("127.0.0.1", 4001),),
                                                       (PeerAddress("127.0.0.1", 4002),)}
                    await browser.wait_for(
                        lambda b: f"{bad_name}.{SERVICE_TYPE}" in b.rejected, 5 * SLACK)

                    # A seat is taken: the listing follows.
                    ad2b = advert(2, table, seats_taken=3)
                    await adv2.update(ad2b)
                    await browser.wait_for(
                        lambda b: ad2b in {s.advert for s in b.tables().get(table, [])},
                        10 * SLACK)
                # Both left: goodbye packets remove them.
                await browser.wait_for(lambda b: table not in b.tables(), 10 * SLACK)
        finally:
            for zc in zcs:
                await zc.async_close()

    run(main())
    assert any(f"ignoring {bad_name}" in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_three_peers_find_each_other_and_mesh_up() -> None:
    """No addresses given: every peer learns the others' from their advertisements."""
    table = os.urandom(16)

    async def main() -> None:
        idents = [identity(i) for i in range(3)]
        members = [i.public for i in idents]
        meshes = [Mesh(i, table, members, backoff_max=0.3) for i in idents]
        nodes = [Gossip(m.name, [peer_name(k) for k in members], 3) for m in meshes]
        drivers = [Driver(n, m) for n, m in zip(nodes, meshes, strict=True)]
        async with contextlib.AsyncExitStack() as stack, asyncio.TaskGroup() as tg:
            for d in drivers:
                tg.create_task(d.run())
            feeders = []
            advertisers = []
            for ident, mesh in zip(idents, meshes, strict=True):
                zc = open_zeroconf(LOOPBACK)
                stack.push_async_callback(zc.async_close)
                await mesh.wait_ready()
                ad = TableAdvert(table, "t", "wikipedia", 1, 3, 3, ident.public.fingerprint)
                advertisers.append(Advertiser(zc, ad, mesh.port, LOOPBACK, ident))
                browser = await stack.enter_async_context(TableBrowser(zc))
                feeders.append(tg.create_task(feed_peers(
                    browser, table, mesh.add_peer, exclude=ident.public.fingerprint)))
            await asyncio.gather(*(a.start() for a in advertisers))
            await until(lambda: all(n.complete() for n in nodes), 15, "gossip")
            for mesh in meshes:
                assert len(mesh.connected) == 2
            for d in drivers:
                d.stop()
            for feeder in feeders:
                feeder.cancel()

    run(main())
