"""When an envelope may be consumed: the readiness table (docs/protocol.md II.6).

A node consumes each author's envelopes in chain order, an envelope only once the table
is ready for it; what becomes ready at the same time commutes (sets of key shares, deal
boxes, draw shares, showdown opens, reveals, signatures), and decisions come one at a time
from the seat the game expects, so every honest node reaches the same states whatever
order the network delivers in. An envelope the table can never be ready for (malformed,
of a decided hand, of a stage passed) is consumed at once, as its author's fault.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from p2pkille.engine.machine import Phase
from p2pkille.runtime import messages as msg
from p2pkille.runtime.play import DECIDING
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage, Step
from protocol.envelope import Envelope

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["LAST_STAGE", "STAGES", "Readiness"]

#: The genesis kinds: each is ready in its own stage.
_GENESIS: Final = {msg.COMMIT: Stage.COMMIT, msg.NONCE: Stage.NONCE,
                   msg.ACCEPT: Stage.ACCEPT}
#: Kinds read ahead of the hand's flow (the void round's, votes, a rewound): ready as soon
#: as they are of the current hand, unless a vote is held back (timeouts.py).
_AHEAD: Final = frozenset({msg.TIMEOUT, msg.SEEN, msg.ACCUSE, msg.REWOUND,
                           msg.PROPOSE, msg.VOTE})
#: The stages a hand's flow envelope is consumed in.
STAGES: Final[dict[str, tuple[Stage, ...]]] = {
    msg.KEY: (Stage.KEYS,), msg.SHUFFLE: (Stage.SHUFFLE,), msg.DEAL: (Stage.DEAL,),
    msg.FORWARD: (Stage.PLAY, Stage.REVEAL), msg.REVEAL: (Stage.REVEAL,),
    msg.CHECKPOINT: (Stage.CHECKPOINT,), msg.PET: (Stage.PLAY,), msg.DRAW: (Stage.PLAY,),
    msg.SHOW: (Stage.PLAY,), msg.ACT: (Stage.PLAY,), msg.ANSWER: (Stage.PLAY,),
    msg.DISCLOSE: (Stage.PLAY,),
}
#: Per kind the last stage it belongs to: later it is consumed as a fault.
LAST_STAGE: Final = {msg.KEY: Stage.KEYS, msg.SHUFFLE: Stage.SHUFFLE, msg.DEAL: Stage.DEAL,
                     msg.ACT: Stage.PLAY, msg.ANSWER: Stage.PLAY, msg.DISCLOSE: Stage.PLAY,
                     msg.DRAW: Stage.PLAY, msg.SHOW: Stage.PLAY, msg.FORWARD: Stage.REVEAL,
                     msg.REVEAL: Stage.REVEAL, msg.PET: Stage.PLAY}

Check = Callable[[Hand, int, Envelope], bool]


class Readiness:
    """Reads the table to say whether an envelope is ready (writes nothing)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        #: Per kind, what must hold beyond its stage (``seat`` is its author's).
        self.checks: dict[str, Check] = {
            msg.SHUFFLE: lambda hand, seat, _: hand.protocol_seat(seat) in (
                None, len(hand.deck.steps)),
            msg.PET: self._part_ready,
            msg.DRAW: self._draw_ready,
            msg.SHOW: lambda *_: self._phase() == Phase.SHOWDOWN,
            msg.ACT: lambda _, seat, __: self._expects(seat) and self._phase() in DECIDING,
            msg.ANSWER: lambda hand, seat, _: self._answer_ready(hand, seat, Phase.ANSWER),
            msg.DISCLOSE: lambda hand, seat, _: self._answer_ready(hand, seat,
                                                                  Phase.DISCLOSE),
        }

    # The readiness table: one return per envelope kind.
    def ready(self, m: int, env: Envelope) -> bool:  # noqa: PLR0911, PLR0912
        """May member ``m``'s next envelope ``env`` be consumed now?"""
        kind, stage = env.kind, self.table.stage
        if kind == msg.LEAVE:
            return True  # it waits for nothing (its effect is taken on arrival: intake.py)
        if kind in _GENESIS:
            return stage == _GENESIS[kind]
        hand = self.table.hand
        number = msg.hand_of(env)
        if kind == msg.OVER:  # once this node is past that hand
            return (stage == Stage.DONE or hand is None or number is None
                    or number < hand.number)
        if hand is None or self.table.view is None:
            return stage == Stage.DONE  # a late envelope after the end: consume as a fault
        if number is None or number < hand.number:
            return True  # malformed or stale: consumed as a fault
        if number > hand.number:
            return False
        seat = self.table.seat_of[m]
        if kind in _AHEAD:
            return self._ahead_ready(hand, seat, env)
        if seat in hand.play.skipping:
            return True  # dropped, up to its rewound
        if self._voted_out(hand, seat, number):
            return False  # I voted its time out: only a seen from another holder reopens it
        if kind == msg.ACT:
            off_step = self._off_step(seat, env)
            if off_step is not None:
                return off_step
        if self.passed(m, env):
            return True  # its stage has passed: consume it as a fault (II.6)
        if stage not in STAGES[kind]:
            return False
        check = self.checks.get(kind)
        return check is None or check(hand, seat, env)

    def _ahead_ready(self, hand: Hand, seat: int, env: Envelope) -> bool:
        if env.kind in (msg.TIMEOUT, msg.SEEN):
            return not self.core.timeouts.answer_held(hand, seat, env)
        return True

    def _voted_out(self, hand: Hand, seat: int, number: int) -> bool:
        """Did I vote ``seat``'s time out at the step the hand is at, with no seen since?
        While voiding, the step is the void round's (an accuse: read ahead, never held
        here), not this envelope's: a vote there holds back no hand flow, and a
        voiding node plays on (its checks of the accusations may need the envelope)
        (test_log.py::test_a_node_restarted_after_a_void_with_a_time_out_replays_the_voided_hand)."""
        if hand.me is None or hand.void.voiding:
            return False
        step = Step(seat, *self.table.step_now())
        timeouts = self.core.timeouts
        return ((number, step) in timeouts.voted and step not in hand.timeouts.seens
                and not timeouts.dead(hand, step))

    def _off_step(self, seat: int, env: Envelope) -> bool | None:
        """A decision ``env`` of ``seat`` not for the game's step: consumed now (True) if
        it can never be this seat's decision or was made for a step the game has passed
        (overtaken by its agreed default, or a fault); waits (False) if it is for a later
        step. None if it is for the game's step."""
        named, at = msg.act_of(env)
        if named != seat or at is None:
            return True
        view = self.table.view
        assert view is not None
        played = view.game.fact_count
        if at == played:
            return None
        return at < played or self.table.stage > Stage.PLAY

    def _phase(self) -> int:
        view = self.table.view
        assert view is not None
        return view.game.phase

    def _expects(self, seat: int) -> bool:
        view = self.table.view
        assert view is not None
        return view.game.expect_seat == seat

    def _part_ready(self, hand: Hand, _seat: int, env: Envelope) -> bool:
        """A test part is ready for the claim under test; one for a later claim waits
        for that claim; one for no claim is a fault now."""
        at = msg.peek_int(env, "at")
        pet = hand.claims.pet
        if at is None or (pet is not None and at == pet.claim.context.sequence):
            return True
        view = self.table.view
        assert view is not None
        return at < view.game.fact_count

    def _draw_ready(self, _hand: Hand, _seat: int, env: Envelope) -> bool:
        view = self.table.view
        assert view is not None
        game = view.game
        return game.phase == Phase.STOCK and msg.peek_int(env, "token") == game.stock[
            game.draw_index]

    def _answer_ready(self, hand: Hand, seat: int, phase: Phase) -> bool:
        """An answer or disclosure of the seat asked. While a claim is under test the
        phase still reads as this seat's answer, so its next one (to a later request,
        with only forwards between them in its chain) waits for the test
        (test_consumption_fixes.py::test_an_answer_after_a_claim_under_test_waits_for_the_test)."""
        return self._expects(seat) and hand.claims.pet is None and self._phase() == phase

    def passed(self, m: int, env: Envelope) -> bool:
        """Has the stage of ``env`` (of the current hand) passed? Then it can never be
        taken: a second key, shuffle step, deal, reveal, or a late one. Decided by the
        table state alone, so every node blames it alike (II.6)."""
        hand = self.table.hand
        last = LAST_STAGE.get(env.kind)
        if hand is None or last is None:
            return False
        index = hand.protocol_seat(self.table.seat_of[m])
        if env.kind == msg.SHUFFLE and self.table.stage == Stage.SHUFFLE:
            return index is not None and index < len(hand.deck.steps)
        # A forward of a seat holding no key has no reveal to come after.
        return self.table.stage > last and (env.kind != msg.FORWARD or index is not None)

    def late_default(self, m: int, env: Envelope) -> bool:
        """Is ``env`` a decision whose step the table defaulted at this node? It is
        dropped (play.py), not blamed, also once the hand has left play: a node passes a
        decision step only with that seat's act or with the default, and the seat's chain
        holds one act there, so this is read from the chains alone, whether the late act
        comes before or after the node leaves play (II.11.3)."""
        hand = self.table.hand
        at = msg.peek_int(env, "at")
        return (env.kind == msg.ACT and hand is not None and at is not None
                and Step(self.table.seat_of[m], Stage.PLAY, at) in hand.timeouts.defaulted)
