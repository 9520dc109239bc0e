"""A table node that tells the screen what happens.

It records what the screen shows: the game's events as they happen (with the game
state of that moment, for the narration) and each committed hand's audit figures.
Decisions a person has not made yet need nothing here: ``TableNode`` itself honours
:class:`~p2pkille.engine.view.DecisionPending`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2pkille.engine.events import Event
from p2pkille.engine.machine import Game
from p2pkille.engine.view import Decider
from p2pkille.runtime.config import TableConfig
from p2pkille.runtime.node import TableNode, Timing
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

__all__ = ["HandAudit", "HumanTableNode"]

EventListener = Callable[[Event, Game], None]


@dataclass(frozen=True, slots=True)
class HandAudit:
    """What this node checked for one committed hand."""

    hand: int
    shuffle_steps: int
    """Shuffle steps whose proofs (the revealed witnesses) the audit replayed."""
    shares: int
    """Decryption shares with a DLEQ proof this node verified."""
    signatures: int
    """Checkpoint signatures verified."""
    checkpoint: str
    dealt: tuple[int, ...] = ()
    """The seats dealt a card, in turn order: token ``i`` went to ``dealt[i]``."""
    proofs: int = 0
    """Shuffle and answer proofs checked (strict tables; 0 at an audit table)."""


class HumanTableNode(TableNode):
    """A :class:`TableNode` that reports events and audits to the screen, through the
    node's public watchers."""

    listener: EventListener | None = None

    def __init__(self, name: str, identity: Identity, delivery: DeliveryKeyPair,
                 config: TableConfig, decider: Decider, seed: bytes,
                 timing: Timing | None = None) -> None:
        super().__init__(name, identity, delivery, config, decider, seed,
                         timing or Timing())
        self.audits: dict[int, HandAudit] = {}
        self.listener = None
        self.record_events = True
        self._told = 0
        self.watchers.append(self._watch)

    def _watch(self, what: str) -> None:
        if what in ("commit", "void"):
            # On a void too: a node that starts over (TableNode._rebuild) may count hands
            # in its replay, where nobody watches.
            for done in self.outcomes:
                if done.voided or done.hand in self.audits:
                    continue
                checked = done.checked
                self.audits[done.hand] = HandAudit(
                    done.hand, checked.get("shuffle_steps", 0), checked.get("shares", 0),
                    checked.get("signatures", 0), done.checkpoint, done.dealt,
                    checked.get("proofs", 0))
        if what == "commit":
            return
        view = self.view
        if view is None or view.game.events is None:
            return
        events = view.game.events
        self._told = min(self._told, len(events))  # a voided hand restored the game
        new, self._told = events[self._told:], len(events)
        if self.listener is not None:
            for event in new:
                self.listener(event, view.game)
