"""Taking back what came too late: a rewind to a defaulted decision's step, and a rebuild
from the transcript after a counted hand turned out voided (docs/protocol.md II.11.3).

A rewind: a node that applied a seat's decision the table then agreed came too late
goes back to that step and takes the default. A rebuild: a node that counted a hand and
then took votes that agree a silent set in it (the holders outside the set void it)
replays its whole transcript into a fresh machine, as a restart from its log does, and
follows the table from there.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from p2pkille.engine.errors import EngineError
from p2pkille.engine.facts import Fact
from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import ActBody
from p2pkille.runtime.io import Output
from p2pkille.runtime.recorded import RecordedDecider
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage
from protocol.errors import ProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Rewinder"]


class Rewinder:
    """Rewinds and rebuilds, and counts them."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.rewinds = 0
        """Late decisions this node had taken and took back."""
        self.rebuilds = 0
        """Times this node found a silent set agreed in a hand it had counted and took its
        transcript back from the start."""
        self.due = False
        self.rebuilt: set[int] = set()
        """Hands I started over for: once each (a second start would decide the same)."""

    def rewind(self, hand: Hand, at: int) -> None:
        """Go back to fact count ``at`` of ``hand``: what I took of the others past it goes
        back to their chains (core.py consumes it again on the table's branch), and what
        I built past it goes: draws, shows, forwards owed, the close and the checkpoint,
        and the marks of my own moves there (I make them again)."""
        self.rewinds += 1
        play = self.core.play
        play.rewind_to(hand, at)
        for m, seq in play.give_back(hand, at).items():
            self.table.consumed[m] = min(self.table.consumed[m], seq - 1)
        self.table.version += 1
        self.core.timeouts.forget_silent(hand)
        self.core.custody.rewind_to(hand, at)
        self.table.move(min(self.table.stage, Stage.PLAY))
        self.core.closing.reopen(hand)
        self.core.outbox.forget(hand.number, ("show", "draw", Stage.REVEAL, Stage.CHECKPOINT))

    def carry(self, old: Rewinder) -> None:
        """A rebuild from ``old``'s machine: one more rebuild, and the hands started over."""
        self.rebuilds = old.rebuilds + 1
        self.rebuilt = old.rebuilt

    def start_over(self, number: int) -> None:
        """Votes taken after I counted hand ``number`` void it: rebuild (once per hand)."""
        if number not in self.rebuilt:
            self.rebuilt.add(number)
            self.due = True

    def rebuild(self, out: list[Output]) -> Core:
        """A fresh machine of this member with every accepted envelope taken back, as a
        restart from the log makes (its own envelopes are re-derived and found sent; what
        differs now, e.g. its accuse of the hand it had counted, is new). Its decisions
        come from its chain first, so it makes none twice; its own time-out votes of a
        hand it no longer holds a key in hold nothing back. The caller uses it from now on."""
        table = self.table
        facts: list[Fact] = []
        for env in table.transcript.chain(table.identity.public):
            if env.kind == msg.ACT:
                with contextlib.suppress(ProtocolError, EngineError, ValueError):
                    facts.append(ActBody.parse(env).fact)
        decider = table.decider
        fresh = type(self.core)(self.core.node, table.identity, table.delivery, table.config,
                     RecordedDecider(facts, decider), table.seed, table.timing)
        fresh.behaviour, fresh.probe = self.core.behaviour, self.core.probe
        fresh.replay(env.wire for env in table.transcript.accepted)
        fresh.timeouts.take_own_votes()
        fresh.table.carry(table)
        fresh.outbox.carry(self.core.outbox)
        fresh.timeouts.carry(self.core.timeouts)
        fresh.rewinder.carry(self)
        fresh.pump(out)
        # The forks I held, after the chains as a restart from the log takes them: only one
        # branch of each is among the accepted envelopes, and a fork held nowhere else
        # (its other branch sent to me alone) would be lost, with its author's blame.
        for proof in table.transcript.equivocations:
            fresh.intake.accept(proof.first)
            fresh.intake.accept(proof.second)
        fresh.pump(out)
        fresh.table.resume(decider, table.watchers)
        fresh.table.tell("void")
        return fresh
