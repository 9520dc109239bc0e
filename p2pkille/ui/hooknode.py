"""A table node that tells the screen what happens.

It records what the screen shows: the game's events as they happen (each fact's
events at once, with the game state after them, for the narration), each hand's
outcome as the node decides it (a voided one with the chips and pot it undid), and
each committed hand's audit figures.
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
from p2pkille.runtime.node import HandOutcome, TableNode, Timing
from p2pkille.ui.narration import Standing
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

__all__ = ["HandAudit", "HumanTableNode"]

EventListener = Callable[[list[Event], Game], None]
OutcomeListener = Callable[[HandOutcome, "Standing | None"], None]
LeftListener = Callable[[tuple[int, ...]], None]


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
    on_outcome: OutcomeListener | None = None
    on_left: LeftListener | None = None
    """Told the seats whose signed leave this node holds, each time one arrives."""

    def __init__(self, name: str, identity: Identity, delivery: DeliveryKeyPair,
                 config: TableConfig, decider: Decider, seed: bytes,
                 timing: Timing | None = None) -> None:
        super().__init__(name, identity, delivery, config, decider, seed,
                         timing or Timing())
        self.audits: dict[int, HandAudit] = {}
        self.listener = None
        self.on_outcome = None
        self.on_left = None
        self.record_events = True
        self._told = 0
        self._at_deal = 0
        self._reported = 0
        self.standing: Standing | None = None
        """The chips, pot and seats in the game after the last fact (what a void undoes)."""
        self.watchers.append(self._watch)
        self.watchers.append(self._watch_left)

    def _watch_left(self, what: str) -> None:
        if what == "left" and self.on_left is not None:
            self.on_left(self.left)

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
            self._reported = min(self._reported, len(self.outcomes))  # a node started over
            for done in self.outcomes[self._reported:]:
                if self.on_outcome is not None:
                    self.on_outcome(done, self.standing if done.voided else None)
            self._reported = len(self.outcomes)
        view = self.view
        if view is None:
            return
        events = view.game.events
        if what == "void":
            # The game went back to before the voided hand's deal: its events then, and
            # what the void added (seats expelled). Events not yet recorded then (the
            # node starts recording at its first deal) are not there at all.
            self._told = self._at_deal if events is not None else 0
        if events is None:
            self._told = 0
        elif what != "commit":
            self._told = min(self._told, len(events))
            new = events[self._told:]
            for i, event in enumerate(new):
                if event.kind == "deal":
                    self._at_deal = self._told + i
            self._told = len(events)
            if new and self.listener is not None:
                self.listener(list(new), view.game)
        self.standing = Standing.of(view.game)
