"""The Part II vector games (docs/protocol.md II.14): real table nodes on a lossless,
in-order network, every secret derived from a fixed seed.

Two games, since a table's mode is fixed at its genesis:

- ``audit`` (ruleset ``wikipedia``): swaps and plain exchanges, a kille disclosed as it
  changes hands, förhand's cut and a stock draw, a buy-back, a hand voided because a
  member sent an illegal decision (every holder's accusation of it, the verdict's
  agreement, the member expelled), and the game played to its end by the two seats left;
- ``strict``: proved shuffle steps, proved plain answers and "no kille" disclosures with
  every holder's test part, and no key ever revealed.

Each game is recorded as what a second implementation needs to take a seat and check
itself: the members' secrets, the configuration, the genesis, the envelopes in the order
they were sent, and per hand the facts (with the fact count each was taken at and the
slot it opened or claimed), the key holders, the state digest and the checkpoint (or the
verdict of a voided hand). Only public runtime API is used: the nodes' constructor,
``start`` and ``receive``, their public attributes and watchers, and the deciders.
"""

from __future__ import annotations

import collections
import os
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from p2pkille.engine import (
    Answer,
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decision,
    Decline,
    Disclosure,
    Fact,
    Keep,
    Rank,
    SaleAnswer,
    SeatView,
    Sell,
    Showdown,
    StockCard,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.cards import ANSWERING, DECK
from p2pkille.engine.facts import fact_to_dict
from p2pkille.engine.peer import PeerView
from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import Member, TableConfig, card_deck, genesis, seat_name
from p2pkille.runtime.digest import state_json
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.log import LoggedNode
from p2pkille.runtime.node import Stage, TableNode
from protocol import canonical
from protocol.checkpoint import Checkpoint
from protocol.deck import random_permutation, uniform_below
from protocol.domain import hash32
from protocol.envelope import Envelope, decode
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair
from protocol.rng import DeterministicRng
from protocol.transcript import Cut as TranscriptCut
from protocol.transcript import Transcript

__all__ = ["GAMES", "GameSpec", "checkpoint_statement", "generate", "play"]

#: The ASCII value of the CRC-32 check string "123456789" (CRC-32/ISO-HDLC, zlib's).
CRC_CHECK_INPUT: Final = b"123456789"
#: Log records of member 0 shown in full: the header and the first envelopes.
LOG_RECORDS: Final = 3


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One vector game: its seed (every secret derives from it), mode, chips and the
    member (index in member order) that sends an illegal decision in ``cheat_hand``."""

    name: str
    seed: bytes
    mode: str
    chips: int
    cheater: int | None = None
    cheat_hand: int = 0
    table: bytes = b""


GAMES: Final = (
    GameSpec("audit", b"p2pkille table vectors v1 audit 28", "audit", chips=4, cheater=2,
             cheat_hand=2, table=b"vector-table-audit"),
    GameSpec("strict", b"p2pkille table vectors v1 strict 3", "strict", chips=1,
             table=b"vector-table-strict"),
)


class VectorBot:
    """The deciders of the vector games: swap a low card or a kille (a kille given away
    by a swap kills its receiver under ``wikipedia``), keep the rest; förhand cuts 3;
    buy back in the first two hands when the chips cover it. The cheater answers its
    first turn of ``cheat_hand`` with a pick the ruleset does not allow (an illegal
    ``act``: every holder accuses it and the hand is voided). ``facts`` records every
    fact its node applies, in order (``observe``)."""

    wants_facts = True

    def __init__(self, cheat_hand: int | None = None) -> None:
        self.cheat_hand = cheat_hand
        self.facts: list[Fact] = []

    def turn(self, view: SeatView) -> Decision:
        if self.cheat_hand is not None and view.game.hand_no == self.cheat_hand:
            self.cheat_hand = None
            return Swap(view.seat, pick=4)
        rank = view.rank
        if rank is Rank.KILLE or (rank is not None and rank < Rank.TEN):
            return Swap(view.seat)
        return Keep(view.seat)

    def vote(self, view: SeatView) -> VoteChoice:
        return VoteChoice.REFUSE

    def answer_sale(self, view: SeatView) -> bool:
        return False

    def cut(self, view: SeatView) -> int:
        return 3

    def buyin(self, view: SeatView) -> bool:
        return 0 < view.price <= view.chips and view.game.hand_no < 3

    def observe(self, fact: Fact, view: SeatView) -> None:
        self.facts.append(fact)


@dataclass(slots=True)
class _Member:
    seed: bytes          # the Ed25519 seed
    identity: Identity
    delivery: DeliveryKeyPair
    secret: bytes        # the node's secret seed (II.9)


@dataclass(slots=True)
class Played:
    """What :func:`play` returns: the nodes, the envelopes in the order sent, and what
    member 0's node saw (the facts it applied, and per committed hand the game state)."""

    spec: GameSpec
    config: TableConfig
    members: list[_Member]
    nodes: list[TableNode]
    envelopes: list[bytes]
    facts: list[Fact]
    states: dict[int, dict[str, object]] = field(default_factory=dict)
    log: bytes = b""


def _members(spec: GameSpec) -> list[_Member]:
    rng = DeterministicRng(spec.seed)
    drawn = [_Member(seed, Identity.from_seed(seed), DeliveryKeyPair.from_private(
        rng.randbytes(32)), rng.randbytes(32)) for seed in (rng.randbytes(32) for _ in range(3))]
    # Member order is ascending identity key bytes (II.1).
    return sorted(drawn, key=lambda m: m.identity.public.raw)


def play(spec: GameSpec) -> Played:
    """Run the game to its end on a lossless network that delivers every message in the
    order sent (a FIFO queue; no clock: no limit ever passes, so nothing times out)."""
    members = _members(spec)
    config = TableConfig(
        table_id=spec.table, name=f"vectors {spec.name}", ruleset="wikipedia",
        members=tuple(Member(m.identity.public, m.delivery.public) for m in members),
        stake=1, chips=spec.chips, mode=spec.mode)
    bots = [VectorBot(spec.cheat_hand if i == spec.cheater else None)
            for i in range(len(members))]
    nodes = [TableNode(f"m{i}", m.identity, m.delivery, config, bots[i], m.secret)
             for i, m in enumerate(members)]
    played = Played(spec, config, members, nodes, [], bots[0].facts)
    hands = [0]

    def watch(what: str) -> None:
        if what == "hand":
            hands[0] += 1
        elif what == "commit":
            view = nodes[0].view
            assert view is not None
            played.states[hands[0]] = state_json(view.game, hands[0])

    nodes[0].watchers.append(watch)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m0.log")
        logged = LoggedNode(nodes[0], path, durable=False)
        peers: list[Any] = [logged, *nodes[1:]]
        queue: collections.deque[tuple[int, int, bytes]] = collections.deque()
        sent: set[bytes] = set()

        def post(sender: int, outputs: Sequence[Output]) -> None:
            for out in outputs:
                if not isinstance(out, Send):
                    continue  # no clock: a wake-up never comes
                if not out.data.startswith(b"S") and out.data not in sent:
                    sent.add(out.data)
                    played.envelopes.append(out.data)
                for j in range(len(peers)):
                    if j != sender and out.to in (None, f"m{j}"):
                        queue.append((sender, j, out.data))

        for i, peer in enumerate(peers):
            post(i, peer.start(0.0))
        while queue:
            sender, to, data = queue.popleft()
            post(to, peers[to].receive(f"m{sender}", data, 0.0))
        logged.close()
        with open(path, "rb") as fh:
            played.log = fh.read()
    if not all(node.done for node in nodes):
        raise AssertionError(f"vector game {spec.name} did not finish")
    return played


# -- reading the envelopes back ------------------------------------------------------------


def _decoded(played: Played) -> list[Envelope]:
    members = played.config.identities
    return [decode(w, table=played.config.table_id, members=members, kinds=msg.KINDS)
            for w in played.envelopes]


def checkpoint_statement(
    config: TableConfig, envelopes: Sequence[bytes], *, hand: int, holders: Sequence[int],
    seats: Sequence[int], expelled: set[int], base: Sequence[int], state: bytes, prev: bytes,
) -> Checkpoint:
    """The checkpoint of ``hand`` as II.7 defines its cut, from the envelopes alone: a key
    holder's seq of its ``reveal``; a seat expelled by a void, 0; another member's seq of
    its last ``act`` of the hand, else ``base`` (its cut in the last counted checkpoint;
    at first the seq of its ``accept``). ``seats[i]`` is the member seated at seat i."""
    members = config.identities
    transcript = Transcript(table=config.table_id, members=members, kinds=msg.KINDS)
    for wire in envelopes:
        transcript.receive(wire)
    cut = []
    for m, member in enumerate(members):
        seat = seats.index(m)
        chain = [e for e in transcript.chain(member) if e.body.get("hand") == hand]
        if seat in holders:
            cut.append(next(e.seq for e in chain if e.kind == msg.REVEAL))
        elif seat in expelled:
            cut.append(0)
        else:
            cut.append(max((e.seq for e in chain if e.kind == msg.ACT), default=base[m]))
    return Checkpoint.of(transcript, hand=hand, state=state, prev=prev,
                         cut=TranscriptCut(tuple(cut)))


def _genesis(played: Played, envs: list[Envelope]) -> dict[str, Any]:
    config = played.config
    members = config.identities
    nonces = [canonical.get_bytes(e.body, "nonce", what="nonce") for e in sorted(
        (e for e in envs if e.kind == msg.NONCE), key=lambda e: members.index(e.author))]
    start = genesis(config, nonces)
    # The same draws by hand (II.3): the permutation, then the dealer, from one stream.
    seed = hash32("table-seed", config.table_id, *nonces)
    tap = _Tap(DeterministicRng(seed))
    perm = random_permutation(len(nonces), tap)
    perm_draws = tap.take()
    dealer = uniform_below(len(nonces), tap)
    assert (perm, dealer, seed) == (start.seats, start.dealer, start.seed)
    commits = {members.index(e.author): e for e in envs if e.kind == msg.COMMIT}
    return {
        "commits_hex": [canonical.get_bytes(commits[i].body, "commit", what="commit").hex()
                        for i in range(len(members))],
        "nonces_hex": [n.hex() for n in nonces],
        "seed_hex": seed.hex(),
        "permutation_draws_hex": [d.hex() for d in perm_draws],
        "dealer_draws_hex": [d.hex() for d in tap.take()],
        "seats": list(start.seats),
        "dealer": start.dealer,
        "document": start.document.decode(),
        "digest_hex": start.digest.hex(),
    }


class _Tap:
    def __init__(self, rng: DeterministicRng) -> None:
        self.rng = rng
        self.log: list[bytes] = []

    def randbytes(self, n: int) -> bytes:
        out = self.rng.randbytes(n)
        self.log.append(out)
        return out

    def take(self) -> list[bytes]:
        out, self.log = self.log, []
        return out


_ACTS: Final = ("keep", "swap", "redeal", "sell", "vote", "sale", "cut", "buyin", "decline")


# One pass over a hand's facts; its finders share the pass's state.
def _hands(played: Played, envs: list[Envelope],  # noqa: PLR0915
           seats: tuple[int, ...], dealer: int) -> list[dict[str, Any]]:
    """Per hand: the facts member 0's node applied, each with the fact count it was taken
    at, the envelope(s) it came from and the slot(s) it opened or claimed, followed on a
    copy of the game (``PeerView``), as II.4 says every node follows it."""
    config = played.config
    members = config.identities
    seat_of = {members[m]: s for s, m in enumerate(seats)}
    names = [seat_name(s) for s in range(len(seats))]
    shadow = PeerView(config.options, names, stake=config.stake, chips=config.chips,
                      dealer=dealer)
    outcomes = iter(played.nodes[0].outcomes)
    hands: list[dict[str, Any]] = []
    used: set[int] = set()
    snapshot = shadow.game.snapshot()
    number = 0

    def find(kind: str, seat: int | None, **body: object) -> list[int]:
        return [i for i, e in enumerate(envs) if e.kind == kind and e.body.get("hand") == number
                and (seat is None or seat_of[e.author] == seat)
                and all(e.body.get(k) == v for k, v in body.items()) and i not in used]

    def close(hand: dict[str, Any]) -> None:
        nonlocal snapshot
        outcome = next(outcomes)
        assert outcome.hand == hand["hand"]
        if outcome.voided:
            hand["outcome"] = "voided"
            hand["accusations"] = outcome.accusations
            hand["eliminated"] = [names.index(s) for s in outcome.eliminated]
            shadow.game.restore(snapshot)
            for seat in hand["eliminated"]:
                if not shadow.game.over:
                    shadow.game.expel(seat)
        else:
            hand["outcome"] = "committed"
            hand["checkpoint_id_hex"] = outcome.checkpoint
            if outcome.faces:
                hand["faces"] = [DECK[c].text for c in outcome.faces]

    for fact in played.facts:
        if type(fact) is Deal and hands:
            close(hands[-1])  # a voided hand's facts are taken back before the next deal
        game = shadow.game
        at = game.fact_count
        entry: dict[str, Any] = {"at": at, "fact": fact_to_dict(fact)}
        if type(fact) is Deal:
            snapshot = game.snapshot()
            number += 1
            dealer_now = game.dealer
        elif fact.TYPE in _ACTS:
            seat = getattr(fact, "seat", None)
            found = find(msg.ACT, seat, at=at)
            assert len(found) == 1, (number, fact)
            entry["envelopes"] = found
        elif type(fact) is Answer or type(fact) is Disclosure:
            kind = msg.ANSWER if type(fact) is Answer else msg.DISCLOSE
            entry["slot"] = game.hold[game.tgt]
            entry["envelopes"] = find(kind, fact.seat)[:1]
        elif type(fact) is StockCard:
            entry["slot"] = game.stock[game.draw_index]
            entry["envelopes"] = find(msg.DRAW, None, token=entry["slot"])
        elif type(fact) is Showdown:
            live = [p for p in range(len(game.alive)) if game.alive[p]]
            entry["slots"] = [game.hold[p] for p in live]
            entry["seats"] = [game.order[p] for p in live]
            entry["envelopes"] = sorted(i for p in live for i in find(msg.SHOW, game.order[p]))
        used.update(entry.get("envelopes", ()))
        shadow.feed(fact)
        if type(fact) is Deal:
            hands.append({"hand": number, "dealer": dealer_now, "forhand": game.forhand,
                          "holders": list(game.dealt), "facts": [entry]})
        else:
            hands[-1]["facts"].append(entry)
    close(hands[-1])
    return hands


def _checkpoints(played: Played, envs: list[Envelope], hands: list[dict[str, Any]],
                 seats: tuple[int, ...]) -> None:
    """Add each committed hand's state, its digest and the checkpoint statement computed
    from the envelopes by II.7's rule; check the id against what every holder signed."""
    config = played.config
    members = config.identities
    base = [next(e.seq for e in envs if e.author == member and e.kind == msg.ACCEPT)
            for member in members]
    expelled: set[int] = set()
    prev = bytes(32)
    for hand in hands:
        number = hand["hand"]
        if hand["outcome"] == "voided":
            expelled.update(hand["eliminated"])
            continue
        state = played.states[number]
        digest = hash32("table-state", canonical.encode(state))
        statement = checkpoint_statement(
            config, played.envelopes, hand=number, holders=hand["holders"], seats=seats,
            expelled=expelled, base=base, state=digest, prev=prev)
        signed = {canonical.get_bytes(e.body, "id", what="checkpoint") for e in envs
                  if e.kind == msg.CHECKPOINT and e.body.get("hand") == number}
        assert signed == {statement.id}, f"hand {number}: the cut rule of II.7 does not hold"
        assert statement.id.hex() == hand["checkpoint_id_hex"]
        hand["state"] = state
        hand["state_digest_hex"] = digest.hex()
        hand["checkpoint"] = statement.encode().decode()
        base = list(statement.cut.heads)
        prev = statement.id


def _log(played: Played) -> dict[str, Any]:
    data = played.log
    pos = 8
    records: list[dict[str, object]] = []
    for _ in range(LOG_RECORDS):
        n = int.from_bytes(data[pos:pos + 4], "big")
        payload = data[pos + 8:pos + 8 + n]
        crc = data[pos + 8 + n:pos + 12 + n]
        assert zlib.crc32(payload) == int.from_bytes(crc, "big")
        records.append({"type": payload[:1].decode(), "length": n,
                        "length_crc_hex": data[pos + 4:pos + 8].hex(),
                        "payload_crc_hex": crc.hex()})
        pos += 12 + n
    return {"member": 0, "head_hex": data[:pos].hex(), "records": records,
            "crc32_check": {"input_utf8": CRC_CHECK_INPUT.decode(),
                            "crc_hex": f"{zlib.crc32(CRC_CHECK_INPUT):08x}"}}


def _record(played: Played) -> dict[str, Any]:
    envs = _decoded(played)
    config = played.config
    gen = _genesis(played, envs)
    seats = tuple(gen["seats"])
    hands = _hands(played, envs, seats, gen["dealer"])
    _checkpoints(played, envs, hands, seats)
    game = played.nodes[0].view
    assert game is not None
    for node in played.nodes[1:]:
        theirs = [o.to_json() for o in node.outcomes]
        assert theirs == [o.to_json() for o in played.nodes[0].outcomes], node.name
    return {
        "name": played.spec.name,
        "mode": played.spec.mode,
        "seed_utf8": played.spec.seed.decode(),
        "members": [{
            "identity_seed_hex": m.seed.hex(),
            "identity": str(m.identity.public),
            "fingerprint": m.identity.public.fingerprint,
            "delivery_private_hex": m.delivery.private.hex(),
            "delivery_public_hex": m.delivery.public.hex(),
            "secret_seed_hex": m.secret.hex(),
            "seat": seats.index(i),
        } for i, m in enumerate(played.members)],
        "config": config.to_json(),
        "config_canonical": canonical.encode(config.to_json()).decode(),
        "genesis": gen,
        "envelopes": [w.decode() for w in played.envelopes],
        "hands": hands,
        "result": {"winner": game.game.winner, "chips": list(game.game.chips),
                   "pot": game.game.pot},
    }


def _check_audit(record: dict[str, Any]) -> None:
    facts = [f["fact"] for h in record["hands"] for f in h["facts"]
             if h["outcome"] == "committed"]
    want: dict[str, dict[str, object]] = {
        "a plain exchange": {"type": "answer", "shown": None},
        "a kille disclosed": {"type": "disclose", "kille": True},
        "förhand's cut": {"type": "cut"},
        "a stock draw": {"type": "stock"},
        "a buy-back": {"type": "buyin"},
    }
    for what, pattern in want.items():
        if not any(all(f.get(k) == v for k, v in pattern.items()) for f in facts):
            raise AssertionError(f"the audit vector game has no {what}")
    voided = [h for h in record["hands"] if h["outcome"] == "voided"]
    if len(voided) != 1 or not voided[0]["accusations"]:
        raise AssertionError("the audit vector game needs one hand voided by an accusation")


def _check_strict(record: dict[str, Any]) -> None:
    facts = [f["fact"] for h in record["hands"] for f in h["facts"]]
    if not any(f == {"type": "answer", "seat": f.get("seat"), "shown": None} for f in facts):
        raise AssertionError("the strict vector game has no proved plain answer")
    if not any(f.get("type") == "disclose" and f.get("kille") is False for f in facts):
        raise AssertionError("the strict vector game has no proved 'no kille'")


def generate() -> dict[str, Any]:
    """Both vector games, as the JSON object ``protocol/vectors/table.json`` holds."""
    records = []
    log: dict[str, Any] = {}
    for spec in GAMES:
        played = play(spec)
        record = _record(played)
        (_check_audit if spec.mode == "audit" else _check_strict)(record)
        records.append(record)
        if not log:
            log = _log(played)
    deck = card_deck()
    return {
        "description": "p2pkille table protocol vectors: docs/protocol.md Part II (II.14)",
        "regenerate": "python -m p2pkille.vectors --regenerate",
        "labels": {p: f"p2pkille-protocol/v1/{p}" for p in PART_II_LABELS},
        "deck": {
            "labels": list(deck.labels),
            "answering": [lab for i, lab in enumerate(deck.labels)
                          if DECK[i].rank in ANSWERING],
            "kille": [lab for i, lab in enumerate(deck.labels) if DECK[i].rank is Rank.KILLE],
        },
        "facts": [fact_to_dict(f) for f in EXAMPLE_FACTS],
        "stages": STAGES,
        "games": records,
        "log": log,
    }


#: Every label Part II hashes or derives with (docs II.9 and the label table of Part II).
PART_II_LABELS: Final = ("genesis-commit", "table-seed", "table-genesis", "table-state",
                         "runtime-secret", "hand-key")
#: One fact of every type (and every form of one), for its JSON form (II.4).
EXAMPLE_FACTS: Final[tuple[Fact, ...]] = (
    Deal(), Keep(0), Swap(1), Swap(2, pick=3), AskRedeal(0), Vote(1, VoteChoice.AGREE),
    Vote(2, VoteChoice.REFUSE), Vote(1, VoteChoice.DEPENDS), Sell(0, 2, 3),
    SaleAnswer(2, True), Cut(0, 3), BuyIn(1), Decline(2), Answer(1, None),
    Answer(1, Rank.KUKU), Disclosure(0, True), Disclosure(0, False),
    StockCard(2, Rank.TWELVE), Showdown((Rank.ONE, Rank.KILLE, Rank.BLAREN)),
)
#: The node's stages, the ``stage`` of a ``timeout`` or ``seen`` body (II.2).
STAGES: Final[dict[str, int]] = {stage.name.lower(): int(stage) for stage in Stage}
