"""The runtime's small parts: config and genesis, state digest, gap fill, bodies."""

from __future__ import annotations

import functools

import pytest

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.cards import DECK
from p2pkille.engine.machine import Game
from p2pkille.engine.options import PRESETS
from p2pkille.runtime import gapfill
from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import Member, TableConfig, card_deck, genesis, seat_name
from p2pkille.runtime.digest import state_digest, state_json
from p2pkille.runtime.io import Send
from p2pkille.runtime.node import TableNode
from p2pkille.sim.table import SimTable, build_table
from protocol import canonical
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.identity import Identity


def _config(n: int = 3, **kw: object) -> TableConfig:
    ids = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(n)]
    return TableConfig(table_id=b"t1", name="test", ruleset="wikipedia",
                       members=tuple(Member(i.public, bytes([9]) * 32) for i in ids),
                       **kw)  # type: ignore[arg-type]


def test_members_are_sorted_by_key_and_config_is_checked() -> None:
    cfg = _config()
    raws = [m.identity.raw for m in cfg.members]
    assert raws == sorted(raws)
    with pytest.raises(LocalProtocolError):
        _config(1)
    with pytest.raises(LocalProtocolError):
        _config(stake=5, chips=4)
    with pytest.raises(InvalidEncoding):  # a member's key comes from a peer: remote input
        Member(cfg.members[0].identity, b"short")


def test_genesis_is_a_permutation_and_depends_on_every_nonce() -> None:
    cfg = _config(5)
    nonces = [bytes([i]) * 32 for i in range(5)]
    g = genesis(cfg, nonces)
    assert sorted(g.seats) == list(range(5))
    assert 0 <= g.dealer < 5
    assert genesis(cfg, nonces) == g
    other = genesis(cfg, [*nonces[:4], bytes(32)])
    assert other.seed != g.seed
    assert other.digest != g.digest
    with pytest.raises(LocalProtocolError):
        genesis(cfg, nonces[:4])


def test_the_card_deck_has_the_42_cards_in_index_order() -> None:
    deck = card_deck()
    assert len(deck) == 42
    assert deck.labels == tuple(card.text for card in DECK)
    assert deck.labels[-1] == "kille:2"
    assert deck.index_of(deck.encodings[41]) == 41
    assert seat_name(0) == "P1"


def test_state_digest_covers_every_field() -> None:
    game = Game(PRESETS["wikipedia"], ["a", "b", "c"], stake=1, chips=5)
    base = state_digest(game, 1)
    assert state_json(game, 1) == {"buybacks": [0, 0, 0], "chips": [4, 4, 4], "died": [],
                                   "hand": 1, "in_game": [True, True, True],
                                   "next_dealer": 0, "pot": 3, "winner": None}
    assert state_digest(game, 2) != base
    game.pot += 1
    assert state_digest(game, 1) != base


def test_gap_fill_round_trip_and_reply() -> None:
    table = build_table(3, seed=2)
    table.run(max_hands=1)
    node = table.nodes[0]
    heads = node.transcript.heads().heads
    assert gapfill.decode_sync(gapfill.encode_sync(heads), 3) == gapfill.Sync(heads)
    assert gapfill.decode_sync(gapfill.encode_sync(heads, 4), 3) == gapfill.Sync(heads, 4)
    wires = gapfill.reply(node.transcript, (0, 0, 0))
    assert len(wires) == min(gapfill.MAX_REPLY, sum(heads))
    assert gapfill.reply(node.transcript, heads) == []
    for bad in (b"S", b"S{}", b'S{"heads":[1]}', b'S{"heads":[-1,0,0]}', b"X",
                b'S{"heads":[0,0,0],"open":0}', b'S{"heads":[0,0,0],"x":1}'):
        with pytest.raises(InvalidEncoding):
            gapfill.decode_sync(bad, 3)


