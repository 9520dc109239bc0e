"""protocol.audit against a literal reading of docs/protocol.md section 8.

The audit computes each step's expected deck from a tracked (card, rho) per slot; the
docs say an implementation may instead re-mask the previous published deck with the
opened witness. This reference does the latter, and on hands tampered at random (cards
replaced, duplicated, swapped or re-masked wrongly, witnesses that cancel a slot,
commitments and openings broken, decks of the wrong size) both must blame the same seat
for the same fault at the same step and slot, and name the same cards.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.audit import Fault, HandRecord, audit_hand
from protocol.deck import (
    Ciphertext,
    ShuffleContext,
    ShuffleStep,
    ShuffleWitness,
    apply_witness,
    initial_deck,
    mask,
)
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.group import GROUP_ORDER, DegenerateResult, Point, Scalar
from protocol.reveal import unmask
from tests.protocol.hand_fixture import play_hand

Found = tuple[int, Fault, int | None, int | None]


# Section 8's steps transcribed; one return per finding.
def reference(record: HandRecord) -> Found | tuple[int, ...]:  # noqa: PLR0911, PLR0912
    """Section 8 steps 1, 2 and 4, each step recomputed from the previous published deck."""
    total = Scalar.from_int(0)
    for seat in range(record.keys.seats):
        raw = record.secrets.get(seat)
        if raw is None:
            return (seat, Fault.WITHHELD_KEY, None, None)
        try:
            x = Scalar.from_bytes(raw)
        except RemoteProtocolError:
            return (seat, Fault.WRONG_KEY, None, None)
        if Point.base_mult(x) != record.keys.share_of(seat):
            return (seat, Fault.WRONG_KEY, None, None)
        total = total + x

    def card(ct: Ciphertext) -> int | None:
        plain = unmask(ct, [ct.c1 * total])
        return None if plain is None else record.deck.index_of(plain)

    deck = initial_deck(record.deck, record.keys.public)
    for k in range(record.keys.seats):
        if k >= len(record.steps):
            return (k, Fault.MISSING_STEP, k, None)
        step = record.steps[k]
        raw = record.openings.get(k)
        if raw is None:
            return (k, Fault.MISSING_OPENING, k, None)
        try:
            witness = ShuffleWitness.from_bytes(raw, len(record.deck))
        except RemoteProtocolError:
            return (k, Fault.MALFORMED_OPENING, k, None)
        if witness.commitment(step.context, deck) != step.commitment:
            return (k, Fault.COMMITMENT_MISMATCH, k, None)
        try:
            expected = apply_witness(deck, record.keys.public, witness)
        except DegenerateResult:
            return (k, Fault.STEP_MISMATCH, k, None)
        published = tuple(step.deck)
        if expected != published:
            if len(published) != len(expected):
                return (k, Fault.STEP_MISMATCH, k, None)
            seen: set[int] = set()
            for slot, ct in enumerate(published):
                c = card(ct)
                if c is None:
                    return (k, Fault.SUBSTITUTED_CARD, k, slot)
                if c in seen:
                    return (k, Fault.DUPLICATED_CARD, k, slot)
                seen.add(c)
            slot = next(i for i, (a, b) in enumerate(zip(expected, published, strict=True))
                        if a != b)
            return (k, Fault.STEP_MISMATCH, k, slot)
        deck = published
    return tuple(c for c in (card(ct) for ct in deck) if c is not None)


def _random_ct(rng: random.Random) -> Ciphertext:
    return Ciphertext(Point.base_mult(Scalar.from_int(rng.randrange(1, GROUP_ORDER))),
                      Point.base_mult(Scalar.from_int(rng.randrange(1, GROUP_ORDER))))


def tampered(seed: int) -> HandRecord:
    """An honest hand, then at each step perhaps one tampering, later steps shuffling
    what the tampered step published (so only the first fault should be named)."""
    rng = random.Random(seed)
    hand = play_hand(seats=rng.randint(2, 4), cards=rng.randint(3, 6),
                     seed=seed.to_bytes(8, "big"))
    joint = hand.joint.public
    deck_in = initial_deck(hand.deck, joint)
    rho = [Scalar.from_int(1)] * len(deck_in)
    steps, openings = [], {}
    for k, witness in enumerate(hand.witnesses):
        scalars = list(witness.scalars)
        if rng.random() < 0.1 and len(deck_in) == len(witness.permutation):
            scalars[0] = -rho[witness.permutation[0]]  # re-masks slot 0 to the identity
        w = ShuffleWitness(witness.salt, witness.permutation, tuple(scalars))
        try:
            out = list(apply_witness(deck_in, joint, w))
            rho = [rho[j] + r for j, r in zip(w.permutation, w.scalars, strict=True)]
        except (DegenerateResult, LocalProtocolError):
            # A cancelled slot, or a witness for another size after a deck of the wrong
            # size: publish junk of the input's size (the audit stops before it anyway).
            out = [_random_ct(rng) for _ in deck_in]
        t, n = rng.random(), len(out)
        if t < 0.1:
            out[rng.randrange(n)] = _random_ct(rng)
        elif t < 0.2 and n >= 2:
            a, b = rng.sample(range(n), 2)
            out[b] = out[a]
        elif t < 0.3 and n >= 2:
            a, b = rng.sample(range(n), 2)
            out[a], out[b] = out[b], out[a]
        elif t < 0.4:
            out[rng.randrange(n)] = mask(hand.deck.encodings[rng.randrange(len(hand.deck))],
                                         Scalar.from_int(rng.randrange(1, 99)), joint)
        elif t < 0.45:
            slot = rng.randrange(n)
            out[slot] = Ciphertext(out[slot].c1 + Point.GENERATOR, out[slot].c2 + joint)
        elif t < 0.5:
            del out[rng.randrange(n)]
        elif t < 0.55:
            out.append(_random_ct(rng))
        ctx = ShuffleContext(hand.ctx, k, k)
        commitment = w.commitment(ctx, deck_in) if rng.random() > 0.05 else bytes(32)
        opening = w.to_bytes()
        if rng.random() < 0.05:
            opening = opening[:-1]
        steps.append(ShuffleStep(ctx, tuple(out), commitment))
        openings[k] = opening
        deck_in = tuple(out)
    secrets = {key.seat: key.secret.data for key in hand.keys}
    if rng.random() < 0.05:
        secrets[rng.randrange(len(secrets))] = Scalar.from_int(rng.randrange(1, 99)).data
    return HandRecord(hand=hand.ctx, deck=hand.deck, keys=hand.joint, steps=tuple(steps),
                      openings=openings, secrets=secrets)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_the_audit_names_what_re_masking_each_step_names(seed: int) -> None:
    record = tampered(seed)
    report = audit_hand(record)
    want = reference(record)
    if report.blame is None:
        assert report.cards == want
    else:
        b = report.blame
        assert (b.seat, b.fault, b.step, b.slot) == want


def test_the_reference_sees_the_faults_it_is_compared_on() -> None:
    # A differential test is only as good as its inputs: the tampered hands above must
    # reach every fault of steps 1 and 2, and clean hands too.
    found = set()
    for seed in range(300):
        want = reference(tampered(seed))
        found.add(want[1] if isinstance(want[1], Fault) else "clean")
    assert found >= {"clean", Fault.WRONG_KEY, Fault.MALFORMED_OPENING,
                     Fault.COMMITMENT_MISMATCH, Fault.SUBSTITUTED_CARD,
                     Fault.DUPLICATED_CARD, Fault.STEP_MISMATCH}


def test_a_record_with_a_step_of_another_size_is_compared_too() -> None:
    record = tampered(0)
    steps = list(record.steps)
    steps[0] = replace(steps[0], deck=steps[0].deck[:-1])
    bad = replace(record, steps=tuple(steps))
    report = audit_hand(bad)
    assert report.blame is not None
    b = report.blame
    assert (b.seat, b.fault, b.step, b.slot) == reference(bad)
