"""protocol/vectors/table.json checked the way a second implementation would: from the file
and docs/protocol.md Part II alone, with the Part I toolkit and no runtime or rules engine.

Every computation here is one the document defines (the section is named at each step):
the genesis, the seat numberings, each hand's keys, shuffle steps, deal boxes, opens,
forwards, proved claims, reveals, the state digest, the checkpoint's cut and signatures,
the secrets a member derives from its seed, and the log's framing."""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from protocol import canonical
from protocol.checkpoint import Checkpoint
from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    ShuffleWitness,
    decode_deck,
    initial_deck,
    random_permutation,
    uniform_below,
)
from protocol.domain import hash32, hash64
from protocol.envelope import Envelope, decode
from protocol.group import Point, Scalar
from protocol.identity import PublicKey
from protocol.keys import DeliveryKeyPair, HandContext, JointKey, PublicKeyShare, joint_key
from protocol.pet import PetClaim, PetContext, PetShare, pet_matches
from protocol.reveal import DecryptionShare, RevealContext, unmask
from protocol.rng import DeterministicRng
from protocol.seal import open_share, sealed_digest
from protocol.shuffle_proof import ShuffleProof, verify_shuffle
from protocol.transcript import Cut, Transcript
from protocol.vectors import VECTOR_DIR


@functools.cache
def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((VECTOR_DIR / "table.json").read_text("utf-8"))
    return doc


GAMES = [g["name"] for g in _doc()["games"]]


def _game(name: str) -> dict[str, Any]:
    return next(g for g in _doc()["games"] if g["name"] == name)


def _body(env: Envelope) -> Any:
    """An envelope's body, read as the document's tables say (the test fails on a bad one)."""
    return env.body


def _b(value: object) -> bytes:
    assert isinstance(value, str)
    return canonical.b64decode(value)


def test_the_deck_and_its_answering_ranks() -> None:
    # II.1: labels rank:copy, ranks weakest first, copy 1 then 2; answering ranks and the
    # killes are their copies in card order.
    deck = _doc()["deck"]
    ranks = ["blaren", "blompottan", "kransen", *[str(i) for i in range(1, 13)], "vardshus",
             "kavall", "husu", "husar", "kuku", "kille"]
    assert deck["labels"] == [f"{r}:{c}" for r in ranks for c in (1, 2)]
    assert deck["answering"] == [f"{r}:{c}" for r in ranks[-6:] for c in (1, 2)]
    assert deck["kille"] == ["kille:1", "kille:2"]


def test_the_labels_of_part_ii() -> None:
    for purpose, text in _doc()["labels"].items():
        assert text == f"p2pkille-protocol/v1/{purpose}"


def test_the_log_framing_and_its_crc() -> None:
    # II.12: magic, then u32 n | u32 crc32(n) | payload | u32 crc32(payload), CRC-32 as
    # zlib (ISO-HDLC): check value 0xcbf43926.
    log = _doc()["log"]
    assert f"{zlib.crc32(log['crc32_check']['input_utf8'].encode()):08x}" == "cbf43926"
    assert log["crc32_check"]["crc_hex"] == "cbf43926"
    data = bytes.fromhex(log["head_hex"])
    assert data[:8] == b"P2PKLOG\x01"
    pos = 8
    for record in log["records"]:
        n = int.from_bytes(data[pos:pos + 4], "big")
        assert record["length"] == n
        assert 1 <= n <= 2**20
        assert data[pos + 4:pos + 8] == zlib.crc32(data[pos:pos + 4]).to_bytes(4, "big")
        payload = data[pos + 8:pos + 8 + n]
        assert data[pos + 8 + n:pos + 12 + n] == zlib.crc32(payload).to_bytes(4, "big")
        assert payload[:1].decode() == record["type"]
        pos += 12 + n
    assert pos == len(data)
    header = canonical.decode_object(data[17:8 + 8 + log["records"][0]["length"]])
    game = _doc()["games"][0]
    secrets = game["members"][log["member"]]
    assert header["config"] == game["config"]
    assert _b(header["seed"]).hex() == secrets["secret_seed_hex"]
    assert _b(header["identity"]).hex() == secrets["identity_seed_hex"]
    assert _b(header["delivery"]).hex() == secrets["delivery_private_hex"]
    assert header["format"] == 1


