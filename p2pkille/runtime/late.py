"""Answers to votes on hands this node has decided already (docs/protocol.md II.11.3).

A holder still in a hand may vote on it after this node moved on: a vote on a checkpoint
signature of a hand I counted, a vote on a holder's respond step. Where I hold what the
voter waits for, I say ``seen`` (and send it again). A hand counted is final: it was
decided (agreeing.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import SeenBody, TimeoutBody
from p2pkille.runtime.closing import CERTS_KEPT
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import ANSWERED_STAGES, Stage, Step
from protocol.envelope import Envelope

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["LateAnswers"]

LATE_RESPONDS: Final = 256
"""Late seens of respond steps a node sends per hand it decided."""


class LateAnswers:
    """What this node keeps of decided hands to answer late votes, and the seens owed."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.seens: list[tuple[int, Step]] = []
        """(hand, step) of the late seens to send."""
        self.answered: set[tuple[int, Step]] = set()
        self.past_answers: dict[int, tuple[tuple[int, ...], dict[Step, set[int]]]] = {}
        """decided hand -> its holders, and for each step the holders (indices) whose
        answer to it (vote or seen) I had taken: a late vote on a respond step is answered
        from it."""
        self.responds: dict[int, int] = {}
        """decided hand -> respond seens sent."""
        self.resent: set[tuple[int, int]] = set()
        """(hand, seat) whose answers I sent again."""

    def on_envelope(self, number: int, seat: int | None, env: Envelope) -> None:
        """A vote or seen of hand ``number``, taken whatever hand this node is in: it may
        be a late vote on a hand I decided, which I answer."""
        if env.kind == msg.TIMEOUT and number in self.core.closing.certs:
            self.on_vote(number, TimeoutBody.parse(env).step)
        if (env.kind in (msg.TIMEOUT, msg.SEEN) and number in self.past_answers
                and seat is not None):
            self.on_answer(number, seat, env)

    def counted(self, hand: Hand) -> None:
        """The hand counted: keep what answers late votes on it."""
        self.keep_answers(hand)

    def voided(self, hand: Hand) -> None:
        """The hand is voided: keep what answers late votes on it."""
        self.keep_answers(hand)

    def act(self, out: list[Output]) -> bool:
        """The next late seen, with what the voter may lack: the answers I hold of that
        seat."""
        while self.seens:
            number, late = self.seens.pop(0)
            if (number, late) in self.answered:
                continue
            self.answered.add((number, late))
            seat, st, _ = late
            self.core.outbox.emit(out, SeenBody(number, late))
            member = self.table.members[self.table.member_of[seat]]
            if st == Stage.RESPOND and (number, seat) not in self.resent:
                self.resent.add((number, seat))
                out += [Send(env.wire) for env in self.table.transcript.chain(member)
                        if msg.hand_of(env) == number
                        and env.kind in (msg.TIMEOUT, msg.SEEN)]
            return True
        return False

    def on_vote(self, number: int, step: Step) -> None:
        """A vote on a checkpoint signature of a hand I committed: I hold it, so I say
        so (a voter waits for a seen before it takes a late envelope, and I no longer
        answer from that hand's round)."""
        seat, stage, _ = step
        holders = self.core.closing.cert_holders.get(number, ())
        if (stage == Stage.CHECKPOINT and self.table.my_seat in holders and seat in holders
                and seat != self.table.my_seat and (number, step) not in self.seens):
            self.seens.append((number, step))

    def keep_answers(self, hand: Hand) -> None:
        """Keep, for a hand I decided (committed or voided), whose answers to each step I
        took: a holder still in that hand may vote a respond step after I moved on, and
        holds back the answer until some holder's seen (II.11.3). The votes of the hand I
        had not answered yet I answer now."""
        if hand.me is None:
            return
        self.past_answers[hand.number] = (hand.holders, {
            step: set(k) for step, k in hand.timeouts.responded.items()})
        for old in [k for k in self.past_answers if k <= hand.number - CERTS_KEPT]:
            del self.past_answers[old]
            self.responds.pop(old, None)
        self.resent = {k for k in self.resent
                             if k[0] > hand.number - CERTS_KEPT}
        for step, voters in hand.timeouts.votes.items():
            if ((hand.number, step) not in self.core.timeouts.voted
                    and step not in hand.timeouts.answered):
                self.on_respond_vote(hand.number, step, hand.holders[min(voters)])

    def on_answer(self, number: int, seat: int, env: Envelope) -> None:
        """A vote or seen of a hand I decided: an answer of ``seat`` to its step (mine
        too: a seen I sent late), and a vote I may answer (:meth:`on_respond_vote`)."""
        holders, answered = self.past_answers[number]
        if seat not in holders:
            return  # held no key there: neither answers nor votes
        step = TimeoutBody.parse(env).step
        answered.setdefault(step, set()).add(holders.index(seat))
        if env.kind == msg.TIMEOUT:
            self.on_respond_vote(number, step, seat)

    def on_respond_vote(self, number: int, step: Step, voter: int) -> None:
        """A holder's vote on holder Z's respond step for a step X of a hand I decided: if
        I took Z's answer to X, I say so and send Z's answers again (the voter holds Z's
        answer back until a seen; nobody in that hand answers any more). At most
        ``LATE_RESPONDS`` per hand: made-up steps cost their author, not me."""
        about = step.about
        past = self.past_answers.get(number)
        if about is None or past is None:
            return
        holders, answered = past
        seat = step.seat
        if (seat in holders and seat not in (voter, about.seat)
                and about.stage in ANSWERED_STAGES
                and holders.index(seat) in answered.get(about, ())
                and (number, step) not in self.core.timeouts.voted
                and (number, step) not in self.answered
                and (number, step) not in self.seens
                and self.responds.get(number, 0) < LATE_RESPONDS):
            self.responds[number] = self.responds.get(number, 0) + 1
            self.seens.append((number, step))
