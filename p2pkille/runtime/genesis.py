"""The table's genesis: every member commits to a nonce, opens it, and accepts the
seating and first dealer that all nonces give (docs/protocol.md II.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.engine.peer import PeerView
from p2pkille.runtime.bodies import AcceptBody, CommitBody, NonceBody
from p2pkille.runtime.config import genesis
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.steps import Stage
from protocol.domain import hash32
from protocol.envelope import Envelope

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Genesis"]


class Genesis:
    """The commits, nonces and accepts of the members; the genesis they give."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.commits: dict[int, bytes] = {}
        self.nonces: dict[int, bytes] = {}
        self.accepts: set[int] = set()
        self.digest = b""
        """The genesis document's digest (what every member accepts)."""
        self.first_dealer = 0

    @property
    def nonce(self) -> bytes:
        """The nonce this node commits to in the genesis (derived from its seed): the
        simulator uses it to know the seating before the table starts."""
        return self.table.secret("genesis-nonce")[:32]

    def awaited(self) -> tuple[int, ...] | None:
        """The members (indices) whose genesis envelope the table waits for; None once
        the genesis is done."""
        stage = self.table.stage
        everyone = range(len(self.table.members))
        if stage == Stage.COMMIT:
            return tuple(m for m in everyone if m not in self.commits)
        if stage == Stage.NONCE:
            return tuple(m for m in everyone if m not in self.nonces)
        if stage == Stage.ACCEPT:
            return tuple(m for m in everyone if m not in self.accepts)
        return None

    def on_commit(self, m: int, env: Envelope) -> None:
        self.commits[m] = CommitBody.parse(env).commit
        if len(self.commits) == len(self.table.members):
            self.table.move(Stage.NONCE)

    def on_nonce(self, m: int, env: Envelope) -> None:
        nonce = NonceBody.parse(env).nonce
        if hash32("genesis-commit", nonce) != self.commits.get(m):
            raise Blame(FaultKind.GENESIS, AUTHOR, "nonce does not match its commitment")
        self.nonces[m] = nonce
        if len(self.nonces) == len(self.table.members):
            table = self.table
            start = genesis(table.config, [self.nonces[i] for i in range(len(table.members))])
            table.member_of = list(start.seats)
            table.seat_of = [0] * len(table.members)
            for seat, member in enumerate(start.seats):
                table.seat_of[member] = seat
            self.digest = start.digest
            self.first_dealer = start.dealer
            table.view = PeerView(table.config.options, table.names, stake=table.config.stake,
                                  chips=table.config.chips, dealer=start.dealer,
                                  own_seat=table.my_seat)
            table.move(Stage.ACCEPT)

    def on_accept(self, m: int, env: Envelope) -> None:
        digest = AcceptBody.parse(env).genesis
        if digest != self.digest:
            raise Blame(FaultKind.GENESIS, AUTHOR, "accepted another genesis document")
        self.accepts.add(m)
        self.core.closing.start_cut(m, env.seq)
        if len(self.accepts) == len(self.table.members):
            self.core.dealing.next_hand()

    def act(self, out: list[Output]) -> bool:
        """My genesis envelope of the stage, once."""
        stage = self.table.stage
        outbox = self.core.outbox
        if stage == Stage.COMMIT:
            if outbox.once("commit"):
                outbox.emit(out, CommitBody(hash32("genesis-commit", self.nonce)))
                return True
            return False
        if stage == Stage.NONCE:
            if outbox.once("nonce"):
                outbox.emit(out, NonceBody(self.nonce))
                return True
            return False
        if outbox.once("accept"):
            outbox.emit(out, AcceptBody(self.digest))
            return True
        return False
