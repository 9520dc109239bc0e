"""Agreed time-outs: votes, seens, silent sets and the defaults they give
(docs/protocol.md II.11.3).

A node that waits too long for a seat's step of the hand votes its time out
(``timeout``); a holder that holds the envelope says so (``seen``). A decision every other
holder voted gets its default. A holder is in a *silent set* once it is in a set of
holders, fewer than half, each with a step every holder outside the set voted out: the
void of a silent set is valid for the hand's agreement (agreeing.py), which decides it.
Every vote is signed and read ahead of consumption. In a voided hand's void round nobody
votes: a seat whose accuse does not come within a node's limit is out there for its
verdict (verdict.py).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome
from p2pkille.runtime.bodies import LeaveBody, SeenBody, TimeoutBody
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.play import DECIDING, default_fact
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage, Step
from protocol.envelope import Envelope
from protocol.errors import ProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Timeouts", "set_bound", "silent_set"]


def set_bound(holders: int) -> int:
    """The most holders a silent set may hold: fewer than half, so that the holders
    outside it are a strict majority; one at two holders (the other's vote)."""
    return max(1, (holders - 1) // 2)


def silent_set(seat: int, outs: dict[int, set[frozenset[int]]],
               bound: int) -> frozenset[int] | None:
    """A silent set holding ``seat`` of at most ``bound`` holders, or None: a set in which
    every member has one of its ``outs`` (the holders that did not vote one of its steps
    out) whole. Depth-first over each member's choice of step; the bound prunes it (at
    most 9 members at 20 holders, and few voted steps per holder)."""
    def grow(members: frozenset[int], todo: tuple[int, ...]) -> frozenset[int] | None:
        if len(members) > bound:
            return None
        if not todo:
            return members
        for out in sorted(outs.get(todo[0], ()), key=lambda o: (len(o), sorted(o))):
            found = grow(members | out, todo[1:] + tuple(sorted(out - members)))
            if found is not None:
                return found
        return None
    return grow(frozenset({seat}), (seat,))


def _taken(hand: Hand, env: Envelope) -> set[bytes]:
    """The ids of the envelopes of ``env``'s kind taken in ``hand``."""
    if env.kind in (msg.TIMEOUT, msg.SEEN):
        return hand.timeouts.taken
    return hand.void.taken


class Timeouts:
    """Votes this node casts and takes; writes each hand's
    :class:`~p2pkille.runtime.records.VoteRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.voted: set[tuple[int, Step]] = set()
        """(hand, step) of every vote I cast (or my log holds)."""
        self.since: dict[tuple[int, Step], float] = {}
        """(hand, step) -> when I began to wait there."""
        self.timed_decisions: list[tuple[int, int, int]] = []
        """(hand, seat, step) of every decision the table gave its default."""

    def carry(self, old: Timeouts) -> None:
        """A rebuild from ``old``'s machine: when I began to wait where, as it waited."""
        self.since = old.since

    def vote(self, out: list[Output], now: float) -> None:
        """Vote the time out of every seat I waited on for longer than my limit: the step
        the table is at (a decision has the longer limit), a forward owed, and a holder
        that answered none of my votes (a respond step)."""
        table = self.table
        hand, view, timing = table.hand, table.view, table.timing
        if hand is None or hand.me is None or view is None:
            return
        if hand.void.voiding:
            self.expire(hand, now)
            return
        if hand.void.stopping:
            return  # I want the hand voided: no step of it is due from anyone now
        stage, at = table.step_now()
        deciding = stage == Stage.PLAY and view.game.phase in DECIDING
        limit = timing.decide_limit if deciding else timing.limit
        owing = self.owing()
        steps = [(Step(seat, stage, at), limit) for seat in self.waiting_for()
                 if seat not in owing] + [
            (Step(seat, Stage.OWED, since), timing.limit) for seat, since in owing.items()] + [
            (step, timing.answer_limit) for step in self.unanswered(hand)]
        for step, wait in steps:
            first = self.since.setdefault((hand.number, step), now)
            due = 0.0 if table.has_left(step.seat) else wait  # a leave: nothing will come
            if (step.seat != table.my_seat and now - first >= due
                    and (hand.number, step) not in self.voted):
                self.voted.add((hand.number, step))
                self.core.outbox.emit(out, TimeoutBody(hand.number, step))

    def expire(self, hand: Hand, now: float) -> None:
        """The void round: every seat whose accuse (a buyer's disclosure) I waited for
        longer than my limit is out here (verdict.py); a seat that left, at once."""
        for seat in self.core.accusations.awaited(hand):
            first = self.since.setdefault((hand.number, Step(seat, Stage.VOID, 0)), now)
            due = 0.0 if self.table.has_left(seat) else self.table.timing.limit
            if seat != self.table.my_seat and now - first >= due:
                hand.timeouts.expired.add(seat)

    def waiting_for(self) -> tuple[int, ...]:
        """The seats (member indices during genesis) whose envelope the table waits for
        now: what a time limit runs against. Empty when done."""
        normal = self.awaited()
        return normal + tuple(s for s in self.owing() if s not in normal)

    def awaited(self) -> tuple[int, ...]:
        genesis = self.core.genesis.awaited()
        if genesis is not None:
            return genesis
        hand, view = self.table.hand, self.table.view
        if hand is None or view is None or self.table.stage == Stage.DONE:
            return ()
        if hand.void.voiding:
            return tuple(s for s in self.core.accusations.awaited(hand)
                         if s not in hand.timeouts.expired)
        found = self.core.dealing.awaited(hand)
        if found is None:
            found = self.core.closing.awaited(hand)
        return self.core.play.awaited(hand) if found is None else found

    def owing(self) -> dict[int, int]:
        """Seats that owe a forward in play, with the fact count it became owed at."""
        hand = self.table.hand
        if hand is None or self.table.stage != Stage.PLAY or hand.void.voiding:
            return {}
        return self.core.custody.owing(hand)

    def answer(self, out: list[Output], hand: Hand) -> bool:
        """Say ``seen`` of the next step voted that I have passed, and send the seat's
        envelopes of the hand again (the voter may lack them)."""
        if not hand.timeouts.to_answer or hand.me is None:
            return False
        awaited = hand.timeouts.to_answer.pop(0)
        hand.timeouts.answered.add(awaited)
        self.core.outbox.emit(out, SeenBody(hand.number, awaited))
        member = self.table.members[self.table.member_of[awaited.seat]]
        out += [Send(env.wire) for env in self.table.transcript.chain(member)
                if msg.hand_of(env) == hand.number]
        return True

    def forget_silent(self, hand: Hand) -> None:
        """The silent sets are found again (a rewind changed the steps they count)."""
        hand.timeouts.silent_key = None

    def void_decided(self, hand: Hand, timed_out: frozenset[int]) -> None:
        """The hand's agreement decided its void with ``timed_out``: they are timed out,
        and the hand's void round begins."""
        if not hand.void.voiding:
            hand.timeouts.timed_out |= timed_out
            self.core.accusations.begin(hand)

    def take_own_votes(self) -> None:
        """:meth:`take_own_vote` for every ``timeout`` in this member's own chain (after
        :meth:`replay`)."""
        for env in self.table.transcript.chain(self.table.identity.public):
            if env.kind == msg.TIMEOUT:
                with contextlib.suppress(ProtocolError):
                    vote = TimeoutBody.parse(env)
                    self.take_own_vote(vote.hand, vote.step)

    def take_own_vote(self, hand: int, step: Step) -> None:
        """Count a time-out vote from this member's own log as cast: a node rebuilt from
        its log then waits for that seat as it did live (it answers no ``seen`` for a
        step it voted out), and re-derives only envelopes it really made."""
        self.voted.add((hand, step))

    def unanswered(self, hand: Hand) -> list[Step]:
        """Respond steps I wait on: for each step I voted that is still open (no seen, not
        agreed; not itself a respond step), and at fewer than five holders each step of
        mine that another holder voted after I took it, every other holder that has
        neither voted on it nor said it saw the envelope. A holder silent there for a
        whole limit is voted out in turn, so that two holders silent together cannot
        each wait for the other's vote, nor can a holder shield another by never voting
        it out (II.11.3)."""
        out: list[Step] = []
        if hand.me is None:
            return out
        steps = [step for number, step in self.voted if number == hand.number]
        if set_bound(len(hand.holders)) < 2:
            # No silent set of two can be agreed here, so a holder that never answers a
            # vote on a holder's step is timed out by the rule for one seat, which needs
            # the step's seat too: it votes as well, on its own step that it took (its
            # envelope is in; a voter holds it back until another holder says seen), so
            # that a holder crashed for good cannot leave the other two waiting, one for
            # the seen, one for the voter's next step. Test:
            # test_decide_timeout.py::test_a_late_decider_and_a_crashed_holder_do_not_stall_three_holders  # noqa: E501
            # A seat without a key (a buyer, a buy-in) is no holder: the voters alone are
            # every holder but the silent one.
            steps += [step for step in hand.timeouts.votes if step.seat == self.table.my_seat
                      and step.stage != Stage.RESPOND and self.past(step)]
        for step in steps:
            if (step.stage == Stage.RESPOND or step in hand.timeouts.seens
                    or step in hand.timeouts.defaulted or step.seat in hand.timeouts.timed_out
                    or self.dead(hand, step)):
                continue
            out += [step.respond(seat) for seat in self.not_answering(hand, step)
                    if seat not in hand.timeouts.timed_out]
        return sorted(out)

    @staticmethod
    def not_answering(hand: Hand, step: Step) -> list[int]:
        """The holders but me and ``step``'s seat that neither voted on it nor said seen."""
        answered = hand.timeouts.responded.get(step, set())
        return [seat for k, seat in enumerate(hand.holders)
                if k != hand.me and seat != step.seat and k not in answered]

    def silent_without_majority(self) -> tuple[int, ...]:
        """The holders I wait on in vain when they are two or more and the other holders
        no strict majority of the hand's: the seats of my votes still open, and the
        holders that answered none of them (no vote, no seen) for ``answer_limit`` past
        my vote. No silent set holding them can be agreed, so the table waits until
        enough of them come back (from inside, their crash cannot be told from a
        partition, II.11.3). For the player to be told so; empty otherwise."""
        hand = self.table.hand
        if hand is None or hand.me is None or self.table.stage == Stage.DONE:
            return ()
        patience = self.table.timing.limit + self.table.timing.answer_limit
        seats: set[int] = set()
        for number, step in self.voted:
            if (number != hand.number or step in hand.timeouts.seens
                    or step.seat in hand.timeouts.timed_out
                    or step in hand.timeouts.defaulted or step.seat not in hand.holders
                    or self.dead(hand, step)):
                continue  # a decision counts too: its default needs every other vote
            seats.add(step.seat)
            if self.table.now - self.since.get((number, step), self.table.now) >= patience:
                seats.update(self.not_answering(hand, step))
        seats -= hand.timeouts.timed_out
        if len(seats) < 2 or 2 * (len(hand.holders) - len(seats)) > len(hand.holders):
            return ()
        return tuple(sorted(seats))

    def answer_held(self, hand: Hand, seat: int, env: Envelope) -> bool:
        """Is ``seat``'s vote or seen (``env``) held back? I voted it out at the respond
        step for that step and no holder has said it holds the answer: either a holder
        took it in time and every node takes it, or nobody did and the silent set that
        holds ``seat`` may be agreed without it (II.11.3). A malformed one is not held
        (consuming it blames it)."""
        if hand.me is None or set_bound(len(hand.holders)) < 2:
            # Below five holders the respond voters are every holder but the silent one:
            # no holder would ever say seen to release a hold, so nothing is held back.
            return False
        try:
            msg.check_body(env.kind, env.body, env.wire)
            step = TimeoutBody.parse(env).step
        except ProtocolError:
            return False
        if step.stage == Stage.RESPOND:
            return False
        respond = step.respond(seat)
        return ((hand.number, respond) in self.voted and respond not in hand.timeouts.seens
                and not self.dead(hand, respond))

    def scan(self, hand: Hand) -> None:
        """Take accuse, timeout, seen and agreement envelopes of this hand from the chains
        ahead of what is consumed: they are about the hand's progress, so they must not
        wait behind envelopes a stopped hand never makes ready. A malformed one is left
        for normal consumption (which blames it)."""
        if hand.timeouts.scan_version != self.table.version:
            hand.timeouts.scan_version = self.table.version
            while True:
                seens = len(hand.timeouts.seens)
                self.scan_chains(hand)
                if len(hand.timeouts.seens) == seens:
                    break  # a new seen can release a vote held back in a chain read before
        if hand.me is not None and hand.timeouts.votes:
            # Votes for a step I have since passed: I hold the envelope, so I answer.
            for step in hand.timeouts.votes:
                if ((hand.number, step) not in self.voted and step not in hand.timeouts.to_answer
                        and step.seat != self.table.my_seat and step not in hand.timeouts.answered
                        and self.past(step)):
                    hand.timeouts.to_answer.append(step)

    def scan_chains(self, hand: Hand) -> None:
        for m, member in enumerate(self.table.members):
            seq = max(self.table.consumed[m] + 1, hand.timeouts.scanned.get(m, 0))
            held: int | None = None
            while (env := self.table.transcript.get(member, seq)) is not None:
                if (msg.hand_of(env) == hand.number and env.id not in _taken(hand, env)
                        and env.kind in (msg.TIMEOUT, msg.SEEN)
                        and self.answer_held(hand, self.table.seat_of[m], env)):
                    # Read again once a seen for it is in; what follows it may be that
                    # seen, for another seat.
                    held = seq if held is None else held
                    seq += 1
                    continue
                seq += 1
                if env.kind in msg.AGREEMENT_KINDS:
                    if msg.hand_of(env) == hand.number:
                        with contextlib.suppress(ProtocolError):
                            msg.check_body(env.kind, env.body, env.wire)
                            self.core.agreeing.on_agreement(m, env)
                    continue
                if env.kind not in (msg.ACCUSE, msg.TIMEOUT, msg.SEEN) or (
                        msg.hand_of(env) != hand.number or env.id in _taken(hand, env)):
                    continue
                try:
                    msg.check_body(env.kind, env.body, env.wire)
                    self.core.consumer.handler(env.kind)(m, env)
                except ProtocolError:
                    continue
            hand.timeouts.scanned[m] = seq if held is None else held

    def never(self, hand: Hand, step: Step) -> set[int]:
        """The holders (indices) that will never vote ``step``: those that said they saw
        it, and those whose chain moved past the hand without a vote on it (a holder votes
        only in the hand it is in). A silent set that uses the step holds them all."""
        voters = hand.timeouts.votes.get(step, set())
        never = {k for k in hand.timeouts.responded.get(step, ()) if k not in voters}
        never.update(k for k, steps in self.movers(hand).items()
                     if k not in voters and step not in steps)
        return never

    def dead(self, hand: Hand, step: Step) -> bool:
        """Can no silent set ever use ``step``? Its seat with the holders that will never
        vote it are more than a set may hold. Then a vote on it is settled as by a seen:
        nobody can agree that its envelope came too late. Without this, a holder cut off
        as the others counted the hand and moved on waited for ever for their seens."""
        if step.seat not in hand.holders:
            return False
        never = self.never(hand, step)
        never.discard(hand.holders.index(step.seat))
        return len(never) + 1 > set_bound(len(hand.holders))

    def movers(self, hand: Hand) -> dict[int, frozenset[Step]]:
        """The holders whose chain holds an envelope of a later hand (or ``over`` for this
        one), each with the steps of this hand it voted, read ahead of consumption."""
        if hand.timeouts.movers_version == self.table.version:
            return hand.timeouts.movers
        hand.timeouts.movers_version = self.table.version
        movers: dict[int, frozenset[Step]] = {}
        number = hand.number
        for k, seat in enumerate(hand.holders):
            m = self.table.member_of[seat]
            member = self.table.members[m]
            seq = self.table.consumed[m] + 1
            voted = {step for step, voters in hand.timeouts.votes.items() if k in voters}
            while (env := self.table.transcript.get(member, seq)) is not None:
                later = msg.hand_of(env)
                if later is not None and (later > number or (
                        later == number and env.kind == msg.OVER)):
                    movers[k] = frozenset(voted)
                    break
                if later == number and env.kind == msg.TIMEOUT:
                    with contextlib.suppress(ProtocolError):  # malformed: not a vote
                        voted.add(TimeoutBody.parse(env).step)
                seq += 1
        hand.timeouts.movers = movers
        return movers

    def on_leave(self, m: int, env: Envelope) -> None:
        """A member's ``leave``, in its chain's order: taken on arrival already (intake.py);
        a malformed one is its author's fault."""
        LeaveBody.parse(env)
        self.table.left.add(m)

    def on_timeout(self, m: int, env: Envelope) -> None:
        self.take(m, env)

    def on_seen(self, m: int, env: Envelope) -> None:
        self.take(m, env)

    def take(self, m: int, env: Envelope) -> None:
        """A holder votes that a seat's time ran out at a step, or says it has seen
        that seat's envelope. The seat is timed out once every OTHER key holder voted
        for the same step (docs/protocol.md II.11.3)."""
        hand = self.table.hand
        assert hand is not None
        if env.id in hand.timeouts.taken:
            return
        hand.timeouts.taken.add(env.id)
        voter = self.table.holder(m)
        step = TimeoutBody.parse(env).step
        hand.timeouts.responded.setdefault(step, set()).add(voter)
        if env.kind == msg.SEEN:
            hand.timeouts.seens.add(step)
            return
        hand.timeouts.votes.setdefault(step, set()).add(voter)

    def settle(self, hand: Hand) -> None:
        """Act on every agreed time-out: a decision whose step every other key holder
        voted, or is silent, gets its default (keep, decline); the void of the holders in
        silent sets (:meth:`silent`) is valid for the hand's agreement, which decides
        it."""
        if not hand.timeouts.votes:
            return  # without a vote nobody is silent (the common case: at every step)
        silent = self.silent(hand)
        for step, voters in hand.timeouts.votes.items():
            seat, stage, at = step
            if (step in hand.timeouts.defaulted or seat in hand.timeouts.timed_out
                    or stage != Stage.PLAY):
                continue
            where = hand.play.phase_at.get(at)
            # The holders silent with the decider never vote: they count as voters here.
            also = {k for k, s in enumerate(hand.holders)
                    if s in silent or s in hand.timeouts.deciding}
            if (where is not None and where[0] in DECIDING and where[1] == seat
                    and (not hand.void.voiding or self.table.reached(at)) and voters | also >= {
                        k for k, s in enumerate(hand.holders) if s != seat}):
                self.give_default(hand, step, where[0])
        if silent - hand.timeouts.timed_out and not hand.void.voiding:
            self.core.agreeing.endorse(hand, Outcome.void(silent))

    def counts(self, hand: Hand, step: Step) -> bool:
        """Can an agreed time-out of ``step`` time its seat out? Not a decision (it gets
        the default), nor a play step this node has not reached yet (it decides that
        when it gets there)."""
        seat, stage, at = step
        about = step.about if stage == Stage.RESPOND else step
        if step in hand.timeouts.defaulted or about is None or about.stage == Stage.VOID:
            return False  # the void round's time-outs are its verdict's (verdict.py)
        if seat not in hand.holders:
            # A buyer's step (a disclosure, a show, a forward it owes) once this node sits
            # where the step was voted; only every holder's vote times it out (silent).
            if stage == Stage.OWED:
                return self.table.reached(at) and self.table.in_play(hand, seat)
            if stage != Stage.PLAY or not self.table.in_play(hand, seat):
                return False
        if stage == Stage.PLAY:
            where = hand.play.phase_at.get(at)
            return where is not None and not (where[0] in DECIDING and where[1] == seat)
        return True

    def silent(self, hand: Hand) -> frozenset[int]:
        """The holders whose time-out is agreed: every member of some *silent set*, a set
        S of holders such that each member has a step (:meth:`counts`) that every holder
        outside S voted out, and the holders outside S are a strict majority (or S is
        one holder and every other voted). A minority, partitioned or impatient, agrees
        nothing; two holders silent together do not wait for each other's vote
        (II.11.3). Monotone in the votes (a decision leaves the sets only when it gets
        its default): nodes that learn them in any order come to the same sets, and the
        hand's agreement decides which void, if any, counts."""
        key = (sum(len(v) for v in hand.timeouts.votes.values()), len(hand.timeouts.votes),
               len(hand.timeouts.defaulted), len(hand.play.phase_at), len(hand.timeouts.timed_out),
               int(self.table.stage),  # a buyer's step counts only while it sits in the hand
               int(self.core.agreeing.decided_void(hand)))
        if hand.timeouts.silent_key == key:
            return hand.timeouts.silent
        index = {seat: k for k, seat in enumerate(hand.holders)}
        # For each holder, the sets of holders that did not vote one of its steps out: a
        # silent set holding it holds one of them whole. An out larger than a set may be
        # fits in no set: dropped, so that votes one seat makes up cost nothing here.
        bound = set_bound(len(hand.holders))
        silent = set(hand.timeouts.timed_out)
        outs: dict[int, set[frozenset[int]]] = {}
        decisions: dict[int, set[frozenset[int]]] = {}
        hand.timeouts.deciding = frozenset()
        if self.core.agreeing.decided_void(hand):
            # Its time-outs are decided: votes on its steps time out nobody more.
            hand.timeouts.silent_key, hand.timeouts.silent = key, frozenset(silent)
            return hand.timeouts.silent
        for step, voters in hand.timeouts.votes.items():
            decision = self._decision(hand, step)
            if not decision and not self.counts(hand, step):
                continue
            seat = step.seat
            out = frozenset({seat} | {s for s in hand.holders if index[s] not in voters})
            if decision:
                # Every other holder's vote gives it the default; a holder silent as well
                # never votes, so a set of two or more silent together may hold it (and
                # the decision then gets its default: settle).
                if len(out) > 1 and seat in index and len(out) <= bound:
                    decisions.setdefault(seat, set()).add(out)
                continue
            if out == {seat}:
                silent.add(seat)  # every other holder voted: the rule for one seat
            if seat not in index:
                continue  # a buyer is in no silent set of holders: every holder votes it
            if len(out) <= bound:
                # Kept also when alone: a set that needs this seat must still find it,
                # else a vote that completes its own time-out hides it from the search
                # (and the outcome would hang on the order votes arrive in).
                outs.setdefault(seat, set()).add(out)
        either = {seat: outs.get(seat, set()) | decisions.get(seat, set())
                  for seat in set(outs) | set(decisions)}
        for seat in sorted(outs):
            if seat not in silent:
                found = silent_set(seat, either, bound)
                if found is not None:
                    silent |= found
        # A holder in a set by its decision alone is late to decide, not gone: its
        # decision gets the default (settle), and it is not timed out.
        deciding = {seat for seat in silent - set(hand.timeouts.timed_out)
                    if seat in decisions and not any(o <= silent for o in outs.get(seat, ()))}
        hand.timeouts.deciding = frozenset(deciding)
        hand.timeouts.silent_key, hand.timeouts.silent = key, frozenset(silent - deciding)
        return hand.timeouts.silent

    @staticmethod
    def _decision(hand: Hand, step: Step) -> bool:
        """Is ``step`` its seat's decision, reached here and not given its default?"""
        seat, stage, at = step
        where = hand.play.phase_at.get(at) if stage == Stage.PLAY else None
        return (where is not None and where[0] in DECIDING and where[1] == seat
                and step not in hand.timeouts.defaulted)

    def give_default(self, hand: Hand, step: Step, phase: int) -> None:
        """Apply the default decision at ``step``. A node that took the seat's late
        decision there first (the seat's own node, or one that holds no key and casts no
        vote) rewinds to the step: the table agreed the decision came too late."""
        view = self.table.view
        assert view is not None
        seat, _, at = step
        hand.timeouts.defaulted.add(step)
        if view.game.fact_count > at:
            self.core.rewinder.rewind(hand, at)
            if seat == self.table.my_seat:
                self.core.play.rewound(hand, at)
        if view.game.fact_count == at:
            self.timed_decisions.append((hand.number, seat, at))
            self.core.play.feed(default_fact(phase, seat))

    def past(self, step: Step) -> bool:
        """This node no longer waits for that seat at that step (it holds its envelope)."""
        seat, stage, at = step
        if stage == Stage.OWED:
            hand = self.table.hand
            return hand is not None and (seat, at) not in hand.forwards.owed.values()
        about = step.about
        if about is not None:
            hand = self.table.hand
            index = None if hand is None else hand.protocol_seat(seat)
            return (hand is not None and index is not None
                    and index in hand.timeouts.responded.get(about, ()))
        now = self.table.step_now()
        return now > (stage, at) or (now == (stage, at) and seat not in self.waiting_for())
