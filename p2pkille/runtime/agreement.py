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
:class:`Vote`, :class:`Timeout`, :class:`Standing`) and :meth:`Agreement.receive` returns
typed outputs (:class:`Broadcast`, :class:`Decide`, :class:`Evidence`,
:class:`ScheduleTimeout`). There is no clock: the caller schedules the time-outs it is
asked for and passes them back as :class:`Timeout` events. Signing is the caller's too: a
:class:`Vote` names its signer's seat, and the caller passes only votes whose signature it
verified.

A holder that quits passes :class:`Leave`, its last event: the one output is
:class:`Stand`, its standing votes (:class:`Standing`) to sign into its leave. Every other
node takes them as a :class:`Standing` event and counts them as that holder's prevote and
precommit for one value in every round from the leave's first round on, without storing a
vote per round (docs/agreement.md section 5).

Peer input (a :class:`Proposal`, :class:`Vote` or :class:`Standing`) can only raise
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
from typing import Final, TypeAlias, overload

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
    "Leave",
    "Outcome",
    "OutcomeKind",
    "Output",
    "Proof",
    "Proposal",
    "ScheduleTimeout",
    "Stand",
    "Standing",
    "StandingProposal",
    "StandingVote",
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
    """What a decision does: a hand's outcome (commit or void), or a voided hand's verdict."""

    COMMIT = "commit"
    VOID = "void"
    VERDICT = "verdict"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A decided value: commit the checkpoint ``checkpoint`` (its 32-byte id); void the
    hand and time out ``timed_out`` (seats); or, for a voided hand, its verdict: per key
    holder the id of its accuse that counts (``ids``, None for none), the seats timed out
    (``timed_out``) and those blamed for an accuse signed in two versions (``blamed``).
    Text form ``commit:<hex>``, ``void:1,3``, ``verdict:<hex>,-,<hex>;1;``."""

    kind: OutcomeKind
    checkpoint: bytes = b""
    timed_out: frozenset[int] = frozenset()
    ids: tuple[bytes | None, ...] = ()
    blamed: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        seats = self.timed_out | self.blamed
        if any(s < 0 for s in seats):
            raise LocalProtocolError(f"seats are >= 0: {self!s}")
        if self.kind is OutcomeKind.COMMIT:
            if len(self.checkpoint) != CHECKPOINT_BYTES or seats or self.ids:
                raise LocalProtocolError(f"a commit names one 32-byte checkpoint: {self!s}")
        elif self.kind is OutcomeKind.VOID:
            if self.checkpoint or self.ids or self.blamed:
                raise LocalProtocolError(f"a void names seats and nothing else: {self!s}")
        elif self.checkpoint or not self.ids or any(
                i is not None and len(i) != CHECKPOINT_BYTES for i in self.ids):
            raise LocalProtocolError(f"a verdict names an id or none per holder: {self!s}")

    @classmethod
    def commit(cls, checkpoint: bytes) -> Outcome:
        return cls(OutcomeKind.COMMIT, checkpoint=checkpoint)

    @classmethod
    def void(cls, timed_out: Iterable[int] = ()) -> Outcome:
        return cls(OutcomeKind.VOID, timed_out=frozenset(timed_out))

    @classmethod
    def verdict(cls, ids: Iterable[bytes | None], timed_out: Iterable[int] = (),
                blamed: Iterable[int] = ()) -> Outcome:
        return cls(OutcomeKind.VERDICT, ids=tuple(ids), timed_out=frozenset(timed_out),
                   blamed=frozenset(blamed))

    @classmethod
    def from_text(cls, text: str) -> Outcome:
        """Parse :meth:`__str__`'s form; bad text is the sender's fault."""
        kind, sep, rest = text.partition(":")
        found: Outcome | None = None
        try:
            if sep and kind == "commit":
                found = cls.commit(bytes.fromhex(rest))
            elif sep and kind == "void":
                found = cls.void(_seats(rest))
            elif sep and kind == "verdict":
                ids, timed_out, blamed = rest.split(";")
                found = cls.verdict((None if i == "-" else bytes.fromhex(i)
                                     for i in ids.split(",")),
                                    _seats(timed_out), _seats(blamed))
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
        if self.kind is OutcomeKind.VOID:
            return "void:" + _seats_text(self.timed_out)
        return ("verdict:" + ",".join("-" if i is None else i.hex() for i in self.ids)
                + ";" + _seats_text(self.timed_out) + ";" + _seats_text(self.blamed))

    def __repr__(self) -> str:
        return f"Outcome.from_text({str(self)!r})"


def _seats(text: str) -> list[int]:
    return [int(s) for s in text.split(",")] if text else []


def _seats_text(seats: frozenset[int]) -> str:
    return ",".join(str(s) for s in sorted(seats))


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


@dataclass(frozen=True, slots=True)
class Standing:
    """A holder's leave (signed by it, as its last message of the hand): from round
    ``first_round`` on it prevotes ``value`` relying on the polka of ``pol_round`` (or
    -1) and precommits ``value`` in every round, proposes ``(value, pol_round)`` in every
    round it is the proposer of, and signs nothing else.

    What an honest holder stands for (:meth:`Agreement.stand_for`): its prevote of its
    current round while a polka for it may still form, else its valid value, else the void
    of its own seat; each a prevote its locks allow, and ``pol_round`` the polka that
    prevote names. ``first_round`` is the first round in which it signed nothing, so no
    standing vote meets a vote it signed.

    A node counts the standing prevote of a round where it holds the polka at
    ``pol_round`` (as any prevote relying on a polka), and the standing precommit of a round
    only where it holds a polka for ``value`` in that round, which is when an honest holder
    precommits.
    """

    seat: int
    value: Outcome
    first_round: int
    pol_round: int = -1

    def prevote(self, round_: int) -> StandingVote:
        """The prevote this leave stands for in ``round_`` (>= ``first_round``)."""
        return StandingVote(self.seat, round_, VoteStep.PREVOTE, self.value, self.pol_round,
                            standing=self)

    def precommit(self, round_: int) -> StandingVote:
        """The precommit this leave stands for in ``round_`` (>= ``first_round``)."""
        return StandingVote(self.seat, round_, VoteStep.PRECOMMIT, self.value, standing=self)

    def proposal(self, round_: int) -> StandingProposal:
        """The proposal this leave stands for in ``round_``, a round its seat proposes."""
        return StandingProposal(round_, self.value, self.pol_round, self.seat, standing=self)

    def vote(self, round_: int, step: VoteStep) -> StandingVote:
        return self.prevote(round_) if step is VoteStep.PREVOTE else self.precommit(round_)


@dataclass(frozen=True, slots=True)
class StandingVote(Vote):
    """One round's vote of a :class:`Standing`: it is signed as the leave ``standing``, so
    evidence that holds one holds the leave envelope. Never an event: the node takes the
    :class:`Standing`."""

    standing: Standing = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class StandingProposal(Proposal):
    """One round's proposal of a :class:`Standing` (signed as the leave ``standing``)."""

    standing: Standing = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class Leave:
    """The owner quits the hand: its one output is :class:`Stand`, the votes it stands by;
    after it the node signs nothing and only learns. Typed apart from :data:`Event`, as
    :meth:`Agreement.receive` returns the :class:`Stand` for it."""


