"""Where a table stands and whom it waits for there: stages, steps and seat numbers.

A node walks its table through the stages :data:`Stage.COMMIT` .. :data:`Stage.DONE`
(genesis, then per hand keys, shuffle, deal, play, reveal, checkpoint). A *step* names
one seat's awaited envelope: the seat, a stage and a position in it (the game's fact
count in play, else 0). Votes (``timeout``) and ``seen`` carry a step
(docs/protocol.md II.11.3). Besides the stages a node walks through, a step can be at
one of three more: collecting a voided hand's accusations (:data:`Stage.VOID`, which no
vote names: the verdict's agreement times seats out there), a forward owed since a fact
count (:data:`Stage.OWED`), and a holder's answer to a vote on another step
(:data:`Stage.RESPOND`, whose ``at`` packs that other step).

Seats are numbered three ways, and the names below keep them apart:

- :data:`TableSeat`: a player's seat at the table (``P1`` is 0), from the genesis;
- :data:`Holder`: a key holder's index in a hand's holders (its *protocol seat*), the
  number the hand's cryptography uses;
- :data:`MemberIndex`: a member's index in the table's members (sorted by key), the
  order of the transcript's chains.

A seat without a key in a hand (a buyer) is numbered past every holder where a holder
index is expected: :func:`keyless_index`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, NewType

__all__ = ["Holder", "MemberIndex", "Stage", "Step", "TableSeat", "keyless_index"]

TableSeat = NewType("TableSeat", int)
Holder = NewType("Holder", int)
MemberIndex = NewType("MemberIndex", int)


class Stage(enum.IntEnum):
    """The stages of a table, in order, and the stages only a step can be at."""

    COMMIT = 0
    NONCE = 1
    ACCEPT = 2
    KEYS = 3
    SHUFFLE = 4
    DEAL = 5
    PLAY = 6
    REVEAL = 7
    CHECKPOINT = 8
    DONE = 9
    VOID = 10
    """Collecting the accusations of a stopped hand."""
    OWED = 11
    """A forward owed since fact count ``at`` (beside play)."""
    RESPOND = 13
    """A holder's answer (vote or seen) to a vote on another step."""


#: The stages a step a holder answers can be at (what a respond step may be about).
ANSWERED_STAGES: Final = frozenset({Stage.KEYS, Stage.SHUFFLE, Stage.DEAL, Stage.PLAY,
                                    Stage.REVEAL, Stage.CHECKPOINT, Stage.OWED})
_TEXT: Final = re.compile(r"P(\d+)@([a-z]+):(\d+)")


@dataclass(frozen=True, slots=True, order=True)
class Step:
    """``seat`` awaited at ``stage``, position ``at`` (a fact count in play, else 0, or the
    packed step of a respond step). ``stage`` is an int: one off the wire may name no
    :class:`Stage` (it then matches no step a node waits at)."""

    seat: int
    stage: int
    at: int

    def __str__(self) -> str:
        try:
            stage = Stage(self.stage).name.lower()
        except ValueError:
            stage = str(self.stage)
        return f"P{self.seat + 1}@{stage}:{self.at}"

    @classmethod
    def from_text(cls, text: str) -> Step:
        """The step ``str`` wrote (``P2@play:5``); :class:`ValueError` for other text."""
        found = _TEXT.fullmatch(text)
        if found is None or found[2].upper() not in Stage.__members__ or int(found[1]) < 1:
            raise ValueError(f"not a step: {text!r} (expected e.g. 'P2@play:5')")
        return cls(int(found[1]) - 1, Stage[found[2].upper()], int(found[3]))

    def __iter__(self) -> Iterator[int]:
        return iter((self.seat, self.stage, self.at))

    def respond(self, seat: int) -> Step:
        """``seat``'s answer to this step, as a step of its own (docs/protocol.md II.11.3)."""
        return Step(seat, Stage.RESPOND, (self.at * 16 + self.stage) * 64 + self.seat)

    @property
    def about(self) -> Step | None:
        """The step a respond step answers; ``None`` for any other step."""
        if self.stage != Stage.RESPOND:
            return None
        return Step(self.at % 64, (self.at // 64) % 16, self.at // 1024)

    def body(self, hand: int) -> dict[str, object]:
        """The body of a ``timeout`` or ``seen`` of this step in hand ``hand``."""
        return {"at": self.at, "hand": hand, "seat": self.seat, "stage": int(self.stage)}


def keyless_index(holders: int, seat: int) -> int:
    """Where a seat without a key (table seat ``seat``) stands among ``holders`` key
    holders' indices: past all of them, and still naming the seat. It is the prover of a
    buyer's keyless claim (every holder answers it) and where a buyer's disclosure is kept."""
    return holders + seat
