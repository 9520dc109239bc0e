"""A read-only view of where a node's current hand stands: for screens, tools and tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from p2pkille.engine.facts import Fact
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage, Step

__all__ = ["HandStatus"]


@dataclass(frozen=True, slots=True)
class HandStatus:
    """The current hand as a node knows it at one moment (a copy: it does not change).

    Seats are table seats unless named holder indices (a key holder's index in
    ``holders``, its protocol seat)."""

    number: int
    stage: Stage
    holders: tuple[int, ...]
    """The seats holding a key in this hand, in turn order."""
    me: int | None
    """My holder index; None if I hold no key."""
    waiting_for: tuple[int, ...]
    """The seats the table waits for now."""
    voiding: bool
    """The hand's agreement decided its void: its void round runs."""
    stopping: bool
    """A fault found or an accuse taken: I want the hand voided, and make no move in it
    but my accuse (true once voiding too)."""
    timed_out: frozenset[int]
    """Seats whose time-out the table agreed."""
    accusing: tuple[int, ...]
    """Seats my own accuse will accuse."""
    accused: frozenset[int]
    """Holder indices whose accuse I took."""
    keys: frozenset[int]
    """Holder indices whose key share I took."""
    shuffled: int
    """Shuffle steps taken."""
    dealt: frozenset[int]
    """Holder indices whose deal I took."""
    revealed: frozenset[int]
    """Holder indices whose close I took."""
    signed: frozenset[int]
    """Holder indices whose good checkpoint signature I hold."""
    facts: tuple[Fact, ...]
    """The hand's facts applied so far, in order (its Deal first)."""
    votes: Mapping[Step, frozenset[int]]
    """Each step voted: the holder indices that voted its time out."""
    answers: Mapping[Step, frozenset[int]]
    """Each step voted: the holder indices that voted on it or said they saw it."""

    @classmethod
    def of(cls, hand: Hand, stage: Stage, waiting_for: tuple[int, ...]) -> HandStatus:
        return cls(
            number=hand.number, stage=stage, holders=hand.holders, me=hand.me,
            waiting_for=waiting_for, voiding=hand.void.voiding,
            stopping=hand.void.stopping,
            timed_out=frozenset(hand.timeouts.timed_out),
            accusing=tuple(a.accused for a in hand.void.mine),
            accused=frozenset(hand.void.accuses), keys=frozenset(hand.deck.announced),
            shuffled=len(hand.deck.steps), dealt=frozenset(hand.deck.dealt),
            revealed=frozenset(hand.close.revealed), signed=frozenset(hand.close.signed),
            facts=tuple(hand.play.facts),
            votes=MappingProxyType({s: frozenset(v) for s, v in hand.timeouts.votes.items()}),
            answers=MappingProxyType({s: frozenset(v)
                                      for s, v in hand.timeouts.responded.items()}))