Event: TypeAlias = Start | Endorse | Proposal | Vote | Timeout | Standing


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


@dataclass(frozen=True, slots=True)
class Stand:
    """Sign ``standing`` into this node's leave and send it to every holder and learner
    (the output of :class:`Leave`)."""

    standing: Standing


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
    standings: frozenset[Standing] = frozenset()
    """The leaves taken (this node's own too, once it left)."""
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
    leave_voids: bool = field(default=True, kw_only=True)
    """A leave makes the void of its signer valid (a hand's outcome). Not so for a
    voided hand's verdict, which no one seat's leave decides: there a leave stands for
    what its signer found valid, and nothing else."""
    # Whether a polka (round, value) is held, for the vote set it was counted on: a
    # prevote counts only where the polka it relies on is held, which rests on prevotes
    # relying on older polkas; counted once each, that stays linear in the votes.
    _polkas: tuple[tuple[frozenset[Vote], frozenset[Standing]],
                   dict[tuple[int, Outcome], bool]] = field(
        default_factory=lambda: ((frozenset(), frozenset()), {}), init=False, repr=False,
        compare=False)

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

    def stand_for(self) -> tuple[Outcome, int] | None:
        """What this holder's leave stands for, and the polka its standing prevote relies
        on: the latest polka it saw or may yet be part of. That is its prevote of the
        current round while a polka for it may still form there (no polka seen in the
        round, and too few other prevotes seen to rule one out), else its valid value (its
        lock allows it: the valid round is at or after the lock round), else the void of
        its own seat. Each is a prevote it signed or may sign, so its locks hold; and a
        holder that stays locks a value only on a polka, so at two holders, where every
        polka holds the leaver's prevote, the leave stands for the stayer's lock. Where a
        leave voids nothing (``leave_voids`` false), the last is its own candidate, and
        None if it has none: without a valid value it holds no lock either."""
        state = self.state
        assert self.seat is not None
        if state.valid is not None and state.valid_round == state.round:
            return state.valid, state.valid_round
        mine = next((v for v in state.votes if v.seat == self.seat and v.value is not None
                     and v.round == state.round and v.step is VoteStep.PREVOTE), None)
        if mine is not None and mine.value is not None:
            against = {v.seat for v in state.votes if v.round == state.round
                       and v.step is VoteStep.PREVOTE and v.value != mine.value}
            if len(self.holders) - len(against) >= self.quorum():
                return mine.value, mine.pol_round
        if state.valid is not None:
            return state.valid, state.valid_round
        if self.leave_voids:
            return Outcome.void({self.seat}), -1
        return None if state.candidate is None else (state.candidate, -1)

    # -- reading ------------------------------------------------------------------------

    def proposer(self, round_: int) -> int:
        return self.holders[round_ % len(self.holders)]

    @property
    def decision(self) -> Outcome | None:
        return self.state.decision

    @property
    def left(self) -> bool:
        """Whether this node left (:class:`Leave`): it signs nothing more."""
        return any(s.seat == self.seat for s in self.state.standings)

    @property
    def _voter(self) -> int | None:
        """This node's seat while it votes: not a learner's, not once it left."""
        return None if self.left else self.seat

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
        voted |= {s.seat for s in state.standings if s.first_round <= state.round}
        return tuple(h for h in self.holders if h not in voted)

    def certificate(self) -> tuple[Vote, ...]:
        """The precommits that certify the decision (what a lagging peer needs to decide).
        A standing precommit among them (a :class:`StandingVote`: pass the peer its
        :class:`Standing`) counts only with the polka of its round, so then the prevotes of
        that polka come too, and those of the polkas they rely on."""
        state = self.state
        value, round_ = state.decision, state.decided_round
        if value is None:
            return ()
        votes: list[Vote] = [v for v in state.votes if v.step is VoteStep.PRECOMMIT
                             and v.round == round_ and v.value == value]
        standing = [s.precommit(round_) for s in self._standing_voters(
            round_, VoteStep.PRECOMMIT, value)]
        if standing:
            votes += standing + self._polka_support(round_, value)
        return tuple(sorted(set(votes), key=_certificate_order))

    def _polka_support(self, round_: int, value: Outcome) -> list[Vote]:
        """The counted prevotes of the polka for ``value`` at ``round_`` and, for those that
        rely on an older polka, of that one (each polka once)."""
        found: list[Vote] = []
        todo, seen = [round_], {round_}
        while todo:
            r = todo.pop()
            prevotes: list[Vote] = [v for v in self.state.votes if v.round == r
                                    and v.step is VoteStep.PREVOTE and v.value == value
                                    and self._counted(v)]
            prevotes += [s.prevote(r) for s in self._standing_voters(r, VoteStep.PREVOTE,
                                                                    value)]
            for v in prevotes:
                found.append(v)
                if v.pol_round >= 0 and v.pol_round not in seen:
                    seen.add(v.pol_round)
                    todo.append(v.pol_round)
        return found

    # -- input --------------------------------------------------------------------------

    @overload
    def receive(self, event: Leave) -> list[Stand]: ...

    @overload
    def receive(self, event: Event) -> list[Output]: ...

    def receive(self, event: Event | Leave) -> list[Output] | list[Stand]:
        """Take one event; return what to send, schedule, decide and report (for
        :class:`Leave`: the :class:`Stand` to sign into the leave)."""
        if isinstance(event, Leave):
            return self._leave()
        if isinstance(event, StandingVote | StandingProposal):
            raise LocalProtocolError(f"a leave is taken as its Standing, not {event!r}")
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
        elif isinstance(event, Standing):
            self._take_standing(event, out)
        else:
            raise LocalProtocolError(f"not an agreement event: {event!r}")
        self._settle(out)
        return out

    def restore(self, message: Proposal | Vote | Standing) -> None:
        """One of this node's own messages read back (from its log after a restart): taken
        as cast, and the round, step and lock moved to where casting it left them, so that
        nothing the node signs after contradicts it; a value it proposed or voted for is
        endorsed (it was, to be signed). A holder's past matters to the safety argument
        only through what it signed and the locks that follow from it; with those back it
        goes on as if it had never stopped. Restore all of them, then :meth:`resume`:
        no rule runs in between, so none signs what a message still to restore says."""
        if self.seat is None:
            raise LocalProtocolError(f"a learner signs nothing to restore: {message!r}")
        state = self.state
        if isinstance(message, Standing):
            if message.seat != self.seat:
                raise LocalProtocolError(f"not this node's leave: {message!r}")
            self._check_standing(message)
            self._set(standings=state.standings | {message})
            return
        if isinstance(message, Proposal):
            if message.proposer != self.seat or self.proposer(message.round) != self.seat:
                raise LocalProtocolError(f"not this node's proposal: {message!r}")
            self._set(proposals=state.proposals | {message},
                      endorsed=state.endorsed | {message.value})
            self._enter(message.round, Step.PROPOSE)
            return
        if message.seat != self.seat:
            raise LocalProtocolError(f"not this node's vote: {message!r}")
        self._check_vote(message)
        self._set(votes=state.votes | {message})
        if message.value is not None:
            self._set(endorsed=self.state.endorsed | {message.value})
        prevote = message.step is VoteStep.PREVOTE
        self._enter(message.round, Step.PREVOTE if prevote else Step.PRECOMMIT)
        if (not prevote and message.value is not None
                and message.round >= self.state.locked_round):
            self._set(locked=message.value, locked_round=message.round,
                      done=self.state.done | {("lock", message.round)})
            if message.round >= self.state.valid_round:
                self._set(valid=message.value, valid_round=message.round)

    def resume(self) -> list[Output]:
        """Go on after :meth:`restore`: the current step's time-out is scheduled again (the
        one pending at the crash is lost; a nil vote or a later round is safe at any time),
        and the rules run on what is held. A holder that left only learns from here."""
        out: list[Output] = []
        if self.state.round < 0:
            if not self.left:
                self._start(out)
                self._settle(out)
                return out
            self._set(round=0)
        elif self.state.decision is None and not self.left:
            out.append(ScheduleTimeout(self.state.round, self.state.step))
        self._settle(out)
        return out

    def _enter(self, round_: int, step: Step) -> None:
        """Be at least at ``step`` of ``round_`` (a restored message was cast there)."""
        state = self.state
        order = (Step.PROPOSE, Step.PREVOTE, Step.PRECOMMIT)
        if round_ > state.round:
            self._set(round=round_, step=step)
        elif round_ == state.round and order.index(step) > order.index(state.step):
            self._set(step=step)

    def _set(self, **changes: object) -> None:
        self.state = replace(self.state, **changes)  # type: ignore[arg-type]

    def _start(self, out: list[Output]) -> None:
        if self.state.round >= 0:
            raise LocalProtocolError(f"started twice (now in round {self.state.round})")
        if self._voter is None:
            self._set(round=0)
            return
        self._start_round(0, out)

    def _endorse(self, value: Outcome, out: list[Output]) -> None:
        self._set(endorsed=self.state.endorsed | {value}, candidate=value)
        self._propose_late(out)

    def _propose_late(self, out: list[Output]) -> None:
        """Propose now if this node proposes the current round and had nothing to propose
        when it began."""
        state = self.state
        if (state.round >= 0 and state.step is Step.PROPOSE and state.decision is None
                and self.proposer(state.round) == self._voter
                and self._proposal(state.round) is None):
            self._propose(out)

    def _leave(self) -> list[Stand]:
        """This holder's last act: the votes it stands by, from the first round it signed
        nothing in. Once decided there is nothing to stand for (the peers decide on the
        certificate)."""
        state = self.state
        if self.seat is None:
            raise LocalProtocolError("a learner has no votes to stand by")
        if self.left:
            raise LocalProtocolError(f"seat {self.seat} left already")
        if state.decision is not None:
            return []
        first = max(state.round, 0)
        if (any(v.seat == self.seat and v.round == first for v in state.votes)
                or any(p.proposer == self.seat and p.round == first
                       for p in state.proposals)):
            first += 1
        stand = self.stand_for()
        if stand is None:
            return []
        value, pol_round = stand
        standing = Standing(self.seat, value, first, pol_round)
        self._set(standings=state.standings | {standing})
        return [Stand(standing)]

    def _take_standing(self, standing: Standing, out: list[Output]) -> None:
        """Another holder's leave. It endorses the void of the leaver at this node (a
        signed leave makes that valid at every node), and what the leave stands for becomes
        the value this node proposes when it has no valid value, if it endorses it: the
        standing prevote joins a polka for that value only."""
        self._check_standing(standing)
        state = self.state
        if standing in state.standings:
            return
        if standing.seat == self.seat:
            raise RemoteProtocolError(f"a leave in this node's name it did not make: "
                                      f"{standing!r}")
        held = [s for s in state.standings if s.seat == standing.seat]
        same = next((s for s in held if _stands_alike(s, standing)), None)
        if same is not None:
            # The same votes from an earlier round on cover the later ones: keep the earlier.
            if same.first_round <= standing.first_round:
                return
            self._set(standings=state.standings - {same})
        elif len(held) >= MAX_VOTES_PER_SLOT:
            return
        for other in held if same is None else ():
            at = max(other.first_round, standing.first_round)
            self._report(DoubleVote(*sorted((other.prevote(at), standing.prevote(at)),
                                            key=_vote_order)), out)
        self._set(standings=self.state.standings | {standing})
        for vote in sorted(self.state.votes, key=_vote_order_full):
            if vote.seat == standing.seat:
                self._against_standing(vote, standing, out)
        for proposal in self.state.proposals:
            if (proposal.proposer == standing.seat and proposal.round >= standing.first_round
                    and not _alike(standing.proposal(proposal.round), proposal)):
                self._report(DoubleProposal(*sorted(
                    (standing.proposal(proposal.round), proposal), key=_proposal_order)), out)
        if self.leave_voids:
            void = Outcome.void({standing.seat})
            endorsed = self.state.endorsed | {void}
            self._set(endorsed=endorsed,
                      candidate=standing.value if standing.value in endorsed else void)
        elif standing.value in self.state.endorsed:
            self._set(candidate=standing.value)
        self._propose_late(out)

    def _check_standing(self, standing: Standing) -> None:
        if standing.seat not in self.holders:
            raise RemoteProtocolError(f"leave by seat {standing.seat}, not a holder: "
                                      f"{standing!r}")
        if not 0 <= standing.first_round <= MAX_ROUND:
            raise RemoteProtocolError(f"leave standing from round {standing.first_round} is "
                                      f"out of range")
        if not -1 <= standing.pol_round < standing.first_round:
            raise RemoteProtocolError(f"leave relies on round {standing.pol_round}: "
                                      f"{standing!r}")

    def _against_standing(self, vote: Vote, standing: Standing, out: list[Output]) -> None:
        """Report what a vote its leaver signed contradicts in the leave: another vote for a
        round the leave stands in (:class:`DoubleVote`), or a precommit of another value
        than it stands for, in a round after the polka its standing prevote relies on
        (:class:`Amnesia`, against the standing prevote of the first round after both).
        A prevote after a standing precommit is in a round the leave stands in: a double
        vote."""
        if vote.round >= standing.first_round:
            mine = standing.vote(vote.round, vote.step)
            if not _alike(mine, vote):
                self._report(DoubleVote(*sorted((mine, vote), key=_vote_order)), out)
        if (vote.step is VoteStep.PRECOMMIT and vote.value is not None
                and vote.value != standing.value and standing.pol_round < vote.round):
            prevote = standing.prevote(max(standing.first_round, vote.round + 1))
            self._report(Amnesia(vote, prevote), out)

    def check_proposal(self, proposal: Proposal) -> None:
        """Raise RemoteProtocolError if :meth:`receive` would refuse ``proposal`` (a
        caller that holds a proposal back checks it first)."""
        self._check_proposal(proposal)

    def _check_proposal(self, proposal: Proposal) -> None:
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

    def _take_proposal(self, proposal: Proposal, out: list[Output]) -> None:
        self._check_proposal(proposal)
        first = self._proposal(proposal.round)
        if first is not None and _alike(first, proposal):
            return
        if first is None or isinstance(first, StandingProposal):
            # A leaver proposes nothing in the rounds it stands in: its own proposal there
            # contradicts its leave, and is kept, as a forked proposal is, in its place.
            self._set(proposals=self.state.proposals | {proposal})
        if first is not None and not any(
                isinstance(p, DoubleProposal) and p.first.round == proposal.round
                for p in self.state.proofs):
            # In a fixed order, so every node holds the same proof whatever came first;
            # one per round: a third proposal proves nothing new, and a lying proposer's
            # flood must cost nothing.
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
        standing = [s for s in self.state.standings if s.seat == vote.seat]
        if any(s.first_round <= vote.round and _alike(s.vote(vote.round, vote.step), vote)
               for s in standing):
            return  # the leave counts it already
        held = [v for v in self.state.votes if v.slot == vote.slot]
        if len(held) >= MAX_VOTES_PER_SLOT:
            return
        first = min(held, key=_vote_order, default=None)
        if first is not None:
            # In a fixed order, so every node holds the same proof whatever came first.
            self._report(DoubleVote(*sorted((first, vote), key=_vote_order)), out)
        self._store(vote, out)
        for s in sorted(standing, key=_standing_order):
            self._against_standing(vote, s, out)

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
        if timeout.round < state.round or state.decision is not None or self.left:
            return
        if timeout.step is Step.PRECOMMIT:
            if state.round < MAX_ROUND:  # no round a peer would refuse as out of range
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
        if self.proposer(round_) == self._voter and self._propose(out):
            return
        out.append(ScheduleTimeout(round_, Step.PROPOSE))

    def _propose(self, out: list[Output]) -> bool:
        state = self.state
        value = state.valid if state.valid is not None else state.candidate
        seat = self._voter
        if value is None or seat is None:
            return False
        proposal = Proposal(state.round, value, state.valid_round, seat)
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
        """Lines 49-54: a quorum of precommits for one value in any round decides it. The
        rounds to look at: those of signed votes for the value, and the first rounds of
        leaves. In a round with no signed vote for it only standing votes count, and they
        count alike in the latest first round at or before it."""
        state = self.state
        found: set[tuple[int, Outcome]] = {
            (v.round, v.value) for v in state.votes
            if v.value is not None and (state.standings or v.step is VoteStep.PRECOMMIT)}
        found |= {(s.first_round, s.value) for s in state.standings}
        for round_, value in sorted(found, key=lambda rv: (rv[0], str(rv[1]))):
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
        for s in state.standings:
            if s.first_round > state.round:
                later.setdefault(s.first_round, set())
        # A leaver is in every round from its first on; counted in the rounds others were
        # seen in or it stood from, not beyond them (which would skip without end).
        for round_, seats in later.items():
            seats.update(s.seat for s in state.standings if s.first_round <= round_)
        ready = [r for r, seats in later.items() if len(seats) >= skip_size(len(self.holders))]
        if not ready or self._voter is None:
            return False
        self._start_round(min(ready), out)
        return True

    def _rule_prevote(self, out: list[Output]) -> bool:
        """Lines 22-33: prevote on the round's proposal (a fresh one, or one relying on a
        polka this node holds)."""
        state = self.state
        proposal = self._proposal(state.round)
        if state.step is not Step.PROPOSE or proposal is None or self._voter is None:
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
        if state.step is not Step.PREVOTE or key in state.done or self._voter is None:
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
                or self._voter is None or proposal.value not in state.endorsed
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
        if state.step is not Step.PREVOTE or self._voter is None:
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
        if key in state.done or self._voter is None:
            return False
        if len(self._voters(state.round, VoteStep.PRECOMMIT, ANY)) < self.quorum():
            return False
        self._set(done=state.done | {key})
        out.append(ScheduleTimeout(state.round, Step.PRECOMMIT))
        return True

    # -- counting -----------------------------------------------------------------------

    def _proposal(self, round_: int) -> Proposal | None:
        """The round's proposal: its proposer's signed one, else what the proposer's leave
        stands for."""
        signed = next((p for p in self.state.proposals if p.round == round_), None)
        if signed is not None:
            return signed
        proposer = self.proposer(round_)
        return min((s.proposal(round_) for s in self.state.standings
                    if s.seat == proposer and s.first_round <= round_),
                   key=_proposal_order, default=None)

    def _voters(self, round_: int, step: VoteStep, value: Outcome | _Any | None,
                ) -> set[int]:
        """The holders whose counted vote at (round, step) is ``value`` (any value when
        ``value`` is :data:`ANY`), their standing votes included. A prevote relying on a
        polka counts only where that polka is held."""
        seats = {v.seat for v in self.state.votes
                 if v.round == round_ and v.step is step
                 and (isinstance(value, _Any) or v.value == value)
                 and self._counted(v)}
        if value is not None and self.state.standings:
            seats.update(s.seat for s in self._standing_voters(round_, step, value))
        return seats

    def _standing_voters(self, round_: int, step: VoteStep, value: Outcome | _Any,
                         ) -> list[Standing]:
        """The leaves whose standing vote at (round, step) counts for ``value``: a prevote
        where the polka it relies on is held; a precommit for a value where a polka for it
        in that round is held (an honest holder precommits on nothing less), and for any
        value regardless (whatever the polka, the leaver would have precommitted, if only
        nil, which is all a time-out waits for)."""
        found = []
        for s in self.state.standings:
            if s.first_round > round_ or not (isinstance(value, _Any) or s.value == value):
                continue
            if step is VoteStep.PREVOTE:
                counted = s.pol_round < 0 or self._polka(s.pol_round, s.value)
            else:
                counted = isinstance(value, _Any) or self._polka(round_, s.value)
            if counted:
                found.append(s)
        return found

    def _counted(self, vote: Vote) -> bool:
        if vote.pol_round < 0 or vote.value is None:
            return True
        return self._polka(vote.pol_round, vote.value)

    def _polka(self, round_: int, value: Outcome) -> bool:
        """Whether a quorum of counted prevotes for ``value`` at ``round_`` is held."""
        known, held = self._polkas
        now = (self.state.votes, self.state.standings)
        if known[0] is not now[0] or known[1] is not now[1]:
            held = {}
            self._polkas = (now, held)
        key = (round_, value)
        if key not in held:
            held[key] = len(self._voters(round_, VoteStep.PREVOTE, value)) >= self.quorum()
        return held[key]


