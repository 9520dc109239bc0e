"""One hand's agreement on the table: the :mod:`~p2pkille.runtime.agreement` component
with signed envelopes, a clock and the hand's seats (docs/agreement.md section 5).

The component decides on votes it is handed; this owns what the component leaves to its
caller. It numbers the proposers (the hand's key holders rotated left by the hand number,
so the first proposer changes from hand to hand), turns ``propose`` and ``vote`` envelopes
into the component's events and its broadcasts into bodies to sign, keeps every signed
envelope it took so that a contradiction is reported with both signed messages and a
decision with its certificate, and runs the component's time-outs on the caller's clock.
Its time-outs grow with the round (``limit + min(round, GROWTH_ROUNDS) * ROUND_STEP``),
which the component's liveness argument needs: after the network settles, some round
lasts long enough; the cap keeps a round number a peer chose from making them longer.

Sans-I/O: :meth:`HandDecision.endorse`, :meth:`~HandDecision.take` and
:meth:`~HandDecision.wake` return what to do, as typed values; nothing here signs, sends
or reads a clock. A peer's envelope can only raise
:class:`~protocol.errors.RemoteProtocolError` (the caller blames its author).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from p2pkille.runtime import agreement as ag
from p2pkille.runtime.bodies import Instance, ProposeBody, VoteBody
from p2pkille.runtime.outcome import Timing
from protocol.envelope import Envelope
from protocol.errors import LocalProtocolError, RemoteProtocolError

__all__ = [
    "ROUND_STEP",
    "Certified",
    "Contradiction",
    "Decided",
    "HandDecision",
    "Sign",
    "proposers",
]

ROUND_STEP: Final = 0.5
"""Seconds each later round adds to its time-outs: they grow until they exceed the
network's delay, which the component's liveness needs."""

GROWTH_ROUNDS: Final = 120
"""Rounds after which the time-outs stop growing (``limit`` + 60 s, far above a LAN's
delays): a round number comes from peers (one vote of a later round can move a node
there), so it must not make a time-out as long as a peer likes."""


def proposers(holders: Sequence[int], hand: int) -> tuple[int, ...]:
    """The hand's key holders (table seats, in their key order) rotated left by ``hand``:
    round ``r`` is proposed by the ``r``-th of them, modulo their number."""
    if not holders:
        raise LocalProtocolError(f"hand {hand} has no key holder to propose")
    k = hand % len(holders)
    return tuple(holders[k:]) + tuple(holders[:k])


@dataclass(frozen=True, slots=True)
class Sign:
    """Sign ``body`` into my chain and send it: my proposal or my vote."""

    body: ProposeBody | VoteBody


@dataclass(frozen=True, slots=True)
class Decided:
    """The hand's outcome is decided, on the precommits of a strict majority of its
    holders (:meth:`HandDecision.certified`, once my own precommit among them is signed:
    what a peer still in the hand needs)."""

    value: ag.Outcome


@dataclass(frozen=True, slots=True)
class Contradiction:
    """``seat`` signed two messages of this agreement that no honest holder signs (two
    votes for one round and step, two proposals for one round, or a vote that drops its
    lock): both envelopes, in a fixed order, as the evidence of its fault."""

    seat: int
    reason: str
    first: bytes
    second: bytes


Action: TypeAlias = Sign | Decided | Contradiction


@dataclass(frozen=True, slots=True)
class Certified:
    """A decision certified by signed precommits: the value and the envelopes."""

    value: ag.Outcome
    envelopes: tuple[bytes, ...]


@dataclass(slots=True)
class HandDecision:
    """The agreement of hand ``hand`` as seen by the member at table seat ``seat``.

    ``holders`` are the hand's key holders (table seats, in key order); a member that is
    not one of them (``seat`` None or not a holder) is a learner: it decides on a
    certificate and never votes. Start it with :meth:`endorse` (the first value this node
    finds valid) or on the first agreement envelope it takes: a hand that runs its course
    without a doubt makes no agreement traffic until its checkpoint is signed.
    """

    hand: int
    holders: tuple[int, ...]
    seat: int | None
    timing: Timing
    instance: Instance = Instance.HAND
    """The hand's outcome, or its verdict once voided (no leave voids anything there)."""
    component: ag.Agreement = field(init=False)
    started: bool = False
    deadlines: dict[tuple[int, ag.Step], float] = field(default_factory=dict)
    """Scheduled time-outs: (round, step) -> when it passes."""
    signed: dict[tuple[int, int, str], list[Envelope]] = field(default_factory=dict)
    """(seat, round, 'propose' | vote step) -> the envelopes taken for it (mine too)."""
    reported: set[ag.Proof] = field(default_factory=set)

    def __post_init__(self) -> None:
        order = proposers(self.holders, self.hand)
        voter = self.seat if self.seat in order else None
        self.component = ag.Agreement(order, voter,
                                      leave_voids=self.instance is Instance.HAND)

    # -- reading ----------------------------------------------------------------------

    @property
    def decision(self) -> ag.Outcome | None:
        return self.component.decision

    def waiting_for(self) -> tuple[int, ...]:
        """The holders (table seats) whose message of the current step has not come."""
        return self.component.waiting_for() if self.started else ()

    def certified(self) -> Certified | None:
        """The decision with the envelopes of its precommits, once decided."""
        value = self.component.decision
        if value is None:
            return None
        wires = tuple(self._wire(v) for v in self.component.certificate())
        return Certified(value, wires)

    def next_deadline(self) -> float | None:
        """When the earliest scheduled time-out passes (the caller's next wake)."""
        return min(self.deadlines.values(), default=None)

    # -- input ------------------------------------------------------------------------

    def endorse(self, value: ag.Outcome, now: float) -> list[Action]:
        """This node finds ``value`` valid (docs/agreement.md section 1): every holder's
        good signature on the checkpoint, or its limits passed for the seats a void names."""
        if value in self.component.state.endorsed:
            return []
        out = self._begin(now)
        return out + self._feed(ag.Endorse(value), now)

    def take(self, seat: int, env: Envelope, now: float) -> list[Action]:
        """A ``propose`` or ``vote`` envelope of the member at table seat ``seat`` (its
        signature and chain already checked). A body that does not parse, a vote of a
        non-holder, or a proposal out of turn raises RemoteProtocolError. My own (the
        envelope the caller signed from a :class:`Sign`) is only kept, for certificates
        and proofs."""
        if env.kind == ProposeBody.KIND:
            proposal = ProposeBody.parse(env)
            self._check_hand(proposal.hand, proposal.instance)
            event: ag.Proposal | ag.Vote = proposal.event(seat)
            key = (seat, proposal.round, "propose")
        elif env.kind == VoteBody.KIND:
            vote = VoteBody.parse(env)
            self._check_hand(vote.hand, vote.instance)
            event = vote.event(seat)
            key = (seat, vote.round, vote.step.value)
        else:
            raise LocalProtocolError(f"not an agreement envelope: {env.kind}")
        if seat == self.seat:
            self._keep(key, env)
            held = (self.component.state.proposals if isinstance(event, ag.Proposal)
                    else self.component.state.votes)
            if event not in held:  # my own, read back from my log (then :meth:`resume`)
                self.started = True
                self.component.restore(event)
            return []  # else signed from a Sign: the component holds it already
        out = self._begin(now)
        kept = self._keep(key, env)  # before the component, whose proof may cite it
        try:
            out += self._feed(event, now)
        except RemoteProtocolError:
            if kept:  # the component refused it: nothing of it is kept
                self._drop(key, env)
            raise
        if kept and isinstance(event, ag.Vote) and event not in self.component.state.votes:
            # Not counted (a leave stands for it, or its slot is full): nothing cites it.
            # (A second proposal for a round is not stored either, but its proof cites it.)
            self._drop(key, env)
        return out

    def _drop(self, key: tuple[int, int, str], env: Envelope) -> None:
        self.signed[key].remove(env)
        if not self.signed[key]:
            del self.signed[key]

    def leave(self, now: float) -> ag.Standing | None:
        """My leave: the votes I stand by, to sign into the ``leave`` envelope (None for a
        learner, or once decided). I sign nothing in this agreement after it."""
        if self.seat not in self.holders or self.component.left:
            return None
        stands = self.component.receive(ag.Leave())
        self.deadlines.clear()
        return stands[0].standing if stands else None

    def take_leave(self, seat: int, env: Envelope, standing: ag.Standing,
                   now: float) -> list[Action]:
        """The ``leave`` envelope ``env`` of the holder at ``seat``, standing by
        ``standing`` (parsed from it by the caller). Mine is restored (read back from my
        log)."""
        key = (seat, -1, "leave")
        if seat == self.seat:  # mine, read back from my log (then :meth:`resume`)
            self.signed[key] = [env]
            if not self.component.left:
                self.started = True
                self.component.restore(standing)
            return []
        if self.signed.get(key):
            return []  # a leave is its author's last envelope: there is one
        out = self._begin(now)
        self.signed[key] = [env]
        try:
            return out + self._feed(standing, now)
        except RemoteProtocolError:
            del self.signed[key]
            raise

    def resume(self, now: float) -> list[Action]:
        """Go on from my own messages read back by :meth:`take` and :meth:`take_leave`
        (all of them first): time-outs run from ``now``."""
        return self._outputs(self.component.resume(), now)

    def _keep(self, key: tuple[int, int, str], env: Envelope) -> bool:
        """Keep ``env`` for certificates and proofs (True if kept now): at most as many
        different bodies per (seat, round, step) as the component counts, so a lying
        holder's flood of votes for one slot costs nothing here."""
        held = self.signed.setdefault(key, [])
        if len(held) < ag.MAX_VOTES_PER_SLOT and all(e.body != env.body for e in held):
            held.append(env)  # one envelope per body: the component counts votes, not copies
            return True
        return False

    def wake(self, now: float) -> list[Action]:
        """Pass every scheduled time-out whose time has come, earliest first."""
        out: list[Action] = []
        for slot, when in sorted(self.deadlines.items(), key=lambda kv: (kv[1], kv[0][0],
                                                                        kv[0][1].value)):
            if when <= now and slot in self.deadlines:
                del self.deadlines[slot]
                out += self._feed(ag.Timeout(*slot), now)
        return out

    # -- running the component --------------------------------------------------------

    def _check_hand(self, number: int, instance: Instance) -> None:
        if number != self.hand or instance is not self.instance:
            raise RemoteProtocolError(f"an agreement envelope of hand {number} "
                                      f"({instance.value}) taken in hand {self.hand} "
                                      f"({self.instance.value})")

    def begin(self, now: float) -> list[Action]:
        """Start the instance (its first round's time-out runs from ``now``)."""
        return self._begin(now)

    def _begin(self, now: float) -> list[Action]:
        if self.started:
            return []
        self.started = True
        return self._feed(ag.Start(), now)

    def _feed(self, event: ag.Event, now: float) -> list[Action]:
        return self._outputs(self.component.receive(event), now)

    def _outputs(self, outputs: list[ag.Output], now: float) -> list[Action]:
        out: list[Action] = []
        for output in outputs:
            if isinstance(output, ag.Broadcast):
                message = output.message
                body: ProposeBody | VoteBody = (
                    ProposeBody.of(self.hand, message, self.instance)
                    if isinstance(message, ag.Proposal)
                    else VoteBody.of(self.hand, message, self.instance))
                out.append(Sign(body))
            elif isinstance(output, ag.ScheduleTimeout):
                self.deadlines[(output.round, output.step)] = (
                    now + self.timing.limit + min(output.round, GROWTH_ROUNDS) * ROUND_STEP)
            elif isinstance(output, ag.Decide):
                self.deadlines.clear()
                out.append(Decided(output.value))
            elif output.proof not in self.reported:
                self.reported.add(output.proof)
                try:
                    out.append(self._contradiction(output.proof))
                except LocalProtocolError:
                    continue  # a message of it not kept here: no evidence to show
        return out

    def _contradiction(self, proof: ag.Proof) -> Contradiction:
        if isinstance(proof, ag.DoubleVote):
            return Contradiction(proof.seat, "two votes for one round and step",
                                 self._wire(proof.first), self._wire(proof.second))
        if isinstance(proof, ag.DoubleProposal):
            return Contradiction(proof.seat, "two proposals for one round",
                                 self._wire(proof.first), self._wire(proof.second))
        return Contradiction(proof.seat, "a prevote that drops its precommitted value",
                             self._wire(proof.precommit), self._wire(proof.prevote))

    def _wire(self, message: ag.Proposal | ag.Vote) -> bytes:
        """The signed envelope this node took for ``message``: a standing vote or
        proposal is signed as its leave."""
        if isinstance(message, ag.StandingVote | ag.StandingProposal):
            seat = (message.seat if isinstance(message, ag.StandingVote)
                    else message.proposer)
            for env in self.signed.get((seat, -1, "leave"), ()):
                return env.wire
            raise LocalProtocolError(f"no leave taken for {message!r}")
        if isinstance(message, ag.Proposal):
            key = (message.proposer, message.round, "propose")
            body: ProposeBody | VoteBody = ProposeBody.of(self.hand, message, self.instance)
        else:
            key = (message.seat, message.round, message.step.value)
            body = VoteBody.of(self.hand, message, self.instance)
        want = body.to_json()
        for env in self.signed.get(key, ()):
            if env.body == want:
                return env.wire
        raise LocalProtocolError(f"no signed envelope taken for {message!r}")
