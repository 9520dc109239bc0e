"""The checkpoint's state digest: what a hand leaves behind, in one labelled hash.

``hash32("table-state", canonical JSON of {"buybacks": [..], "chips": [..], "died":
[..], "hand": n, "in_game": [..], "next_dealer": seat, "pot": n, "winner": seat|null})``
with lists in seat order and ``died`` the seats that died in the hand, ascending
(``docs/protocol.md``, "II.8 State digest").
"""

from __future__ import annotations

from p2pkille.engine.machine import Game
from protocol import canonical
from protocol.domain import hash32

__all__ = ["state_digest", "state_json"]


def state_json(game: Game, hand: int) -> dict[str, object]:
    died = sorted(set(game.result.died)) if game.result is not None else []
    return {
        "buybacks": list(game.buybacks),
        "chips": list(game.chips),
        "died": died,
        "hand": hand,
        "in_game": list(game.in_game),
        "next_dealer": game.dealer,
        "pot": game.pot,
        "winner": game.winner,
    }


def state_digest(game: Game, hand: int) -> bytes:
    return hash32("table-state", canonical.encode(state_json(game, hand)))
