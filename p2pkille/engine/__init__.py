"""The Byteskille rules engine: pure, deterministic, free of I/O.

- :mod:`.cards`: the 42-card Kille deck (:class:`Rank`, :class:`Card`, :data:`DECK`).
- :mod:`.options`: rule options and the presets ``wikipedia``, ``bytes-kille``,
  ``enkortskille`` (:data:`PRESETS`).
- :mod:`.facts`: the public facts the state machine consumes, with a JSON round trip.
- :mod:`.machine`: :class:`Game`, the one transition table (:data:`TRANSITIONS`).
- :mod:`.referee`: the full-information view (an oracle that knows every face).
- :mod:`.peer`: a peer's view with hidden faces and false-fact detection.
- :mod:`.view`: a seat's view and the :class:`Decider` protocol bots implement.
"""

from __future__ import annotations

from p2pkille.engine.cards import DECK, RANKS, Card, Rank
from p2pkille.engine.errors import (
    EngineError,
    IllegalMoveError,
    InvalidCardError,
    InvalidFactError,
    InvalidOptionsError,
    InvalidSetupError,
)
from p2pkille.engine.events import Event
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decision,
    Decline,
    Disclosure,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Showdown,
    StockCard,
    Swap,
    Vote,
    VoteChoice,
    fact_from_json,
    fact_to_json,
)
from p2pkille.engine.machine import TRANSITIONS, Claim, Expect, Game, HandResult, Phase
from p2pkille.engine.options import PRESETS, RuleOptions, options_from_json
from p2pkille.engine.peer import FalseFact, PeerView
from p2pkille.engine.referee import Referee, oracle_fact
from p2pkille.engine.view import Decider, DecisionPending, SeatView

__all__ = [
    "DECK",
    "PRESETS",
    "RANKS",
    "TRANSITIONS",
    "Answer",
    "AskRedeal",
    "BuyIn",
    "Card",
    "Claim",
    "Cut",
    "Deal",
    "Decider",
    "Decision",
    "DecisionPending",
    "Decline",
    "Disclosure",
    "EngineError",
    "Event",
    "Expect",
    "Fact",
    "FalseFact",
    "Game",
    "HandResult",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidFactError",
    "InvalidOptionsError",
    "InvalidSetupError",
    "Keep",
    "PeerView",
    "Phase",
    "Rank",
    "Referee",
    "RuleOptions",
    "SaleAnswer",
    "SeatView",
    "Sell",
    "Showdown",
    "StockCard",
    "Swap",
    "Vote",
    "VoteChoice",
    "fact_from_json",
    "fact_to_json",
    "options_from_json",
    "oracle_fact",
]