def test_a_sync_from_a_peer_ahead_is_answered_once_a_sync_interval() -> None:
    # Two peers that each lack an envelope the other took just now (too fresh to send)
    # must not answer each other's sync for ever (on a link without delay the simulator's
    # time would stand still, on a LAN it would be a storm): once a sync interval.
    table = build_table(3, seed=2)
    table.run(max_hands=1)
    node = table.nodes[0]
    ahead = gapfill.encode_sync(tuple(h + 1 for h in node.transcript.heads().heads))
    interval = node.timing.sync_interval

    def syncs(now: float) -> int:
        return sum(isinstance(o, Send) and o.to == "n2" and o.data.startswith(gapfill.PREFIX)
                   for o in node.receive("n2", ahead, now))

    now = table.network.now
    assert syncs(now) == 1
    assert syncs(now) == 0
    assert syncs(now + interval / 2) == 0
    assert syncs(now + interval) == 1


def test_a_late_node_catches_up_by_gap_fill() -> None:
    table = build_table(3, seed=2)
    late = table.nodes[2]
    table.network.crash(late.name)
    table.run(until=5.0)
    assert late.stage.name == "COMMIT"
    table.network.restart(late.name, late)
    run = table.run()
    assert run.honest_agree
    assert [o.checkpoint for o in late.outcomes] == [
        o.checkpoint for o in table.nodes[0].outcomes]


def test_body_parsers_reject_malformed_entries() -> None:
    ok = msg.ShareEntry(1, None, bytes(96)).to_json()
    assert msg.get_shares({"shares": [ok]}, b"") == [msg.ShareEntry(1, None, bytes(96))]
    box = msg.BoxEntry(3, 0, 2, b"x" * 60, bytes(32))
    assert msg.get_boxes({"boxes": [box.to_json()]}, b"") == [box]
    bad_bodies: list[dict[str, object]] = [
        {"shares": "no"},
        {"shares": [1]},
        {"shares": [{"by": 1, "for": None}]},
        {"shares": [{"by": 99, "for": None, "share": canonical.b64encode(bytes(96))}]},
        {"shares": [{"by": 1, "for": None, "share": canonical.b64encode(bytes(95))}]},
        {"shares": [ok] * (msg.MAX_ENTRIES + 1)},
    ]
    for body in bad_bodies:
        with pytest.raises(RemoteProtocolError):
            msg.get_shares(body, b"")
    with pytest.raises(RemoteProtocolError):
        msg.get_boxes({"boxes": [{**box.to_json(), "token": -1}]}, b"")
    with pytest.raises(RemoteProtocolError):
        msg.get_hand({"hand": "1"}, b"")


def test_waiting_for_names_whom_the_table_waits_for() -> None:
    table = build_table(3, seed=2)
    node = table.nodes[0]
    node.start(0.0)
    # Genesis: the other two members' commits (member indices).
    assert node.waiting_for() == tuple(m for m in range(3) if m != node.me)
    table.run(max_hands=1)
    assert node.stage.name == "KEYS"
    assert set(node.waiting_for()) <= set(range(3))
    table.run()
    assert node.done
    assert node.waiting_for() == ()


@functools.cache
def _clean_game() -> SimTable:
    """A whole game of three honest peers (run once)."""
    table = build_table(3, seed=2)
    table.run()
    return table


@pytest.mark.parametrize("events", [10, 25, 40, 60, 90, 150, 220, 280])
def test_a_node_rebuilt_from_its_accepted_envelopes_resumes_without_forking(
        events: int) -> None:
    clean = _clean_game()
    table = build_table(3, seed=2)
    table.network.run(max_events=events)
    old = table.nodes[1]
    log = [env.wire for env in old.transcript.accepted]
    table.network.crash(old.name)
    fresh = TableNode(old.name, old.identity, old.delivery, old.config, ThresholdBot(),
                      old.seed, old.timing)
    fresh.replay(log)
    table.nodes[1] = fresh
    table.network.restart(old.name, fresh)
    run = table.run()
    assert run.honest_agree
    assert all(n.faults == [] for n in table.nodes)
    # The same game as without the crash. Not always the same checkpoints: they name
    # chain positions, and how many agreement votes a holder signs before a hand is
    # decided depends on when it learns the decision.
    def results(node: TableNode) -> list[tuple[int, list[str], int, dict[str, int]]]:
        return [(o.hand, o.died, o.pot, o.chips) for o in node.outcomes]

    assert results(fresh) == results(clean.nodes[1]) == results(table.nodes[0])
    assert [o.to_json() for o in fresh.outcomes] == [
        o.to_json() for o in table.nodes[0].outcomes]