def _secret(seed: bytes, purpose: str, *parts: bytes) -> bytes:
    """II.9: hash64("runtime-secret", seed, purpose, context...)."""
    return hash64("runtime-secret", seed, purpose.encode(), *parts)


def _u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


@dataclass
class _Hand:
    number: int
    holders: list[int]
    ctx: HandContext
    joint: JointKey | None = None
    final: tuple[Ciphertext, ...] = ()


class Follower:
    """Follows one vector game from the document's rules alone."""

    def __init__(self, game: dict[str, Any]) -> None:
        self.game = game
        config = game["config"]
        self.table = _b(config["table"])
        self.members = [PublicKey.from_text(m["identity"]) for m in config["members"]]
        self.strict = config.get("mode") == "strict"
        self.envs = [decode(w.encode(), table=self.table, members=self.members, kinds=None)
                     for w in game["envelopes"]]
        self.seats: list[int] = game["genesis"]["seats"]  # seat i is member seats[i]
        self.deck = Deck(tuple(_doc()["deck"]["labels"]))
        self.secrets = game["members"]
        self.checked: dict[str, int] = {}
        # II.7: a member's cut in the last counted checkpoint; at first its accept's seq.
        self.base = [next(e.seq for e in self.envs if e.author == m and e.kind == "accept")
                     for m in self.members]
        self.expelled: set[int] = set()
        self.prev = bytes(32)

    def count(self, what: str) -> None:
        self.checked[what] = self.checked.get(what, 0) + 1

    def seat_of(self, env: Envelope) -> int:
        return self.seats.index(self.members.index(env.author))

    def of_hand(self, number: int, kind: str) -> Iterator[Envelope]:
        return (e for e in self.envs if e.kind == kind and _body(e).get("hand") == number)

    # II.1 and II.3

    def check_genesis(self) -> None:
        gen = self.game["genesis"]
        raws = [m.raw for m in self.members]
        assert raws == sorted(raws), "member order is ascending identity key bytes"
        commits = {e.author: _b(_body(e)["commit"]) for e in self.envs if e.kind == "commit"}
        nonces = {e.author: _b(_body(e)["nonce"]) for e in self.envs if e.kind == "nonce"}
        for i, member in enumerate(self.members):
            secret = bytes.fromhex(self.secrets[i]["secret_seed_hex"])
            nonce = _secret(secret, "genesis-nonce")[:32]  # II.9
            assert nonces[member] == nonce
            assert commits[member] == hash32("genesis-commit", nonce)
        seed = hash32("table-seed", self.table, *(nonces[m] for m in self.members))
        assert seed.hex() == gen["seed_hex"]
        rng = DeterministicRng(seed)
        perm = random_permutation(len(self.members), rng)
        dealer = uniform_below(len(self.members), rng)
        assert (list(perm), dealer) == (gen["seats"], gen["dealer"])
        document = canonical.encode({"config": self.game["config"], "dealer": dealer,
                                     "seats": list(perm), "seed": canonical.b64encode(seed)})
        assert document.decode() == gen["document"]
        digest = hash32("table-genesis", document)
        for env in self.envs:
            if env.kind in ("commit", "nonce", "accept"):
                assert _body(env)["hand"] == 0
            if env.kind == "accept":
                assert _b(_body(env)["genesis"]) == digest

    # II.4, one hand

    def check_hand(self, record: dict[str, Any]) -> None:
        number = record["hand"]
        hand = _Hand(number, record["holders"], HandContext(self.table, number))
        self.check_keys(hand)
        self.check_shuffle(hand)
        self.check_deal(hand)
        self.check_facts(hand, record)
        self.check_forwards(hand)
        if record["outcome"] == "committed":
            self.check_reveals(hand, record)
        else:
            self.check_void(hand, record)

    def holder_member(self, hand: _Hand, k: int) -> int:
        return self.seats[hand.holders[k]]

    def check_keys(self, hand: _Hand) -> None:
        shares = []
        for k in range(len(hand.holders)):
            member = self.holder_member(hand, k)
            env = next(e for e in self.of_hand(hand.number, "key")
                       if e.author == self.members[member])
            share = PublicKeyShare.from_bytes(k, _b(_body(env)["share"]))  # protocol seat k
            share.verify(hand.ctx)
            # II.9: x = Hs("hand-key", hash64("runtime-secret", seed, "hand-key", u64(n)))
            seed = bytes.fromhex(self.secrets[member]["secret_seed_hex"])
            x = Scalar.from_hash("hand-key", _secret(seed, "hand-key", _u64(hand.number)))
            assert Point.base_mult(x) == share.public
            shares.append(share)
        hand.joint = joint_key(hand.ctx, shares)

    def check_shuffle(self, hand: _Hand) -> None:
        assert hand.joint is not None
        deck = initial_deck(self.deck, hand.joint.public)
        steps = list(self.of_hand(hand.number, "shuffle"))
        assert [self.seat_of(e) for e in steps] == hand.holders  # step k by holder k
        for k, env in enumerate(steps):
            out = decode_deck(_b(_body(env)["deck"]), len(self.deck))
            assert _b(_body(env)["input"]) == hash32("deck", b"".join(
                c.c1.data + c.c2.data for c in deck))
            ctx = ShuffleContext(hand.ctx, k, k)
            if self.strict:
                assert "commit" not in _body(env)
                proof = ShuffleProof.from_bytes(_b(_body(env)["proof"]), len(self.deck))
                verify_shuffle(ctx, hand.joint.public, deck, out, proof)
                self.count("shuffle proof")
            else:
                assert "proof" not in _body(env)
                assert len(_b(_body(env)["commit"])) == 32
            deck = out
        hand.final = deck

    def check_deal(self, hand: _Hand) -> None:
        assert hand.joint is not None
        for env in self.of_hand(hand.number, "deal"):
            k = hand.holders.index(self.seat_of(env))
            boxes = _body(env)["boxes"]
            assert isinstance(boxes, list)
            want = [(j, hand.holders[j]) for j in range(len(hand.holders)) if j != k]
            assert sorted((b["token"], b["for"]) for b in boxes) == want
            for box in boxes:
                assert box["by"] == k
                self.open_box(hand, box, to=box["for"])
                self.count("deal box")

    def open_box(self, hand: _Hand, box: dict[str, Any], to: int) -> DecryptionShare:
        """Open a box sealed to table seat ``to`` with its context (token, by, for)."""
        assert hand.joint is not None
        secrets = self.secrets[self.seats[to]]
        key = DeliveryKeyPair.from_private(bytes.fromhex(secrets["delivery_private_hex"]))
        ctx = RevealContext(hand.ctx, box["token"], box["by"], box["for"])
        share = open_share(key, ctx, _b(box["box"]))
        assert sealed_digest(ctx.header(), share.to_bytes()) == _b(box["digest"])
        share.verify(hand.joint.share_of(box["by"]), hand.final[box["token"]])
        return share

    def open_public(self, hand: _Hand, entries: list[dict[str, Any]], slot: int) -> str:
        """A public open: one share per key holder, each with its own context."""
        assert hand.joint is not None
        assert sorted(e["by"] for e in entries) == list(range(len(hand.holders)))
        values = []
        for entry in entries:
            share = DecryptionShare.from_bytes(
                RevealContext(hand.ctx, slot, entry["by"], entry["for"]), _b(entry["share"]))
            share.verify(hand.joint.share_of(entry["by"]), hand.final[slot])
            values.append(share.value)
        point = unmask(hand.final[slot], values)
        assert point is not None
        self.count("public open")
        index = self.deck.index_of(point)
        assert index is not None
        return self.deck.labels[index]

    def check_facts(self, hand: _Hand, record: dict[str, Any]) -> None:
        assert hand.joint is not None
        rank = _rank
        for item in record["facts"]:
            fact = item["fact"]
            kind = fact["type"]
            envs = [self.envs[i] for i in item.get("envelopes", [])]
            if kind in ("keep", "swap", "redeal", "sell", "vote", "sale", "cut", "buyin",
                        "decline"):
                (env,) = envs
                assert env.kind == "act"
                assert _body(env)["fact"] == fact
                assert _body(env)["at"] == item["at"]
                assert self.seat_of(env) == fact["seat"]
            elif kind in ("answer", "disclose"):
                (env,) = envs
                assert self.seat_of(env) == fact["seat"]
                shown = fact["shown"] if kind == "answer" else ("kille" if fact["kille"]
                                                                else None)
                if shown is not None:
                    assert "pet" not in _body(env)
                    assert rank(self.open_public(hand, _body(env)["shares"], item["slot"])) \
                        == shown
                elif self.strict:
                    self.check_claim(hand, env, item, b"answer" if kind == "answer"
                                     else b"disclose")
                else:
                    assert "pet" not in _body(env)
                    assert "shares" not in _body(env)
            elif kind == "stock":
                assert sorted(self.seat_of(e) for e in envs) == sorted(hand.holders)
                entries = []
                for env in envs:
                    assert _body(env)["token"] == item["slot"]
                    entries.append({"by": hand.holders.index(self.seat_of(env)), "for": None,
                                    "share": _body(env)["share"]})
                assert rank(self.open_public(hand, entries, item["slot"])) == fact["rank"]
            elif kind == "showdown":
                shown = {self.seat_of(e): e for e in envs}
                for seat, slot, face in zip(item["seats"], item["slots"], fact["ranks"],
                                            strict=True):
                    label = self.open_public(hand, _body(shown[seat])["shares"], slot)
                    assert rank(label) == face

    def check_claim(self, hand: _Hand, env: Envelope, item: dict[str, Any], purpose: bytes
                    ) -> None:
        """II.13: PetContext(hand, slot, prover, purpose, sequence = the fact's count)."""
        assert hand.joint is not None
        prover = hand.holders.index(self.seat_of(env))
        ranks = _doc()["deck"]["answering" if purpose == b"answer" else "kille"]
        excluded = [self.deck.encodings[self.deck.labels.index(lab)] for lab in ranks]
        ctx = PetContext(hand.ctx, item["slot"], prover, purpose, item["at"])
        claim = PetClaim.from_bytes(ctx, _b(_body(env)["pet"]), len(excluded))
        claim.verify(hand.final[item["slot"]], excluded, hand.joint.share_of(prover))
        parts = [e for e in self.of_hand(hand.number, "pet") if _body(e)["at"] == item["at"]]
        assert sorted(hand.holders.index(self.seat_of(e)) for e in parts) == [
            k for k in range(len(hand.holders)) if k != prover]
        shares = []
        for part in parts:
            k = hand.holders.index(self.seat_of(part))
            share = PetShare.from_bytes(claim, k, _b(_body(part)["share"]))
            share.verify(claim, hand.joint.share_of(k))
            shares.append(share)
        assert pet_matches(claim, shares, holders=len(hand.holders)) == ()
        self.count("proved claim")

    def check_forwards(self, hand: _Hand) -> None:
        for env in self.of_hand(hand.number, "forward"):
            boxes = _body(env)["boxes"]
            assert isinstance(boxes, list)
            assert boxes
            for box in boxes:
                assert box["token"] == _body(env)["token"]
                self.open_box(hand, box, to=_body(env)["to"])  # sealed to the seat `to`
                self.count("forward box")

    def check_reveals(self, hand: _Hand, record: dict[str, Any]) -> None:
        assert hand.joint is not None
        x = Scalar.from_int(0)
        for env in self.of_hand(hand.number, "reveal"):
            k = hand.holders.index(self.seat_of(env))
            if self.strict:
                assert set(_body(env)) == {"hand"}
                continue
            secret = Scalar.from_bytes(_b(_body(env)["secret"]))
            assert Point.base_mult(secret) == hand.joint.share_of(k)
            x = x + secret
            steps = list(self.of_hand(hand.number, "shuffle"))
            deck_in = (initial_deck(self.deck, hand.joint.public) if k == 0 else
                       decode_deck(_b(_body(steps[k - 1])["deck"]), len(self.deck)))
            witness = ShuffleWitness.from_bytes(_b(_body(env)["witness"]), len(self.deck))
            assert witness.commitment(ShuffleContext(hand.ctx, k, k), deck_in) == \
                _b(_body(steps[k])["commit"])
        if not self.strict:
            indices = [self.deck.index_of(ct.c2 - ct.c1 * x) for ct in hand.final]
            faces = [self.deck.labels[i] if i is not None else None for i in indices]
            assert faces == record["faces"]
        self.check_checkpoint(hand, record)

    def check_checkpoint(self, hand: _Hand, record: dict[str, Any]) -> None:
        # II.8: the state digest; II.7: the statement, signed by every key holder.
        digest = hash32("table-state", canonical.encode(record["state"]))
        assert digest.hex() == record["state_digest_hex"]
        statement = record["checkpoint"].encode()
        cp = Checkpoint.decode(statement, table=self.table, members=self.members)
        assert cp.state == digest
        assert cp.hand == hand.number
        assert cp.id.hex() == record["checkpoint_id_hex"]
        transcript = Transcript(table=self.table, members=self.members, kinds=None)
        for env in self.envs:
            transcript.receive(env.wire)
        assert transcript.root(Cut(cp.cut.heads)) == cp.root
        signers = set()
        for env in self.of_hand(hand.number, "checkpoint"):
            assert _b(_body(env)["id"]) == cp.id
            env.author.verify("checkpoint", statement, _b(_body(env)["sig"]))
            signers.add(self.seat_of(env))
        assert signers == set(hand.holders)
        for m, head in enumerate(cp.cut.heads):
            seat = self.seats.index(m)
            if seat in hand.holders:  # a key holder's cut is the seq of its reveal
                reveal = next(e for e in self.of_hand(hand.number, "reveal")
                              if e.author == self.members[m])
                assert head == reveal.seq
            elif seat in self.expelled:
                assert head == 0
            else:  # its last act the hand applied, else its cut in the last checkpoint
                acts = [e.seq for e in self.of_hand(hand.number, "act")
                        if e.author == self.members[m]]
                assert head == max(acts, default=self.base[m])
                self.count("cut of a member without a key")
        self.base = list(cp.cut.heads)
        assert cp.prev == self.prev
        self.prev = cp.id
        self.count("checkpoint")

    def check_void(self, hand: _Hand, record: dict[str, Any]) -> None:
        # II.11.1: every holder accuses; the evidence of each accusation is an envelope
        # of the accused; no checkpoint is made.
        assert not list(self.of_hand(hand.number, "checkpoint"))
        accusers = set()
        for env in self.of_hand(hand.number, "accuse"):
            accusers.add(self.seat_of(env))
            for acc in _body(env)["accusations"]:
                assert acc["accused"] in record["eliminated"]
                evidence = decode(_b(acc["evidence"]), table=self.table,
                                  members=self.members, kinds=None)
                assert self.seat_of(evidence) == acc["accused"]
        assert accusers == set(hand.holders)
        self.expelled.update(record["eliminated"])
        self.count("void")
        # The verdict: one value, precommitted by a strict majority of its voters (the
        # holders the hand's decided void did not time out), and every seat it times
        # out or blames is expelled.
        void = {_body(e)["value"] for e in self.of_hand(hand.number, "vote")
                if "of" not in _body(e) and _body(e)["step"] == "precommit"
                and _body(e)["value"] is not None}
        assert len(void) == 1
        (void_text,) = void
        timed_out = {int(s) for s in void_text.split(":")[1].split(",") if s}
        voters = set(hand.holders) - timed_out
        verdicts = [e for e in self.of_hand(hand.number, "vote")
                    if _body(e).get("of") == "verdict" and _body(e)["step"] == "precommit"
                    and _body(e)["value"] is not None]
        assert len({_body(e)["value"] for e in verdicts}) == 1
        assert 2 * len({self.seat_of(e) for e in verdicts}) > len(voters)
        _ids, out, blamed = _body(verdicts[0])["value"].split(":")[1].split(";")
        assert {int(s) for s in f"{out},{blamed}".split(",") if s} <= set(
            record["eliminated"])


