"""Compact scenario notation for the engine's unit tests.

``hand("A=7 B=3 C=kavall", "A swap, B keep, C swap 2", stock="kuku 12", after="A buyin")``
builds one replay hand; :func:`play` runs a whole replay document.
"""

from __future__ import annotations

import copy
from typing import Any

from p2pkille.engine.machine import Game
from p2pkille.replay import run_replay


def _move(text: str) -> list[object]:
    parts: list[object] = [int(p) if p.isdigit() else p for p in text.split()]
    return parts


def hand(cards: str, moves: str = "", *, stock: str = "", after: str = "") -> dict[str, object]:
    return {
        "cards": dict(item.split("=") for item in cards.split()),
        "stock": stock.split(),
        "moves": [_move(m) for m in moves.split(",") if m.strip()],
        "after": [_move(m) for m in after.split(",") if m.strip()],
    }


def doc(ruleset: str, seats: str, dealer: str, hands: list[dict[str, object]], *,
        stake: int = 10, chips: int = 100, options: dict[str, object] | None = None
        ) -> dict[str, object]:
    return {
        "ruleset": ruleset,
        "options": options or {},
        "seats": seats.split(),
        "stake": stake,
        "chips": chips,
        "dealer": dealer,
        "hands": hands,
    }


def play(ruleset: str, seats: str, dealer: str, *hands: dict[str, object],
         **kwargs: Any) -> dict[str, Any]:
    out: dict[str, Any] = run_replay(doc(ruleset, seats, dealer, list(hands), **kwargs))
    return out


def calls(out_hand: dict[str, Any]) -> list[str]:
    return [e["call"] for e in out_hand["events"] if "call" in e]


def kinds(out_hand: dict[str, Any]) -> list[str]:
    return [e["type"] for e in out_hand["events"]]


def snapshot(game: Game) -> dict[str, object]:
    """Every slot of the game, deep-copied, to show a rejected input changed nothing."""
    return {name: copy.deepcopy(getattr(game, name)) for name in Game.__slots__
            if name not in ("options",)}
