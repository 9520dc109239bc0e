"""Typed faults a node detects: the seat to blame, why, and the evidence.

Every check that fails ends in :meth:`p2pkille.runtime.accusations.Accusations.fault`,
which records a :class:`Fault` and, for a key holder's fault with evidence, stops the
hand so the node accuses (docs/protocol.md II.11.1).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from protocol.errors import ProtocolError

__all__ = ["AUTHOR", "BUYER_FAULTS", "PUBLIC_CHECKS", "SEALED", "Blame", "Fault", "FaultKind"]


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


#: The seat :class:`Blame` names for "the author of the envelope being consumed".
AUTHOR: Final = -1
#: A sealed share that fails: settled as a dispute over what the box held.
SEALED: Final = frozenset({FaultKind.BAD_SEAL.value, FaultKind.BAD_SHARE.value})
#: A buyer's faults that stop the hand, besides a sealed-share dispute (which its own
#: accuse answers: it discloses, as a holder does): each is decided the same by every node
#: from public data.
BUYER_FAULTS: Final = frozenset(k.value for k in (
    FaultKind.FALSE_FACT, FaultKind.BAD_PROOF, FaultKind.EQUIVOCATION))
#: Faults every node finds when it consumes the envelope.
PUBLIC_CHECKS: Final = frozenset(k.value for k in (
    FaultKind.MALFORMED, FaultKind.BAD_KEY, FaultKind.BAD_SHARE, FaultKind.ILLEGAL_ACT,
    FaultKind.FALSE_SHOW, FaultKind.CHECKPOINT, FaultKind.BAD_PROOF))


class Blame(ProtocolError):
    """Raised inside a consume handler: the fault to record. ``seat`` is the table seat
    to blame: :data:`AUTHOR` for the envelope's author, ``None`` for nobody yet (the
    audit will name the seat)."""

    def __init__(self, kind: FaultKind, seat: int | None, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.seat = seat
        self.reason = reason
