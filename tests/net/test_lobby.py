"""The lobby that forms a table: sans-I/O (every message delivered by hand), and over a real
open mesh on loopback in one process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from p2pkille.net.discovery import Advertiser, TableAdvert, open_zeroconf
from p2pkille.net.lobby import (
    PREFIX,
    Lobby,
    LobbyError,
    Offer,
    Seat,
    channel_id,
    decode_message,
    encode_message,
)
from p2pkille.net.mesh import Mesh, PeerAddress
from p2pkille.net.peer import PeerSettings, run_peer
from protocol import canonical
from protocol.identity import Identity
from tests.net.nodes import identity, until

ROOT = Path(__file__).resolve().parents[2]
TABLE = b"T" * 16
CREATOR_OFFER = Offer("lobby-test", 4, "wikipedia", 1, 10)


def delivery(i: int) -> bytes:
    return bytes([0x40 + i]) * 32


def join_by(i: int, creator: int = 0, name: str = "lobby-test") -> bytes:
    """Identity ``i``'s join of the table ``name`` by identity ``creator``."""
    return encode_message(identity(i), {
        "address": "", "channel": canonical.b64encode(channel_id(name)),
        "creator": identity(creator).public.fingerprint,
        "delivery": canonical.b64encode(delivery(i)), "type": "join"})


def make_lobbies(n: int = 4, offer: Offer = CREATOR_OFFER) -> list[Lobby]:
    joiner = Offer(offer.name, offer.seats)
    return [Lobby(identity(0), delivery(0), offer, table=TABLE, address="127.0.0.1:1000")] + [
        Lobby(identity(i), delivery(i), joiner, address=f"127.0.0.1:{1000 + i}")
        for i in range(1, n)]


class Net:
    """Delivers what lobbies send, at once, to the named lobby or to every other one, with
    a filter that may drop a message (sender, recipient, data) -> keep?"""

    def __init__(self, lobbies: Iterable[Lobby]) -> None:
        self.lobbies = {lobby.name: lobby for lobby in lobbies}
        self.now = 0.0
        self.keep: Callable[[str, str, bytes], bool] = lambda _s, _r, _d: True
        self.sent = 0

    def run(self, rounds: int = 20, step: float = 0.6) -> None:
        for _ in range(rounds):
            self.now += step
            queue = [(lobby.name, out) for lobby in self.lobbies.values()
                     for out in lobby.tick(self.now)]
            while queue:
                sender, out = queue.pop(0)
                for name, lobby in self.lobbies.items():
                    if name == sender or out.to not in (None, name) \
                            or not self.keep(sender, name, out.data):
                        continue
                    self.sent += 1
                    queue += [(name, o) for o in lobby.receive(sender, out.data, self.now)]
            if all(lobby.formed for lobby in self.lobbies.values()):
                return


def test_four_peers_form_one_table_with_the_same_config() -> None:
    lobbies = make_lobbies()
    Net(lobbies).run()
    assert all(lobby.formed for lobby in lobbies)
    configs = [lobby.config() for lobby in lobbies]
    assert all(c == configs[0] for c in configs)
    config = configs[0]
    assert config.table_id == TABLE
    assert config.name == "lobby-test"
    assert (config.ruleset, config.stake, config.chips) == ("wikipedia", 1, 10)
    assert {m.identity for m in config.members} == {identity(i).public for i in range(4)}
    assert {m.delivery for m in config.members} == {delivery(i) for i in range(4)}
    assert all(lobby.refused == [] for lobby in lobbies)
    # Everybody learns where the others' meshes listen.
    assert {str(p) for p in lobbies[1].peers()} == {"127.0.0.1:1000", "127.0.0.1:1002",
                                                     "127.0.0.1:1003"}


def test_the_first_joiners_take_the_seats_and_a_late_one_is_refused() -> None:
    lobbies = make_lobbies(5, Offer("lobby-test", 3, "wikipedia", 1, 10))
    net = Net(lobbies)
    net.run()
    formed = [lobby for lobby in lobbies if lobby.formed]
    assert len(formed) == 3
    assert lobbies[0] in formed
    left_out = [lobby for lobby in lobbies if not lobby.formed]
    assert len(left_out) == 2
    assert all(lobby.roster is None for lobby in left_out)
    # The creator refuses their joins from then on, and says why.
    assert any("after the table was filled" in r for r in lobbies[0].refused)
    assert len(lobbies[0].config().members) == 3