def _rank(label: str) -> str:
    return label.split(":", maxsplit=1)[0]


@pytest.mark.parametrize("name", GAMES)
def test_a_game_follows_the_document(name: str) -> None:
    follower = Follower(_game(name))
    follower.check_genesis()
    for record in _game(name)["hands"]:
        follower.check_hand(record)
    seen = set(follower.checked)
    want = {"deal box", "forward box", "public open", "checkpoint"}
    want |= {"proved claim", "shuffle proof"} if name == "strict" else {"void"}
    assert want <= seen, (want - seen, follower.checked)


def test_the_rng_of_a_node_is_the_deterministic_rng_of_its_secret() -> None:
    # II.9: a purpose's randomness is DeterministicRng(hash64("runtime-secret", seed,
    # purpose, u64 context...)); the key proof of hand n draws 32 bytes from "key-proof".
    game = _game(GAMES[0])
    member = 0
    seed = bytes.fromhex(game["members"][member]["secret_seed_hex"])
    follower = Follower(game)
    hand = game["hands"][0]
    number = hand["hand"]
    k = hand["holders"].index(follower.seats.index(member))
    x = Scalar.from_hash("hand-key", _secret(seed, "hand-key", _u64(number)))
    rng = DeterministicRng(_secret(seed, "key-proof", _u64(number)))
    ctx = HandContext(follower.table, number)
    w = Scalar.from_hash("key-share-pok-nonce", x.data, rng.randbytes(32), *ctx.parts(),
                         _u64(k), Point.base_mult(x).data)
    env = next(e for e in follower.of_hand(number, "key")
               if e.author == follower.members[member])
    share = PublicKeyShare.from_bytes(k, _b(_body(env)["share"]))
    c = share.proof.challenge
    assert (w + c * x) == share.proof.response


