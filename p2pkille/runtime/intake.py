"""Taking envelopes into the transcript: what arrived when, and the forks found.

Every envelope a node receives, and every one it signs, goes through the transcript here.
An accepted envelope is timestamped (gap fill does not send what a peer may only not have
yet, II.10). A fork (two envelopes of one author for one chain slot) is recorded as a
fault of its author and passed on to every member: one that holds only the other branch
would not find it itself (II.11). Forks of accuses are kept apart with their branches: a
verdict blames their author and may name either branch (verdict.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from p2pkille.runtime import messages as msg
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.steps import Stage
from protocol import canonical
from protocol.errors import RemoteProtocolError
from protocol.transcript import Accepted, Buffered, Equivocated, Equivocation, TranscriptEvent

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Intake", "kind_fork"]

#: A checkpoint envelope in canonical JSON holds these bytes: a cheap first filter.
CHECKPOINT_KIND: Final = b'"kind":"checkpoint"'


def kind_fork(fork: Equivocation, kind: str) -> int | None:
    """The hand whose ``kind`` envelope both branches of ``fork`` are, if they are (the
    signatures are verified already: only the bodies are read)."""
    numbers = set()
    for wire in (fork.first, fork.second):
        try:
            obj = canonical.decode_object(wire)
        except RemoteProtocolError:
            return None
        body = obj.get("body")
        if obj.get("kind") != kind or not isinstance(body, dict):
            return None
        numbers.add(body.get("hand"))
    number = numbers.pop()
    return number if not numbers and type(number) is int else None


FORK_VERSIONS: Final = 8
"""Versions of one accuse kept: a verdict names one an honest node holds, or none."""


class Intake:
    """The transcript's input, and the forks it found."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.held_at: dict[tuple[int, int], float] = {}
        """(member, seq) -> when it was taken in (kept one sync interval)."""
        self.accuse_forks: set[tuple[int | None, int]] = set()
        """(seat, hand) of forks whose two branches are both accuses of that hand."""
        self.accuse_fork_wires: dict[tuple[int | None, int], tuple[bytes, ...]] = {}
        """(seat, hand) -> both wires of a fork of its accuse (for a verdict that names
        either)."""

    def fresh(self, member: int, seq: int) -> bool:
        """Taken in less than a sync interval ago: a peer that lacks it may only not have
        it yet (II.10)."""
        at = self.held_at.get((member, seq))
        return at is not None and self.table.now - at < self.table.timing.sync_interval

    def forget_old(self) -> None:
        """Forget when envelopes older than a sync interval were taken in."""
        if self.held_at:
            old = self.table.now - self.table.timing.sync_interval
            self.held_at = {k: t for k, t in self.held_at.items() if t > old}

    def accept(self, data: bytes) -> None:
        """Take a wire from the network (or the log) into the transcript."""
        try:
            events = self.table.transcript.receive(data)
        except RemoteProtocolError:
            self.table.dropped += 1
            return
        self.took(events)
        hand = self.table.hand
        # Only an envelope the chains did not take can be the other branch of a slot.
        if (self.table.stage == Stage.CHECKPOINT and hand is not None
                and len(hand.close.agreed) < len(hand.holders) and CHECKPOINT_KIND in data
                and not any(isinstance(e, Accepted | Buffered) for e in events)):
            self.core.closing.good_checkpoint(data)

    def took(self, events: Sequence[TranscriptEvent]) -> None:
        """What the transcript did with an envelope: accepted it, or found a fork."""
        self.table.version += 1
        for event in events:
            if isinstance(event, Accepted):
                env = event.envelope
                m = self.table.index[env.author]
                self.held_at[(m, env.seq)] = self.table.now
                if m == self.table.me:
                    self.core.outbox.took_own(msg.hand_of(env))
                if env.kind == msg.LEAVE and m not in self.table.left:
                    # Read on arrival, not in chain order: nothing of its author comes
                    # after it, so what the table waits for from it is due now.
                    self.table.left.add(m)
                    self.core.agreeing.on_leave(m, env)
                    self.table.tell("left")
            elif isinstance(event, Equivocated):
                self._fork(event)

    def _fork(self, event: Equivocated) -> None:
        seat = self.table.seat(self.table.index[event.author])
        number = kind_fork(event.evidence, msg.ACCUSE)
        if number is not None:
            self.accuse_forks.add((seat, number))
            held = self.accuse_fork_wires.get((seat, number), ())
            self.accuse_fork_wires[(seat, number)] = (held + tuple(
                w for w in (event.evidence.first, event.evidence.second) if w not in held)
                )[:FORK_VERSIONS]
        self.core.accusations.fault(
            FaultKind.EQUIVOCATION, seat,
            f"{event.author.fingerprint} signed two envelopes for one slot",
            event.evidence.to_bytes())
        self.core.outbox.pass_on([event.evidence.first, event.evidence.second])
