"""protocol.deck: card encodings, masking, unbiased permutations, shuffle steps, witnesses."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleContext,
    ShuffleWitness,
    apply_witness,
    deck_digest,
    decode_deck,
    encode_deck,
    initial_deck,
    mask,
    random_permutation,
    remask,
    shuffle_step,
    uniform_below,
)
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.group import Point, Scalar
from protocol.rng import DeterministicRng
from tests.protocol.hand_fixture import make_deck, play_hand

G = Point.GENERATOR


def decrypt(ct: Ciphertext, x: Scalar) -> Point:
    return ct.c2 - ct.c1 * x


class TestDeck:
    def test_encodings_are_hash_to_group_of_labels(self) -> None:
        deck = Deck(("a", "b", "c"))
        assert deck.encodings == tuple(Point.from_hash("card", lab.encode()) for lab in "abc")
        assert len(set(deck.encodings)) == 3
        assert deck.index_of(deck.encodings[2]) == 2
        assert deck.index_of(G) is None
        assert len(deck) == 3

    def test_copies_of_a_face_are_distinct_points(self) -> None:
        deck = Deck(("kille#1", "kille#2"))
        assert deck.encodings[0] != deck.encodings[1]

    def test_equality_and_hash_by_labels(self) -> None:
        assert Deck(("a", "b")) == Deck(("a", "b"))
        assert hash(Deck(("a", "b"))) == hash(Deck(("a", "b")))
        assert Deck(("a", "b")) != Deck(("b", "a"))

    @pytest.mark.parametrize(
        "labels",
        [("a", "a"), ("a",), ("a", ""), ("a", "b\n"), ("a", "x" * 65), ["a", "b"],
         ("a", "kåve"), ("a", "\u00a0")],
    )
    def test_bad_decks(self, labels: tuple[str, ...]) -> None:
        with pytest.raises(InvalidEncoding):
            Deck(labels)


def test_initial_deck_is_public_and_decrypts_with_joint_secret() -> None:
    hand = play_hand(cards=6)
    start = initial_deck(hand.deck, hand.joint.public)
    x = sum((k.secret for k in hand.keys[1:]), hand.keys[0].secret)
    for j, ct in enumerate(start):
        assert ct.c1 == G
        assert ct.c2 == hand.deck.encodings[j] + hand.joint.public
        assert decrypt(ct, x) == hand.deck.encodings[j]


def test_mask_and_remask_keep_the_plaintext() -> None:
    x = Scalar.from_int(1234567)
    h = Point.base_mult(x)
    m = Point.from_hash("card", b"m")
    ct = mask(m, Scalar.from_int(5), h)
    assert ct.c1 == Point.base_mult(Scalar.from_int(5))
    again = remask(ct, Scalar.from_int(7), h)
    assert again.c1 == Point.base_mult(Scalar.from_int(12))
    assert decrypt(again, x) == m
    assert again != ct


def test_ciphertext_and_deck_round_trip() -> None:
    hand = play_hand(cards=5)
    raw = encode_deck(hand.final)
    assert len(raw) == 5 * 64
    assert decode_deck(raw, 5) == hand.final
    assert Ciphertext.from_bytes(hand.final[0].to_bytes()) == hand.final[0]
    with pytest.raises(InvalidEncoding):
        decode_deck(raw, 4)
    with pytest.raises(InvalidEncoding):
        decode_deck(raw[:-32] + bytes(32), 5)  # identity point inside
    assert deck_digest(hand.final) != deck_digest(hand.steps[0].deck)


def test_shuffle_step_permutes_and_remasks() -> None:
    hand = play_hand(seats=3, cards=8)
    x = sum((k.secret for k in hand.keys[1:]), hand.keys[0].secret)
    before = initial_deck(hand.deck, hand.joint.public)
    for step, witness in zip(hand.steps, hand.witnesses, strict=True):
        after = step.deck
        assert len(after) == len(before)
        assert not set(after) & set(before)  # every ciphertext re-masked
        for i, j in enumerate(witness.permutation):
            assert decrypt(after[i], x) == decrypt(before[j], x)
        assert apply_witness(before, hand.joint.public, witness) == after
        assert witness.commitment(step.context, before) == step.commitment
        before = after
    final_cards = [hand.deck.index_of(decrypt(ct, x)) for ct in hand.final]
    assert final_cards == hand.expected_cards()
    assert sorted(hand.expected_cards()) == list(range(8))


def test_witness_round_trip_and_commitment_binding() -> None:
    hand = play_hand(cards=6)
    w, step = hand.witnesses[1], hand.steps[1]
    raw = w.to_bytes()
    assert len(raw) == 32 + 34 * 6
    assert ShuffleWitness.from_bytes(raw, 6).to_bytes() == raw
    assert "hidden" in repr(w)
    deck_in = hand.steps[0].deck
    assert w.commitment(step.context, deck_in) == step.commitment
    other_ctx = ShuffleContext(step.context.hand, step.context.seat, step.context.step + 1)
    assert w.commitment(other_ctx, deck_in) != step.commitment
    other_salt = ShuffleWitness(bytes(32), w.permutation, w.scalars)
    assert other_salt.commitment(step.context, deck_in) != step.commitment
    # The commitment names the deck the step shuffled.
    assert w.commitment(step.context, hand.steps[1].deck) != step.commitment


def test_witness_decoding_rejects_garbage() -> None:
    w = play_hand(cards=4).witnesses[0]
    raw = w.to_bytes()
    with pytest.raises(InvalidEncoding):
        ShuffleWitness.from_bytes(raw, 5)
    not_perm = raw[:32] + b"\x00\x00" * 4 + raw[40:]
    with pytest.raises(InvalidEncoding, match="permutation"):
        ShuffleWitness.from_bytes(not_perm, 4)
    zero_scalar = raw[:40] + bytes(32) + raw[72:]
    with pytest.raises(InvalidEncoding):
        ShuffleWitness.from_bytes(zero_scalar, 4)
    with pytest.raises(LocalProtocolError):
        ShuffleWitness(bytes(32), (0, 0), (Scalar.from_int(1), Scalar.from_int(1)))
    with pytest.raises(LocalProtocolError):
        ShuffleWitness(bytes(31), (0, 1), (Scalar.from_int(1), Scalar.from_int(1)))


def test_apply_witness_checks_size() -> None:
    hand = play_hand(cards=4)
    with pytest.raises(LocalProtocolError):
        apply_witness(hand.final[:3], hand.joint.public, hand.witnesses[0])


class _Feed:
    """Yields the given byte strings in order, then fails."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    def randbytes(self, n: int) -> bytes:
        chunk = self.chunks.pop(0)
        assert len(chunk) == n
        return chunk