def test_a_members_witness_and_deal_boxes_come_from_its_seed() -> None:
    # II.9: the witness is ShuffleWitness drawn from rng("shuffle", n), each deal box's
    # one-time key the 32 bytes of rng("seal-deal-j", n, j, holders[j]).
    game = _game("audit")
    follower = Follower(game)
    hand = game["hands"][0]
    number = hand["hand"]
    for member, secrets in enumerate(game["members"]):
        seed = bytes.fromhex(secrets["secret_seed_hex"])
        seat = follower.seats.index(member)
        reveal = next(e for e in follower.of_hand(number, "reveal")
                      if e.author == follower.members[member])
        witness = ShuffleWitness.generate(
            len(follower.deck), DeterministicRng(_secret(seed, "shuffle", _u64(number))))
        assert witness.to_bytes() == _b(_body(reveal)["witness"])
        deal = next(e for e in follower.of_hand(number, "deal")
                    if e.author == follower.members[member])
        assert seat in hand["holders"]
        for box in _body(deal)["boxes"]:
            j, to = box["token"], box["for"]
            rng = DeterministicRng(_secret(seed, f"seal-deal-{j}", _u64(number), _u64(j),
                                           _u64(to)))
            ephemeral = DeliveryKeyPair.generate(rng)
            assert _b(box["box"])[:32] == ephemeral.public  # the box starts with E
