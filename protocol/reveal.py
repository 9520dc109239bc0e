"""Decryption shares with Chaum-Pedersen (DLEQ) proofs, and opening cards.

Seat i's share for a ciphertext ``(C1, C2)`` is ``D = x_i C1``, with a proof
that ``log_G X_i == log_C1 D``. The Fiat-Shamir challenge hashes the whole
statement and the context::

    c = Hs("dleq", table, hand, slot, sender, recipient, G, X_i, C1, D, A1, A2)

with ``A1 = w G``, ``A2 = w C1`` and ``z = w + c x_i``. A proof is ``(c, z)``;
the verifier recomputes ``A1 = z G - c X_i``, ``A2 = z C1 - c D`` and compares
the challenge. ``recipient`` is a seat for a private reveal and empty for a
public open, so a share proven for one recipient cannot be replayed as a
public open or to another seat. Shares are self-verifying: a forwarded share
is checked exactly like one received from its sender.

``M = C2 - sum_i D_i`` over every key holder; ``M`` decodes to a card index or
is "not a card".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from protocol.deck import Ciphertext, Deck
from protocol.domain import encode
from protocol.errors import InvalidEncoding, InvalidProof, LocalProtocolError
from protocol.group import DegenerateResult, Point, Scalar, Workers, differences, products
from protocol.keys import HandContext, JointKey, KeyShare, u64
from protocol.rng import Rng

__all__ = [
    "BadShare",
    "DecryptionShare",
    "DleqProof",
    "RevealContext",
    "open_card",
    "unmask",
    "verify_shares",
]

G = Point.GENERATOR


@dataclass(frozen=True, slots=True)
class RevealContext:
    """Which card slot a share is for, who made it and for whom (``None`` = public)."""

    hand: HandContext
    slot: int
    sender: int
    recipient: int | None

    def parts(self) -> tuple[bytes, ...]:
        rcpt = b"" if self.recipient is None else u64(self.recipient)
        return (*self.hand.parts(), u64(self.slot), u64(self.sender), rcpt)

    def header(self) -> bytes:
        """The context as one byte string (length-prefixed parts), e.g. sealing's header."""
        return encode(*self.parts())


class BadShare(InvalidProof):
    """A decryption share whose proof fails; ``sender`` is the seat to blame."""

    def __init__(self, sender: int, reason: str, *, evidence: bytes = b"") -> None:
        super().__init__(f"share from seat {sender}: {reason}", evidence=evidence)
        self.sender = sender


@dataclass(frozen=True, slots=True)
class DleqProof:
    """``(c, z)`` proving ``log_G X == log_C1 D``."""

    challenge: Scalar
    response: Scalar

    def to_bytes(self) -> bytes:
        return self.challenge.data + self.response.data

    @classmethod
    def from_bytes(cls, data: bytes) -> DleqProof:
        if len(data) != 64:
            raise InvalidEncoding("DLEQ proof must be 64 bytes", evidence=data)
        return cls(Scalar.from_bytes(data[:32], allow_zero=True), Scalar.from_bytes(data[32:]))


def _challenge(
    ctx: RevealContext, public: Point, c1: Point, share: Point, a1: Point, a2: Point
) -> Scalar:
    return Scalar.from_hash(
        "dleq", *ctx.parts(), G.data, public.data, c1.data, share.data, a1.data, a2.data
    )


