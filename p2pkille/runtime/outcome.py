"""What a table node is told (its time limits) and what it tells (each hand's outcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from p2pkille.engine.facts import Fact

__all__ = ["DEFAULT_TIMING", "HandOutcome", "Timing"]


@dataclass(frozen=True, slots=True)
class Timing:
    """``sync_interval``: seconds between gap-fill syncs while the game is not finished.
    ``limit``: seconds this node waits for a seat's cryptographic step (and for a
    decision: ``decide_limit``) before it votes that seat's time out. Local: nodes may
    differ; the time-out itself is agreed (docs/protocol.md II.11.3). ``answer_limit``:
    seconds this node waits, once it voted a step, for each other holder's vote or seen
    on it before it votes that holder out (a respond step): longer than any holder's
    ``limit`` and ``decide_limit``, so that a holder with longer limits than this node's
    is not voted out for voting later; it only ends a wait on holders gone silent."""

    sync_interval: float = 0.5
    limit: float = 20.0
    decide_limit: float = 60.0
    answer_limit: float = 120.0


DEFAULT_TIMING: Final = Timing()


@dataclass(slots=True)
class HandOutcome:
    """One committed hand as this node saw it (``to_json`` is the sim's "hands" entry)."""

    hand: int
    died: list[str]
    pot: int
    chips: dict[str, int]
    checkpoint: str
    agreed_by: list[str]
    holders: list[str] = field(default_factory=list)
    """The hand's key holders (whose signatures a committed hand needs)."""
    voided: bool = False
    accusations: list[dict[str, object]] = field(default_factory=list)
    faces: tuple[int, ...] = ()
    """Card index per token from the audit (for a referee replay)."""
    facts: list[Fact] = field(default_factory=list)
    """Every fact of the hand in order, from the Deal."""

    eliminated: list[str] = field(default_factory=list)
    """Seats a voided hand removed from the game."""
    checked: dict[str, int] = field(default_factory=dict)
    """What this node checked for the hand: ``shuffle_steps`` (replayed from the opened
    witnesses, or proved), ``proofs`` (shuffle and answer proofs, strict tables),
    ``shares`` (decryption shares with a proof) and ``signatures`` (checkpoint)."""
    dealt: tuple[int, ...] = ()
    """The seats dealt a card, in turn order: token ``i`` went to ``dealt[i]``."""

    def to_json(self) -> dict[str, object]:
        return {"accusations": self.accusations, "agreed_by": self.agreed_by,
                "checkpoint": self.checkpoint, "chips": self.chips, "died": self.died,
                "eliminated": self.eliminated, "hand": self.hand, "pot": self.pot,
                "voided": self.voided}
