"""Typed faults a node detects: the seat to blame, why, and the evidence.

Every check that fails in :mod:`p2pkille.runtime.node` ends in one method that
builds a :class:`Fault`; part 2 turns these into signed accusations.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["Fault", "FaultKind"]


class FaultKind(enum.Enum):
    MALFORMED = "malformed"            # a signed envelope whose body does not parse
    EQUIVOCATION = "equivocation"      # two envelopes for one chain slot
    BAD_KEY = "bad-key"                # a key-share proof that does not verify
    BAD_SHARE = "bad-share"            # a decryption share (sealed or public) that fails
    BAD_SEAL = "bad-seal"              # a sealed box that does not open or match its digest
    ILLEGAL_ACT = "illegal-act"        # a decision the rules or the turn do not allow
    FALSE_SHOW = "false-show"          # an opened card that is not what was claimed
    FALSE_FACT = "false-fact"          # a claim the faces contradict (showdown or audit)
    AUDIT = "audit"                    # the end-of-hand audit blames the seat
    GENESIS = "genesis"                # a nonce that does not match its commitment, etc.
    BAD_PROOF = "bad-proof"            # a shuffle proof or an answer proof that fails
    CHECKPOINT = "checkpoint"          # a checkpoint signature over another statement


@dataclass(frozen=True, slots=True)
class Fault:
    """``seat`` (table seat, or ``None`` before seats exist) is to blame in ``hand``."""

    kind: FaultKind
    seat: int | None
    hand: int
    reason: str
    evidence: bytes = field(default=b"", repr=False)

    def to_json(self, names: list[str]) -> dict[str, object]:
        return {
            "accused": None if self.seat is None else names[self.seat],
            "hand": self.hand,
            "kind": self.kind.value,
            "reason": self.reason,
        }
