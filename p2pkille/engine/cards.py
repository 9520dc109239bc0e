"""The Kille deck: 21 ranks, two physical copies of each, 42 cards.

Rank ids are the ASCII names of rulings.md ("The deck"); a specific copy is
written ``rank:copy`` (``kuku:1``, ``kuku:2``). Internally a card is also an
index ``0..41`` (``rank * 2 + copy - 1``), which is what the hot path uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from p2pkille.engine.errors import InvalidCardError


class Rank(IntEnum):
    """A rank, valued by strength: a larger value is a stronger card."""

    BLAREN = 0
    BLOMPOTTAN = 1
    KRANSEN = 2
    ONE = 3
    TWO = 4
    THREE = 5
    FOUR = 6
    FIVE = 7
    SIX = 8
    SEVEN = 9
    EIGHT = 10
    NINE = 11
    TEN = 12
    ELEVEN = 13
    TWELVE = 14
    VARDSHUS = 15
    KAVALL = 16
    HUSU = 17
    HUSAR = 18
    KUKU = 19
    KILLE = 20

    @property
    def id(self) -> str:
        """The rank's id in files and on the wire (``kuku``, ``12``, ``blaren``)."""
        return _IDS[self]

    @classmethod
    def from_id(cls, text: str) -> Rank:
        """Parse a rank id; anything else raises :class:`InvalidCardError`."""
        try:
            return _BY_ID[text]
        except (KeyError, TypeError):
            raise InvalidCardError(f"unknown card {text!r}: not a rank id of the Kille deck") \
                from None

    def __repr__(self) -> str:
        return f"Rank.{self.name}"


_IDS: Final[dict[Rank, str]] = {
    Rank.KILLE: "kille",
    Rank.KUKU: "kuku",
    Rank.HUSAR: "husar",
    Rank.HUSU: "husu",
    Rank.KAVALL: "kavall",
    Rank.VARDSHUS: "vardshus",
    **{Rank(Rank.ONE + i): str(i + 1) for i in range(12)},
    Rank.KRANSEN: "kransen",
    Rank.BLOMPOTTAN: "blompottan",
    Rank.BLAREN: "blaren",
}
_BY_ID: Final[dict[str, Rank]] = {text: rank for rank, text in _IDS.items()}

#: Ranks in ``Rank`` value order, for ``RANKS[index >> 1]`` lookups in the hot path.
RANKS: Final[tuple[Rank, ...]] = tuple(Rank)
#: Ranks a target must show instead of quietly exchanging (rulings.md, "A player's turn").
ANSWERING: Final[frozenset[Rank]] = frozenset(
    {Rank.KILLE, Rank.KUKU, Rank.HUSAR, Rank.HUSU, Rank.KAVALL, Rank.VARDSHUS}
)
COPIES: Final = 2
DECK_SIZE: Final = len(RANKS) * COPIES


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One physical card: a rank and which of its two copies (1 or 2)."""

    rank: Rank
    copy: int

    def __post_init__(self) -> None:
        if not isinstance(self.rank, Rank):
            raise InvalidCardError(f"Card rank must be a Rank, got {self.rank!r}")
        if type(self.copy) is not int or not 1 <= self.copy <= COPIES:
            raise InvalidCardError(f"Card copy must be 1 or 2, got {self.copy!r}")

    @property
    def index(self) -> int:
        """Position in :data:`DECK` (``0..41``)."""
        return self.rank * COPIES + self.copy - 1

    @classmethod
    def from_index(cls, index: int) -> Card:
        if type(index) is not int or not 0 <= index < DECK_SIZE:
            raise InvalidCardError(f"card index must be 0..{DECK_SIZE - 1}, got {index!r}")
        return DECK[index]

    @property
    def text(self) -> str:
        """``rank:copy``, e.g. ``kuku:2``; :meth:`parse` reads it back."""
        return f"{self.rank.id}:{self.copy}"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read ``rank:copy``; malformed text raises :class:`InvalidCardError`."""
        if not isinstance(text, str):
            raise InvalidCardError(f"card text must be a string, got {text!r}")
        rank_id, sep, copy = text.partition(":")
        if not sep or copy not in ("1", "2"):
            raise InvalidCardError(f"malformed card {text!r}: expected rank:copy, e.g. 'kuku:1'")
        return cls(Rank.from_id(rank_id), int(copy))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"


#: The 42 cards in deck order (weakest first); ``DECK[i].index == i``.
DECK: Final[tuple[Card, ...]] = tuple(
    Card(RANKS[i // COPIES], i % COPIES + 1) for i in range(DECK_SIZE)
)
