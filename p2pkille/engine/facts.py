"""Public facts: the only inputs of the state machine.

A fact is something every seat at the table sees: a player's decision, a target's
answer (a shown card or a plain exchange), whether an offered card was a kille as it
changes hands, a card drawn from the stock, the showdown faces. None of them can
carry a face that is still hidden, so the same facts drive the referee (which knows
every card) and a peer (which does not). Each fact has a JSON text round trip;
:func:`fact_from_json` raises only :class:`InvalidFactError`, whatever the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Final, TypeAlias

from p2pkille.engine.cards import ANSWERING, Rank
from p2pkille.engine.errors import InvalidCardError, InvalidFactError

MAX_SEATS: Final = 64


def _seat_ok(seat: object) -> bool:
    return type(seat) is int and 0 <= seat < MAX_SEATS


def _bad(cls: type, detail: str) -> InvalidFactError:
    return InvalidFactError(f"malformed {cls.__name__} fact: {detail}")


class VoteChoice(Enum):
    """An answer to a redeal request."""

    AGREE = "agree"
    REFUSE = "refuse"
    #: "Det beror på" (B): the first voter hands the decision to the third player.
    DEPENDS = "depends"


@dataclass(frozen=True, slots=True)
class Deal:
    """The dealer deals one card face down to each live player; the rest is the stock."""

    TYPE: ClassVar[str] = "deal"


@dataclass(frozen=True, slots=True)
class Keep:
    """The player in turn keeps its card ("Jag är nöjd!")."""

    TYPE: ClassVar[str] = "keep"
    seat: int

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(Keep, f"seat {self.seat!r}")


@dataclass(frozen=True, slots=True)
class Swap:
    """The player in turn offers its card to the left (or draws, as acting dealer).

    ``pick`` names the 1st..4th stock card where the rules let the drawer pick; it
    applies if the offer reaches the stock. ``None`` means the top card.
    """

    TYPE: ClassVar[str] = "swap"
    seat: int
    pick: int | None = None

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(Swap, f"seat {self.seat!r}")
        if self.pick is not None and (type(self.pick) is not int or not 1 <= self.pick <= 4):
            raise _bad(Swap, f"pick must be 1..4 or absent, got {self.pick!r}")


@dataclass(frozen=True, slots=True)
class AskRedeal:
    """The player in turn asks for a redeal before keeping or swapping."""

    TYPE: ClassVar[str] = "redeal"
    seat: int

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(AskRedeal, f"seat {self.seat!r}")


@dataclass(frozen=True, slots=True)
class Vote:
    """A player's answer to a redeal request."""

    TYPE: ClassVar[str] = "vote"
    seat: int
    choice: VoteChoice

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(Vote, f"seat {self.seat!r}")
        if not isinstance(self.choice, VoteChoice):
            raise _bad(Vote, f"choice {self.choice!r}")


@dataclass(frozen=True, slots=True)
class Sell:
    """The player in turn offers its card to ``buyer`` for ``price`` chips."""

    TYPE: ClassVar[str] = "sell"
    seat: int
    buyer: int
    price: int

    def __post_init__(self) -> None:
        if not (_seat_ok(self.seat) and _seat_ok(self.buyer)):
            raise _bad(Sell, f"seats {self.seat!r}, {self.buyer!r}")
        if type(self.price) is not int or self.price < 0:
            raise _bad(Sell, f"price must be a whole number >= 0, got {self.price!r}")


@dataclass(frozen=True, slots=True)
class SaleAnswer:
    """The offered buyer accepts or rejects a card sale."""

    TYPE: ClassVar[str] = "sale"
    seat: int
    accept: bool

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat) or type(self.accept) is not bool:
            raise _bad(SaleAnswer, f"seat {self.seat!r}, accept {self.accept!r}")


@dataclass(frozen=True, slots=True)
class Cut:
    """Förhand cuts the stock before the hand's first draw: ``at`` cards go under."""

    TYPE: ClassVar[str] = "cut"
    seat: int
    at: int = 0

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat) or type(self.at) is not int or self.at < 0:
            raise _bad(Cut, f"seat {self.seat!r}, at {self.at!r}")


@dataclass(frozen=True, slots=True)
class BuyIn:
    """A seat with the choice buys (back) in between hands."""

    TYPE: ClassVar[str] = "buyin"
    seat: int

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(BuyIn, f"seat {self.seat!r}")


@dataclass(frozen=True, slots=True)
class Decline:
    """A seat with the choice does not buy in."""

    TYPE: ClassVar[str] = "decline"
    seat: int

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(Decline, f"seat {self.seat!r}")


@dataclass(frozen=True, slots=True)
class Answer:
    """A target's answer to an offer: the card it must show, or ``None`` for a plain,
    face-down exchange (which claims the target's card is none of :data:`ANSWERING`)."""

    TYPE: ClassVar[str] = "answer"
    seat: int
    shown: Rank | None

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat):
            raise _bad(Answer, f"seat {self.seat!r}")
        if self.shown is not None and self.shown not in ANSWERING:
            raise _bad(Answer, f"{self.shown!r} is not a card a target shows")


