"""Single-decree agreement on one decision of a table (docs/agreement.md).

The holders of a hand decide one :class:`Outcome` for it (commit a checkpoint, or void it
with the seats it times out) by Tendermint's round protocol (Buchman, Kwon, Milosevic,
"The latest gossip on BFT consensus", 2018, Algorithm 1), with quorums of a **strict
majority** of the holders: rounds with a rotating proposer, a proposal, prevotes and
precommits, locks (``locked``/``locked_round``) and the valid value
(``valid``/``valid_round``). A value is decided on a certificate: a quorum of precommits
for it in one round.

Sans-I/O in the style of h11: the state is a frozen value (:class:`AgreementState`), the
inputs are typed events (:class:`Start`, :class:`Endorse`, :class:`Proposal`,
:class:`Vote`, :class:`Timeout`) and :meth:`Agreement.receive` returns typed outputs
(:class:`Broadcast`, :class:`Decide`, :class:`Evidence`, :class:`ScheduleTimeout`). There
is no clock: the caller schedules the time-outs it is asked for and passes them back as
:class:`Timeout` events. Signing is the caller's too: a :class:`Vote` names its signer's
seat, and the caller passes only votes whose signature it verified.

Peer input (a :class:`Proposal` or :class:`Vote`) can only raise
:class:`~protocol.errors.RemoteProtocolError`; a wrong call by the owner (a time-out that
was never scheduled, a second start) raises :class:`~protocol.errors.LocalProtocolError`.
A holder that signs two different votes for one (round, step), two proposals for one
round, or a prevote that abandons its precommitted value without a newer polka is
reported once as :class:`Evidence` holding the two signed messages. Its votes all stay
counted: safety rests on quorums of signed votes, not on which of a liar's votes came
first, so what a node decides never hangs on arrival order.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError

__all__ = [
    "Agreement",
    "AgreementState",
    "Amnesia",
    "Broadcast",
    "Decide",
    "DoubleProposal",
    "DoubleVote",
    "Endorse",
    "Event",
    "Evidence",
    "Outcome",
    "OutcomeKind",
    "Output",
    "Proof",
    "Proposal",
    "ScheduleTimeout",
    "Start",
    "Step",
    "Timeout",
    "Vote",
    "VoteStep",
    "quorum_size",
    "skip_size",
]

MAX_ROUND: Final = 1 << 16
"""The highest round a peer's message may name: far beyond any table's time-outs, and
with :data:`MAX_VOTES_PER_SLOT` a bound on what a lying holder can make a node store."""

MAX_VOTES_PER_SLOT: Final = 2
"""Votes kept of one holder for one (round, step): its first and one that contradicts it
(the proof, and a vote a certificate may count). More prove nothing new, and no
certificate of a strict majority that holds an honest holder needs a third."""

CHECKPOINT_BYTES: Final = 32


def quorum_size(holders: int) -> int:
    """A strict majority of ``holders``: any two such sets share a holder."""
    return holders // 2 + 1


def skip_size(holders: int) -> int:
    """How many holders seen in a later round make a node join it: one more than the
    holders outside a quorum, so the set meets every quorum (Tendermint's f+1)."""
    return holders - quorum_size(holders) + 1


class OutcomeKind(enum.Enum):
    """What a hand's decision does."""

    COMMIT = "commit"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A decided value: commit the checkpoint ``checkpoint`` (its 32-byte id), or void the
    hand and time out ``timed_out`` (seats). Text form ``commit:<hex>`` / ``void:1,3``."""

    kind: OutcomeKind
    checkpoint: bytes = b""
    timed_out: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.kind is OutcomeKind.COMMIT:
            if len(self.checkpoint) != CHECKPOINT_BYTES or self.timed_out:
                raise LocalProtocolError(f"a commit names one 32-byte checkpoint: {self!s}")
        elif self.checkpoint or any(s < 0 for s in self.timed_out):
            raise LocalProtocolError(f"a void names seats >= 0 and no checkpoint: {self!s}")

    @classmethod
    def commit(cls, checkpoint: bytes) -> Outcome:
        return cls(OutcomeKind.COMMIT, checkpoint=checkpoint)

    @classmethod
    def void(cls, timed_out: Iterable[int] = ()) -> Outcome:
        return cls(OutcomeKind.VOID, timed_out=frozenset(timed_out))

    @classmethod
    def from_text(cls, text: str) -> Outcome:
        """Parse :meth:`__str__`'s form; bad text is the sender's fault."""
        kind, sep, rest = text.partition(":")
        found: Outcome | None = None
        try:
            if sep and kind == "commit":
                found = cls.commit(bytes.fromhex(rest))
            elif sep and kind == "void":
                found = cls.void(int(s) for s in rest.split(",")) if rest else cls.void()
        except (ValueError, LocalProtocolError) as exc:
            raise InvalidEncoding(f"not an outcome: {text!r}") from exc
        # Only the one text of each value: two texts of one value would be two signed
        # statements that read alike.
        if found is None or str(found) != text:
            raise InvalidEncoding(f"not an outcome: {text!r}")
        return found

    def __str__(self) -> str:
        if self.kind is OutcomeKind.COMMIT:
            return f"commit:{self.checkpoint.hex()}"
        return "void:" + ",".join(str(s) for s in sorted(self.timed_out))

    def __repr__(self) -> str:
        return f"Outcome.from_text({str(self)!r})"


class Step(enum.Enum):
    """A round's steps, in order; a :class:`Timeout` names one."""

    PROPOSE = 0
    PREVOTE = 1
    PRECOMMIT = 2


class VoteStep(enum.Enum):
    """The two kinds of vote."""

    PREVOTE = "prevote"
    PRECOMMIT = "precommit"


# -- events (inputs) -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    """The owner starts round 0 (once)."""


@dataclass(frozen=True, slots=True)
class Endorse:
    """The owner finds ``value`` valid (Tendermint's ``valid(v)``); the last value endorsed
    is the one it proposes when it has no valid value (``getValue()``)."""

    value: Outcome


@dataclass(frozen=True, slots=True)
class Proposal:
    """``proposer`` proposes ``value`` in ``round``; ``valid_round`` is the round of the
    polka it relies on, or -1."""

    round: int
    value: Outcome
    valid_round: int
    proposer: int


@dataclass(frozen=True, slots=True)
class Vote:
    """A signed vote of ``seat``: ``value`` or nil (``None``) at (``round``, ``step``).

    ``pol_round`` (prevotes for a value only, else -1) is the round of the polka the prevote
    relies on: the voter's lock round when it prevotes its locked value, the proposal's
    valid round when it follows a newer polka. A node counts such a prevote only once it
    holds that polka, so a lying holder cannot release its lock by naming one that does not
    exist, and a holder that precommitted ``u`` in round ``r`` and later prevotes another
    value relying on a round before ``r`` has signed its own :class:`Amnesia`.
    """

    seat: int
    round: int
    step: VoteStep
    value: Outcome | None
    pol_round: int = -1

    @property
    def slot(self) -> tuple[int, int, VoteStep]:
        return (self.seat, self.round, self.step)


@dataclass(frozen=True, slots=True)
class Timeout:
    """A time-out the node scheduled (:class:`ScheduleTimeout`) has passed."""

    round: int
    step: Step


Event: TypeAlias = Start | Endorse | Proposal | Vote | Timeout


# -- evidence ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoubleVote:
    """Two different votes signed by one holder for one (round, step)."""

    first: Vote
    second: Vote

    @property
    def seat(self) -> int:
        return self.first.seat


@dataclass(frozen=True, slots=True)
class DoubleProposal:
    """Two different proposals signed by one round's proposer."""

    first: Proposal
    second: Proposal

    @property
    def seat(self) -> int:
        return self.first.proposer


@dataclass(frozen=True, slots=True)
class Amnesia:
    """A holder precommitted a value in one round and later prevoted another value, relying
    on a polka older than that precommit: it dropped its lock."""

    precommit: Vote
    prevote: Vote

    @property
    def seat(self) -> int:
        return self.precommit.seat


Proof: TypeAlias = DoubleVote | DoubleProposal | Amnesia


# -- outputs ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Broadcast:
    """Sign ``message`` and send it to every holder and learner."""

    message: Proposal | Vote


@dataclass(frozen=True, slots=True)
class Decide:
    """``value`` is decided, certified by a quorum of precommits in ``round``."""

    value: Outcome
    round: int


@dataclass(frozen=True, slots=True)
class Evidence:
    """A holder signed a contradiction; ``proof`` holds both signed messages."""

    proof: Proof


@dataclass(frozen=True, slots=True)
class ScheduleTimeout:
    """Pass ``Timeout(round, step)`` back once this step's limit has passed."""

    round: int
    step: Step


Output: TypeAlias = Broadcast | Decide | Evidence | ScheduleTimeout


# -- state --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgreementState:
    """Everything one node knows of one decision. A value: equal states behave alike."""

    round: int = -1
    step: Step = Step.PROPOSE
    locked: Outcome | None = None
    locked_round: int = -1
    valid: Outcome | None = None
    valid_round: int = -1
    decision: Outcome | None = None
    decided_round: int = -1
    candidate: Outcome | None = None
    endorsed: frozenset[Outcome] = frozenset()
    proposals: frozenset[Proposal] = frozenset()
    votes: frozenset[Vote] = frozenset()
    proofs: frozenset[Proof] = frozenset()
    done: frozenset[tuple[str, int]] = frozenset()
    """Tendermint's "for the first time" conditions already acted on: (rule, round)."""


@dataclass(slots=True)
class Agreement:
    """One node's agreement on one decision (see the module docstring).

    ``holders`` are the seats that vote (a hand's key holders, in proposer order: round
    ``r`` is proposed by ``holders[r % len(holders)]``); ``seat`` is this node's, or None
    for a learner (a member without a key), which never votes and decides on a certificate.
    ``state`` is the only thing that changes; :meth:`receive` replaces it.
    """

    holders: tuple[int, ...]
    seat: int | None
    state: AgreementState = field(default_factory=AgreementState)
    # Whether a polka (round, value) is held, for the vote set it was counted on: a
    # prevote counts only where the polka it relies on is held, which rests on prevotes
    # relying on older polkas; counted once each, that stays linear in the votes.
    _polkas: tuple[frozenset[Vote], dict[tuple[int, Outcome], bool]] = field(
        default_factory=lambda: (frozenset(), {}), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.holders or len(set(self.holders)) != len(self.holders):
            raise LocalProtocolError(f"holders must be distinct and not empty: {self.holders}")
        if self.seat is not None and self.seat not in self.holders:
            raise LocalProtocolError(f"seat {self.seat} is not a holder of {self.holders}")

    # The two rules the safety argument rests on, as hooks: tests/runtime/agreement_model.py
    # replaces each in a broken variant and the model checker must find a split.

    def quorum(self) -> int:
        """How many holders' votes certify: a strict majority."""
        return quorum_size(len(self.holders))

    def may_prevote(self, value: Outcome, valid_round: int) -> bool:
        """Tendermint lines 23 and 29: prevote a proposed value only if it is endorsed and
        the lock allows it (no lock, the locked value, or a polka at or after the lock)."""
        state = self.state
        return value in state.endorsed and (
            state.locked_round <= valid_round or state.locked == value)

    # -- reading ------------------------------------------------------------------------

    def proposer(self, round_: int) -> int:
        return self.holders[round_ % len(self.holders)]

    @property
    def decision(self) -> Outcome | None:
        return self.state.decision

    def waiting_for(self) -> tuple[int, ...]:
        """The holders whose message of the current step has not come: the proposer's
        proposal, or the votes of the step. Empty once decided."""
        state = self.state
        if state.decision is not None or state.round < 0:
            return ()
        if state.step is Step.PROPOSE:
            return () if self._proposal(state.round) else (self.proposer(state.round),)
        kind = VoteStep.PREVOTE if state.step is Step.PREVOTE else VoteStep.PRECOMMIT
        voted = {v.seat for v in state.votes if v.round == state.round and v.step is kind}
        return tuple(h for h in self.holders if h not in voted)

    def certificate(self) -> tuple[Vote, ...]:
        """The precommits that certify the decision (what a lagging peer needs to decide)."""
        state = self.state
        if state.decision is None:
            return ()
        return tuple(sorted(
            (v for v in state.votes if v.step is VoteStep.PRECOMMIT
             and v.round == state.decided_round and v.value == state.decision),
            key=lambda v: v.seat))

    # -- input --------------------------------------------------------------------------

    def receive(self, event: Event) -> list[Output]:
        """Take one event; return what to send, schedule, decide and report."""
        out: list[Output] = []
        if isinstance(event, Start):
            self._start(out)
        elif isinstance(event, Endorse):
            self._endorse(event.value, out)
        elif isinstance(event, Proposal):
            self._take_proposal(event, out)
        elif isinstance(event, Vote):
            self._take_vote(event, out)
        elif isinstance(event, Timeout):
            self._on_timeout(event, out)
        else:
            raise LocalProtocolError(f"not an agreement event: {event!r}")
        self._settle(out)
        return out

    def _set(self, **changes: object) -> None:
        self.state = replace(self.state, **changes)  # type: ignore[arg-type]

    def _start(self, out: list[Output]) -> None:
        if self.state.round >= 0:
            raise LocalProtocolError(f"started twice (now in round {self.state.round})")
        if self.seat is None:
            self._set(round=0)
            return
        self._start_round(0, out)

    def _endorse(self, value: Outcome, out: list[Output]) -> None:
        self._set(endorsed=self.state.endorsed | {value}, candidate=value)
        state = self.state
        if (state.round >= 0 and state.step is Step.PROPOSE and state.decision is None
                and self.proposer(state.round) == self.seat
                and self._proposal(state.round) is None):
            self._propose(out)

    def _take_proposal(self, proposal: Proposal, out: list[Output]) -> None:
        if not 0 <= proposal.round <= MAX_ROUND:
            raise RemoteProtocolError(f"proposal of round {proposal.round} is out of range")
        if proposal.proposer != self.proposer(proposal.round):
            raise RemoteProtocolError(
                f"seat {proposal.proposer} proposed in round {proposal.round}, "
                f"whose proposer is {self.proposer(proposal.round)}")
        if not -1 <= proposal.valid_round < proposal.round:
            raise RemoteProtocolError(
                f"proposal of round {proposal.round} relies on round {proposal.valid_round}")
        if proposal.proposer == self.seat and proposal not in self.state.proposals:
            raise RemoteProtocolError(f"a proposal in this node's name it did not make: "
                                      f"{proposal!r}")
        first = self._proposal(proposal.round)
        if first is None:
            self._set(proposals=self.state.proposals | {proposal})
        elif first != proposal:
            # In a fixed order, so every node holds the same proof whatever came first.
            self._report(DoubleProposal(*sorted((first, proposal), key=_proposal_order)), out)

    def _take_vote(self, vote: Vote, out: list[Output]) -> None:
        """Store a new vote. A second, different vote for a slot is stored too (and
        reported): a quorum of signed votes for a value is a certificate whatever else its
        signers signed, and a node that kept only the first could never accept the
        certificate the others decided on."""
        self._check_vote(vote)
        if vote in self.state.votes:
            return
        if vote.seat == self.seat:
            raise RemoteProtocolError(f"a vote in this node's name it did not cast: {vote!r}")
        held = [v for v in self.state.votes if v.slot == vote.slot]
        if len(held) >= MAX_VOTES_PER_SLOT:
            return
        first = min(held, key=_vote_order, default=None)
        if first is not None:
            # In a fixed order, so every node holds the same proof whatever came first.
            self._report(DoubleVote(*sorted((first, vote), key=_vote_order)), out)
        self._store(vote, out)

    def _check_vote(self, vote: Vote) -> None:
        if vote.seat not in self.holders:
            raise RemoteProtocolError(f"vote by seat {vote.seat}, not a holder: {vote!r}")
        if not 0 <= vote.round <= MAX_ROUND:
            raise RemoteProtocolError(f"vote of round {vote.round} is out of range")
        relies = vote.step is VoteStep.PREVOTE and vote.value is not None
        if not (-1 <= vote.pol_round < vote.round if relies else vote.pol_round == -1):
            raise RemoteProtocolError(f"vote relies on round {vote.pol_round}: {vote!r}")

    def _store(self, vote: Vote, out: list[Output]) -> None:
        self._set(votes=self.state.votes | {vote})
        for other in self.state.votes:
            if other.seat == vote.seat and _amnesia(other, vote):
                self._report(Amnesia(other, vote), out)
            elif other.seat == vote.seat and _amnesia(vote, other):
                self._report(Amnesia(vote, other), out)

    def _report(self, proof: Proof, out: list[Output]) -> None:
        if proof not in self.state.proofs:
            self._set(proofs=self.state.proofs | {proof})
            out.append(Evidence(proof))

    def _on_timeout(self, timeout: Timeout, out: list[Output]) -> None:
        state = self.state
        if timeout.round > state.round or self.seat is None:
            raise LocalProtocolError(
                f"{timeout!r} was never scheduled (round {state.round}, seat {self.seat})")
        if timeout.round < state.round or state.decision is not None:
            return
        if timeout.step is Step.PRECOMMIT:
            self._start_round(state.round + 1, out)
        elif timeout.step is state.step is Step.PROPOSE:
            self._vote(VoteStep.PREVOTE, None, -1, out)
            self._set(step=Step.PREVOTE)
        elif timeout.step is state.step is Step.PREVOTE:
            self._vote(VoteStep.PRECOMMIT, None, -1, out)
            self._set(step=Step.PRECOMMIT)

    # -- acting -------------------------------------------------------------------------

    def _start_round(self, round_: int, out: list[Output]) -> None:
        """Tendermint StartRound (lines 11-21)."""
        self._set(round=round_, step=Step.PROPOSE)
        if self.proposer(round_) == self.seat and self._propose(out):
            return
        out.append(ScheduleTimeout(round_, Step.PROPOSE))

    def _propose(self, out: list[Output]) -> bool:
        state = self.state
        value = state.valid if state.valid is not None else state.candidate
        if value is None or self.seat is None:
            return False
        proposal = Proposal(state.round, value, state.valid_round, self.seat)
        self._set(proposals=state.proposals | {proposal})
        out.append(Broadcast(proposal))
        return True

    def _vote(self, step: VoteStep, value: Outcome | None, pol_round: int,
              out: list[Output]) -> None:
        assert self.seat is not None
        vote = Vote(self.seat, self.state.round, step, value, pol_round)
        self._store(vote, out)
        out.append(Broadcast(vote))

    # -- the upon rules ---------------------------------------------------------------

    def _settle(self, out: list[Output]) -> None:
        """Apply Tendermint's upon rules until none applies (each application changes the
        state, and every rule needs a change it has not made yet, so this ends)."""
        rules: tuple[Callable[[list[Output]], bool], ...] = (
            self._rule_decide, self._rule_skip, self._rule_prevote, self._rule_wait_prevotes,
            self._rule_lock, self._rule_precommit_nil, self._rule_wait_precommits)
        while self.state.decision is None and self.state.round >= 0:
            if not any(rule(out) for rule in rules):
                return

    def _rule_decide(self, out: list[Output]) -> bool:
        """Lines 49-54: a quorum of precommits for one value in any round decides it."""
        for round_, value in sorted({(v.round, v.value) for v in self.state.votes
                                     if v.step is VoteStep.PRECOMMIT and v.value is not None},
                                    key=lambda rv: (rv[0], str(rv[1]))):
            assert value is not None
            if len(self._voters(round_, VoteStep.PRECOMMIT, value)) >= self.quorum():
                self._set(decision=value, decided_round=round_)
                out.append(Decide(value, round_))
                return True
        return False

    def _rule_skip(self, out: list[Output]) -> bool:
        """Lines 55-56: enough holders seen in a later round make this node join it."""
        state = self.state
        later: dict[int, set[int]] = {}
        for v in state.votes:
            if v.round > state.round:
                later.setdefault(v.round, set()).add(v.seat)
        for p in state.proposals:
            if p.round > state.round:
                later.setdefault(p.round, set()).add(p.proposer)
        ready = [r for r, seats in later.items() if len(seats) >= skip_size(len(self.holders))]
        if not ready or self.seat is None:
            return False
        self._start_round(min(ready), out)
        return True

    def _rule_prevote(self, out: list[Output]) -> bool:
        """Lines 22-33: prevote on the round's proposal (a fresh one, or one relying on a
        polka this node holds)."""
        state = self.state
        proposal = self._proposal(state.round)
        if state.step is not Step.PROPOSE or proposal is None or self.seat is None:
            return False
        vr = proposal.valid_round
        if vr >= 0 and len(self._voters(vr, VoteStep.PREVOTE, proposal.value)) < self.quorum():
            return False
        if self.may_prevote(proposal.value, vr):
            pol = state.locked_round if state.locked == proposal.value else vr
            self._vote(VoteStep.PREVOTE, proposal.value, pol, out)
        else:
            self._vote(VoteStep.PREVOTE, None, -1, out)
        self._set(step=Step.PREVOTE)
        return True

    def _rule_wait_prevotes(self, out: list[Output]) -> bool:
        """Lines 34-35: a quorum of any prevotes starts the prevote time-out."""
        state = self.state
        key = ("prevotes", state.round)
        if state.step is not Step.PREVOTE or key in state.done or self.seat is None:
            return False
        if len(self._voters(state.round, VoteStep.PREVOTE, ANY)) < self.quorum():
            return False
        self._set(done=state.done | {key})
        out.append(ScheduleTimeout(state.round, Step.PREVOTE))
        return True

    def _rule_lock(self, out: list[Output]) -> bool:
        """Lines 36-43: the proposal with a polka in this round is locked and precommitted
        (in the prevote step) and becomes the valid value (in any later step)."""
        state = self.state
        proposal = self._proposal(state.round)
        key = ("lock", state.round)
        if (proposal is None or state.step is Step.PROPOSE or key in state.done
                or self.seat is None or proposal.value not in state.endorsed
                or len(self._voters(state.round, VoteStep.PREVOTE, proposal.value))
                < self.quorum()):
            return False
        self._set(done=state.done | {key}, valid=proposal.value, valid_round=state.round)
        if state.step is Step.PREVOTE:
            self._set(locked=proposal.value, locked_round=state.round)
            self._vote(VoteStep.PRECOMMIT, proposal.value, -1, out)
            self._set(step=Step.PRECOMMIT)
        return True

    def _rule_precommit_nil(self, out: list[Output]) -> bool:
        """Lines 44-46: a quorum of nil prevotes: precommit nil."""
        state = self.state
        if state.step is not Step.PREVOTE or self.seat is None:
            return False
        if len(self._voters(state.round, VoteStep.PREVOTE, None)) < self.quorum():
            return False
        self._vote(VoteStep.PRECOMMIT, None, -1, out)
        self._set(step=Step.PRECOMMIT)
        return True

    def _rule_wait_precommits(self, out: list[Output]) -> bool:
        """Lines 47-48: a quorum of any precommits starts the precommit time-out."""
        state = self.state
        key = ("precommits", state.round)
        if key in state.done or self.seat is None:
            return False
        if len(self._voters(state.round, VoteStep.PRECOMMIT, ANY)) < self.quorum():
            return False
        self._set(done=state.done | {key})
        out.append(ScheduleTimeout(state.round, Step.PRECOMMIT))
        return True

    # -- counting -----------------------------------------------------------------------

    def _proposal(self, round_: int) -> Proposal | None:
        return next((p for p in self.state.proposals if p.round == round_), None)

    def _voters(self, round_: int, step: VoteStep, value: Outcome | _Any | None,
                ) -> set[int]:
        """The holders whose counted vote at (round, step) is ``value`` (any value when
        ``value`` is :data:`ANY`). A prevote relying on a polka counts only where that
        polka is held."""
        return {v.seat for v in self.state.votes
                if v.round == round_ and v.step is step
                and (isinstance(value, _Any) or v.value == value)
                and self._counted(v)}

    def _counted(self, vote: Vote) -> bool:
        if vote.pol_round < 0 or vote.value is None:
            return True
        votes, held = self._polkas
        if votes is not self.state.votes:
            votes, held = self._polkas = (self.state.votes, {})
        key = (vote.pol_round, vote.value)
        if key not in held:
            held[key] = len(self._voters(vote.pol_round, VoteStep.PREVOTE, vote.value)
                            ) >= self.quorum()
        return held[key]


class _Any:
    """Marks "any value" where a count does not care which."""


ANY: Final = _Any()


def _proposal_order(proposal: Proposal) -> tuple[str, int]:
    return (str(proposal.value), proposal.valid_round)


def _vote_order(vote: Vote) -> tuple[str, int]:
    return ("" if vote.value is None else str(vote.value), vote.pol_round)


def _amnesia(precommit: Vote, prevote: Vote) -> bool:
    """Whether a precommit for a value and a later prevote for another value by the same
    holder, relying on a polka older than the precommit, contradict each other."""
    return (precommit.step is VoteStep.PRECOMMIT and precommit.value is not None
            and prevote.step is VoteStep.PREVOTE and prevote.value is not None
            and prevote.value != precommit.value and prevote.round > precommit.round
            and prevote.pol_round < precommit.round)
