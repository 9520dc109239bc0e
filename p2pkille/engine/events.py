"""What happened: the engine's output events, with the traditional calls.

Events are produced only when a caller asks for them (``Game(record_events=True)``),
so the benchmark's hot path does not build them. :meth:`Event.to_json` gives the
replay tool's event objects; the shapes are defined in ``docs/rules.md`` ("Events").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from p2pkille.engine.cards import Rank

CALL_KEEP: Final = "Jag är nöjd!"
CALL_DRAW: Final = "Jag går i lek!"
CALL_HUSAR: Final = "Husar hugger!"
CALL_SVINHUGG: Final = "Svinhugg går igen!"
CALL_KAVALL: Final = "Kavall förbi!"
CALL_VARDSHUS: Final = "Värdshus förbi!"
CALL_DEPENDS: Final = "Det beror på."
CALL_BETTER: Final = "Bättre kort!"


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened in a hand or between hands.

    ``kind`` is a short snake_case name; the other fields are set where they apply:
    ``seat`` (the actor), ``other`` (a second seat: target, buyer, receiver),
    ``rank`` (a shown card), ``amount`` (chips, a cut point, a count), ``cause``
    (why a player died), ``call`` (the traditional call), ``seats``/``ranks``
    (the showdown).
    """

    kind: str
    seat: int | None = None
    other: int | None = None
    rank: Rank | None = None
    amount: int | None = None
    cause: str | None = None
    call: str | None = None
    seats: tuple[int, ...] = ()
    ranks: tuple[Rank, ...] = ()

    def to_json(self, names: Sequence[str]) -> dict[str, object]:
        """The event as a JSON object, seats given by ``names``."""
        out: dict[str, object] = {"type": self.kind}
        if self.seat is not None:
            out["seat"] = names[self.seat]
        if self.other is not None:
            out[_OTHER.get(self.kind, "other")] = names[self.other]
        if self.rank is not None:
            out["card"] = self.rank.id
        if self.amount is not None:
            out[_AMOUNT.get(self.kind, "amount")] = self.amount
        if self.cause is not None:
            out["cause"] = self.cause
        if self.seats:
            out["cards"] = {names[s]: r.id for s, r in zip(self.seats, self.ranks, strict=True)}
        if self.call is not None:
            out["call"] = self.call
        return out


_OTHER: Final = {
    "offer": "target",
    "exchange": "target",
    "kille_moves": "to",
    "sell": "buyer",
    "sale_accepted": "buyer",
    "sale_rejected": "buyer",
    "svinhugg": "requester",
    "husar": "requester",
    "kuku": "requester",
    "redeal_vote": "asker",
    "deal": "forhand",
}
_AMOUNT: Final = {
    "cut": "at",
    "sell": "price",
    "sale_accepted": "price",
    "buyin": "price",
    "stock_card": "position",
    "revert": "swaps",
    "winner": "pot",
    "deal": "hand",
}