def test_garbage_and_strangers_are_refused_and_the_table_still_forms() -> None:
    lobbies = make_lobbies()
    creator = lobbies[0]
    stranger = Identity.from_seed(b"\x99" * 32)
    other = Offer("another table", 4)
    creator_fp = identity(0).public.fingerprint

    def join(channel: bytes) -> bytes:
        return encode_message(stranger, {
            "address": "", "channel": canonical.b64encode(channel), "creator": creator_fp,
            "delivery": canonical.b64encode(delivery(9)), "type": "join"})

    bad: list[tuple[str, bytes]] = [
        (lobbies[1].name, b"garbage"),
        (lobbies[1].name, PREFIX + b"{not json"),
        (lobbies[1].name, PREFIX + b'{"body":{},"key":"","sig":""}'),
        (lobbies[1].name, PREFIX + b"\xff" * 100_000),
        # A join signed by somebody else than the peer that sent it.
        (lobbies[1].name, join(channel_id("lobby-test"))),
        # A join for another table name.
        (str(stranger.public), join(channel_id(other.name))),
        # A message type nobody knows.
        (str(stranger.public), encode_message(stranger, {"type": "crown-me"})),
        # A join that names no creator (every join names the one it asks).
        (str(stranger.public), encode_message(stranger, {
            "address": "", "channel": canonical.b64encode(channel_id("lobby-test")),
            "delivery": canonical.b64encode(delivery(9)), "type": "join"})),
    ]
    # A bad signature: the body changed after signing.
    wire = join(channel_id("lobby-test"))
    bad.append((str(stranger.public), wire.replace(b'"address":""', b'"address":"x"')))
    for sender, data in bad:
        assert creator.receive(sender, data, 0.0) == []
    assert len(creator.refused) == len(bad)
    assert [s.identity for s in creator.joined] == [identity(0).public]
    Net(lobbies).run()
    assert all(lobby.formed for lobby in lobbies)
    assert stranger.public not in lobbies[0].config().identities


def test_a_joiner_refuses_a_roster_without_it_or_unlike_what_it_asked_for() -> None:
    impostor = Lobby(identity(5), delivery(5), Offer("lobby-test", 4, "wikipedia", 1, 10),
                     table=b"I" * 16)
    for i in range(1, 4):
        sent = impostor.receive(str(identity(i).public), join_by(i, 5), 0.0)
    roster = next(s.data for s in sent if b'"roster"' in s.data)
    five = identity(5).public
    # Joiners bound to that creator: one whose delivery key differs from the roster's
    # entry, and one that asked for other stakes, both refuse the roster.
    wrong_key = Lobby(identity(1), delivery(7), Offer("lobby-test", 4), creator=five)
    assert wrong_key.receive("anyone", roster, 0.0) == []
    assert wrong_key.roster is None
    assert "does not seat us" in wrong_key.refused[0]
    picky = Lobby(identity(2), delivery(2), Offer("lobby-test", 4, stake=5), creator=five)
    assert picky.receive("anyone", roster, 0.0) == []
    assert picky.roster is None
    assert "stake" in picky.refused[0]
    outsider = Lobby(identity(8), delivery(8), Offer("lobby-test", 4), creator=five)
    assert outsider.receive("anyone", roster, 0.0) == []
    assert outsider.roster is None


def test_an_acceptance_from_outside_the_roster_does_not_count() -> None:
    lobbies = make_lobbies()
    Net(lobbies).run()
    stranger = Identity.from_seed(b"\x77" * 32)
    roster = lobbies[1].roster
    assert roster is not None
    forged = encode_message(stranger, {
        "channel": canonical.b64encode(channel_id("lobby-test")),
        "roster": canonical.b64encode(roster.digest),
        "table": canonical.b64encode(roster.table), "type": "accept"})
    assert lobbies[1].receive(str(stranger.public), forged, 1.0) == []
    assert "outside the roster" in lobbies[1].refused[-1]
    assert stranger.public.raw not in lobbies[1].accepts


def test_a_late_member_catches_up_from_the_others_after_the_creator_left() -> None:
    lobbies = make_lobbies()
    creator, late = lobbies[0], lobbies[3]
    net = Net(lobbies)
    got_roster = False

    def keep(sender: str, recipient: str, data: bytes) -> bool:
        nonlocal got_roster
        if recipient != late.name:
            return True
        if got_roster:
            return False  # from its roster on, the late member hears nothing
        got_roster = late.roster is not None
        return True

    net.keep = keep
    net.run(rounds=5)
    assert late.roster is not None
    assert not late.formed
    assert all(lobby.formed for lobby in lobbies[:3])
    # The creator leaves; the late member's request is answered by the other members.
    del net.lobbies[creator.name]
    net.keep = lambda _s, _r, _d: True
    net.run(rounds=3)
    assert late.accepts.keys() == {identity(i).public.raw for i in range(4)}
    assert late.config() == lobbies[1].config()


def test_offers_are_checked() -> None:
    with pytest.raises(ValueError, match="seats"):
        Offer("x", 1)
    with pytest.raises(ValueError, match="plays with"):
        Offer("x", 30, "wikipedia")
    with pytest.raises(ValueError, match="table name"):
        Offer("", 4)
    with pytest.raises(ValueError, match="creator"):
        Lobby(identity(0), delivery(0), Offer("x", 4), table=TABLE)


