"""The void round's verdict: the tally, and the hand voided (docs/protocol.md II.11.1,
II.11.3).

Once every key holder's accuse is in (or it is timed out, or its chain forked), each
holder says in a ``tally`` which accuse of each holder it counts, and decides only once
every holder that counts sent the same tally. The verdict is then the same everywhere:
each accusation is proven, false or unproven from its evidence (evidence.py), the proven
cheaters, false accusers, timed-out and forked seats are expelled, and the hand is
voided: the game goes back to before its deal. A node whose own votes keep its tally
apart takes the tally a strict majority of the holders moved on with (:meth:`Verdict.adopt`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import TallyBody
from p2pkille.runtime.emit import HAND_FLOW
from p2pkille.runtime.evidence import Finding
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.outcome import HandOutcome
from p2pkille.runtime.records import Hand, Tally
from p2pkille.runtime.steps import Stage
from protocol.envelope import Envelope
from protocol.errors import ProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Verdict"]

Judged = list[tuple[int, msg.Accusation, Finding]]


@dataclass(frozen=True, slots=True)
class Adoption:
    """The deciders' tally this node tries on, and the time-outs it gives here."""

    tally: Tally
    timed_out: set[int]


@dataclass(slots=True)
class Round:
    """A void round as this node counts it: the seats it counts gone, and its tally."""

    timed_out: set[int]
    gone: frozenset[int] = frozenset()
    ids: tuple[bytes | None, ...] = ()
    buyers: tuple[int, ...] = ()
    excused: frozenset[int] = frozenset()
    verdicts: Judged = field(default_factory=list)
    blamed: set[int] = field(default_factory=set)
    equivocated: set[int] = field(default_factory=set)

    @property
    def tally(self) -> Tally:
        return self.ids, self.buyers