@dataclass(frozen=True, slots=True)
class DecryptionShare:
    """``D = x_i C1`` for one slot with its DLEQ proof. Wire: ``D || c || z`` (96 bytes)."""

    context: RevealContext
    value: Point
    proof: DleqProof

    SIZE = 96

    @classmethod
    def make(
        cls, key: KeyShare, ct: Ciphertext, ctx: RevealContext, rng: Rng,
        *, workers: Workers | None = None,
    ) -> DecryptionShare:
        """Seat ``key.seat``'s share of ``ct`` for ``ctx``, proven against ``key.public``.

        ``workers`` splits the products between threads; the share is the same
        bytes without."""
        if ctx.sender != key.seat:
            raise LocalProtocolError(f"seat {key.seat} cannot make a share as seat {ctx.sender}")
        x = key.secret
        value = ct.c1 * x
        w = Scalar.from_hash(
            "dleq-nonce", x.data, rng.randbytes(32), *ctx.parts(), ct.c1.data, value.data
        )
        a1, a2 = products([(G, w), (ct.c1, w)], workers)
        c = _challenge(ctx, key.public, ct.c1, value, a1, a2)
        return cls(ctx, value, DleqProof(c, w + c * x))

    def verify(self, public: Point, ct: Ciphertext, *, workers: Workers | None = None) -> None:
        """Raise :class:`BadShare` unless this is ``log_G(public) * C1`` for its context.

        ``workers`` splits the products between threads; the verdict is the same
        without."""
        c, z = self.proof.challenge, self.proof.response
        try:
            a1, a2 = differences([(G, z, public, c), (ct.c1, z, self.value, c)], workers)
        except DegenerateResult as exc:
            raise BadShare(
                self.context.sender, "degenerate proof", evidence=self.to_bytes()
            ) from exc
        if _challenge(self.context, public, ct.c1, self.value, a1, a2) != c:
            raise BadShare(
                self.context.sender, "DLEQ proof does not verify", evidence=self.to_bytes()
            )

    def to_bytes(self) -> bytes:
        return self.value.data + self.proof.to_bytes()

    @classmethod
    def from_bytes(cls, ctx: RevealContext, data: bytes) -> DecryptionShare:
        if len(data) != cls.SIZE:
            raise InvalidEncoding(f"decryption share must be {cls.SIZE} bytes", evidence=data)
        return cls(ctx, Point.from_bytes(data[:32]), DleqProof.from_bytes(data[32:]))


def verify_shares(
    items: Sequence[tuple[DecryptionShare, Point, Ciphertext]], *,
    workers: Workers | None = None,
) -> None:
    """``share.verify(public, ct)`` for each ``(share, public, ct)``, in one batch.

    The proofs' products form one list, which ``workers`` can split between
    threads (one share's check alone is too small to split). The verdict is the
    loop's: if any check fails, they are run again one by one in order, so the
    error is the one the first failing share raises.
    """
    if len(items) < 2:
        for share, public, ct in items:
            share.verify(public, ct, workers=workers)
        return
    terms: list[tuple[Point, Scalar, Point, Scalar]] = []
    for share, public, ct in items:
        c, z = share.proof.challenge, share.proof.response
        terms += [(G, z, public, c), (ct.c1, z, share.value, c)]
    try:
        points = differences(terms, workers)
        ok = all(
            _challenge(share.context, public, ct.c1, share.value,
                       points[2 * k], points[2 * k + 1]) == share.proof.challenge
            for k, (share, public, ct) in enumerate(items)
        )
    except DegenerateResult:
        ok = False
    if not ok:
        for share, public, ct in items:
            share.verify(public, ct)
        raise LocalProtocolError("a batch of shares failed but each share verifies")


def unmask(ct: Ciphertext, share_values: Sequence[Point]) -> Point | None:
    """``C2 - sum D_i``; ``None`` when that is the identity (then it is no card)."""
    try:
        return ct.c2 - Point.sum(list(share_values))
    except DegenerateResult:
        return None


def open_card(
    ct: Ciphertext,
    shares: Iterable[DecryptionShare],
    keys: JointKey,
    deck: Deck,
    *,
    own: KeyShare | None = None,
) -> int | None:
    """Verify a share from every key holder (``own`` stands in for the caller's) and decode.

    Returns the card index, or ``None`` if the result is not a card of ``deck``
    (then some shuffle step substituted it; the end-of-hand audit names the seat).
    Raises :class:`BadShare` for a share that does not verify and
    :class:`LocalProtocolError` if shares are missing or duplicated. ``BadShare.sender``
    is the seat the share's context names; if the share reached the caller through
    another seat (forwarded, or relayed in a public open), that seat is to blame
    instead: bytes that fail the proof say nothing about the seat they name.
    """
    values: dict[int, Point] = {}
    slot: int | None = None
    for share in shares:
        sender = share.context.sender
        if sender in values or (own is not None and sender == own.seat):
            raise LocalProtocolError(f"two shares for seat {sender}")
        if slot is not None and share.context.slot != slot:
            raise LocalProtocolError("shares for different slots")
        slot = share.context.slot
        share.verify(keys.share_of(sender), ct)
        values[sender] = share.value
    if own is not None:
        values[own.seat] = ct.c1 * own.secret
    if sorted(values) != list(range(keys.seats)):
        raise LocalProtocolError(
            f"need a share from every seat 0..{keys.seats - 1}, have {sorted(values)}"
        )
    plain = unmask(ct, list(values.values()))
    return None if plain is None else deck.index_of(plain)