def test_decode_message_raises_only_remote_errors() -> None:
    for data in (b"", PREFIX, PREFIX + b"[]", PREFIX + b'{"body":1,"key":2,"sig":3}'):
        with pytest.raises(LobbyError.__mro__[1]):  # RemoteProtocolError
            decode_message(data)


# -- over a real mesh -----------------------------------------------------------------


def box_deliver(box: list[tuple[str, bytes]]) -> Callable[[str, bytes], None]:
    return lambda sender, data: box.append((sender, data))


def test_an_open_mesh_admits_any_proven_key_until_members_are_named() -> None:
    asyncio.run(asyncio.wait_for(_open_mesh(), 20))


async def _open_mesh() -> None:
    ids = [identity(i) for i in range(3)]
    meshes = [Mesh(i, channel_id("open"), None, backoff_max=0.2) for i in ids]
    got: list[list[tuple[str, bytes]]] = [[] for _ in meshes]
    tasks = [asyncio.create_task(m.run(box_deliver(box))) for m, box in zip(meshes, got,
                                                                           strict=True)]
    try:
        for mesh in meshes:
            await mesh.wait_ready()
        meshes[1].add_peer(meshes[0].address)
        meshes[2].add_peer(meshes[0].address)
        await until(lambda: len(meshes[0].connected) == 2, what="two strangers admitted")
        assert meshes[0].is_open
        # Closing the lobby to members 0 and 1 cuts member 2 off.
        meshes[0].set_members([ids[0].public, ids[1].public])
        await until(lambda: meshes[0].connected == {str(ids[1].public)}, what="cut off")
        assert not meshes[0].is_open
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_three_peers_form_a_table_and_play_a_hand_over_the_mesh_in_one_process() -> None:
    """run_peer end to end in one process, with --peer addresses only (no zeroconf)."""
    asyncio.run(asyncio.wait_for(_three_in_one_process(), 45))


async def _three_in_one_process() -> None:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    name = "in-process"
    settings = [PeerSettings(offer=Offer(name, 3, "wikipedia", 1, 10), create=True,
                             port=port, discover=False, hands=1, timeout=40)] + [
        PeerSettings(offer=Offer(name, 3), peers=(PeerAddress("127.0.0.1", port),),
                     discover=False, hands=1, timeout=40) for _ in range(2)]
    results = await asyncio.gather(*(run_peer(s) for s in settings))
    assert sorted(r.seat for r in results) == ["P1", "P2", "P3"]
    assert len({r.table for r in results}) == 1
    hands = [[h.to_json() for h in r.hands] for r in results]
    assert all(h == hands[0] for h in hands)
    assert len(hands[0]) == 1


# -- p2pkille tables --------------------------------------------------------------------


def tables_json(seconds: float = 3.0) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "tables", "--interface",
                           "127.0.0.1", "--json", "--seconds", str(seconds)], check=False,
                          cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    # No warning of a coroutine never awaited (issue 25). (Adverts of other programs on
    # this host's loopback may be reported as ignored.)
    assert b"RuntimeWarning" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert b"never awaited" not in proc.stderr, proc.stderr.decode(errors="replace")
    doc = json.loads(proc.stdout)
    assert isinstance(doc, dict)
    tables = doc["tables"]
    assert isinstance(tables, list)
    return tables


@pytest.mark.multiprocess
def test_tables_lists_a_table_while_any_of_its_peers_advertises_it() -> None:
    """Every member advertises the table, so it stays listed after its creator left."""
    table = os.urandom(16)
    name = f"listed-{table.hex()[:8]}"

    async def scenario() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        zc = open_zeroconf(["127.0.0.1"])
        creator = identity(0).public.fingerprint
        adverts = [Advertiser(zc, TableAdvert(table, name, "wikipedia", 2, 4, 4,
                                              identity(i).public.fingerprint, creator=creator),
                              40000 + i, ["127.0.0.1"], identity(i)) for i in range(2)]
        try:
            await asyncio.gather(*(a.start() for a in adverts))
            both = await asyncio.to_thread(tables_json)
            await adverts[0].stop()  # the creator leaves
            after = await asyncio.to_thread(tables_json)
        finally:
            for a in adverts:
                await a.stop()
            await zc.async_close()
        return both, after

    both, after = asyncio.run(asyncio.wait_for(scenario(), 40))
    mine = [t for t in both if t["name"] == name]
    assert len(mine) == 1
    assert mine[0]["table"] == canonical.b64encode(table)
    assert (mine[0]["creator"], mine[0]["creator_heard"]) == (
        identity(0).public.fingerprint, True)
    assert (mine[0]["ruleset"], mine[0]["stake"], mine[0]["taken"], mine[0]["wanted"]) == (
        "wikipedia", 2, 4, 4)
    peers = mine[0]["peers"]
    assert isinstance(peers, list)
    assert sorted(p["fingerprint"] for p in peers) == sorted(
        identity(i).public.fingerprint for i in range(2))
    left = [t for t in after if t["name"] == name]
    assert len(left) == 1
    assert (left[0]["creator"], left[0]["creator_heard"]) == (
        identity(0).public.fingerprint, False)
    assert left[0]["peers"] == [{"addresses": ["127.0.0.1:40001"],
                                 "fingerprint": identity(1).public.fingerprint}]


