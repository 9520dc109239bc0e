"""The void round's verdict, by agreement, and the hand voided (docs/protocol.md II.11.1,
II.11.5).

Once the hand's agreement decided its void, every holder not timed out by it sends its
``accuse``. A node proposes, in the verdict's agreement (agreeing.py), what it counts:
per holder the id of its accuse, or none where that holder is timed out (its accuse did
not come within this node's limit, it left, or the hand's decision timed it out), blamed
for an accuse signed in two versions, or its chain forked. It endorses another's proposal
when it holds every accuse the proposal counts and every seat the proposal times out is
one its own limit passed for. The decided verdict names what counts, so every node judges
the same accusations: the proven cheaters, false accusers, timed-out and double-signing
seats are expelled, and the hand is voided: the game goes back to before its deal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import Outcome, OutcomeKind
from p2pkille.runtime.bodies import AccuseBody, Instance
from p2pkille.runtime.evidence import Finding
from p2pkille.runtime.faults import Blame, FaultKind
from p2pkille.runtime.outcome import HandOutcome
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage, keyless_index
from protocol.envelope import Envelope, decode
from protocol.errors import RemoteProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Verdict"]

Judged = list[tuple[int, msg.Accusation, Finding]]


@dataclass(slots=True)
class Round:
    """A void round as a verdict says it: what counts, and what follows from it."""

    value: Outcome
    verdicts: Judged = field(default_factory=list)
    blamed: set[int] = field(default_factory=set)

    @property
    def timed_out(self) -> set[int]:
        return set(self.value.timed_out)

    @property
    def equivocated(self) -> set[int]:
        return set(self.value.blamed)


class Verdict:
    """Proposes and carries out the verdicts of voided hands."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.voided: set[int] = set()
        self.expelled: set[int] = set()
        self.seen: dict[bytes, tuple[bytes | None, ...]] = {}
        """accuse id -> what it says its author held (of the accuses of the current hand
        not installed, read from their bytes)."""
        self.parsed: dict[bytes, bool] = {}
        """accuse id -> whether it passes an accuse's checks (not installed ones)."""

    # -- what this node holds -------------------------------------------------------------

    def gone(self, hand: Hand) -> set[int]:
        """The seats a verdict may time out here: timed out by the hand's decision, or
        whose accuse (a buyer's disclosure) I waited for longer than my limit, or that
        left."""
        left = {s for m in self.table.left if self.table.seat_of
                and ((s := self.table.seat_of[m]) in hand.holders or self.table.sits(hand, s))}
        return set(hand.timeouts.timed_out) | hand.timeouts.expired | left

    def _forked(self, hand: Hand) -> set[int]:
        """The holders whose chain I hold forked: not waited for (their accuse may never
        come), their accuse counts for nothing."""
        return {f.seat for f in self.table.faults if f.kind == FaultKind.EQUIVOCATION
                and f.seat in hand.holders
                and (f.seat, hand.number) not in self.core.intake.accuse_forks}

    def equivocated(self, hand: Hand) -> set[int]:
        """The holders that signed two accuses I hold: carried in two versions, a fork of
        its chain at its accuse, or a carried version that is malformed (the carried
        version of each other holder is installed on the way: accusations.py)."""
        return self.core.accusations.cited_versions(hand) | self._forks_known(hand)

    def _forks_known(self, hand: Hand) -> set[int]:
        """:meth:`equivocated` as far as it can be read without installing anything."""
        return {hand.holders[k] for k, versions in hand.void.cited.items()
                if len(versions) > 1} | {
            seat for seat, number in self.core.intake.accuse_forks
            if number == hand.number and seat in hand.holders}

    def _accuse_wire(self, hand: Hand, k: int, accuse_id: bytes) -> bytes | None:
        """The bytes of holder ``k``'s accuse ``accuse_id``, if I hold them (signed by
        that holder: each source below is kept per author)."""
        void = hand.void
        wire = void.accuse_wires.get(accuse_id) if void.counted.get(k) == accuse_id else None
        wire = wire or void.cited.get(k, {}).get(accuse_id)
        if wire is not None:
            return wire
        for held in self.core.intake.accuse_fork_wires.get((hand.holders[k], hand.number), ()):
            if self._decode(held).id == accuse_id:
                return held
        return None

    def _parses(self, hand: Hand, k: int, accuse_id: bytes) -> bool:
        """Does holder ``k``'s accuse ``accuse_id`` (held here) pass every check of an
        accuse taken (installed, or read from its bytes once)?"""
        if hand.void.counted.get(k) == accuse_id:
            return True
        found = self.parsed.get(accuse_id)
        if found is None:
            wire = self._accuse_wire(hand, k, accuse_id)
            if wire is None:
                return False
            m = self.table.member_of[hand.holders[k]]
            try:
                self.core.accusations.parse(m, self._decode(wire))
                found = True
            except (Blame, RemoteProtocolError):
                found = False
            self.parsed[accuse_id] = found
        return found

    def _decode(self, wire: bytes) -> Envelope:
        return decode(wire, table=self.table.config.table_id, members=self.table.members,
                      kinds=(msg.ACCUSE,))

    def _seen_of(self, hand: Hand, k: int, accuse_id: bytes) -> tuple[bytes | None, ...]:
        """What holder ``k``'s accuse ``accuse_id`` (held here) says its author held."""
        found = hand.void.seen.get(accuse_id)
        if found is None:
            found = self.seen.get(accuse_id)
        if found is None:
            wire = self._accuse_wire(hand, k, accuse_id)
            try:
                found = () if wire is None else AccuseBody.parse(self._decode(wire)).seen
            except RemoteProtocolError:
                found = ()
            if len(found) != len(hand.holders):
                found = ()  # malformed: such a version is refused (_parses)
            if wire is not None:
                self.seen[accuse_id] = found
        return found

    def unbacked(self, hand: Hand, k: int) -> bool:
        """Does holder ``k``'s accuse say its author held an accuse of another holder that
        I do not hold? Then what it disclosed may answer another version than mine: I wait
        for that version (its author passes it on, :meth:`saw`), and past my limit count
        ``k`` out, as one whose accuse did not come."""
        accuse_id = hand.void.counted.get(k)
        if accuse_id is None:
            return False
        out = set(hand.timeouts.timed_out) | self._forked(hand) | self._forks_known(hand)
        return any(i is not None and hand.holders[j] not in out
                   and self._accuse_wire(hand, j, i) is None
                   for j, i in enumerate(self._seen_of(hand, k, accuse_id)))

    def saw(self, hand: Hand, seen: tuple[bytes | None, ...]) -> None:
        """An accuse says its author held ``seen``: where that is another version of a
        holder's accuse than mine, pass mine on (its author then holds both, and passes
        the fork on to every node)."""
        for j, theirs in enumerate(seen):
            mine = hand.void.counted.get(j)
            if theirs is None or mine is None or theirs == mine or (
                    (j, theirs, mine) in hand.void.echoed):
                continue
            hand.void.echoed.add((j, theirs, mine))
            wire = self._accuse_wire(hand, j, mine)
            if wire is not None:
                self.core.outbox.pass_on([wire])

    def _consistent(self, hand: Hand, value: Outcome) -> bool:
        """Does every accuse ``value`` counts say its author held, of each other holder
        it counts, the version it counts, or none? Then what each disclosed answers the
        accusations the verdict judges."""
        for k, accuse_id in enumerate(value.ids):
            if accuse_id is None:
                continue
            seen = self._seen_of(hand, k, accuse_id)
            if any(i is not None and value.ids[j] is not None and i != value.ids[j]
                   for j, i in enumerate(seen)):
                return False
        return True

    # -- the verdict's agreement ----------------------------------------------------------

    def valid(self, hand: Hand, value: Outcome) -> bool:
        """Does ``value`` check out here? Every accuse it counts is one I hold; every seat
        it times out, one that :meth:`gone` holds, the hand's time-outs among them; every
        seat it blames, one whose two accuses I hold; every holder it counts nothing of
        otherwise, one whose chain I hold forked."""
        if value.kind is not OutcomeKind.VERDICT or len(value.ids) != len(hand.holders):
            return False
        gone = self.gone(hand)
        if not (value.timed_out <= gone and hand.timeouts.timed_out <= value.timed_out):
            return False
        if not value.blamed <= self.equivocated(hand):
            return False
        forked = self._forked(hand)
        for k, (seat, accuse_id) in enumerate(zip(hand.holders, value.ids, strict=True)):
            out = seat in value.timed_out or seat in value.blamed
            if accuse_id is None:
                if not out and seat not in forked:
                    return False
            elif out or seat in forked or not self._parses(hand, k, accuse_id):
                return False
        return (all(s in value.timed_out for s in self.core.accusations.disputed_buyers(hand))
                and self._consistent(hand, value))

    def named(self, hand: Hand, value: Outcome) -> None:
        """A proposal or vote names ``value``: where it counts another version of a
        holder's accuse than I do, pass mine on, so the fork is found where it was not."""
        if value.kind is OutcomeKind.VERDICT and len(value.ids) == len(hand.holders):
            self.saw(hand, value.ids)

    # -- deciding -------------------------------------------------------------------------

    def update(self) -> None:
        """Count the hand once its outcome is decided, and void it once its verdict is;
        run after every envelope consumed."""
        hand = self.table.hand
        if hand is None or hand.number in self.voided:
            return
        stage = self.table.stage
        if (not hand.void.voiding and not hand.void.stopping and not hand.timeouts.votes
                and hand.timeouts.scan_version == self.table.version
                and stage != Stage.CHECKPOINT):
            return  # nothing new to scan and nothing to decide: most calls, at every step
        if stage == Stage.CHECKPOINT and self._signed(hand):
            return
        self.core.timeouts.scan(hand)
        self.core.timeouts.settle(hand)
        agreeing = self.core.agreeing
        agreeing.refresh(hand)
        if not hand.void.voiding or self.table.hand is not hand:
            return
        decided = agreeing.decided.get((hand.number, Instance.VERDICT))
        if decided is None:
            agreeing.of(hand, Instance.VERDICT)  # a learner's too: it takes the certificate
            mine = self._candidate(hand)
            if mine is not None:
                agreeing.endorse(hand, mine, Instance.VERDICT)
            agreeing.refresh(hand, Instance.VERDICT)
            decided = agreeing.decided.get((hand.number, Instance.VERDICT))
        if decided is not None and self.table.hand is hand:
            found = self._judged(hand, decided)
            if found is not None:
                self._void(hand, found)

    def _signed(self, hand: Hand) -> bool:
        """At the checkpoint: endorse the commit once every holder's good signature is
        in (the last may come with a fork, closing.py), and count the hand if it is
        decided. True if nothing more is to do now: counted, or no vote to scan (the
        agreement's envelopes are ready in chain order at this stage)."""
        closing = self.core.closing
        if len(hand.close.agreed) < len(hand.holders):
            closing.take_forked(hand)
        if len(hand.close.agreed) < len(hand.holders):
            return False
        closing.endorse(hand)
        return self.table.hand is not hand or (not hand.void.voiding
                                               and not hand.void.stopping
                                               and not hand.timeouts.votes)

    def _candidate(self, hand: Hand) -> Outcome | None:
        """What I count, once every holder's accuse is in, or out here, and every
        accusation I count is judged; None before. A holder's accuse I hold counts, even
        where my limit for it passed."""
        if hand.claims.pet is not None and hand.claims.pet.pending:
            # The test will not end: check its parts now, so a bad one is in my accuse.
            self.core.claims.check_parts(hand, hand.claims.pet)
        void = hand.void
        # An accuse in two versions: its author signed both, and what the others
        # disclosed may answer either.
        blamed = self.equivocated(hand)
        forked = self._forked(hand) - blamed
        held = {hand.holders[k] for k in void.accuses if not self.unbacked(hand, k)} | {
            s for s in range(len(self.table.members))
            if keyless_index(len(hand.holders), s) in void.disclosed}
        timed_out = set(hand.timeouts.timed_out) | (self.gone(hand) - held) - blamed
        out = timed_out | blamed | forked
        if not all(seat in held or seat in out for seat in hand.holders):
            return None
        value = Outcome.verdict(
            (None if seat in out else void.counted.get(k) for k, seat in enumerate(hand.holders)),
            timed_out, blamed)
        # What I propose passes the checks I make of another's proposal: a disputed
        # buyer's disclosure not in yet, or a version of an accuse I lack, and not yet.
        if not self.valid(hand, value) or self._judge(hand, value) is None:
            return None
        return value

    def _judge(self, hand: Hand, value: Outcome) -> Judged | None:
        """Every accusation of the accuses ``value`` counts, judged; None while one waits
        for an envelope this node has not checked yet."""
        checked: Judged = []
        # Every seat whose accuse counts for nothing answers no dispute.
        timed_out = set(value.timed_out) | value.blamed | {
            hand.holders[k] for k, i in enumerate(value.ids) if i is None}
        for k, accuse_id in enumerate(value.ids):
            if accuse_id is None:
                continue
            by = hand.holders[k]
            for acc in hand.void.accuses.get(k, ()):
                ok = self.core.evidence.check(by, acc, timed_out)
                if ok is Finding.UNCHECKED:
                    self.core.dealing.check_steps(hand)  # I took the step, unchecked
                    ok = self.core.evidence.check(by, acc, timed_out)
                checked.append((by, acc, ok))
        if any(ok is Finding.PENDING for _, _, ok in checked):
            return None
        return checked

    def _judged(self, hand: Hand, value: Outcome) -> Round | None:
        """The decided verdict's round: the accuses it counts taken (the version it names
        of each), and judged; None while one is not here yet or waits for an envelope."""
        accusations = self.core.accusations
        for k, accuse_id in enumerate(value.ids):
            if accuse_id is None or hand.void.counted.get(k) == accuse_id:
                continue
            wire = self._accuse_wire(hand, k, accuse_id)
            if wire is None:
                return None  # it comes with the chains, or passed on (named)
            m = self.table.member_of[hand.holders[k]]
            try:
                accusations.install(k, accusations.parse(m, self._decode(wire)))
            except (Blame, RemoteProtocolError):
                # Never decided: the precommits of a strict majority hold an honest one,
                # which found it passed these checks (valid), as every node does.
                return None
        checked = self._judge(hand, value)
        if checked is None:
            return None
        # An accusation proven of equivocation: its author counts for nothing either.
        forked = {acc.accused for _, acc, ok in checked
                  if ok is Finding.PROVEN and acc.kind == FaultKind.EQUIVOCATION.value}
        verdicts = [(by, acc, ok) for by, acc, ok in checked if by not in forked]
        blamed = {acc.accused for _, acc, ok in verdicts if ok is Finding.PROVEN} | {
            by for by, _, ok in verdicts if ok is Finding.FALSE}
        blamed |= value.timed_out | value.blamed
        return Round(value, verdicts, blamed)

    def _void(self, hand: Hand, found: Round) -> None:
        """Void the hand: expel the blamed seats and deal the next hand."""
        blamed, idle = set(found.blamed), set[int]()
        if not blamed:
            # Nobody to blame: whoever stopped the hand with an accuse that accuses nothing
            # and cites no other holder's accuse as its cause did it for nothing (else any
            # seat could void every hand for free). Every holder's accuse counts here.
            # A cause is good if the accuse carried the cited one (checked on arrival), or
            # cites by id an accuse of another holder that this node holds.
            void = hand.void
            counted = {k for k, i in enumerate(found.value.ids) if i is not None}
            ids = {void.accuse_ids[k] for k in counted if k in void.accuse_ids}
            idle = {hand.holders[k] for k in counted
                    if not void.accuses.get(k) and k in void.accuse_ids
                    and not void.causes[k][1]
                    and void.causes[k][0] not in ids - {void.accuse_ids[k]}}
            blamed |= idle
        self.voided.add(hand.number)
        self.seen.clear()
        self.parsed.clear()
        self.core.late.voided(hand)
        self.expelled.update(blamed)
        self.core.play.void(hand, sorted(blamed))
        view = self.table.view
        assert view is not None
        game, names = view.game, self.table.names
        told: list[dict[str, object]] = [
            {"accused": names[acc.accused], "by": names[by], "kind": acc.kind,
             "reason": acc.reason, "verdict": ok.value} for by, acc, ok in found.verdicts]
        told += [{"accused": names[s], "by": None, "kind": "timeout",
                  "reason": "the table agreed its time out", "verdict": "agreed"}
                 for s in sorted(found.timed_out)]
        told += [{"accused": names[s], "by": None, "kind": FaultKind.EQUIVOCATION.value,
                  "reason": "signed two accuses for one slot",
                  "verdict": "proven"} for s in sorted(found.equivocated)]
        told += [{"accused": names[s], "by": None, "kind": FaultKind.ILLEGAL_ACT.value,
                  "reason": "stopped the hand with an accuse that accuses nothing and "
                            "cites no cause", "verdict": "proven"} for s in sorted(idle)]
        self.table.outcomes.append(HandOutcome(
            hand=hand.number, died=[], pot=game.pot,
            chips={names[s]: c for s, c in enumerate(game.chips)}, checkpoint="",
            agreed_by=[], holders=[names[s] for s in sorted(hand.holders)], voided=True,
            accusations=told, eliminated=[names[s] for s in sorted(blamed)]))
        self.table.tell("void")
        self.core.dealing.next_hand()
