"""protocol.seal: sealed delivery round trip, tamper, wrong key/header, the accusation digest."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.keys import DeliveryKeyPair
from protocol.reveal import BadShare, DecryptionShare, RevealContext
from protocol.rng import DeterministicRng
from protocol.seal import (
    SEAL_OVERHEAD,
    SealError,
    check_disclosed_share,
    open_disclosed,
    open_sealed,
    open_share,
    seal,
    seal_share,
    sealed_digest,
)
from tests.protocol.hand_fixture import play_hand

RNG = DeterministicRng(b"seal")
ALICE = DeliveryKeyPair.generate(RNG)
BOB = DeliveryKeyPair.generate(RNG)
HEADER = b"slot 3 from seat 1 to seat 0"


def test_round_trip() -> None:
    box = seal(ALICE.public, HEADER, b"secret share", RNG)
    assert len(box) == len(b"secret share") + SEAL_OVERHEAD
    assert open_sealed(ALICE, HEADER, box) == b"secret share"


def test_fresh_ephemeral_per_box() -> None:
    a = seal(ALICE.public, HEADER, b"x", RNG)
    b = seal(ALICE.public, HEADER, b"x", RNG)
    assert a[:32] != b[:32]
    assert a != b


def test_wrong_recipient_cannot_open() -> None:
    box = seal(ALICE.public, HEADER, b"secret", RNG)
    with pytest.raises(SealError):
        open_sealed(BOB, HEADER, box)


def test_header_is_bound() -> None:
    box = seal(ALICE.public, HEADER, b"secret", RNG)
    with pytest.raises(SealError):
        open_sealed(ALICE, HEADER + b"!", box)


def test_every_flipped_bit_is_rejected() -> None:
    box = seal(ALICE.public, HEADER, b"0123456789", RNG)
    for bit in range(len(box) * 8):
        tampered = bytearray(box)
        tampered[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(SealError):
            open_sealed(ALICE, HEADER, bytes(tampered))


@pytest.mark.parametrize("cut", [0, 1, 31, 47, -1])
def test_truncated_box_is_rejected(cut: int) -> None:
    box = seal(ALICE.public, HEADER, b"0123456789", RNG)
    with pytest.raises(SealError):
        open_sealed(ALICE, HEADER, box[:cut])


def test_low_order_keys() -> None:
    # The all-zero u-coordinate is a low-order point: X25519 output would be zero.
    with pytest.raises(SealError, match="low-order"):
        open_sealed(ALICE, HEADER, bytes(32) + bytes(16))
    with pytest.raises(InvalidEncoding, match="low-order"):
        seal(bytes(32), HEADER, b"x", RNG)
    with pytest.raises(InvalidEncoding):
        seal(b"\x01" * 31, HEADER, b"x", RNG)


def test_digest_binds_header_and_plaintext() -> None:
    d = sealed_digest(HEADER, b"pt")
    assert len(d) == 32
    assert d != sealed_digest(HEADER, b"pu")
    assert d != sealed_digest(HEADER + b"x", b"pt")
    assert sealed_digest(b"ab", b"c") != sealed_digest(b"a", b"bc")


def test_sealed_share_round_trip_and_accusation() -> None:
    hand = play_hand(seats=3, cards=4)
    ctx = RevealContext(hand.ctx, 2, 1, 0)
    share = DecryptionShare.make(hand.keys[1], hand.final[2], ctx, hand.rng)
    box, digest = seal_share(share, ALICE.public, hand.rng)
    assert len(box) == DecryptionShare.SIZE + SEAL_OVERHEAD
    opened = open_share(ALICE, ctx, box)
    assert opened == share
    opened.verify(hand.joint.share_of(1), hand.final[2])
    # Accusation: the sender publishes the plaintext; anyone checks it against
    # the digest its envelope signed, then checks the proof.
    assert sealed_digest(ctx.header(), share.to_bytes()) == digest
    # The box cannot be moved to another slot's context.
    with pytest.raises(SealError):
        open_share(ALICE, RevealContext(hand.ctx, 3, 1, 0), box)


@given(st.binary(max_size=200))
def test_arbitrary_boxes_raise_only_remote_errors(data: bytes) -> None:
    with pytest.raises(RemoteProtocolError):
        open_sealed(ALICE, HEADER, data)


def test_accusation_is_settled_by_disclosure() -> None:
    hand = play_hand(seats=3, cards=4)
    ctx = RevealContext(hand.ctx, 1, 2, 0)
    share = DecryptionShare.make(hand.keys[2], hand.final[1], ctx, hand.rng)
    _box, digest = seal_share(share, ALICE.public, hand.rng)
    public, ct = hand.joint.share_of(2), hand.final[1]
    assert check_disclosed_share(ctx, share.to_bytes(), digest, public, ct, sealer=2) == share
    # The sender cannot disclose something other than what it signed...
    other = DecryptionShare.make(hand.keys[2], hand.final[2], ctx, hand.rng)
    with pytest.raises(SealError, match="digest"):
        check_disclosed_share(ctx, other.to_bytes(), digest, public, ct, sealer=2)
    # ...and a signed garbage share stays garbage: the sender is blamed either way.
    garbage = bytes(96)
    garbage_digest = sealed_digest(ctx.header(), garbage)
    with pytest.raises(RemoteProtocolError):
        check_disclosed_share(ctx, garbage, garbage_digest, public, ct, sealer=2)
    wrong = DecryptionShare(ctx, share.value + hand.joint.public, share.proof).to_bytes()
    with pytest.raises(BadShare):
        check_disclosed_share(ctx, wrong, sealed_digest(ctx.header(), wrong), public, ct,
                              sealer=2)


def test_bad_forwarded_share_blames_the_forwarder_not_its_maker() -> None:
    # Seat 1 made a share of slot 1 for seat 0; seat 0 moves the card to seat 2 and
    # forwards that share (its context unchanged, recipient 0) but alters it. Seat 2
    # accuses seat 0, who discloses what it sealed: the forwarder (the box's sealer) is
    # to blame, never seat 1, whose share seat 0 could check when it received it.
    hand = play_hand(seats=3, cards=4)
    ctx = RevealContext(hand.ctx, 1, 1, 0)
    share = DecryptionShare.make(hand.keys[1], hand.final[1], ctx, hand.rng)
    public, ct = hand.joint.share_of(1), hand.final[1]
    assert check_disclosed_share(
        ctx, share.to_bytes(), sealed_digest(ctx.header(), share.to_bytes()), public, ct,
        sealer=0) == share
    altered = DecryptionShare(ctx, share.value + hand.joint.public, share.proof).to_bytes()
    with pytest.raises(BadShare) as caught:
        check_disclosed_share(ctx, altered, sealed_digest(ctx.header(), altered), public, ct,
                              sealer=0)
    assert caught.value.sender == 0
    assert "forwarded" in caught.value.reason
    # Sealed by its maker, a bad share still names the maker.
    with pytest.raises(BadShare) as caught:
        check_disclosed_share(ctx, altered, sealed_digest(ctx.header(), altered), public, ct,
                              sealer=1)
    assert caught.value.sender == 1


def test_a_box_opens_with_its_disclosed_one_time_key_and_no_other() -> None:
    rng = DeterministicRng(b"disclosed" * 4)
    recipient = DeliveryKeyPair.generate(rng)
    ephemeral = DeliveryKeyPair.generate(rng)
    box = seal(recipient.public, b"header", b"share bytes", rng, ephemeral=ephemeral)
    assert box[:32] == ephemeral.public
    # Anyone holding the disclosed key (not the recipient's) reads what the box held.
    assert open_disclosed(ephemeral.private, recipient.public, b"header", box) == b"share bytes"
    other = DeliveryKeyPair.generate(rng)
    with pytest.raises(SealError, match="not the box's"):
        open_disclosed(other.private, recipient.public, b"header", box)
    garbled = box[:-1] + bytes([box[-1] ^ 1])
    with pytest.raises(SealError, match="does not open"):
        open_disclosed(ephemeral.private, recipient.public, b"header", garbled)
    with pytest.raises(SealError):
        open_disclosed(ephemeral.private, recipient.public, b"other header", box)
    with pytest.raises(SealError, match="wrong size"):
        open_disclosed(ephemeral.private[:31], recipient.public, b"header", box)


def test_a_key_pair_keeps_only_the_key_of_its_own_private_bytes() -> None:
    # The loaded X25519 key is kept for speed; a copy made with other private bytes
    # must not open boxes with the old key, and a pickled pair is the pair.
    box = seal(BOB.public, b"h", b"for bob", RNG)
    assert BOB.private_key().private_bytes_raw() == BOB.private
    bob_as_alice = dataclasses.replace(BOB, private=ALICE.private, public=ALICE.public)
    assert bob_as_alice == ALICE
    with pytest.raises(SealError):
        open_sealed(bob_as_alice, b"h", box)
    assert open_sealed(pickle.loads(pickle.dumps(BOB)), b"h", box) == b"for bob"
    assert "private=<hidden>" in repr(BOB)
    assert BOB.private.hex() not in repr(BOB)
