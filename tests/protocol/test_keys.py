"""protocol.keys: key-share proofs, the rogue-key attack, the joint key, X25519 keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.group import Point, Scalar
from protocol.keys import (
    BadKeyShare,
    DeliveryKeyPair,
    HandContext,
    JointKey,
    KeyShare,
    PublicKeyShare,
    SchnorrProof,
    delivery_public_key,
    joint_key,
    u64,
)
from protocol.rng import DeterministicRng

CTX = HandContext(b"table-1", 3)


def shares(n: int = 3, seed: bytes = b"keys") -> tuple[list[KeyShare], list[PublicKeyShare]]:
    rng = DeterministicRng(seed)
    keys = [KeyShare.generate(i, rng) for i in range(n)]
    return keys, [k.announce(CTX, rng) for k in keys]


def test_proofs_verify_and_joint_key_is_the_sum() -> None:
    keys, pubs = shares()
    for p in pubs:
        p.verify(CTX)
    jk = joint_key(CTX, list(reversed(pubs)))
    total = keys[0].secret + keys[1].secret + keys[2].secret
    assert jk.public == Point.base_mult(total)
    assert jk.shares == tuple(k.public for k in keys)
    assert jk.share_of(1) == keys[1].public
    assert jk.seats == 3
    with pytest.raises(LocalProtocolError):
        jk.share_of(3)


def test_wire_round_trip() -> None:
    _, pubs = shares()
    raw = pubs[1].to_bytes()
    assert len(raw) == PublicKeyShare.SIZE
    assert PublicKeyShare.from_bytes(1, raw) == pubs[1]


def test_every_flipped_bit_is_rejected() -> None:
    _, pubs = shares()
    raw = pubs[0].to_bytes()
    for bit in range(len(raw) * 8):
        tampered = bytearray(raw)
        tampered[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(RemoteProtocolError):
            PublicKeyShare.from_bytes(0, bytes(tampered)).verify(CTX)


@pytest.mark.parametrize(
    ("ctx", "seat"),
    [
        (HandContext(b"table-2", 3), 0),  # other table
        (HandContext(b"table-1", 4), 0),  # other hand
        (CTX, 1),  # other seat
    ],
)
def test_proof_replayed_in_another_context_is_rejected(ctx: HandContext, seat: int) -> None:
    _, pubs = shares()
    replay = PublicKeyShare(seat, pubs[0].public, pubs[0].proof)
    with pytest.raises(BadKeyShare) as info:
        replay.verify(ctx)
    assert info.value.seat == seat


def test_rogue_key_without_valid_proof_is_rejected() -> None:
    _, pubs = shares()
    # Seat 2 speaks last and wants H = x G, a key it alone holds.
    x = Scalar.from_int(424242)
    rogue_public = Point.base_mult(x) - pubs[0].public - pubs[1].public
    # The attack is real: were the rogue share summed, H would be x G.
    assert Point.sum([pubs[0].public, pubs[1].public, rogue_public]) == Point.base_mult(x)
    rng = DeterministicRng(b"rogue")
    # It can prove knowledge of some scalar, but not of log(rogue_public).
    own_proof = KeyShare.from_secret(2, x).announce(CTX, rng).proof
    for proof in (own_proof, pubs[2].proof, SchnorrProof(Scalar.from_int(1), Scalar.from_int(1))):
        rogue = PublicKeyShare(2, rogue_public, proof)
        with pytest.raises(BadKeyShare) as info:
            joint_key(CTX, [pubs[0], pubs[1], rogue])
        assert info.value.seat == 2


def test_proof_for_another_key_is_rejected() -> None:
    _, pubs = shares()
    swapped = PublicKeyShare(0, pubs[1].public, pubs[0].proof)
    with pytest.raises(BadKeyShare):
        swapped.verify(CTX)


def test_joint_key_needs_each_seat_once() -> None:
    _, pubs = shares()
    with pytest.raises(LocalProtocolError):
        joint_key(CTX, [pubs[0], pubs[2]])
    with pytest.raises(LocalProtocolError):
        joint_key(CTX, [pubs[0], pubs[0], pubs[1]])
    with pytest.raises(LocalProtocolError):
        joint_key(CTX, [])


def test_nonce_is_hedged_with_fresh_randomness() -> None:
    key = KeyShare.from_secret(0, Scalar.from_int(99))
    a = key.announce(CTX, DeterministicRng(b"1"))
    b = key.announce(CTX, DeterministicRng(b"2"))
    assert a.proof != b.proof
    a.verify(CTX)
    b.verify(CTX)


def test_secret_not_in_repr() -> None:
    key = KeyShare.from_secret(0, Scalar.from_int(99))
    assert key.secret.hex() not in repr(key)
    pair = DeliveryKeyPair.generate(DeterministicRng(b"d"))
    assert pair.private.hex() not in repr(pair)


def test_hand_context_validation() -> None:
    with pytest.raises(LocalProtocolError):
        HandContext(b"", 1)
    with pytest.raises(LocalProtocolError):
        HandContext(b"t", -1)
    with pytest.raises(LocalProtocolError):
        u64(2**64)
    assert u64(258) == b"\x00" * 6 + b"\x01\x02"


def test_delivery_keys() -> None:
    a = DeliveryKeyPair.generate(DeterministicRng(b"d"))
    b = DeliveryKeyPair.generate(DeterministicRng(b"d"))
    assert a == b  # deterministic from the injected rng
    assert len(a.public) == 32
    assert DeliveryKeyPair.from_private(a.private).public == a.public
    assert delivery_public_key(a.public).public_bytes_raw() == a.public
    with pytest.raises(InvalidEncoding):
        delivery_public_key(b"\x01" * 31)
    with pytest.raises(LocalProtocolError):
        DeliveryKeyPair.from_private(b"short")


@given(st.binary(min_size=96, max_size=96), st.integers(0, 2))
def test_arbitrary_key_shares_never_verify(data: bytes, seat: int) -> None:
    with pytest.raises(RemoteProtocolError):
        PublicKeyShare.from_bytes(seat, data).verify(CTX)


def test_zero_challenge_is_rejected_not_crashed() -> None:
    _, pubs = shares()
    zero = Scalar.from_bytes(bytes(32), allow_zero=True)
    forged = PublicKeyShare(0, pubs[0].public, SchnorrProof(zero, Scalar.from_int(1)))
    with pytest.raises(BadKeyShare, match="degenerate"):
        forged.verify(CTX)


def test_a_joint_key_is_the_sum_of_its_shares_or_does_not_exist() -> None:
    # The audit computes H as x G from the revealed secrets; a key whose H is not the
    # sum of its X_i would be judged otherwise by an audit that re-masks with H.
    x1, x2 = Point.base_mult(Scalar.from_int(5)), Point.base_mult(Scalar.from_int(7))
    assert JointKey(x1 + x2, (x1, x2)).public == Point.base_mult(Scalar.from_int(12))
    with pytest.raises(LocalProtocolError, match="sum of its 2 share"):
        JointKey(Point.base_mult(Scalar.from_int(3)), (x1, x2))
    with pytest.raises(LocalProtocolError, match="sum of its 0 share"):
        JointKey(Point.GENERATOR, ())
