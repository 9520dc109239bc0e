"""The hand told in Swedish, event by event, for the Swedish screen.

The English narration is ``p2pkille selfplay``'s (the command wires it in); this
is its Swedish counterpart for a peer, who knows only its own faces and what the
table has shown. :func:`tell` returns ``""`` for an event not worth a line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from p2pkille.engine.cards import Rank
from p2pkille.engine.events import Event
from p2pkille.engine.machine import Game
from p2pkille.engine.options import HusuEffect, KukuEffect, SwappedKille

__all__ = ["genitive", "tell"]

_CAUSES: Final = {
    "husar": "husaren hugger",
    "husu": "husun (grisen) dödar den som bjöd",
    "svinhugg": "svinhugget faller på kedjans första spelare",
    "kille": "fick killen genom byte",
    "showdown": "lägst kort vid visningen",
}

#: What each traditional call means, in plain Swedish.
MEANING: Final = {
    "Jag är nöjd!": "behåller kortet",
    "Jag går i lek!": "drar från högen",
    "Husar hugger!": "den som bjöd dör",
    "Svinhugg går igen!": "bytena går tillbaka och den som först bjöd dör",
    "Kavall förbi!": "budet går vidare",
    "Värdshus förbi!": "budet går vidare",
    "Kuku står, ingen byta får!": "inga fler byten",
    "Kuku behåll": "alla behåller det de har",
    "På rygg!": "korten vänds upp",
    "Upp till bevis!": "korten visas",
    "Bättre kort!": "begär omgiv",
    "Det beror på.": "den tredje spelaren avgör",
}


def _call(call: str | None) -> str:
    if not call:
        return ""
    meaning = MEANING.get(call)
    return f"«{call}» ({meaning}) - " if meaning else f"«{call}» - "


def genitive(name: str) -> str:
    """``Annas``, but ``Lars`` (a name ending in s, x or z takes no second s)."""
    return name if name[-1:].lower() in ("s", "x", "z") else f"{name}s"


def tell(event: Event, game: Game, names: Sequence[str], known: Mapping[int, Rank],
         me: int | None = None) -> str:
    """One event in Swedish (``names`` in seat order, ``known`` the faces this peer knows,
    ``me`` this peer's seat: its own card is "ditt kort")."""
    def name(seat: int | None) -> str:
        return names[seat] if seat is not None and 0 <= seat < len(names) else "?"

    def card_of(seat: int | None) -> str:
        return "ditt kort" if seat is not None and seat == me else f"{genitive(name(seat))} kort"

    who, other = name(event.seat), name(event.other)
    card = event.rank.id if event.rank is not None else "?"
    call = _call(event.call)
    kind = event.kind
    opts = game.options
    if kind == "deal":
        return f"Giv {event.amount}: {who} ger, {other} är förhand. Potten {game.pot}."
    if kind == "keep":
        return f"  {who}: «{event.call}» - behåller kortet." if event.call else (
            f"  {who} behåller kortet.")
    if kind == "offer":
        return f"  {who} bjuder {other} att byta."
    if kind == "exchange":
        return f"  {who} och {other} byter kort med baksidan upp."
    if kind == "kille_moves":
        return f"  Killen går med framsidan upp från {who} till {other}."
    if kind == "pass":
        if event.seat is None:
            return f"  Högens {card}: {call}nästa kort i högen vänds."
        return f"  {who} visar {card}: {call}budet går vidare."
    if kind == "kuku":
        whose = f"{who} visar kukun" if event.seat is not None else "Högen visar kukun"
        undo = ("alla byten i given går tillbaka" if opts.kuku is KukuEffect.REVERT_ALL
                else "bytandet är slut")
        return f"  {whose}: {call}{undo}."
    if kind == "husar":
        whose = f"{who} visar husaren" if event.seat is not None else "Högens husar"
        return f"  {whose}: {call}den hugger {other}."
    if kind == "svinhugg":
        whose = f"{who} visar husun" if event.seat is not None else "Högens husu"
        if opts.husu is HusuEffect.KILL_REQUESTER:
            return f"  {whose}: {call}grisen dödar {other}."
        return f"  {whose}: {call}grisen slår tillbaka längs bytena med {card_of(event.other)}."
    if kind == "revert":
        n = event.amount or 0
        return f"  {n} byte{'n' if n != 1 else ''} går tillbaka." if n else ""
    if kind == "died":
        return f"  {who} dör: {_CAUSES.get(event.cause or '', event.cause or '')}."
    if kind == "spared":
        return f"  {who} skonas: given måste ha någon levande kvar."
    if kind == "draw":
        return f"  {who}: «{event.call}» - drar från högen." if event.call else (
            f"  {who} drar från högen.")
    if kind == "cut":
        return (f"  {who} kuperar högen vid {event.amount}." if event.amount
                else f"  {who} kuperar inte.")
    if kind == "stock_card":
        return f"  {who} vänder upp kort {event.amount} i högen: {card}."
    if kind == "take":
        return f"  {who} tar {card}."
    if kind == "stock_empty":
        return f"  Högen är slut: {who} behåller kortet."
    if kind == "redeal_asked":
        return f"  {who}: {call}begär omgiv."
    if kind == "redeal_vote":
        if event.cause == "depends":
            return f"  {who}: {call}"
        verb = "godtar" if event.cause == "agree" else "vägrar"
        return f"  {who} {verb} omgiv."
    if kind == "redeal_refused":
        return f"  Omgiv vägras; {who} spelar vidare."
    if kind == "redeal":
        return f"  Alla godtar: {who} ger igen, ingen dör, inga marker flyttas."
    if kind == "sell":
        return f"  {who} bjuder ut sitt kort till {other} för {event.amount} marker."
    if kind == "sale_accepted":
        return (f"  {other} köper {card_of(event.seat)} för {event.amount} marker; {who} "
                f"lämnar spelet.")
    if kind == "sale_rejected":
        return f"  {other} köper inte {card_of(event.seat)}."
    if kind == "showdown":
        faces = []
        for seat, rank in zip(event.seats, event.ranks, strict=True):
            pos = game.position_of(seat)
            low = (rank is Rank.KILLE and opts.swapped_kille is not SwappedKille.DIES
                   and pos is not None and game.via_swap[pos])
            faces.append(f"{name(seat)} {rank.id}" + (" (bytt: lägst)" if low else ""))
        return f"  {call}{', '.join(faces)}."
    if kind == "buyin":
        return f"  {who} köper in sig igen för {event.amount} marker."
    if kind == "decline":
        return f"  {who} köper inte in sig."
    if kind == "winner":
        return f"  {who} är ensam kvar och tar potten på {event.amount}."
    if kind == "expel":
        return f"  {who} utesluts ur spelet."
    return f"  {kind}"
