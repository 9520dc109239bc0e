"""Consuming an envelope: the handler of its kind, and the fault it turns into if its
checks fail (docs/protocol.md II.6).

Every envelope of a chain is consumed once, in chain order, when readiness.py says the
table is ready for it. Its body is checked against its kind first; an envelope of a hand
already decided, or of a stage the table has passed, is a fault of its author (or, for
votes on a decided hand, an answer to give: late.py). A handler raises only the remote
kinds of error on peer input: each becomes a fault of the envelope's author.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from p2pkille.engine.errors import EngineError
from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreeing import instance_of
from p2pkille.runtime.faults import AUTHOR, Blame, Fault, FaultKind
from p2pkille.runtime.steps import Stage
from protocol.envelope import Envelope
from protocol.errors import ProtocolError, RemoteProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Consumer"]

Handler = Callable[[int, Envelope], None]
_GENESIS = (msg.COMMIT, msg.NONCE, msg.ACCEPT, msg.OVER, msg.LEAVE)  # no hand's stage
_ROUND = (msg.ACCUSE, msg.TIMEOUT, msg.SEEN, msg.PROPOSE, msg.VOTE)


class Consumer:
    """The handler map, and the checks every envelope passes before its handler."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.handlers: dict[str, Handler] = {
            msg.COMMIT: core.genesis.on_commit, msg.NONCE: core.genesis.on_nonce,
            msg.ACCEPT: core.genesis.on_accept,
            msg.KEY: core.dealing.on_key, msg.SHUFFLE: core.dealing.on_shuffle,
            msg.DEAL: core.dealing.on_deal,
            msg.ACT: core.play.on_act, msg.ANSWER: core.play.on_answer,
            msg.DISCLOSE: core.play.on_disclose, msg.DRAW: core.play.on_draw,
            msg.SHOW: core.play.on_show, msg.REWOUND: core.play.on_rewound,
            msg.FORWARD: core.custody.on_forward, msg.PET: core.claims.on_pet,
            msg.REVEAL: core.closing.on_reveal, msg.CHECKPOINT: core.closing.on_checkpoint,
            msg.OVER: core.closing.on_over,
            msg.ACCUSE: core.accusations.on_accuse,
            msg.TIMEOUT: core.timeouts.on_timeout, msg.SEEN: core.timeouts.on_seen,
            msg.LEAVE: core.timeouts.on_leave,
            msg.PROPOSE: core.agreeing.on_agreement, msg.VOTE: core.agreeing.on_agreement,
        }
        assert set(self.handlers) == msg.KINDS, "a handler per kind"

    def handler(self, kind: str) -> Handler:
        return self.handlers[kind]

    def consume(self, m: int, env: Envelope) -> None:
        """Consume member ``m``'s envelope ``env``; a failed check is its author's fault."""
        seat = self.table.seat(m)
        hand = self.table.hand
        if (hand is not None and seat in hand.play.skipping
                and msg.hand_of(env) == hand.number
                and env.kind not in (msg.REWOUND, msg.ACCUSE, msg.TIMEOUT, msg.SEEN,
                                     msg.PROPOSE, msg.VOTE)):
            return  # built on its late decision (play.py)
        accusations = self.core.accusations
        try:
            handler = self.handlers[env.kind]
            msg.check_body(env.kind, env.body, env.wire)
            if hand is not None and env.kind not in _GENESIS and not self._in_hand(m, env):
                return
            handler(m, env)
        except Blame as blame:
            accusations.fault(blame.kind, seat if blame.seat == AUTHOR else blame.seat,
                              blame.reason, env.wire)
        except RemoteProtocolError as exc:
            accusations.fault(FaultKind.MALFORMED, seat, f"{env.kind}: {exc}", env.wire)
        except EngineError as exc:
            accusations.fault(FaultKind.ILLEGAL_ACT, seat, f"{env.kind}: {exc}", env.wire)
        except ProtocolError as exc:
            # A local-kind error raised on peer-supplied values is still the peer's fault.
            accusations.fault(FaultKind.MALFORMED, seat, f"{env.kind}: {exc}", env.wire)

    def _in_hand(self, m: int, env: Envelope) -> bool:
        """Is ``env`` for the current hand, in its stage? A vote on a decided hand is an
        answer to give (late.py) and no more; another envelope of a decided hand is its
        author's fault, which must not stop the current hand; one of the current hand
        after its stage is a fault that does (:class:`Blame`)."""
        hand = self.table.hand
        assert hand is not None
        seat = self.table.seat(m)
        number = msg.get_hand(env.body, env.wire)
        self.core.late.on_envelope(number, seat, env)
        if number in self.core.verdict.voided or (env.kind in _ROUND and number < hand.number):
            return False  # the rest of a voided hand, or a vote decided already
        if env.kind in msg.AGREEMENT_KINDS and (
                (number, instance_of(env)) in self.core.agreeing.decided
                or self.table.stage == Stage.DONE):
            return False  # a late vote of a decided hand: the others decide on a certificate
        if number < hand.number and self.table.stage != Stage.DONE:
            # After its author's checkpoint of a counted hand: that hand's fault, which
            # must not stop the current one (where a node that consumed it before
            # counting never saw it).
            self.table.note(Fault(FaultKind.ILLEGAL_ACT, seat, number,
                                  f"{env.kind} after its hand", env.wire))
            return False
        if number != hand.number or self.table.stage == Stage.DONE:
            raise RemoteProtocolError(f"{env.kind} for hand {number} in hand {hand.number}",
                                      evidence=env.wire)
        readiness = self.core.readiness
        if readiness.passed(m, env) and not readiness.late_default(m, env):
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, f"{env.kind} after its stage")
        return True