class Verdict:
    """Decides stopped hands; writes the tally part of each hand's
    :class:`~p2pkille.runtime.records.VoidRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.voided: set[int] = set()
        self.expelled: set[int] = set()

    def awaited(self, hand: Hand) -> tuple[int, ...]:
        """Tallying: the holders whose latest tally differs from mine (or is missing)."""
        mine = hand.void.tally
        return tuple(s for k, s in enumerate(hand.holders) if k != hand.me
                     and s not in hand.void.gone | hand.void.excused
                     and hand.void.tallies.get(k) != mine)

    # -- tallies in -----------------------------------------------------------------------

    def on_tally(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        if env.id in hand.void.tally_taken:
            return
        index = self.table.holder(m)
        tally = self.read_tally(hand, env)
        if tally is None:
            raise Blame(FaultKind.MALFORMED, AUTHOR,
                        "a tally not of every key holder, or naming a key holder as a buyer")
        hand.void.tally_taken.add(env.id)
        hand.void.tallies[index] = tally  # the latest counts: a chain is read in order

    def read_tally(self, hand: Hand, env: Envelope) -> Tally | None:
        """A tally of ``hand`` as (ids, buyers); None if it is not of every key holder or
        names a key holder, or a seat that does not exist, among the buyers. Raises
        :class:`ProtocolError` for a malformed body."""
        body = TallyBody.parse(env)
        ids, buyers = body.ids, body.buyers
        if len(ids) != len(hand.holders) or any(
                s >= len(self.table.members) or s in hand.holders for s in buyers):
            return None
        return ids, buyers

    # -- deciding -------------------------------------------------------------------------

    # Each return is a step of the void round not yet due.
    def update(self, adopting: Adoption | None = None) -> None:  # noqa: PLR0911
        """Count the hand once its signatures are in, and void it once its void round is
        complete; run after every envelope consumed. While ``adopting``, the deciders'
        time-outs stand in for this node's own, and nothing is kept unless it decides."""
        hand = self.table.hand
        if hand is None or hand.number in self.voided:
            return
        stage = self.table.stage
        if (not hand.void.voiding and not hand.timeouts.votes
                and hand.timeouts.scan_version == self.table.version
                and stage != Stage.CHECKPOINT):
            return  # nothing new to scan and nothing to decide: most calls, at every step
        if stage == Stage.CHECKPOINT and self._signed(hand, adopting):
            return
        self.core.timeouts.scan(hand)
        if adopting is None:
            # While adopting, the deciders' time-outs stand: later votes change nothing.
            self.core.timeouts.settle(hand)
            self.core.agreeing.refresh(hand)
        if not hand.void.voiding:
            return
        timed_out = hand.timeouts.timed_out if adopting is None else adopting.timed_out
        found = self._round(hand, timed_out)
        if found is None:
            return
        if adopting is None:
            self._keep(hand, found)
            if not self._tallies_agree(hand):
                self.adopt(hand, found.gone - hand.timeouts.timed_out)
                return
        elif found.tally != adopting.tally:
            return  # their time-outs do not give their tally here
        else:
            self.core.timeouts.adopt(hand, timed_out)
            self._keep(hand, found)
        self._void(hand, found)

    def _signed(self, hand: Hand, adopting: Adoption | None) -> bool:
        """At the checkpoint: endorse the commit once every holder's good signature is
        in (the last may come with a fork, closing.py), and count the hand if it is
        decided. True if nothing more is to do now: counted, or no vote to scan (the
        agreement's envelopes are ready in chain order at this stage)."""
        closing = self.core.closing
        if len(hand.close.agreed) < len(hand.holders):
            closing.take_forked(hand)
        if len(hand.close.agreed) < len(hand.holders) or adopting is not None:
            return False
        closing.endorse(hand)
        return self.table.hand is not hand or (not hand.void.voiding
                                               and not hand.timeouts.votes)

    def _round(self, hand: Hand, timed_out: set[int]) -> Round | None:
        """The round as this node counts it, once every holder's accuse is in (or it is
        timed out, or forked) and every accusation is judged; None before."""
        if hand.claims.pet is not None and hand.claims.pet.pending:
            # The test will not end: check its parts now, so a bad one is in my accuse.
            self.core.claims.check_parts(hand, hand.claims.pet)
        intake = self.core.intake
        equivocated = self.core.accusations.cited_versions(hand)
        # An accuse forked and carried by nobody: its author is blamed as well (every
        # node learns the fork in the tally round before it decides, II.11.1).
        equivocated |= {seat for seat, number in intake.accuse_forks
                        if number == hand.number and seat in hand.holders
                        and hand.holders.index(seat) not in hand.void.cited}
        # A seat whose time-out the table agreed: its accuse counts for nothing (whether
        # it reached a node before the last vote differs between nodes).
        checked = self._judge(hand, equivocated | timed_out, timed_out)
        if checked is None:
            return None
        # A forked chain is dead at every node that holds both branches, whenever that was
        # found (in an earlier stage too): its accuse may never come. Equivocation evidence
        # is self-verifying, so an accusation that carries it counts as well. (A fork of an
        # accuse alone is settled by what the others carried: cited_versions.)
        forked = {f.seat for f in self.table.faults if f.kind == FaultKind.EQUIVOCATION
                  and (f.seat, hand.number) not in intake.accuse_forks | intake.tally_forks
                  } | {acc.accused for _, acc, ok in checked
                       if ok is Finding.PROVEN and acc.kind == FaultKind.EQUIVOCATION.value}
        # A forked seat is not waited for, so whether its accuse is in differs between
        # nodes: it counts for nothing, and the verdict does not list it.
        verdicts = [(by, acc, ok) for by, acc, ok in checked if by not in forked]
        blamed = {acc.accused for _, acc, ok in verdicts if ok is Finding.PROVEN} | {
            by for by, _, ok in verdicts if ok is Finding.FALSE}
        blamed |= timed_out | equivocated
        # Every holder's accuse counts, a proven cheater's too (its accusations may prove
        # another seat, and the verdict lists them): only a seat whose time-out the table
        # agreed, or whose chain forked, is not waited for.
        if not all(k in hand.void.accuses or hand.holders[k] in timed_out | forked
                   for k in range(len(hand.holders))):
            return None
        # Before deciding, every holder says which accuse of each holder it counts (a
        # tally): a node that decided at once could differ from one that is still to
        # time a holder out, or that took the other version of a forked accuse.
        gone = frozenset(s for s in timed_out | forked | equivocated if s is not None)
        return Round(
            timed_out, gone,
            tuple(None if seat in gone else hand.void.counted.get(k)
                  for k, seat in enumerate(hand.holders)),
            # A buyer timed out by every holder's vote: named, so that the verdict waits
            # until every holder counts the same buyers out (II.11.3).
            tuple(sorted(s for s in timed_out if s is not None and s not in hand.holders)),
            # A holder that signed two tallies for one slot is not waited for (either
            # branch may be the one a node holds); its accuse still counts as the tallies
            # say.
            frozenset(seat for seat, number in intake.tally_forks
                      if number == hand.number and seat is not None) - gone,
            verdicts, blamed, equivocated)

    def _judge(self, hand: Hand, skipped: set[int], timed_out: set[int]) -> Judged | None:
        """Every accusation of the holders not ``skipped``, judged; None while one waits
        for an envelope this node has not checked yet."""
        checked: Judged = []
        for k in sorted(hand.void.accuses):
            by = hand.holders[k]
            if by in skipped:
                continue
            for acc in hand.void.accuses[k]:
                ok = self.core.evidence.check(by, acc, timed_out)
                if ok is Finding.UNCHECKED:
                    self.core.dealing.check_steps(hand)  # I took the step, unchecked
                    ok = self.core.evidence.check(by, acc, timed_out)
                checked.append((by, acc, ok))
        if any(ok is Finding.PENDING for _, _, ok in checked):
            return None
        return checked

    def _keep(self, hand: Hand, found: Round) -> None:
        void = hand.void
        void.gone, void.tally_ids, void.tally_out = found.gone, found.ids, found.buyers
        void.excused = found.excused

    def _void(self, hand: Hand, found: Round) -> None:
        """Void the hand: expel the blamed seats and deal the next hand."""
        blamed, idle = set(found.blamed), set[int]()
        if not blamed:
            # Nobody to blame: whoever stopped the hand with an accuse that accuses nothing
            # and cites no other holder's accuse as its cause did it for nothing (else any
            # seat could void every hand for free). Every holder's accuse is in by now.
            # A cause is good if the accuse carried the cited one (checked on arrival), or
            # cites by id an accuse of another holder that this node holds.
            void = hand.void
            ids = set(void.accuse_ids.values())
            idle = {hand.holders[k] for k, accs in void.accuses.items()
                    if not accs and k in void.accuse_ids and not void.causes[k][1]
                    and void.causes[k][0] not in ids - {void.accuse_ids[k]}}
            blamed |= idle
        self.voided.add(hand.number)
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
                  "reason": "every other key holder voted its time out", "verdict": "agreed"}
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

    # -- tallies that do not agree ----------------------------------------------------------

    def adopt(self, hand: Hand, faulty: frozenset[int]) -> None:
        """My tallies do not agree: if the holders that decided without me moved on
        (:meth:`deciders_tally`), decide as they did, from their time-outs (II.11.3)
        instead of those my votes give. Nothing is kept if that decides nothing yet (a
        check still pending, or their tally is not what their time-outs give here); it
        is tried again on news."""
        key = (self.table.version, sum(self.table.consumed))
        if hand.void.adopt_key == key:
            return
        hand.void.adopt_key = key
        theirs = self.deciders_tally(hand)
        if theirs is None:
            return
        nulls = {hand.holders[k] for k, i in enumerate(theirs[0]) if i is None}
        if not nulls <= hand.void.gone:
            # A seat they left out that I still count: a null does not say whether they
            # timed it out or held it forked, and I must not time out a seat they held
            # forked (its fork may never reach me). My own votes grow until it is gone here.
            return
        # A seat gone here for a fork, not a time-out, stays so (``faulty``). The buyers
        # out are theirs: a vote they had may never reach me (its voter timed out).
        self.update(Adoption(theirs, (nulls - faulty) | set(theirs[1])))

    def deciders_tally(self, hand: Hand) -> Tally | None:
        """The tally of the holders that decided the hand without me, if they did: the
        same last tally T of this one in the chains of a strict majority of the holders,
        each followed by an envelope of a later hand, where I count the accuse T counts of
        every holder it does not leave out. Each of them decided on T (a holder decides
        on the tally it sent last, once every holder T counts sent the same), so an
        honest one among them, which a strict majority holds unless a majority of the
        holders cheat, vouches for T; two tallies cannot both have a strict majority.
        Votes that reached me after they decided can make my own tally differ for ever:
        a holder they timed out may count one of them timed out too (its own late votes
        complete a second silent set), and then waited for tallies that never come."""
        finals: dict[int, Tally] = {}
        for k, seat in enumerate(hand.holders):
            final = self.final_tally(seat, hand)
            if final is not None:
                finals[k] = final
        for tally in set(finals.values()):
            movers = {k for k, t in finals.items() if t == tally}
            if 2 * len(movers) > len(hand.holders) and all(
                    i is None or hand.void.counted.get(k) == i for k, i in enumerate(tally[0])):
                return tally
        return None

    def final_tally(self, seat: int, hand: Hand) -> Tally | None:
        """The last tally of ``hand`` in ``seat``'s chain before its first envelope of a
        later hand, if it has one (it moved on with that tally); what I hold back counts
        too. Found by reading back from that envelope to the seat's key of the hand (late
        answers to votes of earlier hands may lie between)."""
        member = self.table.members[self.table.member_of[seat]]
        seq = self.table.consumed[self.table.member_of[seat]] + 1
        while True:
            env = self.table.transcript.get(member, seq)
            if env is None:
                return None
            number = msg.hand_of(env)
            if number is not None and number > hand.number:
                break
            seq += 1
        while (env := self.table.transcript.get(member, seq := seq - 1)) is not None:
            number = msg.hand_of(env)
            if number is None or (number == hand.number and env.kind == msg.KEY) or (
                    number < hand.number and env.kind in HAND_FLOW):
                return None  # no tally of the hand: it did not decide by one
            if env.kind == msg.TALLY and number == hand.number:
                try:
                    msg.check_body(env.kind, env.body, env.wire)
                    return self.read_tally(hand, env)
                except ProtocolError:
                    return None
        return None

    def vouched(self, hand: Hand, seat: int) -> bool:
        """Do the holders that moved on vouch for ``seat``'s tally, so that I take it
        although I voted its time out? Yes when ``seat`` moved on with my tally T (the one
        I sent last) as its last one (:meth:`final_tally`), and the holders that moved on
        with T, with me, are a strict majority, none of them having voted a step of mine
        in the hand. Then no silent set can ever hold me (its outside, a strict majority,
        would all have voted a step of mine), so every node counts my tally, and mine stays
        T once I decide on it: a node decides on its own only with a tally equal to T, or
        takes T from the deciders, a strict majority once I moved on (II.11.3). The hold
        would only wait for the holders to time ``seat`` out, while ``seat`` already
        decided on T: at three holders, with the third crashed for good, for ever."""
        mine = hand.void.tally
        if mine is None or mine != hand.void.tallied or self.final_tally(seat, hand) != mine:
            return False
        movers = self.core.timeouts.movers(hand)
        backers = [k for k in movers
                   if k != hand.me and self.final_tally(hand.holders[k], hand) == mine]
        return 2 * (len(backers) + 1) > len(hand.holders) and not any(
            step.seat == self.table.my_seat for k in backers for step in movers[k])

    def _tallies_agree(self, hand: Hand) -> bool:
        """Has every holder whose accuse counts sent a tally equal to mine (mine sent
        first)? Where one differs, re-send what I hold of that holder's accuse: its
        version, or both versions of a fork, so every node finds a fork before deciding."""
        mine = hand.void.tally
        if hand.me is not None and hand.void.tallied != mine:
            return False  # act() sends mine first: the others wait for it
        agree = True
        for k, seat in enumerate(hand.holders):
            if k == hand.me or seat in hand.void.gone or seat in hand.void.excused:
                continue
            theirs = hand.void.tallies.get(k)
            if theirs != mine:
                agree = False
                if theirs is not None and mine is not None:
                    self._echo(hand, theirs[0], mine[0])
        return agree

    def _echo(self, hand: Hand, theirs: tuple[bytes | None, ...],
              mine: tuple[bytes | None, ...]) -> None:
        outbox = self.core.outbox
        for j, (a, b) in enumerate(zip(theirs, mine, strict=True)):
            if a == b or (j, a, b) in hand.void.echoed:
                continue
            hand.void.echoed.add((j, a, b))
            seat = hand.holders[j]
            wires = list(self.core.intake.accuse_fork_wires.get((seat, hand.number), ()))
            if b is not None:
                wire = hand.void.accuse_wires.get(b) or hand.void.cited.get(j, {}).get(b)
                if wire is not None:
                    wires.append(wire)
            outbox.pass_on([w for w in wires if w not in outbox.extra])

    # -- my own tally ---------------------------------------------------------------------

    def send_tally(self, out: list[Output], hand: Hand) -> bool:
        """My tally, whenever it differs from the one I sent last."""
        mine = hand.void.tally
        if hand.me is None or mine is None or mine == hand.void.tallied:
            return False
        hand.void.tallied = mine
        self.core.outbox.emit(out, TallyBody(hand.number, *mine))
        return True