def test_tables_refuses_bad_arguments() -> None:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "tables", "--seconds", "soon"],
                          check=False, cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode == 2
    assert b"--seconds" in proc.stderr


def test_a_key_file_is_created_private_and_read_back(tmp_path: Path) -> None:
    from p2pkille.net.peer import KeyFileError, load_key
    path = tmp_path / "me.key"
    first = load_key(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_key(path).public == first.public
    path.write_text("00" * 31 + "\n")
    with pytest.raises(KeyFileError, match="64 hex digits"):
        load_key(path)


@pytest.mark.multiprocess
def test_tables_watch_shows_a_table_as_it_appears() -> None:
    table = os.urandom(16)
    name = f"watched-{table.hex()[:8]}"
    watcher = subprocess.Popen([sys.executable, "-m", "cli.main", "tables", "--interface",
                                "127.0.0.1", "--watch", "--json", "--seconds", "8"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    async def advertise() -> None:
        await asyncio.sleep(2)  # the watcher has printed its first (empty) list by then
        zc = open_zeroconf(["127.0.0.1"])
        advert = Advertiser(zc, TableAdvert(table, name, "wikipedia", 1, 1, 3,
                                            identity(3).public.fingerprint),
                            40100, ["127.0.0.1"], identity(3))
        try:
            await advert.start()
            await asyncio.sleep(3)
        finally:
            await advert.stop()
            await zc.async_close()

    try:
        asyncio.run(asyncio.wait_for(advertise(), 30))
        out, err = watcher.communicate(timeout=20)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    assert watcher.returncode == 0, err.decode(errors="replace")
    lists = [json.loads(line)["tables"] for line in out.decode().splitlines()]
    named = [[t for t in tables if t["name"] == name] for tables in lists]
    assert named[0] == []
    assert any(len(found) == 1 and found[0]["taken"] == 1 and found[0]["wanted"] == 3
               for found in named[1:])


def test_node_input_waits_for_the_node_within_a_bound_and_lobby_input_goes_to_the_lobby(
) -> None:
    from p2pkille.net import peer
    board = peer._Switchboard()
    lobby_got: list[bytes] = []
    board.on_lobby = lambda _s, d: lobby_got.append(d)
    board.deliver("a", PREFIX + b"{}")
    board.deliver("a", b"{envelope 1}")
    board.deliver("b", b"x" * (peer.MAX_BUFFERED_PER_SENDER - 20))
    board.deliver("b", b"y" * 100)  # over b's own bound: dropped
    board.deliver("c", b"{envelope 3}")  # another sender still gets in
    for n in range(20):  # many senders together stop at the bound in all
        board.deliver(f"s{n}", b"z" * (peer.MAX_BUFFERED_PER_SENDER - 20))
    assert lobby_got == [PREFIX + b"{}"]
    assert board.dropped == 1 + 20 - (peer.MAX_BUFFERED // peer.MAX_BUFFERED_PER_SENDER - 1)
    node_got: list[tuple[str, bytes]] = []
    board.attach(lambda s, d: node_got.append((s, d)))
    assert [s for s, _ in node_got][:3] == ["a", "b", "c"]
    board.deliver("c", b"{envelope 2}")
    assert node_got[-1] == ("c", b"{envelope 2}")


def _roster_by(signer: Identity, members: list[int], *, stake: int = 1, chips: int = 10,
               table: bytes = b"S" * 16) -> bytes:
    """A roster for "lobby-test" seating ``members`` (with their own delivery keys), signed
    by ``signer``."""
    seated = sorted(members, key=lambda i: identity(i).public.raw)
    return encode_message(signer, {
        "channel": canonical.b64encode(channel_id("lobby-test")), "chips": chips,
        "members": [{"address": "", "delivery": canonical.b64encode(delivery(i)),
                     "identity": canonical.b64encode(identity(i).public.raw)} for i in seated],
        "name": "lobby-test", "ruleset": "wikipedia", "seats": len(seated), "stake": stake,
        "table": canonical.b64encode(table), "type": "roster"})


def _seated_by(lobby: Lobby) -> str | None:
    """The fingerprint of the creator whose roster ``lobby`` took, if it took one."""
    return lobby.roster.creator.fingerprint if lobby.roster is not None else None


def test_a_joiner_bound_to_its_creator_refuses_a_roster_signed_by_another_member() -> None:
    # Identity 3 lists the joiner at a table of its own with absurd stakes; the joiner chose
    # identity 0 (its advert's fingerprint), so it refuses whoever else signs a roster.
    for creator in (identity(0).public.fingerprint, identity(0).public):
        joiner = Lobby(identity(1), delivery(1), Offer("lobby-test", 4), creator=creator)
        stranger = _roster_by(identity(3), [0, 1, 2, 3], stake=10**12, chips=10**12)
        assert joiner.receive("anyone", stranger, 0.0) == []
        assert _seated_by(joiner) is None
        assert "not the creator" in joiner.refused[-1]
        honest = _roster_by(identity(0), [0, 1, 2, 3])
        assert joiner.receive("anyone", honest, 0.0) != []
        assert _seated_by(joiner) == identity(0).public.fingerprint
    with pytest.raises(ValueError, match="creator"):
        Lobby(identity(1), delivery(1), Offer("lobby-test", 4), creator="not-a-fingerprint")


def _offer_by(creator: int, *, stake: int = 1, seats: int = 4) -> bytes:
    return encode_message(identity(creator), {
        "channel": canonical.b64encode(channel_id("lobby-test")), "chips": 10,
        "name": "lobby-test", "ruleset": "wikipedia", "seats": seats, "stake": stake,
        "taken": 1, "type": "offer"})


def test_a_joiner_that_named_no_creator_takes_no_roster_until_it_chose_one() -> None:
    """The capture of joiners (issue 25): a stranger that answers each join at once with a
    roster of the joiner and its own sybils, signed by one of them. A joiner that named no
    creator takes no roster at all until it bound itself to the only creator whose offer
    fits, ``choose`` seconds after the first offer; then that creator's roster only."""
    joiner = Lobby(identity(1), delivery(1), Offer("lobby-test", 4, stake=1, chips=10),
                   choose=1.0)
    rogue = _roster_by(identity(3), [1, 3, 6, 7])
    assert joiner.receive("anyone", rogue, 0.0) == []
    assert _seated_by(joiner) is None
    assert "before we chose a creator" in joiner.refused[-1]
    assert joiner.tick(0.0) == []  # no creator chosen: no join is sent
    # An offer that does not fit (other stakes) is heard but never chosen.
    assert joiner.receive("anyone", _offer_by(3, stake=10**6), 0.1) == []
    assert joiner.receive("anyone", _offer_by(0), 0.2) == []
    assert joiner.tick(0.6) == []  # still listening for other creators
    joins = joiner.tick(1.2)
    assert joiner.creator == identity(0).public.fingerprint
    assert len(joins) == 1
    assert b'"creator":"' + identity(0).public.fingerprint.encode() in joins[0].data
    assert joiner.receive("anyone", rogue, 1.3) == []
    assert "not the creator" in joiner.refused[-1]
    assert joiner.receive("anyone", _roster_by(identity(0), [0, 1, 2, 3]), 1.4) != []
    assert _seated_by(joiner) == identity(0).public.fingerprint


def test_a_joiner_hearing_two_fitting_creators_chooses_neither_and_lists_both() -> None:
    joiner = Lobby(identity(1), delivery(1), Offer("lobby-test", 4), choose=1.0)
    joiner.receive("anyone", _offer_by(0), 0.0)
    joiner.receive("anyone", _offer_by(3), 0.5)
    assert joiner.tick(1.0) == []
    assert joiner.creator is None
    assert [t.fingerprint for t in joiner.ambiguous] == sorted(
        identity(i).public.fingerprint for i in (0, 3))
    assert "wikipedia, stake 1, chips 10, 1/4 seats" in str(joiner.ambiguous[0])
    assert joiner.tick(5.0) == []


def test_a_creator_seats_only_who_it_admits_or_accepts() -> None:
    """Sybil joins cannot fill a table unasked: with ``admit`` only the named keys sit; with
    ``ask`` every other joiner waits for the creator's decision."""
    offer = Offer("lobby-test", 3, "wikipedia", 1, 10)
    strict = Lobby(identity(0), delivery(0), offer, table=TABLE,
                   admit=[identity(1).public.fingerprint])
    assert strict.receive(str(identity(2).public), join_by(2), 0.0) == []
    assert "not one of the keys we admit" in strict.refused[-1]
    assert strict.receive(str(identity(2).public), join_by(2), 0.5) == []  # said once
    assert strict.refusals == 1
    strict.receive(str(identity(1).public), join_by(1), 0.6)
    assert [s.identity for s in strict.joined] == [identity(0).public, identity(1).public]
    asking = Lobby(identity(0), delivery(0), offer, table=TABLE, ask=True,
                   admit=[identity(1).public.fingerprint])
    for i in range(2, 6):
        assert asking.receive(str(identity(i).public), join_by(i), 0.0) == []
    assert _seated_by(asking) is None
    assert [s.identity.fingerprint for s in asking.pending.values()] == [
        identity(i).public.fingerprint for i in range(2, 6)]
    asking.refuse(identity(2).public.fingerprint)
    assert asking.receive(str(identity(2).public), join_by(2), 0.5) == []
    assert identity(2).public.raw not in asking.pending
    assert asking.receive(str(identity(1).public), join_by(1), 0.6) == []  # admitted
    sent = asking.accept(identity(4).public.fingerprint, 0.7)
    assert asking.roster is not None
    assert b'"roster"' in sent[0].data
    assert {s.identity for s in asking.roster.members} == {
        identity(i).public for i in (0, 1, 4)}
    assert asking.pending == {}
    # A join for another creator is no business of this one.
    other = Lobby(identity(0), delivery(0), offer, table=TABLE)
    assert other.receive(str(identity(1).public), join_by(1, creator=5), 0.0) == []
    assert other.joined == [Seat(identity(0).public, delivery(0))]
    assert other.refused == []


def test_a_strict_table_forms_strict_and_a_joiner_asking_for_audit_refuses_it() -> None:
    strict = Offer("lobby-test", 4, "wikipedia", 1, 10, "strict")
    lobbies = make_lobbies(offer=strict)
    Net(lobbies).run()
    assert all(lobby.formed for lobby in lobbies)
    assert {lobby.config().mode for lobby in lobbies} == {"strict"}
    assert all(lobby.config().to_json()["mode"] == "strict" for lobby in lobbies)
    # An audit table's roster and genesis carry no mode at all (as before strict tables).
    plain = make_lobbies()
    Net(plain).run()
    assert "mode" not in plain[0].config().to_json()
    creator = Lobby(identity(5), delivery(5), strict, table=b"S" * 16)
    for i in range(1, 4):
        sent = creator.receive(str(identity(i).public), join_by(i, 5), 0.0)
    roster = next(s.data for s in sent if b'"roster"' in s.data)
    careful = Lobby(identity(1), delivery(1), Offer("lobby-test", 4, mode="audit"),
                    creator=identity(5).public)
    assert careful.receive("anyone", roster, 0.0) == []
    assert "mode" in careful.refused[0]
    with pytest.raises(ValueError, match="mode"):
        Offer("lobby-test", 4, mode="loose")


# -- names ------------------------------------------------------------------------------


def named_lobbies(names: list[str], bots: tuple[int, ...] = ()) -> list[Lobby]:
    """A creator (0) and joiners, each with the display name ``names[i]``."""
    offer = CREATOR_OFFER
    joiner = Offer(offer.name, offer.seats)
    return [Lobby(identity(i), delivery(i), offer if i == 0 else joiner,
                  table=TABLE if i == 0 else None, player=name, bot=i in bots,
                  creator=None if i == 0 else identity(0).public)
            for i, name in enumerate(names)]


def test_every_member_learns_every_name_and_bot_flag_from_the_signed_roster() -> None:
    lobbies = named_lobbies(["Kalle", "Lisa", "Anna", "Åsa Ö"], bots=(2,))
    Net(lobbies).run()
    assert all(lobby.formed for lobby in lobbies)
    for lobby in lobbies:
        assert lobby.roster is not None
        seen = {s.identity: (s.player, s.bot) for s in lobby.roster.members}
        assert seen == {identity(0).public: ("Kalle", False),
                        identity(1).public: ("Lisa", False),
                        identity(2).public: ("Anna", True),
                        identity(3).public: ("Åsa Ö", False)}
        assert lobby.refused == []
    # The names are outside the table's config: the genesis is what it was without them.
    assert lobbies[0].config() == lobbies[3].config()
    assert "Lisa" not in str(lobbies[0].config().to_json())
    # A nameless peer (an older one, or a ``p2pkille peer`` without --name) still sits.
    plain = make_lobbies()
    Net(plain).run()
    assert plain[0].roster is not None
    assert {s.player for s in plain[0].roster.members} == {""}
    body = decode_message(plain[0].roster.wire).body
    assert all(set(m) == {"address", "delivery", "identity"}  # type: ignore[arg-type]
               for m in body["members"])  # type: ignore[union-attr]


def test_the_creator_s_offer_names_it() -> None:
    creator = named_lobbies(["Kalle"])[0]
    offer = creator.tick(1.0)[0].data
    joiner = Lobby(identity(1), delivery(1), Offer("lobby-test", 4))
    assert joiner.receive(str(identity(0).public), offer, 1.0) == []
    terms = joiner.offers[identity(0).public.fingerprint]
    assert (terms.player, terms.bot) == ("Kalle", False)
    assert f"{identity(0).public.fingerprint} Kalle (wikipedia" in str(terms)


@pytest.mark.parametrize(("name", "why"), [
    ("", "cannot be empty"),
    ("A" * 17, "longer than 16 characters"),
    ("é" * 16 + "x", "longer than 16 characters"),
    ("Bad\x1b[2J", "control or format character U+001B"),
    ("Evil\u202egnp", "control or format character U+202E"),
    ("Zero\u200bwidth", "control or format character U+200B"),
    ("Line\nbreak", "control or format character U+000A"),
    (" Kalle", "spaces at either end"),
    ("You", "is a pronoun"),
    ("du", "is a pronoun"),
    (7, "must be text"),
])
def test_a_join_with_a_bad_name_is_refused_with_the_reason(name: object, why: str) -> None:
    creator = Lobby(identity(0), delivery(0), CREATOR_OFFER, table=TABLE, ask=True)
    join = encode_message(identity(1), {
        "address": "", "channel": canonical.b64encode(channel_id("lobby-test")),
        "creator": identity(0).public.fingerprint, "delivery": canonical.b64encode(delivery(1)),
        "player": name, "type": "join"})
    assert creator.receive(str(identity(1).public), join, 0.0) == []
    assert creator.pending == {}
    assert len(creator.joined) == 1
    assert why in creator.refused[-1]
    assert f"a join by {identity(1).public.fingerprint}" in creator.refused[-1]
    # The reason shows the name escaped: nothing in it reaches a terminal raw.
    assert "\x1b" not in creator.refused[-1]
    assert "\u202e" not in creator.refused[-1]
    # Our own name is checked before anything is sent.
    if isinstance(name, str) and name:
        with pytest.raises(ValueError, match="player name"):
            Lobby(identity(1), delivery(1), Offer("lobby-test", 4), player=name)


def test_names_that_are_fine() -> None:
    from p2pkille.net.lobby import player_name_problem
    for name in ("Kalle", "Åsa Öberg", "李小龍", "J. Doe (2)", "x" * 16, "Anna"):
        assert player_name_problem(name) == "", name


def test_a_bot_flag_must_be_true_when_present_and_a_roster_member_s_name_is_checked() -> None:
    creator = Lobby(identity(0), delivery(0), CREATOR_OFFER, table=TABLE)
    join = encode_message(identity(1), {
        "address": "", "bot": False, "channel": canonical.b64encode(channel_id("lobby-test")),
        "creator": identity(0).public.fingerprint, "delivery": canonical.b64encode(delivery(1)),
        "type": "join"})
    assert creator.receive(str(identity(1).public), join, 0.0) == []
    assert "bot is False, not true" in creator.refused[-1]
    seated = sorted([0, 1], key=lambda i: identity(i).public.raw)
    roster = encode_message(identity(0), {
        "channel": canonical.b64encode(channel_id("lobby-test")), "chips": 10,
        "members": [{"address": "", "delivery": canonical.b64encode(delivery(i)),
                     "identity": canonical.b64encode(identity(i).public.raw),
                     "player": "ok" if i == 0 else "\x07bell"} for i in seated],
        "name": "lobby-test", "ruleset": "enkortskille", "seats": 2, "stake": 1,
        "table": canonical.b64encode(TABLE), "type": "roster"})
    joiner = Lobby(identity(1), delivery(1), Offer("lobby-test", 2),
                   creator=identity(0).public, player="\u00e5sa")
    assert joiner.receive("anyone", roster, 0.0) == []
    assert joiner.roster is None
    assert "roster member: the player's name" in joiner.refused[-1]
    assert "U+0007" in joiner.refused[-1]


def test_a_roster_that_renames_a_member_is_refused_by_that_member() -> None:
    """The creator copies each joiner's name into the roster; a creator that changes one
    (or calls a person a bot) is refused by that member, so the table never forms under a
    name its owner did not sign."""
    creator = Lobby(identity(0), delivery(0), Offer("lobby-test", 2, "enkortskille", 1, 10),
                    table=TABLE, player="Kalle")
    lisa = Lobby(identity(1), delivery(1), Offer("lobby-test", 2),
                 creator=identity(0).public, player="Lisa")
    sent = creator.receive(lisa.name, lisa.tick(1.0)[0].data, 1.0)
    honest = next(s.data for s in sent if b'"roster"' in s.data)
    assert b'"player":"Lisa"' in honest
    body = decode_message(honest).body
    for change in ({"player": "Lena"}, {"bot": True}):
        listed = body["members"]
        assert isinstance(listed, list)
        members = [{**m, **change} if isinstance(m, dict) and m.get("player") == "Lisa" else m
                   for m in listed]
        forged = encode_message(identity(0), {**body, "members": members})  # signed by it
        victim = Lobby(identity(1), delivery(1), Offer("lobby-test", 2),
                       creator=identity(0).public, player="Lisa")
        assert victim.receive("anyone", forged, 1.0) == []
        assert victim.roster is None
        assert "a roster that seats us as" in victim.refused[-1]
    assert lisa.receive(creator.name, honest, 1.0) != []
    assert lisa.roster is not None


def test_seats_held_for_admitted_keys_count_as_taken() -> None:
    """A creator's bots are admitted without asking: their seats are nobody else's, so the
    offer (and the advert made from :attr:`Lobby.taken`) counts them from the start, as
    the creator's screen does."""
    bots = [identity(i).public.fingerprint for i in (1, 2)]
    creator = Lobby(identity(0), delivery(0), CREATOR_OFFER, table=TABLE, ask=True,
                    admit=bots)
    assert creator.taken == 3
    offer = decode_message(creator.tick(1.0)[0].data)
    assert offer.body["taken"] == 3
    creator.receive(str(identity(1).public), join_by(1), 1.0)
    assert creator.taken == 3  # a bot that sits down changes nothing
    creator.receive(str(identity(5).public), join_by(5), 1.0)
    assert creator.taken == 3  # a stranger waiting to be let in holds no seat
    creator.accept(identity(5).public.fingerprint, 1.0)
    assert creator.taken == 4
    assert Lobby(identity(0), delivery(0), CREATOR_OFFER, table=TABLE).taken == 1


def test_a_seat_held_for_an_admitted_bot_goes_to_no_stranger() -> None:
    """Four seats, two bots admitted: the creator's player lets one stranger in; a second
    stranger it accepts stays waiting (the last seat is the second bot's), and the table
    forms with both bots once the second one joins."""
    bots = [identity(i).public.fingerprint for i in (1, 2)]
    creator = Lobby(identity(0), delivery(0), CREATOR_OFFER, table=TABLE, ask=True,
                    admit=bots)
    creator.receive(str(identity(1).public), join_by(1), 1.0)
    for stranger in (5, 6):
        creator.receive(str(identity(stranger).public), join_by(stranger), 1.0)
    creator.accept(identity(5).public.fingerprint, 1.0)
    assert creator.accept(identity(6).public.fingerprint, 1.0) == []
    assert len(creator.joined) == 3
    assert identity(6).public.raw in creator.pending
    creator.receive(str(identity(2).public), join_by(2), 1.0)
    assert creator.roster is not None
    seated = {m.identity for m in creator.roster.members}
    assert {identity(i).public for i in (0, 1, 2, 5)} == seated


def test_the_advert_counts_the_seats_as_the_creator_does_and_follows_them() -> None:
    """A creator with a bot admitted: its advert says 2 of 3 seats from the start (the
    bot's seat is nobody else's); once it lets a stranger in, 3 of 3 before the bot has
    even arrived (before: 1/3 until the table was formed, against "2 of 3 seats taken" on
    the creator's screen)."""
    from p2pkille.net.discovery import TableBrowser

    async def scenario() -> None:
        name = f"count-{os.urandom(3).hex()}"
        bot, stranger = identity(1), identity(2)
        lobbies: list[Lobby] = []
        creator = asyncio.create_task(run_peer(PeerSettings(
            offer=Offer(name, 3, "wikipedia", 1, 10), create=True, identity=identity(0),
            admit=frozenset({bot.public.fingerprint}), ask=True, timeout=40,
            on_lobby=lobbies.append, player="Kalle", decider=None)))
        zc = open_zeroconf(["127.0.0.1"])
        try:
            async with TableBrowser(zc) as browser:
                def taken() -> int | None:
                    rows = [r for r in browser.listings() if r.name == name]
                    return rows[0].taken if rows else None

                await browser.wait_for(lambda _b: taken() is not None, 20)
                assert taken() == 2
                lobby = lobbies[0]
                lobby.receive(str(stranger.public), encode_message(stranger, {
                    "address": "", "channel": canonical.b64encode(channel_id(name)),
                    "creator": identity(0).public.fingerprint,
                    "delivery": canonical.b64encode(delivery(2)), "type": "join"}), 0.0)
                assert lobby.pending
                lobby.accept(stranger.public.fingerprint, 0.0)
                await browser.wait_for(lambda _b: taken() == 3, 20)
                assert not lobby.formed  # the bot has not joined: the seat was held
        finally:
            creator.cancel()
            await asyncio.gather(creator, return_exceptions=True)
            await zc.async_close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_peer_process_signs_its_name_as_a_bot_s() -> None:
    from cli.args import BadArgs
    from cli.main import build_parser
    from cli.peer import settings_from

    def settings(*extra: str) -> PeerSettings:
        return settings_from(build_parser().parse_args(
            ["peer", "--table", "t", "--seats", "3", *extra]))

    named = settings("--name", "Robotta")
    assert (named.player, named.is_bot) == ("Robotta", True)
    assert (settings().player, settings().is_bot) == ("", True)
    with pytest.raises(BadArgs, match=r"--name: 'a\\x1b\[2J' holds the control"):
        settings("--name", "a\x1b[2J")
    # A person's peer (a decider at a screen) says it is none, unless told otherwise.
    assert not PeerSettings(offer=Offer("t", 3), decider=object()).is_bot  # type: ignore[arg-type]
