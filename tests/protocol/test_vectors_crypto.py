"""protocol/vectors/crypto.json: recomputed byte for byte, and checked from the file alone."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from protocol import domain
from protocol.deck import Ciphertext, Deck, ShuffleContext, ShuffleWitness, apply_witness
from protocol.errors import RemoteProtocolError
from protocol.group import Point, Scalar
from protocol.keys import DeliveryKeyPair, HandContext, PublicKeyShare, joint_key
from protocol.reveal import DecryptionShare, RevealContext
from protocol.seal import open_share, sealed_digest
from protocol.vectors import dumps, generate, load


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return load("crypto")


def test_regenerates_byte_for_byte(doc: dict[str, Any]) -> None:
    fresh = generate("crypto")
    assert fresh == doc
    assert dumps(fresh) == dumps(doc)


def test_file_is_what_dumps_writes() -> None:
    from protocol.vectors import VECTOR_DIR

    assert (VECTOR_DIR / "crypto.json").read_text("utf-8") == dumps(generate("crypto"))


def _ctx(doc: dict[str, Any]) -> HandContext:
    return HandContext(bytes.fromhex(doc["hand"]["table_id_hex"]), doc["hand"]["hand"])


def test_labels_and_hash_to_group(doc: dict[str, Any]) -> None:
    for purpose, text in doc["labels"].items():
        assert text == f"p2pkille-protocol/v1/{purpose}"
    for item in doc["hash_to_group"]:
        # uniform = SHA-512(u64be(len(label)) || label || u64be(len(name)) || name)
        lab = doc["labels"]["card"].encode()
        name = item["label"].encode()
        manual = hashlib.sha512(
            len(lab).to_bytes(8, "big") + lab + len(name).to_bytes(8, "big") + name
        ).digest()
        assert manual.hex() == item["uniform_hex"]
        assert Point.from_uniform(manual).hex() == item["point_hex"]


def test_key_shares_from_the_file(doc: dict[str, Any]) -> None:
    ctx = _ctx(doc)
    pubs = []
    for item in doc["key_shares"]:
        x = Scalar.from_wide(bytes.fromhex(item["secret_random_hex"]))
        assert x.hex() == item["secret_hex"]
        assert Point.base_mult(x).hex() == item["public_hex"]
        pub = PublicKeyShare.from_bytes(item["seat"], bytes.fromhex(item["wire_hex"]))
        pub.verify(ctx)
        assert pub.proof.challenge.hex() == item["proof_challenge_hex"]
        # Recompute the hedged nonce and the response from the spec.
        w = Scalar.from_hash(
            "key-share-pok-nonce", x.data, bytes.fromhex(item["nonce_random_hex"]),
            *ctx.parts(), item["seat"].to_bytes(8, "big"), pub.public.data,
        )
        c = Scalar.fromhex(item["proof_challenge_hex"])
        assert (w + c * x).hex() == item["proof_response_hex"]
        pubs.append(pub)
        with pytest.raises(RemoteProtocolError):
            pub.verify(HandContext(ctx.table_id, ctx.hand + 1))
    assert joint_key(ctx, pubs).public.hex() == doc["joint_key_hex"]


def test_masking(doc: dict[str, Any]) -> None:
    m = doc["masking"]
    h = Point.fromhex(m["joint_key_hex"])
    ct = Ciphertext.from_bytes(bytes.fromhex(m["ciphertext_hex"]))
    r = Scalar.fromhex(m["r_hex"])
    assert ct.c1 == Point.base_mult(r)
    assert ct.c2 == Deck((m["message_label"], "x")).encodings[0] + h * r
    again = Ciphertext.from_bytes(bytes.fromhex(m["remasked_hex"]))
    assert again.c1 == ct.c1 + Point.base_mult(Scalar.fromhex(m["remask_r_hex"]))


def test_shuffle_and_deal_from_the_file(doc: dict[str, Any]) -> None:
    ctx = _ctx(doc)
    labels = tuple(item["label"] for item in doc["hash_to_group"])
    deck = Deck(labels)
    h = Point.fromhex(doc["joint_key_hex"])
    current = tuple(Ciphertext.from_bytes(bytes.fromhex(c)) for c in doc["initial_deck"])
    g = Point.GENERATOR
    assert current == tuple(Ciphertext(g, m + h) for m in deck.encodings)
    for item in doc["shuffle_steps"]:
        witness = ShuffleWitness.from_bytes(bytes.fromhex(item["witness_hex"]), len(deck))
        assert list(witness.permutation) == item["permutation"]
        sctx = ShuffleContext(ctx, item["seat"], item["step"])
        deck_in = b"".join(ct.c1.data + ct.c2.data for ct in current)
        manual = domain.hash32("shuffle-commit", *sctx.parts(),
                               domain.hash32("deck", deck_in), witness.to_bytes())
        assert manual.hex() == item["commitment_hex"]
        published = tuple(Ciphertext.from_bytes(bytes.fromhex(c)) for c in item["deck"])
        assert apply_witness(current, h, witness) == published
        current = published
    x = Scalar.fromhex(doc["key_shares"][0]["secret_hex"])
    for item in doc["key_shares"][1:]:
        x = x + Scalar.fromhex(item["secret_hex"])
    cards = [deck.index_of(ct.c2 - ct.c1 * x) for ct in current]
    assert cards == doc["audit_cards"]
    assert sorted(doc["audit_cards"]) == list(range(len(deck)))

    publics = [Point.fromhex(k["public_hex"]) for k in doc["key_shares"]]
    delivery = [DeliveryKeyPair.from_private(bytes.fromhex(d["private_hex"]))
                for d in doc["delivery_keys"]]
    for deal in doc["private_deals"]:
        assert deal["card"] == cards[deal["slot"]]
        for item in deal["shares"]:
            rctx = RevealContext(ctx, item["slot"], item["sender"], item["recipient"])
            assert rctx.header().hex() == item["context_header_hex"]
            box = bytes.fromhex(item["sealed"]["box_hex"])
            assert box[:32] == DeliveryKeyPair.from_private(
                bytes.fromhex(item["sealed"]["ephemeral_private_hex"])).public
            share = open_share(delivery[item["recipient"]], rctx, box)
            assert share.to_bytes().hex() == item["wire_hex"]
            share.verify(publics[item["sender"]], current[item["slot"]])
            digest = sealed_digest(rctx.header(), share.to_bytes())
            assert digest.hex() == item["sealed"]["digest_hex"]
    for item in doc["public_open"]["shares"]:
        rctx = RevealContext(ctx, item["slot"], item["sender"], None)
        share = DecryptionShare.from_bytes(rctx, bytes.fromhex(item["wire_hex"]))
        share.verify(publics[item["sender"]], current[item["slot"]])
    assert doc["public_open"]["card"] == cards[doc["public_open"]["slot"]]


def test_every_label_in_the_code_is_specified_and_in_the_vectors(doc: dict[str, Any]) -> None:
    root = Path(__file__).resolve().parents[2]
    pattern = re.compile(r'(?:from_hash|hash32|hash64|label)\(\s*"([a-z0-9-]+)"')
    used: set[str] = set()
    for module in ("group", "keys", "deck", "reveal", "seal", "audit"):
        used |= set(pattern.findall((root / "protocol" / f"{module}.py").read_text("utf-8")))
    assert used == set(doc["labels"])
    spec = (root / "docs" / "protocol.md").read_text("utf-8")
    table = set(re.findall(r"^\| `([a-z0-9-]+)` ", spec, flags=re.M))
    assert used <= table, used - table


def test_deterministic_rng_and_the_draws_of_5_3_from_the_file(doc: dict[str, Any]) -> None:
    # Section 1: key = SHA-512(label("rng-seed") || seed), raw concatenation; block t =
    # SHA-512(key || u64(t)); the stream is the blocks in order, read front to back.
    rng = doc["deterministic_rng"]
    key = hashlib.sha512(b"p2pkille-protocol/v1/rng-seed" + rng["seed_utf8"].encode()).digest()
    assert key.hex() == rng["key_hex"]
    stream = b"".join(hashlib.sha512(key + t.to_bytes(8, "big")).digest() for t in range(3))
    assert stream[:160].hex() == rng["stream_hex"]
    # uniform_below (5.3): 4 bytes big-endian, redrawn at or above 2^32 - (2^32 mod m).
    drawn = b""
    for case in rng["uniform_below"]:
        m = case["bound"]
        limit = 2**32 - 2**32 % m
        values = [int(d, 16) for d in case["draws_hex"]]
        assert all(v >= limit for v in values[:-1])
        assert values[-1] < limit
        assert values[-1] % m == case["value"]
        drawn += b"".join(bytes.fromhex(d) for d in case["draws_hex"])
    assert any(len(c["draws_hex"]) > 1 for c in rng["uniform_below"]), "no rejection shown"
    # Fisher-Yates from index n-1 down to 1, on the draws that follow in the same stream.
    perm = rng["permutation"]
    items = list(range(perm["n"]))
    draws = iter(perm["draws_hex"])
    for i in range(perm["n"] - 1, 0, -1):
        m = i + 1
        while (v := int(next(draws), 16)) >= 2**32 - 2**32 % m:
            pass
        j = v % m
        items[i], items[j] = items[j], items[i]
    assert items == perm["value"]
    drawn += b"".join(bytes.fromhex(d) for d in perm["draws_hex"])
    assert stream.startswith(drawn)