@dataclass(frozen=True, slots=True)
class Disclosure:
    """After an exchange the requester says whether the card it gave was a kille (a kille
    changes hands face up; ``False`` claims it was not one)."""

    TYPE: ClassVar[str] = "disclose"
    seat: int
    kille: bool

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat) or type(self.kille) is not bool:
            raise _bad(Disclosure, f"seat {self.seat!r}, kille {self.kille!r}")


@dataclass(frozen=True, slots=True)
class StockCard:
    """The stock card the drawer ``seat`` turned up, shown to everyone."""

    TYPE: ClassVar[str] = "stock"
    seat: int
    rank: Rank

    def __post_init__(self) -> None:
        if not _seat_ok(self.seat) or not isinstance(self.rank, Rank):
            raise _bad(StockCard, f"seat {self.seat!r}, rank {self.rank!r}")


@dataclass(frozen=True, slots=True)
class Showdown:
    """The faces of the live players, in turn order ("På rygg!")."""

    TYPE: ClassVar[str] = "showdown"
    ranks: tuple[Rank, ...]

    def __post_init__(self) -> None:
        if type(self.ranks) is not tuple:
            raise _bad(Showdown, f"ranks {self.ranks!r}")
        for rank in self.ranks:
            if type(rank) is not Rank:
                raise _bad(Showdown, f"ranks {self.ranks!r}")


Decision: TypeAlias = Keep | Swap | AskRedeal | Sell
Fact: TypeAlias = (
    Deal | Keep | Swap | AskRedeal | Vote | Sell | SaleAnswer | Cut | BuyIn | Decline
    | Answer | Disclosure | StockCard | Showdown
)
FACT_TYPES: Final[tuple[type[Fact], ...]] = (
    Deal, Keep, Swap, AskRedeal, Vote, Sell, SaleAnswer, Cut, BuyIn, Decline,
    Answer, Disclosure, StockCard, Showdown,
)
_BY_TYPE: Final[dict[str, type[Fact]]] = {cls.TYPE: cls for cls in FACT_TYPES}


def fact_to_dict(fact: Fact) -> dict[str, object]:
    """The fact as a JSON object (``{"type": ..., field: value}``)."""
    out: dict[str, object] = {"type": fact.TYPE}
    for name in fact.__slots__:
        value = getattr(fact, name)
        if isinstance(value, Rank):
            out[name] = value.id
        elif isinstance(value, Enum):
            out[name] = value.value
        elif isinstance(value, tuple):
            out[name] = [item.id for item in value]
        elif value is not None or name != "pick":
            out[name] = value
    return out


def fact_to_json(fact: Fact) -> str:
    """Canonical JSON text of a fact (sorted keys, no spaces)."""
    return json.dumps(fact_to_dict(fact), sort_keys=True, separators=(",", ":"))


def _rank(cls: type, raw: object) -> Rank:
    try:
        return Rank.from_id(raw)  # type: ignore[arg-type]
    except InvalidCardError as exc:
        raise _bad(cls, str(exc)) from None


# One check per field kind a fact may carry.
def fact_from_dict(data: object) -> Fact:  # noqa: PLR0912
    """Build a fact from a parsed JSON object; anything malformed raises InvalidFactError."""
    if not isinstance(data, dict):
        raise InvalidFactError(f"a fact must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = _BY_TYPE.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InvalidFactError(f"unknown fact type {kind!r}")
    allowed = {"type", *cls.__slots__}
    extra = set(data) - allowed
    if extra:
        raise _bad(cls, f"unexpected keys {sorted(extra)}")
    fields: dict[str, object] = {}
    for name in cls.__slots__:
        if name not in data:
            if name in ("pick", "at"):
                continue
            raise _bad(cls, f"missing {name!r}")
        raw = data[name]
        if name in ("rank",) or (name == "shown" and raw is not None):
            fields[name] = _rank(cls, raw)
        elif name == "shown":
            fields[name] = None
        elif name == "ranks":
            if not isinstance(raw, list):
                raise _bad(cls, f"ranks must be a list, got {raw!r}")
            fields[name] = tuple(_rank(cls, item) for item in raw)
        elif name == "choice":
            try:
                fields[name] = VoteChoice(raw)
            except ValueError:
                raise _bad(cls, f"choice {raw!r}") from None
        else:
            fields[name] = raw
    try:
        return cls(**fields)  # type: ignore[arg-type]
    except TypeError as exc:
        raise _bad(cls, str(exc)) from None


def fact_from_json(text: str | bytes) -> Fact:
    """Parse one fact from JSON text; raises only :class:`InvalidFactError`."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:
        raise InvalidFactError(f"fact is not JSON: {exc}") from None
    return fact_from_dict(data)
