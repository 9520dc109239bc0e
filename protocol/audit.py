"""End-of-hand audit: recompute every step and share, decode every slot, blame the first fault.

Input is everything a hand leaves behind once its secrets are opened: the
joint key's per-seat ``X_i``, each seat's revealed ``x_i``, each shuffle
step's published deck and commitment, each step's opened witness, and every
decryption share that was published or forwarded. Checks run in a fixed
order, and the first failure is reported with the seat to blame:

1. per seat in order: ``x_i`` present, a reduced scalar, and ``x_i G == X_i``;
2. per step in order: the opening present and well formed, its commitment
   equal to the published one, and the step recomputed from the previous deck
   equal to the published deck (a mismatch is diagnosed by decrypting the
   published deck: a slot that is no card is a substituted card, a card seen
   twice is a duplicated card, otherwise the re-masking or permutation differs);
3. per share in the order given: its value equals ``x_sender C1`` of its slot in
   the final deck and its DLEQ proof verifies; a bad share is blamed on the seat
   that published it (``publishers``), which is its maker unless it was forwarded
   or published by a holder;
4. every slot of the final deck decrypts (with ``x = sum x_i``) to its card.

Since the initial deck is public and each step is checked, step 4 cannot fail
when 1-3 pass; it yields the cards.

Once every ``x_i`` is checked the joint secret ``x`` is known, and a slot of any
checked deck is ``(rho G, M + rho x G)`` for the card ``M`` it holds and a scalar
``rho`` (1 in the initial deck, plus each step's ``r`` along the slot's path). So
step 2 tracks ``(card, rho)`` per slot and computes each expected slot with two
base-point products and one addition, instead of a variable-base product and two
additions on the previous deck: the same points (the previous deck is checked
equal to what it tracks) at about half the cost, and step 4 reads the cards off
the tracked slots.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protocol.deck import (
    Ciphertext,
    Deck,
    ShuffleStep,
    ShuffleWitness,
    initial_deck,
)
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.group import DegenerateResult, Point, Scalar, mult_sums
from protocol.keys import HandContext, JointKey
from protocol.reveal import DecryptionShare, unmask

__all__ = ["AuditReport", "Blame", "Fault", "HandRecord", "audit_hand"]


class Fault(enum.Enum):
    """Why a seat is blamed."""

    WITHHELD_KEY = "withheld-key"
    WRONG_KEY = "wrong-key"
    MISSING_STEP = "missing-step"
    MISSING_OPENING = "missing-opening"
    MALFORMED_OPENING = "malformed-opening"
    COMMITMENT_MISMATCH = "commitment-mismatch"
    SUBSTITUTED_CARD = "substituted-card"
    DUPLICATED_CARD = "duplicated-card"
    STEP_MISMATCH = "step-mismatch"
    BAD_SHARE = "bad-share"


@dataclass(frozen=True, slots=True)
class Blame:
    """The first inconsistency found: who, what, where (step and/or slot) and why."""

    seat: int
    fault: Fault
    reason: str
    step: int | None = None
    slot: int | None = None


@dataclass(frozen=True, slots=True)
class AuditReport:
    """``blame`` is ``None`` for a clean hand; ``cards[s]`` is the card at final slot ``s``."""

    blame: Blame | None
    cards: tuple[int, ...]

    @property
    def ok(self) -> bool:
        return self.blame is None


@dataclass(frozen=True, slots=True)
class HandRecord:
    """What the audit reads. ``openings`` and ``secrets`` are raw bytes as received,
    so a malformed one is blamed on its seat rather than failing the audit."""

    hand: HandContext
    deck: Deck
    keys: JointKey
    steps: Sequence[ShuffleStep]
    openings: Mapping[int, bytes]
    secrets: Mapping[int, bytes]
    shares: Sequence[DecryptionShare] = ()
    publishers: Sequence[int] = ()
    """``publishers[i]`` is the seat whose envelope carried ``shares[i]`` (empty: each
    share's maker). A holder publishing the shares it received, or a seat forwarding
    them, answers for them: a share that fails proves nothing about its maker."""


class _Found(Exception):
    def __init__(self, blame: Blame) -> None:
        super().__init__(blame.reason)
        self.blame = blame


def audit_hand(record: HandRecord) -> AuditReport:
    """Run every check in order; the report names the first seat at fault, if any."""
    try:
        return AuditReport(None, _audit(record))
    except _Found as found:
        return AuditReport(found.blame, ())


def _audit(record: HandRecord) -> tuple[int, ...]:
    seats = record.keys.seats
    total = _check_secrets(record, seats)
    # The initial deck (G, M_j + H) is card j with rho = 1.
    track = tuple((j, _ONE) for j in range(len(record.deck)))
    for k in range(seats):
        if k >= len(record.steps):
            raise _Found(Blame(k, Fault.MISSING_STEP, f"seat {k} published no step", step=k))
        step = record.steps[k]
        if step.context.step != k or step.context.seat != k or step.context.hand != record.hand:
            raise LocalProtocolError(f"record lists step {step.context} as step {k}")
        track = _check_step(record, step, track, total)
    final = tuple(record.steps[seats - 1].deck)
    publishers = record.publishers or [s.context.sender for s in record.shares]
    if len(publishers) != len(record.shares):
        raise LocalProtocolError(
            f"{len(publishers)} publishers listed for {len(record.shares)} shares"
        )
    for share, publisher in zip(record.shares, publishers, strict=True):
        _check_share(record, share, final, publisher)
    return tuple(card for card, _ in track)


def _check_secrets(record: HandRecord, seats: int) -> Scalar:
    total: Scalar | None = None
    for seat in range(seats):
        raw = record.secrets.get(seat)
        if raw is None:
            raise _Found(Blame(seat, Fault.WITHHELD_KEY, f"seat {seat} withheld x_i"))
        try:
            x = Scalar.from_bytes(raw)
        except RemoteProtocolError as exc:
            raise _Found(
                Blame(seat, Fault.WRONG_KEY, f"seat {seat} x_i: {exc}")
            ) from exc
        if Point.base_mult(x) != record.keys.share_of(seat):
            raise _Found(
                Blame(seat, Fault.WRONG_KEY, f"seat {seat} x_i does not match X_i")
            )
        total = x if total is None else total + x
    if total is None:
        raise LocalProtocolError("a hand with no seats")
    return total


def _decrypt(ct: Ciphertext, total: Scalar, deck: Deck) -> int | None:
    plain = unmask(ct, [ct.c1 * total])
    return None if plain is None else deck.index_of(plain)


_ONE = Scalar.from_int(1)
_G = Point.GENERATOR
_Track = tuple[tuple[int, Scalar], ...]


def _expected(track: _Track, x: Scalar, deck: Deck) -> tuple[Ciphertext, ...]:
    """The deck a track stands for: slot ``(card, rho)`` is ``(rho G, M_card + rho x G)``."""
    sums = []
    for card, rho in track:
        sums.append([(_G, rho)])
        sums.append([(deck.encodings[card], _ONE), (_G, rho * x)])
    points = mult_sums(sums)
    return tuple(Ciphertext(points[i], points[i + 1]) for i in range(0, len(points), 2))


def _check_step(record: HandRecord, step: ShuffleStep, track: _Track, total: Scalar) -> _Track:
    seat = step.context.seat
    k = step.context.step
    raw = record.openings.get(seat)
    if raw is None:
        raise _Found(Blame(seat, Fault.MISSING_OPENING, f"seat {seat} withheld its witness", k))
    try:
        witness = ShuffleWitness.from_bytes(raw, len(record.deck))
    except RemoteProtocolError as exc:
        raise _Found(Blame(seat, Fault.MALFORMED_OPENING, f"witness: {exc}", k)) from exc
    # Every deck before this step was checked equal to what the track stands for.
    deck_in = record.steps[k - 1].deck if k else initial_deck(record.deck, record.keys.public)
    if witness.commitment(step.context, deck_in) != step.commitment:
        raise _Found(
            Blame(seat, Fault.COMMITMENT_MISMATCH, "opened witness does not match commitment", k)
        )
    moved = tuple(
        (track[j][0], track[j][1] + r)
        for j, r in zip(witness.permutation, witness.scalars, strict=True)
    )
    try:
        expected = _expected(moved, total, record.deck)
    except DegenerateResult as exc:
        # A committed scalar that cancels an input's C1 (rho = 0): the step's deck can
        # never have been valid (receivers refuse the identity), so the seat cheated.
        raise _Found(
            Blame(seat, Fault.STEP_MISMATCH, "witness re-masks a card to the identity", k)
        ) from exc
    published = tuple(step.deck)
    if expected == published:
        return moved
    if len(published) != len(expected):
        raise _Found(
            Blame(seat, Fault.STEP_MISMATCH, f"deck of {len(published)} cards published", k)
        )
    cards = [_decrypt(ct, total, record.deck) for ct in published]
    first_seen: dict[int, int] = {}
    for slot, card in enumerate(cards):
        if card is None:
            raise _Found(
                Blame(seat, Fault.SUBSTITUTED_CARD, f"slot {slot} holds no card", k, slot)
            )
        if card in first_seen:
            raise _Found(
                Blame(
                    seat,
                    Fault.DUPLICATED_CARD,
                    f"card {record.deck.labels[card]!r} in slots {first_seen[card]} and {slot}",
                    k,
                    slot,
                )
            )
        first_seen[card] = slot
    slot = next(i for i, (a, b) in enumerate(zip(expected, published, strict=True)) if a != b)
    raise _Found(
        Blame(seat, Fault.STEP_MISMATCH, f"slot {slot} differs from the opened witness", k, slot)
    )


def _check_share(
    record: HandRecord, share: DecryptionShare, final: tuple[Ciphertext, ...], publisher: int
) -> None:
    ctx = share.context
    sender = ctx.sender
    seats = record.keys.seats
    if not 0 <= sender < seats or not 0 <= publisher < seats or ctx.hand != record.hand:
        raise LocalProtocolError(
            f"share context {ctx} published by {publisher} is not of this hand's seats"
        )
    what = f"share of seat {sender}" + ("" if publisher == sender else f" (from {publisher})")
    if not 0 <= ctx.slot < len(final):
        raise _Found(
            Blame(publisher, Fault.BAD_SHARE, f"{what} for slot {ctx.slot} out of range")
        )
    ct = final[ctx.slot]
    secret = Scalar.from_bytes(record.secrets[sender])
    if ct.c1 * secret != share.value:
        raise _Found(
            Blame(publisher, Fault.BAD_SHARE, f"{what} is not x_i C1", slot=ctx.slot)
        )
    try:
        share.verify(record.keys.share_of(sender), ct)
    except RemoteProtocolError as exc:
        raise _Found(Blame(publisher, Fault.BAD_SHARE, f"{what}: {exc}", slot=ctx.slot)) from exc