class _Any:
    """Marks "any value" where a count does not care which."""


ANY: Final = _Any()


def _proposal_order(proposal: Proposal) -> tuple[str, int]:
    return (str(proposal.value), proposal.valid_round)


def _vote_order(vote: Vote) -> tuple[str, int]:
    return ("" if vote.value is None else str(vote.value), vote.pol_round)


def _vote_order_full(vote: Vote) -> tuple[int, int, str, str, int]:
    return (vote.seat, vote.round, vote.step.value, *_vote_order(vote))


def _certificate_order(vote: Vote) -> tuple[bool, int, int, bool, str, int]:
    """Precommits first, then prevotes by round; a holder's standing vote after its own."""
    return (vote.step is VoteStep.PREVOTE, -vote.round, *_vote_order_full(vote)[:1],
            isinstance(vote, StandingVote), *_vote_order(vote))


def _standing_order(standing: Standing) -> tuple[int, str, int]:
    return (standing.first_round, str(standing.value), standing.pol_round)


def _alike(one: Proposal | Vote, other: Proposal | Vote) -> bool:
    """The same signed statement, whether a message of its own or one round of a leave."""
    return _content(one) == _content(other)


def _content(message: Proposal | Vote) -> tuple[object, ...]:
    if isinstance(message, Vote):
        return ("vote", message.seat, message.round, message.step, message.value,
                message.pol_round)
    return ("proposal", message.proposer, message.round, message.value, message.valid_round)


def _stands_alike(one: Standing, other: Standing) -> bool:
    """Two leaves of one holder that stand for the same votes (from either first round)."""
    return (one.seat, one.value, one.pol_round) == (other.seat, other.value, other.pol_round)


def _amnesia(precommit: Vote, prevote: Vote) -> bool:
    """Whether a precommit for a value and a later prevote for another value by the same
    holder, relying on a polka older than the precommit, contradict each other."""
    return (precommit.step is VoteStep.PRECOMMIT and precommit.value is not None
            and prevote.step is VoteStep.PREVOTE and prevote.value is not None
            and prevote.value != precommit.value and prevote.round > precommit.round
            and prevote.pol_round < precommit.round)
