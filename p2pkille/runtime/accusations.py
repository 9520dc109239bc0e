"""Accusations: a fault found stops the hand, and every key holder says in one signed
``accuse`` what it found, with the evidence (docs/protocol.md II.11.1).

A node that finds a fault, or takes another holder's accuse, makes no more moves in the
hand and endorses its void in the hand's agreement (agreeing.py); its own accuse, when it
found the fault, is the evidence the others endorse the void on. Only once the void is
decided do the other holders join, so no disclosure leaves a hand that could still count.

A holder's accuse also discloses the boxes it sealed, each with its one-time key, so any
dispute over a box finds its answer in it; a holder that found nothing joins the round
citing the accuse that stopped the hand (and carrying it, when it fits). A buyer (a seat
without a key that bought a position) answers a dispute over a box it sealed with an
accuse that accuses nobody. The verdict (verdict.py) weighs them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import AccuseBody
from p2pkille.runtime.faults import AUTHOR, BUYER_FAULTS, SEALED, Blame, Fault, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Accuse, Hand
from p2pkille.runtime.steps import Stage, keyless_index
from protocol import canonical
from protocol.envelope import MAX_ENVELOPE_SIZE, Envelope, decode
from protocol.errors import RemoteProtocolError

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Accusations"]

ENVELOPE_ROOM: Final = 1024
"""Room an envelope's header and signature take beside its body."""


