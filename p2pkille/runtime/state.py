"""What every concern of a table node reads: who is at the table, the chains, the game.

:class:`TableState` holds the table-level facts that no one concern owns: the member's
identity and the table's configuration (fixed), the transcript and how far each chain is
consumed, the seating (set once by the genesis), the game view, the current hand, the
stage, the faults found and the hands decided. Each changing field names its writer, and
the stage moves only along :data:`MOVES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from p2pkille.engine.peer import PeerView
from p2pkille.engine.view import Decider
from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import TableConfig, seat_name
from p2pkille.runtime.faults import AUTHOR, Blame, Fault, FaultKind
from p2pkille.runtime.outcome import HandOutcome, Timing
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage
from protocol.domain import hash64
from protocol.errors import LocalProtocolError
from protocol.group import Workers
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair
from protocol.rng import DeterministicRng
from protocol.transcript import Transcript

__all__ = ["MOVES", "TableState"]

_HAND_STAGES: Final = (Stage.KEYS, Stage.SHUFFLE, Stage.DEAL, Stage.PLAY, Stage.REVEAL,
                       Stage.CHECKPOINT)
#: The stage moves a node makes: the genesis in order; a hand's stages in order; a new
#: hand (or the game's end) after the genesis or from any stage of a hand (it was counted
#: or voided); back to play from after it (a rewind to a late decision's step).
MOVES: Final = frozenset({
    (Stage.COMMIT, Stage.NONCE), (Stage.NONCE, Stage.ACCEPT),
    (Stage.KEYS, Stage.SHUFFLE), (Stage.SHUFFLE, Stage.DEAL), (Stage.DEAL, Stage.PLAY),
    (Stage.PLAY, Stage.REVEAL), (Stage.REVEAL, Stage.CHECKPOINT),
    *((before, after) for before in (Stage.ACCEPT, *_HAND_STAGES)
      for after in (Stage.KEYS, Stage.DONE)),
    *((before, Stage.PLAY) for before in (Stage.PLAY, Stage.REVEAL, Stage.CHECKPOINT)),
})


class TableState:
    """The table as every concern of a node sees it (see the module doc)."""

    def __init__(self, identity: Identity, delivery: DeliveryKeyPair, config: TableConfig,
                 decider: Decider, seed: bytes, timing: Timing) -> None:
        self.identity = identity
        self.delivery = delivery
        self.config = config
        self.decider = decider
        """Swapped only by a rebuild (rewind.py)."""
        self.seed = bytes(seed)
        self.timing = timing
        self.members = config.identities
        if identity.public not in self.members:
            raise ValueError(f"{identity.public.fingerprint} is not a member of the table")
        self.me = self.members.index(identity.public)
        self.index = {member: i for i, member in enumerate(self.members)}
        self.strict = config.mode == "strict"
        self.transcript = Transcript(table=config.table_id, members=self.members,
                                     kinds=msg.KINDS)
        self.consumed = [0] * len(self.members)
        """Per member, the seq of its last envelope consumed (core.py moves it on; an
        adopted fork (closing.py) and a rewind (rewind.py) give some back)."""
        self.stage = Stage.COMMIT
        """Moved by :meth:`move` only."""
        self.seat_of: list[int] = []
        """member index -> table seat, and ``member_of`` back (set by genesis.py)."""
        self.member_of: list[int] = []
        self.view: PeerView | None = None
        """The game as this member sees it (made by genesis.py, fed by play.py)."""
        self.hand: Hand | None = None
        """The hand in course or last decided (dealing.py deals each)."""
        self.faults: list[Fault] = []
        """Every fault found, in order (:meth:`note`)."""
        self.outcomes: list[HandOutcome] = []
        """Every hand decided, counted or voided (closing.py and verdict.py)."""
        self.version = 0
        """Bumped whenever the transcript may have grown: caches key on it."""
        self.now = 0.0
        """The time of the input being handled (start, receive, wake)."""
        self.dropped = 0
        """Transport input ignored: bytes that are no valid envelope or sync."""
        self.left: set[int] = set()
        """Members whose chain holds a ``leave`` (intake.py): their steps are due at once."""
        self.watchers: list[Callable[[str], None]] = []
        self.workers: Workers | None = None
        self.record_events = False

    def carry(self, old: TableState) -> None:
        """A rebuild from ``old`` (rewind.py): what its owner set, its counts, its time.
        Its watchers and decider come back once the rebuild has replayed the transcript
        (:meth:`resume`): the replay tells no screen and asks no person."""
        self.workers, self.record_events = old.workers, old.record_events
        self.dropped, self.now = old.dropped, old.now

    def resume(self, decider: Decider, watchers: list[Callable[[str], None]]) -> None:
        self.decider, self.watchers = decider, watchers

    # -- the stage ------------------------------------------------------------------------

    def move(self, stage: Stage) -> None:
        """Move to ``stage``; a move not in :data:`MOVES` is this node's own bug."""
        if stage != self.stage and (self.stage, stage) not in MOVES:
            raise LocalProtocolError(f"stage {self.stage.name} cannot move to {stage.name}")
        self.stage = stage

    def step_now(self) -> tuple[int, int]:
        """The step the current hand is at: (stage, facts applied) in play, (stage, 0)
        in the other stages, (VOID, 0) while the hand's accusations are collected."""
        hand = self.hand
        if hand is not None and hand.void.voiding:
            return Stage.VOID, 0
        # The game's fact count, not a node-local one: a voided hand rewinds it, so
        # every node names the same step whatever it consumed of the voided hand.
        view = self.view
        played = view.game.fact_count if view is not None else 0
        return int(self.stage), played if self.stage == Stage.PLAY else 0

    def reached(self, at: int) -> bool:
        """Has the game reached fact count ``at`` (it may be past it)? A voiding node gives
        the default only there: past it (its own late decision) it rewinds, so that it
        reaches the later steps the table voted on by the table's branch."""
        view = self.view
        return view is not None and view.game.fact_count >= at

    # -- seats ----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return [seat_name(s) for s in range(len(self.members))]

    @property
    def my_seat(self) -> int | None:
        return self.seat_of[self.me] if self.seat_of else None

    def seat(self, member: int) -> int | None:
        return self.seat_of[member] if self.seat_of else None

    def has_left(self, seat: int) -> bool:
        """Did ``seat`` (a member index during the genesis) sign a ``leave``?"""
        return (self.member_of[seat] if self.member_of else seat) in self.left

    def holder(self, m: int) -> int:
        """Member ``m``'s holder index in the current hand; :class:`Blame` if it has none."""
        hand = self.hand
        assert hand is not None
        index = hand.protocol_seat(self.seat_of[m])
        if index is None:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "not a key holder of this hand")
        return index

    def sits(self, hand: Hand, seat: int) -> bool:
        """Does ``seat`` sit in ``hand`` (a player of it, keyless if it bought)?"""
        view = self.view
        return view is not None and seat in view.game.order

    def in_play(self, hand: Hand, seat: int) -> bool:
        """Does ``seat``, holding no key of ``hand``, sit in it (a buyer)? Its lies and
        its silence then stop the hand as a key holder's do (II.11.1, II.11.3); other
        members without a key cannot stall or spoil it."""
        return (seat not in hand.holders and self.stage in (Stage.PLAY, Stage.REVEAL)
                and self.sits(hand, seat))

    # -- chains ---------------------------------------------------------------------------

    def last_of(self, seat: int) -> bytes:
        """The wire of ``seat``'s last consumed envelope: evidence of a fault that the
        hand's public record shows (audit, false fact) rather than one envelope."""
        member = self.member_of[seat]
        env = self.transcript.get(self.members[member], self.consumed[member])
        return b"" if env is None else env.wire

    def moved_on(self, seat: int, number: int) -> bool:
        """Does ``seat``'s chain hold an envelope of a hand after ``number``?"""
        m = self.member_of[seat]
        member = self.members[m]
        seq = self.consumed[m] + 1
        while (env := self.transcript.get(member, seq)) is not None:
            later = msg.hand_of(env)
            if later is not None and (later > number or (
                    later == number and env.kind == msg.OVER)):
                return True
            seq += 1
        return False

    # -- secrets, faults, watchers --------------------------------------------------------

    def secret(self, purpose: str, *parts: bytes) -> bytes:
        """A secret of this member for ``purpose``: from its seed, so a node replaying its
        log derives the same."""
        return hash64("runtime-secret", self.seed, purpose.encode(), *parts)

    def rng(self, purpose: str, *parts: int) -> DeterministicRng:
        return DeterministicRng(self.secret(purpose, *(p.to_bytes(8, "big") for p in parts)))

    def note(self, fault: Fault) -> None:
        """Record a fault (accusations.py decides whether it stops the hand)."""
        self.faults.append(fault)

    def tell(self, what: str) -> None:
        for watcher in self.watchers:
            watcher(what)
