"""protocol.reveal: DLEQ shares, replay and tamper rejection, opening, forwarding, swaps."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.deck import Ciphertext, mask
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.group import GROUP_ORDER, Point, Scalar, Workers
from protocol.keys import DeliveryKeyPair, HandContext, KeyShare
from protocol.reveal import (
    BadShare,
    DecryptionShare,
    DleqProof,
    RevealContext,
    open_card,
    unmask,
    verify_shares,
)
from protocol.seal import open_share, seal_share
from tests.protocol.hand_fixture import Hand, play_hand


def share_for(hand: Hand, slot: int, sender: int, recipient: int | None) -> DecryptionShare:
    ctx = RevealContext(hand.ctx, slot, sender, recipient)
    return DecryptionShare.make(hand.keys[sender], hand.final[slot], ctx, hand.rng)


@pytest.fixture(scope="module")
def hand() -> Hand:
    return play_hand(seats=3, cards=8)


def test_share_verifies_and_is_x_times_c1(hand: Hand) -> None:
    share = share_for(hand, 2, 1, None)
    assert share.value == hand.final[2].c1 * hand.keys[1].secret
    share.verify(hand.joint.share_of(1), hand.final[2])
    raw = share.to_bytes()
    assert len(raw) == DecryptionShare.SIZE
    assert DecryptionShare.from_bytes(share.context, raw) == share


def test_public_open_decodes_the_card(hand: Hand) -> None:
    expected = hand.expected_cards()
    for slot in range(len(hand.deck)):
        shares = [share_for(hand, slot, s, None) for s in range(3)]
        assert open_card(hand.final[slot], shares, hand.joint, hand.deck) == expected[slot]


def test_private_open_with_own_key(hand: Hand) -> None:
    slot = 4
    others = [share_for(hand, slot, s, 0) for s in (1, 2)]
    card = open_card(hand.final[slot], others, hand.joint, hand.deck, own=hand.keys[0])
    assert card == hand.expected_cards()[slot]


def test_every_flipped_bit_is_rejected(hand: Hand) -> None:
    share = share_for(hand, 3, 2, 1)
    raw = share.to_bytes()
    for bit in range(len(raw) * 8):
        tampered = bytearray(raw)
        tampered[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(RemoteProtocolError):
            DecryptionShare.from_bytes(share.context, bytes(tampered)).verify(
                hand.joint.share_of(2), hand.final[3]
            )


@pytest.mark.parametrize(
    "change",
    [
        {"hand": HandContext(b"table-1", 8)},  # other hand
        {"hand": HandContext(b"table-2", 7)},  # other table
        {"slot": 4},  # other slot
        {"sender": 0},  # other sender
        {"recipient": 2},  # other recipient
        {"recipient": None},  # replayed as a public open
    ],
)
def test_proof_replayed_in_another_context_is_rejected(
    hand: Hand, change: dict[str, object]
) -> None:
    share = share_for(hand, 3, 1, 0)
    moved = replace(share, context=replace(share.context, **change))  # type: ignore[arg-type]
    with pytest.raises(BadShare):
        moved.verify(hand.joint.share_of(1), hand.final[3])


def test_share_from_the_wrong_key_is_rejected(hand: Hand) -> None:
    share = share_for(hand, 3, 1, None)
    with pytest.raises(BadShare) as info:
        share.verify(hand.joint.share_of(2), hand.final[3])
    assert info.value.sender == 1
    # A seat using a key other than its announced one cannot pass either.
    impostor = KeyShare.generate(1, hand.rng)
    fake = DecryptionShare.make(impostor, hand.final[3], share.context, hand.rng)
    with pytest.raises(BadShare):
        fake.verify(hand.joint.share_of(1), hand.final[3])


def test_share_for_another_ciphertext_is_rejected(hand: Hand) -> None:
    share = share_for(hand, 3, 1, None)
    with pytest.raises(BadShare):
        share.verify(hand.joint.share_of(1), hand.final[4])


def test_wrong_value_with_honest_looking_proof_is_rejected(hand: Hand) -> None:
    share = share_for(hand, 3, 1, None)
    shifted = replace(share, value=share.value + Point.GENERATOR)
    with pytest.raises(BadShare):
        shifted.verify(hand.joint.share_of(1), hand.final[3])
    zero = Scalar.from_bytes(bytes(32), allow_zero=True)
    zero_c = replace(share, proof=DleqProof(zero, Scalar.from_int(1)))
    with pytest.raises(BadShare):
        zero_c.verify(hand.joint.share_of(1), hand.final[3])


def test_open_card_rejects_a_bad_share_and_incomplete_sets(hand: Hand) -> None:
    slot = 1
    shares = [share_for(hand, slot, s, None) for s in range(3)]
    bad = replace(shares[2], value=shares[2].value + Point.GENERATOR)
    with pytest.raises(BadShare):
        open_card(hand.final[slot], [*shares[:2], bad], hand.joint, hand.deck)
    with pytest.raises(LocalProtocolError, match="every seat"):
        open_card(hand.final[slot], shares[:2], hand.joint, hand.deck)
    with pytest.raises(LocalProtocolError, match="two shares"):
        open_card(hand.final[slot], [*shares, shares[0]], hand.joint, hand.deck)
    with pytest.raises(LocalProtocolError, match="two shares"):
        open_card(hand.final[slot], shares, hand.joint, hand.deck, own=hand.keys[0])
    other_slot = share_for(hand, 2, 2, None)
    with pytest.raises(LocalProtocolError, match="different slots"):
        open_card(hand.final[slot], [*shares[:2], other_slot], hand.joint, hand.deck)
    with pytest.raises(LocalProtocolError):
        DecryptionShare.make(hand.keys[0], hand.final[slot], shares[1].context, hand.rng)


def test_not_a_card(hand: Hand) -> None:
    stranger = mask(Point.from_hash("card", b"joker"), Scalar.from_int(3), hand.joint.public)
    shares = [
        DecryptionShare.make(hand.keys[s], stranger, RevealContext(hand.ctx, 0, s, None), hand.rng)
        for s in range(3)
    ]
    assert open_card(stranger, shares, hand.joint, hand.deck) is None
    # C2 equal to the sum of the shares: the plaintext would be the identity.
    values = [s.value for s in shares]
    assert unmask(Ciphertext(stranger.c1, Point.sum(values)), values) is None


def test_forwarded_share_verifies_for_anyone(hand: Hand) -> None:
    # Seat 1 made a share for seat 0; seat 0 forwards the bytes to seat 2,
    # who checks it against seat 1's key exactly as seat 0 did.
    share = share_for(hand, 5, 1, 0)
    forwarded = DecryptionShare.from_bytes(share.context, share.to_bytes())
    forwarded.verify(hand.joint.share_of(1), hand.final[5])


def test_card_moves_between_players_privately(hand: Hand) -> None:
    """A swap: seat 0 holds slot 1, seat 1 holds slot 2; they exchange cards.

    Each learns the other's card; seat 2 sees only sealed boxes and cannot
    open either card without the holders' own shares.
    """
    delivery = [DeliveryKeyPair.generate(hand.rng) for _ in range(3)]
    expected = hand.expected_cards()

    def deal(slot: int, holder: int) -> list[DecryptionShare]:
        received = []
        for sender in range(3):
            if sender == holder:
                continue
            share = share_for(hand, slot, sender, holder)
            box, _digest = seal_share(share, delivery[holder].public, hand.rng)
            received.append(open_share(delivery[holder], share.context, box))
        return received

    held = {0: deal(1, 0), 1: deal(2, 1)}
    assert open_card(hand.final[1], held[0], hand.joint, hand.deck, own=hand.keys[0]) == expected[1]
    assert open_card(hand.final[2], held[1], hand.joint, hand.deck, own=hand.keys[1]) == expected[2]

    # Seat 0 passes slot 1 to seat 1: it forwards what it holds plus its own share.
    own_share = share_for(hand, 1, 0, 1)
    to_b = [*(s for s in held[0] if s.context.sender != 1), own_share]
    assert open_card(hand.final[1], to_b, hand.joint, hand.deck, own=hand.keys[1]) == expected[1]
    # Seat 1 passes slot 2 to seat 0 the same way.
    own_share = share_for(hand, 2, 1, 0)
    to_a = [*(s for s in held[1] if s.context.sender != 0), own_share]
    assert open_card(hand.final[2], to_a, hand.joint, hand.deck, own=hand.keys[0]) == expected[2]

    # Seat 2 has only its own shares: without a holder's share the card stays masked.
    partial = unmask(hand.final[1], [hand.final[1].c1 * hand.keys[2].secret])
    assert partial is None or hand.deck.index_of(partial) is None


@given(data=st.binary(min_size=96, max_size=96), slot=st.integers(0, 7))
def test_arbitrary_shares_never_verify(hand: Hand, data: bytes, slot: int) -> None:
    ctx = RevealContext(hand.ctx, slot, 1, None)
    with pytest.raises(RemoteProtocolError):
        DecryptionShare.from_bytes(ctx, data).verify(hand.joint.share_of(1), hand.final[slot])


def test_challenge_hashes_the_key_so_no_proof_for_a_chosen_key(hand: Hand) -> None:
    # Weak Fiat-Shamir (Bernhard-Pereira-Warinschi): were X_i left out of the challenge,
    # anyone could fix D, A1, A2, take c, then pick z and solve for a key X' that the
    # "proof" verifies against although log_G X' != log_C1 D. Hashing X_i stops it.
    ct = hand.final[0]
    ctx = RevealContext(hand.ctx, 0, 1, None)
    d, t, s = Scalar.from_int(5), Scalar.from_int(9), Scalar.from_int(13)
    value, a1, a2 = ct.c1 * d, Point.base_mult(s), ct.c1 * t
    c = Scalar.from_hash("dleq", *ctx.parts(), Point.GENERATOR.data, ct.c1.data, value.data,
                         a1.data, a2.data)
    z = t + c * d
    inverse = Scalar.from_int(pow(int.from_bytes(c.data, "little"), -1, GROUP_ORDER))
    chosen_key = Point.base_mult((z - s) * inverse)
    assert (z - s) * inverse != d  # the statement is false: D is not log_G(X') C1
    with pytest.raises(BadShare):
        DecryptionShare(ctx, value, DleqProof(c, z)).verify(chosen_key, ct)


def test_challenge_hashes_c1_so_no_proof_for_a_chosen_ciphertext(hand: Hand) -> None:
    # The other adaptive choice: a seat knowing x_i fixes a false D, A1, A2, takes c and
    # solves for a C1' the "proof" fits. A last shuffler could put that C1' in its deck;
    # hashing C1 makes the proof fail.
    key = hand.keys[1]
    ctx = RevealContext(hand.ctx, 0, 1, None)
    w, d, a = Scalar.from_int(21), Scalar.from_int(5), Scalar.from_int(9)
    value, a1, a2 = Point.base_mult(d), Point.base_mult(w), Point.base_mult(a)
    c = Scalar.from_hash("dleq", *ctx.parts(), Point.GENERATOR.data, key.public.data,
                         value.data, a1.data, a2.data)
    z = w + c * key.secret
    inverse = Scalar.from_int(pow(int.from_bytes(z.data, "little"), -1, GROUP_ORDER))
    chosen = Ciphertext(Point.base_mult((a + c * d) * inverse), hand.final[0].c2)
    assert chosen.c1 * key.secret != value  # the statement is false
    with pytest.raises(BadShare):
        DecryptionShare(ctx, value, DleqProof(c, z)).verify(key.public, chosen)


def _loop_verdict(items: list[tuple[DecryptionShare, Point, Ciphertext]]) -> str | None:
    for share, public, ct in items:
        try:
            share.verify(public, ct)
        except BadShare as exc:
            return str(exc)
    return None


@given(data=st.data())
def test_a_batch_of_shares_gives_the_loop_s_verdict(hand: Hand, data: st.DataObject) -> None:
    slots = data.draw(st.lists(st.integers(0, 7), min_size=0, max_size=6))
    items = []
    for k, slot in enumerate(slots):
        sender = k % 3
        share = share_for(hand, slot, sender, None)
        how = data.draw(st.sampled_from(["good", "good", "value", "proof", "key", "ct",
                                          "degenerate"]))
        public, ct = hand.joint.share_of(sender), hand.final[slot]
        if how == "value":  # another seat's value under this seat's proof
            share = replace(share, value=hand.final[slot].c1 * hand.keys[(sender + 1) % 3].secret)
        elif how == "proof":
            share = replace(share, proof=DleqProof(share.proof.challenge,
                                                   share.proof.response + Scalar.from_int(1)))
        elif how == "degenerate":  # z = c x: z G - c X is the identity
            c = share.proof.challenge
            share = replace(share, proof=DleqProof(c, c * hand.keys[sender].secret))
        elif how == "key":
            public = hand.joint.share_of((sender + 1) % 3)
        elif how == "ct":
            ct = hand.final[(slot + 1) % 8]
        items.append((share, public, ct))
    want = _loop_verdict(items)
    with ThreadPoolExecutor(1) as pool:
        for workers in (None, Workers(pool, 2)):
            if want is None:
                verify_shares(items, workers=workers)
            else:
                with pytest.raises(BadShare) as info:
                    verify_shares(items, workers=workers)
                assert str(info.value) == want