class Accusations:
    """Faults found, and the accuses of a stopped hand; writes the accuse part of each
    hand's :class:`~p2pkille.runtime.records.VoidRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.logged: set[int] = set()
        """Hands whose accuse of mine a log replay feeds (``verify``): made no other way."""

    def stop(self, hand: Hand) -> None:
        """The hand should stop: I make no move in it but my accuse, and endorse its void
        (the void round begins once the hand's agreement decides it: :meth:`begin`)."""
        if hand.void.stopping or hand.void.voiding:
            return
        hand.void.stopping = True
        self.core.agreeing.stopped(hand)

    def begin(self, hand: Hand) -> None:
        """The hand's agreement decided its void: its void round begins."""
        hand.void.stopping = True
        hand.void.voiding = True

    def awaited(self, hand: Hand) -> tuple[int, ...]:
        """The seats whose accuse the void round waits for. A holder that signed accuses
        only once every other holder signed, accused or timed out: while one has not,
        the table does not wait for it."""
        holders, void = hand.holders, hand.void
        gone = self.core.verdict.gone(hand)
        pending = any(k not in hand.close.signed and k not in void.accuses
                      and s not in gone for k, s in enumerate(holders))
        verdict = self.core.verdict
        return tuple(s for k, s in enumerate(holders)
                     if (k not in void.accuses or verdict.unbacked(hand, k))
                     and not (pending and k in hand.close.signed)
                     ) + self.disputed_buyers(hand)

    def fault(self, kind: FaultKind, seat: int | None, reason: str,
               evidence: bytes = b"", *, stops: bool = True) -> None:
        """The one place a detected fault is recorded. A fault of a key holder of the
        current hand, with evidence, before this node signed the hand's checkpoint,
        stops the hand: the node will accuse (docs/protocol.md II.11.1), unless not
        ``stops`` (a bad checkpoint signature counts as a missing one, II.7)."""
        hand = self.table.hand
        self.table.note(Fault(kind, seat, hand.number if hand is not None else 0, reason,
                              evidence))
        if (hand is None or seat is None or not evidence
                or not (seat in hand.holders or (kind.value in BUYER_FAULTS | SEALED
                                                 and self.table.in_play(hand, seat)))
                or self.table.stage == Stage.DONE
                or not stops or (hand.me is not None and hand.me in hand.close.signed)):
            return
        if not any(a.accused == seat for a in hand.void.mine):
            text = "".join(c if " " <= c <= "~" else "?" for c in reason[:msg.MAX_REASON])
            hand.void.mine.append(msg.Accusation(seat, kind.value, text, evidence))
        self.stop(hand)

    def on_accuse(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        if env.id in hand.void.taken:
            return
        seat = self.table.seat_of[m]
        if seat not in hand.holders and self.table.sits(hand, seat):
            self.on_buyer_accuse(m, env)
            return
        index = self.table.holder(m)
        if index in hand.void.accuses:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second accusation")
        accuse = self.parse(m, env)  # before any state changes: a malformed
        root = self.root(index, accuse)  # accuse counts for nothing
        hand.void.taken.add(env.id)
        hand.void.accuse_wires[env.id] = env.wire
        if root is not None:
            author = self.table.holder(self.table.index[root.author])
            hand.void.cited.setdefault(author, {})[root.id] = root.wire
            # Into the chains: a node that holds the other branch finds the fork, and one
            # that lacks the slot takes it (II.11.1). One it holds needs no second check.
            held = self.table.transcript.get(root.author, root.seq)
            if held is None or held.id != root.id:
                self.core.intake.accept(root.wire)
        self.install(index, accuse)
        self.core.verdict.saw(hand, accuse.seen)
        if accuse.agreed:
            return
        if not hand.void.stopping and index != hand.me:
            # What I cite when I join: the accuse that stopped the hand for the sender if it
            # carries one (so a carried accuse never carries another), else the sender's.
            hand.void.cause = root.id if root is not None else env.id
            hand.void.root = root.wire if root is not None else (
                env.wire if accuse.cause is None else None)
        self.stop(hand)

    def on_buyer_accuse(self, m: int, env: Envelope) -> None:
        """A buyer's accuse: its answer to sealed-share disputes (II.11.1). It accuses
        nobody (a buyer is no key holder and has no say in the void round), and discloses
        the forwards it sealed, as a holder's accuse does; it stops nothing."""
        hand = self.table.hand
        assert hand is not None
        slot = keyless_index(len(hand.holders), self.table.seat_of[m])
        if slot in hand.void.disclosed:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second accusation")
        accuse = self.parse(m, env)
        if accuse.accusations or accuse.opened or accuse.parts or accuse.cause is not None:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR,
                         "a seat without a key accuses (it may only disclose)")
        hand.void.taken.add(env.id)
        hand.void.disclosed[slot] = accuse.disclosed

    def disputed_buyers(self, hand: Hand) -> tuple[int, ...]:
        """The buyers whose disclosure the void round awaits: a holder's counted accuse
        disputes a box it sealed, and its accuse is not in (nor is it timed out)."""
        out: set[int] = set()
        for k, accs in hand.void.accuses.items():
            if hand.holders[k] in hand.timeouts.timed_out:
                continue
            out.update(a.accused for a in accs
                       if a.kind in SEALED and a.accused < len(self.table.members)
                       and a.accused not in hand.holders
                       and a.accused not in hand.timeouts.timed_out
                       and keyless_index(len(hand.holders), a.accused) not in hand.void.disclosed
                       and self.table.sits(hand, a.accused))
        return tuple(sorted(out))

    def parse(self, m: int, env: Envelope) -> Accuse:
        """The content of member ``m``'s accuse ``env``; :class:`Blame` on its author if
        it is malformed. Reads ``m``'s chain up to ``env`` (its boxes, its signature)."""
        hand = self.table.hand
        assert hand is not None
        body = AccuseBody.parse(env)
        accusations = body.accusations
        if any(acc.accused >= len(self.table.members) for acc in accusations):
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "accuses a seat that does not exist")
        disclosed = list(body.disclosed)
        if any(key is None for _, _, key in disclosed):
            raise Blame(FaultKind.MALFORMED, AUTHOR, "a disclosed box without its key")
        sealed = self.core.evidence.sealed_by(m, hand.number)
        if any((t, e.sender, e.recipient) not in sealed for t, e, _ in disclosed) or len(
                {(t, e.sender, e.recipient, e.share, k) for t, e, k in disclosed}) < len(
                disclosed):
            # Only its own boxes, each once: a list filled up with made-up or repeated
            # ones would leave a dispute over a forward it left out unproven (evidence.py).
            raise Blame(FaultKind.MALFORMED, AUTHOR,
                         "discloses a box it did not seal, or one twice")
        if body.root is not None and body.cause is None:
            raise Blame(FaultKind.MALFORMED, AUTHOR, "carries an accuse it does not cite")
        # It signed the hand's checkpoint first (read from its chain, as every node does):
        # it agreed to the hand, so its accusations are void but for bad signatures (which
        # every node finds itself), and it stops nothing; the accuse still closes its part
        # of a void round.
        agreed = self.core.evidence.before_accusing(self.table.seat_of[m], hand.number,
                                                    msg.CHECKPOINT)
        if agreed:
            accusations = tuple(a for a in accusations if a.kind == FaultKind.CHECKPOINT.value)
        if body.seen and len(body.seen) != len(hand.holders):
            raise Blame(FaultKind.MALFORMED, AUTHOR, "says what it saw not of every key holder")
        return Accuse(env.id, accusations, disclosed, list(body.opened), list(body.parts),
                      body.cause, body.root, agreed, body.seen)

    def root(self, index: int, accuse: Accuse) -> Envelope | None:
        """The accuse that holder ``index``'s ``accuse`` carries as its cause (II.11.1):
        another holder's accuse of this hand, signed, carrying none itself, with the cited
        id. Checked from its bytes alone, so every node decides alike; :class:`Blame` on
        the carrier."""
        hand = self.table.hand
        assert hand is not None
        data = accuse.root
        if data is None:
            return None
        try:
            root = decode(data, table=self.table.config.table_id, members=self.table.members,
                          kinds=(msg.ACCUSE,))
            msg.check_body(root.kind, root.body, data)
        except RemoteProtocolError as exc:
            raise Blame(FaultKind.MALFORMED, AUTHOR, f"carried accuse: {exc}") from exc
        author = hand.protocol_seat(self.table.seat_of[self.table.index[root.author]])
        if (msg.hand_of(root) != hand.number or author is None or author == index
                or msg.carries_root(root) or root.id != accuse.cause):
            raise Blame(FaultKind.MALFORMED, AUTHOR, "carries an accuse that is not "
                         "another holder's of this hand, or not the one it cites")
        return root

    def install(self, index: int, accuse: Accuse) -> None:
        hand = self.table.hand
        assert hand is not None
        hand.void.accuses[index] = accuse.accusations
        hand.void.counted[index] = accuse.id
        hand.void.seen[accuse.id] = accuse.seen
        if accuse.agreed:
            return
        hand.void.disclosed[index] = accuse.disclosed
        hand.void.opened[index] = accuse.opened
        hand.void.parts[index] = accuse.parts
        hand.void.accuse_ids[index] = accuse.id
        hand.void.causes[index] = (accuse.cause, accuse.rooted)

    def disclosures(self, hand: Hand) -> list[tuple[int, msg.ShareEntry, bytes | None]]:
        """The boxes I sealed in this hand that a key holder may dispute, with each box's
        one-time key, so every dispute finds its answer in my one accuse, however late
        it is raised (docs/protocol.md II.11.1): every box of my deal (each is one share
        of another's card, which stays hidden while its holder keeps its own share), and
        every forward to a holder, unless that holder's accuse is in and does not accuse
        me, or it signed the checkpoint and I did too. First the
        forwards to my accusers, then the deal, then the other forwards."""
        me = self.table.my_seat
        accusers: set[int] = set()
        quiet: set[int] = set()
        for k, accs in hand.void.accuses.items():
            accuses_me = any(a.accused == me and a.kind in SEALED for a in accs)
            (accusers if accuses_me else quiet).add(hand.holders[k])
        if hand.me in hand.close.signed:
            # Every other holder signed, accused or timed out (act). One that signed
            # before it accused disputes nothing (its accusations are void, §11.1).
            quiet |= {hand.holders[k] for k in hand.close.signed} - accusers

        def rank(slot: tuple[int, int, int | None, int]) -> int:
            return 1 if slot in hand.seals.deal_boxes else 0 if slot[3] in accusers else 2

        slots = [slot for slot in hand.seals.plain if slot in hand.seals.deal_boxes or (
            slot[3] not in quiet and hand.protocol_seat(slot[3]) is not None)]
        slots.sort(key=lambda sl: (rank(sl), sl[3], sl[0], sl[1]))
        return [(slot[0], msg.ShareEntry(slot[1], slot[2], hand.seals.plain[slot]),
                 hand.seals.box_keys[slot]) for slot in slots[:msg.MAX_DISCLOSED]]

    def cited_versions(self, hand: Hand) -> set[int]:
        """Settle forks of accuses by what the other holders carried (II.11.1). A holder
        whose accuse others carried in one version counts with that version, whichever
        this node took; one carried in two versions is blamed, and its accuse counts for
        nothing. Every holder's accuse is in before a verdict, so every node holds the
        same carried versions: the seats returned (table seats) are the same everywhere."""
        equivocated: set[int] = set()
        for k, versions in hand.void.cited.items():
            if len(versions) > 1:
                equivocated.add(hand.holders[k])
                continue
            if k not in hand.void.accuses or hand.void.counted.get(k) == next(iter(versions)):
                continue  # its accuse is not in yet, or the carried one counts already
            wire = next(iter(versions.values()))
            m = self.table.member_of[hand.holders[k]]
            try:
                self.install(k, self.parse(m, decode(
                    wire, table=self.table.config.table_id, members=self.table.members,
                    kinds=(msg.ACCUSE,))))
            except (Blame, RemoteProtocolError):
                equivocated.add(hand.holders[k])  # it signed a malformed one as well
        return equivocated

    def act(self, out: list[Output], hand: Hand) -> bool:
        """My accuse of the stopped hand, once: a buyer's disclosure when a holder
        disputes a box it sealed; a holder's once it may accuse. My accuse in my chain
        (replayed from my log after a crash) is my one: the body depends on what I had
        taken, so writing it again would make another."""
        n, outbox, my_seat = hand.number, self.core.outbox, self.table.my_seat
        if not hand.void.voiding and not hand.void.mine:
            return False  # I join once the void is decided: the evidence is another's
        if (hand.me is None and my_seat is not None and my_seat in self.disputed_buyers(hand)
                and n not in self.logged and outbox.once("accuse", n)):
            outbox.emit(out, AccuseBody(n, (), tuple(self.disclosures(hand)),
                                        seen=self._seen(hand)))
            return True
        if hand.me is None or hand.me in hand.void.accuses or n in self.logged:
            return False
        gone = self.core.verdict.gone(hand)
        if hand.me in hand.close.signed and any(
                k not in hand.close.signed and k not in hand.void.accuses
                and hand.holders[k] not in gone for k in range(len(hand.holders))):
            # I signed the hand: my accuse waits until every other holder signed,
            # accused or timed out. Then it discloses forwards only to its accusers
            # (a holder that signed first disputes nothing, II.11.1), and if a good
            # signature of every holder turns up meanwhile (the other branch of a
            # fork), the hand counts and I never accuse (II.7).
            return False
        if not outbox.once("accuse", n):
            return False
        outbox.emit(out, self._body(hand))
        return True

    @staticmethod
    def _seen(hand: Hand) -> tuple[bytes | None, ...]:
        """The accuses of the other holders my disclosures answer to: a verdict counts
        these versions, or none of that holder's (verdict.py)."""
        return tuple(None if k == hand.me else hand.void.counted.get(k)
                     for k in range(len(hand.holders)))

    def _body(self, hand: Hand) -> AccuseBody:
        body = AccuseBody(hand.number, tuple(hand.void.mine), tuple(self.disclosures(hand)),
                          tuple(hand.claims.exposed[:msg.MAX_ENTRIES]),
                          tuple(hand.claims.lie_parts[:msg.MAX_ENTRIES]),
                          seen=self._seen(hand))
        if not hand.void.mine and hand.void.cause is not None:
            body = replace(body, cause=hand.void.cause)
            if hand.void.root is not None:
                # Carried when it fits (a cited accuse is at most a few kB but for
                # tables of dozens of holders); else cited by id alone (II.11.1).
                carried = replace(body, root=hand.void.root)
                if (len(canonical.encode(carried.to_json())) + ENVELOPE_ROOM
                        <= MAX_ENVELOPE_SIZE):
                    body = carried
        return body
