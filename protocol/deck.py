"""Decks of ElGamal ciphertexts under the joint key (Barnett-Smart, commit-reveal).

A :class:`Deck` is a parameter: a list of distinct public card labels. Card j
is encoded as ``M_j = hash_to_group("card", label_j)``, so nobody chooses the
encodings and two copies of a face are different points.

A ciphertext of ``M`` under the joint key ``H`` is ``(C1, C2) = (r G, M + r H)``.
The initial deck is public and deterministic: card j at slot j masked with
``r = 1``, i.e. ``(G, M_j + H)``; every component is a valid non-identity
point and anyone can recompute it from the labels and ``H``.

A shuffle step by one seat: draw a uniform permutation ``pi`` (Fisher-Yates
with rejection sampling) and non-zero scalars ``r_i``; output slot i is input
slot ``pi[i]`` re-masked: ``(C1 + r_i G, C2 + r_i H)``. The seat publishes the
new deck and ``commitment = hash32("shuffle-commit", table, hand, seat, step,
salt, perm, scalars)``; at the end of the hand it opens ``(salt, perm,
scalars)`` and anyone recomputes the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.domain import hash32
from protocol.errors import InvalidEncoding, LocalProtocolError
from protocol.group import Point, Scalar, Workers, mult_sums
from protocol.keys import HandContext, u64
from protocol.rng import Rng

__all__ = [
    "Ciphertext",
    "Deck",
    "ShuffleContext",
    "ShuffleStep",
    "ShuffleWitness",
    "apply_witness",
    "deck_digest",
    "decode_deck",
    "encode_deck",
    "initial_deck",
    "mask",
    "random_permutation",
    "remask",
    "shuffle_step",
    "uniform_below",
]

G = Point.GENERATOR
_ONE = Scalar.from_int(1)
MAX_CARDS = 1024
MAX_LABEL = 64


@dataclass(frozen=True, slots=True)
class Deck:
    """The public card labels of a game and their group encodings."""

    labels: tuple[str, ...]
    encodings: tuple[Point, ...] = field(init=False, compare=False, repr=False)
    _index: dict[bytes, int] = field(init=False, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        labels = self.labels
        if not isinstance(labels, tuple) or not 2 <= len(labels) <= MAX_CARDS:
            raise InvalidEncoding(f"a deck needs 2..{MAX_CARDS} labels as a tuple: {labels!r}")
        for lab in labels:
            # Printable ASCII only: what counts as "printable" in Unicode differs
            # between Unicode versions, so two implementations could disagree.
            if (not isinstance(lab, str) or not lab or len(lab) > MAX_LABEL
                    or not all(" " <= ch <= "~" for ch in lab)):
                raise InvalidEncoding(f"bad card label {lab!r}")
        if len(set(labels)) != len(labels):
            raise InvalidEncoding(f"card labels are not distinct: {labels!r}")
        encodings = tuple(Point.from_hash("card", lab.encode("utf-8")) for lab in labels)
        index = {p.data: j for j, p in enumerate(encodings)}
        if len(index) != len(labels):  # pragma: no cover - a SHA-512 collision
            raise InvalidEncoding("two labels hash to the same card encoding")
        object.__setattr__(self, "encodings", encodings)
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.labels)

    def index_of(self, point: Point) -> int | None:
        """The card a decrypted point encodes, or ``None`` if it is not a card of this deck."""
        return self._index.get(point.data)


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """An ElGamal ciphertext ``(C1, C2)``; 64 bytes on the wire."""

    c1: Point
    c2: Point

    SIZE = 64

    def to_bytes(self) -> bytes:
        return self.c1.data + self.c2.data

    @classmethod
    def from_bytes(cls, data: bytes) -> Ciphertext:
        if len(data) != cls.SIZE:
            raise InvalidEncoding(f"ciphertext must be {cls.SIZE} bytes", evidence=bytes(data))
        return cls(Point.from_bytes(data[:32]), Point.from_bytes(data[32:]))


def mask(message: Point, r: Scalar, joint: Point) -> Ciphertext:
    """``(r G, M + r H)``."""
    return Ciphertext(Point.base_mult(r), message + joint * r)


def remask(ct: Ciphertext, r: Scalar, joint: Point) -> Ciphertext:
    """``(C1 + r G, C2 + r H)``: same plaintext, fresh randomness."""
    return Ciphertext(ct.c1 + Point.base_mult(r), ct.c2 + joint * r)


def initial_deck(deck: Deck, joint: Point) -> tuple[Ciphertext, ...]:
    """The public starting deck: slot j is ``(G, M_j + H)`` (card j masked with r = 1)."""
    return tuple(Ciphertext(G, m + joint) for m in deck.encodings)


def encode_deck(cts: Sequence[Ciphertext]) -> bytes:
    return b"".join(ct.c1.data + ct.c2.data for ct in cts)


def decode_deck(
    data: bytes, cards: int, *, workers: Workers | None = None
) -> tuple[Ciphertext, ...]:
    """Parse and validate ``cards`` ciphertexts (each point checked; ``workers`` splits the
    checks between threads, with the same result or error)."""
    if len(data) != cards * Ciphertext.SIZE:
        raise InvalidEncoding(
            f"deck of {cards} cards must be {cards * Ciphertext.SIZE} bytes, got {len(data)}",
            evidence=data[:256],
        )
    points = Point.many_from_bytes(data, workers=workers)
    return tuple(Ciphertext(points[i], points[i + 1]) for i in range(0, len(points), 2))


def deck_digest(cts: Sequence[Ciphertext]) -> bytes:
    return hash32("deck", encode_deck(cts))


# -- permutations --------------------------------------------------------------


def uniform_below(n: int, rng: Rng, *, width: int = 4) -> int:
    """A uniform integer in ``[0, n)`` by rejection sampling over ``width`` random bytes.

    ``v % n`` alone favours small values whenever ``n`` does not divide
    ``256**width`` (libTMCG 1.0.1's shuffle bias); values at or above the
    largest multiple of ``n`` are redrawn.
    """
    span = 256**width
    if not 1 <= n <= span:
        raise LocalProtocolError(f"cannot draw below {n} from {width} bytes")
    limit = span - span % n
    while True:
        v = int.from_bytes(rng.randbytes(width), "big")
        if v < limit:
            return v % n


def random_permutation(n: int, rng: Rng) -> tuple[int, ...]:
    """A uniform permutation of ``range(n)`` (Fisher-Yates, high index first)."""
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = uniform_below(i + 1, rng)
        items[i], items[j] = items[j], items[i]
    return tuple(items)


# -- shuffle steps -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShuffleContext:
    """Whose shuffle step this is: the hand, the seat and the step number (0-based)."""

    hand: HandContext
    seat: int
    step: int

    def parts(self) -> tuple[bytes, ...]:
        return (*self.hand.parts(), u64(self.seat), u64(self.step))


@dataclass(frozen=True, slots=True, repr=False)
class ShuffleWitness:
    """The secret of one shuffle step: salt, permutation and re-masking scalars.

    Wire form: ``salt (32) || perm (2 bytes big-endian each) || scalars (32 each)``.
    """

    salt: bytes
    permutation: tuple[int, ...]
    scalars: tuple[Scalar, ...]

    def __post_init__(self) -> None:
        n = len(self.permutation)
        if len(self.salt) != 32 or len(self.scalars) != n:
            raise LocalProtocolError("witness needs a 32-byte salt and one scalar per card")
        if sorted(self.permutation) != list(range(n)):
            raise LocalProtocolError(f"not a permutation of 0..{n - 1}")

    @classmethod
    def generate(cls, cards: int, rng: Rng) -> ShuffleWitness:
        salt = rng.randbytes(32)
        perm = random_permutation(cards, rng)
        return cls(salt, perm, tuple(Scalar.random(rng) for _ in range(cards)))

    def to_bytes(self) -> bytes:
        return (
            self.salt
            + b"".join(i.to_bytes(2, "big") for i in self.permutation)
            + b"".join(s.data for s in self.scalars)
        )

    @classmethod
    def from_bytes(cls, data: bytes, cards: int) -> ShuffleWitness:
        """Parse an opened witness for a deck of ``cards``; anything malformed is remote."""
        if not 1 <= cards <= MAX_CARDS or len(data) != 32 + 34 * cards:
            raise InvalidEncoding(
                f"witness for {cards} cards must be {32 + 34 * cards} bytes, got {len(data)}",
                evidence=data[:256],
            )
        perm = tuple(int.from_bytes(data[32 + 2 * i:34 + 2 * i], "big") for i in range(cards))
        if sorted(perm) != list(range(cards)):
            raise InvalidEncoding("witness permutation is not a permutation", evidence=data[:256])
        base = 32 + 2 * cards
        scalars = tuple(
            Scalar.from_bytes(data[base + 32 * i:base + 32 * i + 32]) for i in range(cards)
        )
        return cls(data[:32], perm, scalars)

    def commitment(self, ctx: ShuffleContext, deck_in: Sequence[Ciphertext]) -> bytes:
        """``hash32("shuffle-commit", table, hand, seat, step, deck_digest(in), witness)``.

        Binding the input deck means a step names the deck it shuffled: if the seat
        before it sent two versions of its step, this step cannot be blamed for having
        shuffled the other one.
        """
        return hash32("shuffle-commit", *ctx.parts(), deck_digest(deck_in), self.to_bytes())

    def __repr__(self) -> str:
        return f"ShuffleWitness(<{len(self.permutation)} cards, hidden>)"


def apply_witness(
    deck_in: Sequence[Ciphertext], joint: Point, witness: ShuffleWitness,
    *, workers: Workers | None = None,
) -> tuple[Ciphertext, ...]:
    """Recompute a shuffle step: output slot i is input slot ``perm[i]`` re-masked by ``r_i``.

    Each slot is :func:`remask`; ``workers`` splits the slots between threads,
    with the same result.
    """
    if len(deck_in) != len(witness.permutation):
        raise LocalProtocolError(
            f"witness for {len(witness.permutation)} cards, deck of {len(deck_in)}"
        )
    sums = []
    for j, r in zip(witness.permutation, witness.scalars, strict=True):
        ct = deck_in[j]
        sums.append([(ct.c1, _ONE), (G, r)])
        sums.append([(ct.c2, _ONE), (joint, r)])
    points = mult_sums(sums, workers)
    return tuple(Ciphertext(points[i], points[i + 1]) for i in range(0, len(points), 2))


@dataclass(frozen=True, slots=True)
class ShuffleStep:
    """What a seat publishes for its step: the new deck and the witness commitment."""

    context: ShuffleContext
    deck: tuple[Ciphertext, ...]
    commitment: bytes


def shuffle_step(
    deck_in: Sequence[Ciphertext], joint: Point, ctx: ShuffleContext, rng: Rng,
    *, workers: Workers | None = None,
) -> tuple[ShuffleStep, ShuffleWitness]:
    """Permute and re-mask ``deck_in``; keep the witness secret until the hand's audit."""
    witness = ShuffleWitness.generate(len(deck_in), rng)
    out = apply_witness(deck_in, joint, witness, workers=workers)
    return ShuffleStep(ctx, out, witness.commitment(ctx, deck_in)), witness
