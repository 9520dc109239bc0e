"""protocol.audit: a clean hand passes; each kind of cheating is found and the right seat blamed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.audit import AuditReport, Fault, HandRecord, audit_hand
from protocol.deck import (
    Ciphertext,
    ShuffleStep,
    ShuffleWitness,
    apply_witness,
    initial_deck,
    mask,
    remask,
)
from protocol.errors import LocalProtocolError
from protocol.group import Point, Scalar
from protocol.keys import HandContext, JointKey
from protocol.reveal import DecryptionShare, RevealContext
from tests.protocol.hand_fixture import Hand, play_hand

SEATS = 3
CARDS = 8


def record(hand: Hand, **changes: object) -> HandRecord:
    return replace(record_for(hand), **changes)  # type: ignore[arg-type]


def record_for(hand: Hand) -> HandRecord:
    """The honest record of ``hand``: slot 0 opened publicly, slot 3 revealed to seat 1."""
    seats = len(hand.keys)
    shares = [
        DecryptionShare.make(
            hand.keys[s], hand.final[slot], RevealContext(hand.ctx, slot, s, r), hand.rng
        )
        for slot, r in ((0, None), (3, 1))
        for s in range(seats)
        if s != r
    ]
    return HandRecord(
        hand=hand.ctx,
        deck=hand.deck,
        keys=hand.joint,
        steps=tuple(hand.steps),
        openings={i: w.to_bytes() for i, w in enumerate(hand.witnesses)},
        secrets={k.seat: k.secret.data for k in hand.keys},
        shares=tuple(shares),
    )


def cheat_at_step(
    hand: Hand, seat: int, tamper: Callable[[list[Ciphertext], Hand], None]
) -> Hand:
    """Replay the hand with ``seat`` publishing a tampered deck (honest commitment);
    later seats shuffle the tampered deck honestly."""
    current = initial_deck(hand.deck, hand.joint.public)
    steps = []
    for k, (step, witness) in enumerate(zip(hand.steps, hand.witnesses, strict=True)):
        out = list(apply_witness(current, hand.joint.public, witness))
        if k == seat:
            tamper(out, hand)
        steps.append(ShuffleStep(step.context, tuple(out), step.commitment))
        current = tuple(out)
    return replace(hand, steps=steps)


def blamed(report: AuditReport) -> tuple[int, Fault]:
    assert report.blame is not None, "audit found nothing"
    return report.blame.seat, report.blame.fault


@pytest.fixture(scope="module")
def hand() -> Hand:
    return play_hand(seats=SEATS, cards=CARDS, seed=b"audit")


def test_clean_hand(hand: Hand) -> None:
    report = audit_hand(record(hand))
    assert report.ok
    assert report.blame is None
    assert list(report.cards) == hand.expected_cards()


@pytest.mark.parametrize("seat", range(SEATS))
def test_substituted_card(hand: Hand, seat: int) -> None:
    def substitute(out: list[Ciphertext], h: Hand) -> None:
        out[3] = mask(Point.from_hash("card", b"joker"), Scalar.from_int(11), h.joint.public)

    report = audit_hand(record(cheat_at_step(hand, seat, substitute)))
    assert blamed(report) == (seat, Fault.SUBSTITUTED_CARD)
    assert report.blame is not None
    assert (report.blame.step, report.blame.slot) == (seat, 3)
    assert report.cards == ()


@pytest.mark.parametrize("seat", range(SEATS))
def test_duplicated_card(hand: Hand, seat: int) -> None:
    def duplicate(out: list[Ciphertext], h: Hand) -> None:
        out[5] = remask(out[2], Scalar.from_int(5), h.joint.public)

    report = audit_hand(record(cheat_at_step(hand, seat, duplicate)))
    assert blamed(report) == (seat, Fault.DUPLICATED_CARD)
    assert report.blame is not None
    assert report.blame.slot == 5
    assert "slots 2 and 5" in report.blame.reason


def test_permutation_other_than_committed(hand: Hand) -> None:
    def swap(out: list[Ciphertext], h: Hand) -> None:
        out[1], out[6] = out[6], out[1]

    report = audit_hand(record(cheat_at_step(hand, 1, swap)))
    assert blamed(report) == (1, Fault.STEP_MISMATCH)
    assert report.blame is not None
    assert report.blame.slot == 1


def test_wrong_permutation_commitment(hand: Hand) -> None:
    # Seat 2 opens a witness other than the one it committed to.
    w = hand.witnesses[2]
    perm = (w.permutation[1], w.permutation[0], *w.permutation[2:])
    forged = ShuffleWitness(w.salt, perm, w.scalars)
    openings = {i: x.to_bytes() for i, x in enumerate(hand.witnesses)} | {2: forged.to_bytes()}
    report = audit_hand(record(hand, openings=openings))
    assert blamed(report) == (2, Fault.COMMITMENT_MISMATCH)
    assert report.blame is not None
    assert report.blame.step == 2


def test_missing_and_malformed_openings(hand: Hand) -> None:
    openings = {i: w.to_bytes() for i, w in enumerate(hand.witnesses)}
    del openings[1]
    assert blamed(audit_hand(record(hand, openings=openings))) == (1, Fault.MISSING_OPENING)
    openings[1] = b"\x00" * 10
    assert blamed(audit_hand(record(hand, openings=openings))) == (1, Fault.MALFORMED_OPENING)


def test_missing_step(hand: Hand) -> None:
    report = audit_hand(record(hand, steps=tuple(hand.steps[:2])))
    assert blamed(report) == (2, Fault.MISSING_STEP)


def test_withheld_and_wrong_key_shares(hand: Hand) -> None:
    secrets = {k.seat: k.secret.data for k in hand.keys}
    del secrets[0]
    assert blamed(audit_hand(record(hand, secrets=secrets))) == (0, Fault.WITHHELD_KEY)
    secrets[0] = Scalar.from_int(5).data
    assert blamed(audit_hand(record(hand, secrets=secrets))) == (0, Fault.WRONG_KEY)
    secrets[0] = b"\xff" * 32
    assert blamed(audit_hand(record(hand, secrets=secrets))) == (0, Fault.WRONG_KEY)


def test_wrong_share(hand: Hand) -> None:
    good = record(hand).shares
    bad = replace(good[4], value=good[4].value + Point.GENERATOR)
    report = audit_hand(record(hand, shares=(*good[:4], bad, *good[5:])))
    assert blamed(report) == (good[4].context.sender, Fault.BAD_SHARE)
    assert report.blame is not None
    assert report.blame.slot == good[4].context.slot


def test_correct_value_with_a_broken_proof(hand: Hand) -> None:
    good = record(hand).shares
    other = good[1].proof
    broken = replace(good[0], proof=other)
    report = audit_hand(record(hand, shares=(broken, *good[1:])))
    assert blamed(report) == (good[0].context.sender, Fault.BAD_SHARE)


def test_share_for_a_slot_beyond_the_deck(hand: Hand) -> None:
    good = record(hand).shares
    stray = replace(good[0], context=replace(good[0].context, slot=CARDS))
    assert blamed(audit_hand(record(hand, shares=(stray,)))) == (0, Fault.BAD_SHARE)


def test_first_inconsistency_is_reported(hand: Hand) -> None:
    def substitute(out: list[Ciphertext], h: Hand) -> None:
        out[0] = mask(Point.from_hash("card", b"joker"), Scalar.from_int(2), h.joint.public)

    # Seats 2 and 1 both cheat; seat 1's step comes first.
    twice = cheat_at_step(cheat_at_step(hand, 2, substitute), 1, substitute)
    assert blamed(audit_hand(record(twice))) == (1, Fault.SUBSTITUTED_CARD)
    # A bad step is found before a bad share.
    good = record(hand).shares
    bad = replace(good[0], value=good[0].value + Point.GENERATOR)
    report = audit_hand(record(cheat_at_step(hand, 2, substitute), shares=(bad,)))
    assert blamed(report) == (2, Fault.SUBSTITUTED_CARD)


def test_misassembled_record_is_a_local_error(hand: Hand) -> None:
    steps = (hand.steps[1], hand.steps[0], hand.steps[2])
    with pytest.raises(LocalProtocolError):
        audit_hand(record(hand, steps=steps))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)
@given(opening=st.binary(max_size=400), secret=st.binary(max_size=40))
def test_arbitrary_openings_and_secrets_are_blamed_not_crashed(
    hand: Hand, opening: bytes, secret: bytes
) -> None:
    openings = {i: w.to_bytes() for i, w in enumerate(hand.witnesses)} | {1: opening}
    report = audit_hand(record(hand, openings=openings))
    assert blamed(report) in {(1, Fault.MALFORMED_OPENING), (1, Fault.COMMITMENT_MISMATCH)}
    secrets = {k.seat: k.secret.data for k in hand.keys} | {2: secret}
    assert blamed(audit_hand(record(hand, secrets=secrets))) == (2, Fault.WRONG_KEY)


def test_published_deck_of_the_wrong_size(hand: Hand) -> None:
    short = ShuffleStep(hand.steps[0].context, hand.steps[0].deck[:-1], hand.steps[0].commitment)
    report = audit_hand(record(hand, steps=(short, *hand.steps[1:])))
    assert blamed(report) == (0, Fault.STEP_MISMATCH)
    assert report.blame is not None
    assert "7 cards" in report.blame.reason


def test_shares_of_another_hand_and_empty_key_sets_are_local_errors(hand: Hand) -> None:
    good = record(hand).shares
    foreign = replace(good[0], context=replace(good[0].context, hand=HandContext(b"x", 1)))
    with pytest.raises(LocalProtocolError):
        audit_hand(record(hand, shares=(foreign,)))
    with pytest.raises(LocalProtocolError):
        audit_hand(record(hand, keys=JointKey(Point.GENERATOR, ())))


@pytest.mark.parametrize("bit", range(0, 256, 7))
def test_flipped_commitment_bit_is_blamed_on_its_seat(hand: Hand, bit: int) -> None:
    step = hand.steps[1]
    flipped = bytearray(step.commitment)
    flipped[bit // 8] ^= 1 << (bit % 8)
    bad = ShuffleStep(step.context, step.deck, bytes(flipped))
    report = audit_hand(record(hand, steps=(hand.steps[0], bad, hand.steps[2])))
    assert blamed(report) == (1, Fault.COMMITMENT_MISMATCH)


@pytest.mark.parametrize("bit", range(0, (32 + 34 * CARDS) * 8, 37))
def test_flipped_opening_bit_is_blamed_on_its_seat(hand: Hand, bit: int) -> None:
    raw = bytearray(hand.witnesses[0].to_bytes())
    raw[bit // 8] ^= 1 << (bit % 8)
    openings = {i: w.to_bytes() for i, w in enumerate(hand.witnesses)} | {0: bytes(raw)}
    report = audit_hand(record(hand, openings=openings))
    assert blamed(report) in {(0, Fault.MALFORMED_OPENING), (0, Fault.COMMITMENT_MISMATCH)}


def test_witness_that_cancels_a_card_is_blamed_not_crashed(hand: Hand) -> None:
    # Step 0's input has C1 = G everywhere, so r = -1 would re-mask to the identity.
    w = hand.witnesses[0]
    minus_one = Scalar.from_int(-1)
    evil = ShuffleWitness(w.salt, w.permutation, (minus_one, *w.scalars[1:]))
    step = hand.steps[0]
    deck_in = initial_deck(hand.deck, hand.joint.public)
    committed = ShuffleStep(step.context, step.deck, evil.commitment(step.context, deck_in))
    openings = {i: x.to_bytes() for i, x in enumerate(hand.witnesses)} | {0: evil.to_bytes()}
    report = audit_hand(record(hand, steps=(committed, *hand.steps[1:]), openings=openings))
    assert blamed(report) == (0, Fault.STEP_MISMATCH)
    assert report.blame is not None
    assert "identity" in report.blame.reason


def test_a_later_witness_that_cancels_its_slot_is_blamed_not_crashed(hand: Hand) -> None:
    # After step 0, output slot i has C1 = (1 + r_i) G; step 1 taking slot j with
    # r = -(1 + r_j) re-masks it to the identity. The audit tracks these sums, so the
    # cancellation must show there as it does when re-masking the previous deck.
    w0, w1 = hand.witnesses[0], hand.witnesses[1]
    j = w1.permutation[0]
    cancel = -(Scalar.from_int(1) + w0.scalars[j])
    evil = ShuffleWitness(w1.salt, w1.permutation, (cancel, *w1.scalars[1:]))
    step = hand.steps[1]
    committed = ShuffleStep(step.context, step.deck, evil.commitment(step.context,
                                                                     hand.steps[0].deck))
    openings = {i: x.to_bytes() for i, x in enumerate(hand.witnesses)} | {1: evil.to_bytes()}
    steps = (hand.steps[0], committed, *hand.steps[2:])
    report = audit_hand(record(hand, steps=steps, openings=openings))
    assert blamed(report) == (1, Fault.STEP_MISMATCH)
    assert report.blame is not None
    assert "identity" in report.blame.reason


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=1, max_size=8), seats=st.integers(2, 4),
       cards=st.integers(4, 8))
def test_the_tracked_decks_are_the_decks_the_witnesses_make(
    seed: bytes, seats: int, cards: int
) -> None:
    # The audit computes each step's deck from the tracked (card, rho) pairs; it must
    # accept exactly the decks that re-masking the previous deck gives, and name the
    # cards that decrypting the final deck names.
    hand = play_hand(seats=seats, cards=cards, seed=seed)
    deck = initial_deck(hand.deck, hand.joint.public)
    for step, witness in zip(hand.steps, hand.witnesses, strict=True):
        deck = apply_witness(deck, hand.joint.public, witness)
        assert deck == step.deck
    x = Scalar.from_int(0)
    for key in hand.keys:
        x = x + key.secret
    decrypted = [hand.deck.index_of(ct.c2 - ct.c1 * x) for ct in deck]
    report = audit_hand(record_for(hand))
    assert report.ok
    assert list(report.cards) == decrypted == hand.expected_cards()


def test_nine_seats_and_forty_two_cards() -> None:
    big = play_hand(seats=9, cards=42, seed=b"nine")
    report = audit_hand(record_for(big))
    assert report.ok
    assert list(report.cards) == big.expected_cards()
    assert sorted(report.cards) == list(range(42))


def test_bad_relayed_share_blames_its_publisher_not_its_maker(hand: Hand) -> None:
    # Seat 1 holds slot 3 and opens it publicly, publishing the shares it received;
    # it alters seat 0's. Bytes that fail the proof prove nothing about seat 0 (anyone
    # can write them): the seat whose envelope published them is to blame.
    good = record(hand).shares
    index = next(i for i, s in enumerate(good) if (s.context.slot, s.context.sender) == (3, 0))
    bad = replace(good[index], value=good[index].value + Point.GENERATOR)
    shares = (*good[:index], bad, *good[index + 1:])
    publishers = tuple(1 if s.context.slot == 3 else s.context.sender for s in good)
    report = audit_hand(record(hand, shares=shares, publishers=publishers))
    assert blamed(report) == (1, Fault.BAD_SHARE)
    assert report.blame is not None
    assert "seat 0" in report.blame.reason
    # Without publishers every share is taken to come from its maker.
    assert blamed(audit_hand(record(hand, shares=shares))) == (0, Fault.BAD_SHARE)
    assert audit_hand(record(hand, publishers=publishers)).ok
    with pytest.raises(LocalProtocolError):
        audit_hand(record(hand, publishers=publishers[:-1]))