def test_uniform_below_is_exactly_uniform_over_every_byte() -> None:
    # Every one-byte draw 0..255 in turn; a redraw (value >= 252 for n = 42)
    # is fed a 0. Plain "v % 42" would give 0..3 seven times and the rest six.
    n = 42
    counts: Counter[int] = Counter()
    redraws = 0
    for v in range(256):
        feed = _Feed(bytes([v]), b"\x00")
        result = uniform_below(n, feed, width=1)
        if feed.chunks:
            counts[result] += 1
        else:
            redraws += 1
            assert result == 0
    assert redraws == 256 % n
    assert set(counts.values()) == {256 // n}
    assert len(counts) == n


def test_uniform_below_bounds() -> None:
    with pytest.raises(LocalProtocolError):
        uniform_below(0, DeterministicRng(b"u"))
    with pytest.raises(LocalProtocolError):
        uniform_below(257, DeterministicRng(b"u"), width=1)
    assert uniform_below(1, DeterministicRng(b"u")) == 0


def test_permutations_are_uniform() -> None:
    # 4! = 24 outcomes over 12000 draws: chi-square with 23 degrees of
    # freedom stays under 49.7 with probability 0.999 for a fair shuffle.
    rng = DeterministicRng(b"perm")
    draws = 12000
    seen = Counter(random_permutation(4, rng) for _ in range(draws))
    assert set(seen) == set(itertools.permutations(range(4)))
    expected = draws / 24
    chi2 = sum((c - expected) ** 2 / expected for c in seen.values())
    assert chi2 < 49.7


def test_biased_shuffle_would_fail_the_same_check() -> None:
    # The check has teeth: the classic wrong shuffle (swap with any index) is caught.
    rng = DeterministicRng(b"perm")
    draws = 12000
    seen: Counter[tuple[int, ...]] = Counter()
    for _ in range(draws):
        items = list(range(4))
        for i in range(4):
            j = uniform_below(4, rng)
            items[i], items[j] = items[j], items[i]
        seen[tuple(items)] += 1
    expected = draws / 24
    assert sum((c - expected) ** 2 / expected for c in seen.values()) > 49.7


def test_shuffle_is_deterministic_under_a_seed() -> None:
    a, b = play_hand(seed=b"same"), play_hand(seed=b"same")
    assert a.final == b.final
    assert play_hand(seed=b"other").final != a.final


def test_shuffle_step_from_an_arbitrary_deck() -> None:
    deck = make_deck(3)
    h = Point.base_mult(Scalar.from_int(77))
    start = initial_deck(deck, h)
    ctx = ShuffleContext(play_hand(cards=3).ctx, 0, 0)
    step, witness = shuffle_step(start, h, ctx, DeterministicRng(b"z"))
    assert step.context == ctx
    assert apply_witness(start, h, witness) == step.deck


@given(st.lists(st.text(max_size=70), max_size=6))
def test_arbitrary_labels_make_a_deck_or_a_remote_error(labels: list[str]) -> None:
    try:
        deck = Deck(tuple(labels))
    except RemoteProtocolError:
        return
    assert len(deck) == len(labels)
    assert [deck.index_of(p) for p in deck.encodings] == list(range(len(labels)))
