"""Judging an accusation from its evidence alone (docs/protocol.md II.11.1).

Every check here only reads: the transcript, what this node consumed, the hand's records
and the faults it found itself. None trusts the accuser: only the evidence and this node's
own checks of the same envelopes count, so every node that holds the same envelopes
reaches the same :class:`Finding`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

from p2pkille.engine.cards import RANKS, Rank
from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import DealBody, ForwardBody, KeyBody
from p2pkille.runtime.faults import BUYER_FAULTS, PUBLIC_CHECKS, SEALED, FaultKind
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import keyless_index
from protocol.deck import Ciphertext
from protocol.envelope import Envelope, decode
from protocol.errors import RemoteProtocolError
from protocol.group import Point
from protocol.identity import PublicKey
from protocol.keys import JointKey, PublicKeyShare
from protocol.pet import PetClaim, PetShare, pet_matches
from protocol.reveal import DecryptionShare, RevealContext
from protocol.seal import check_disclosed_share, open_disclosed
from protocol.transcript import Equivocation

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Evidence", "Finding"]


class Finding(enum.Enum):
    """What an accusation's evidence shows to this node."""

    PROVEN = "proven"
    """The accused is at fault."""
    FALSE = "false"
    """The accusation is false: its accuser is at fault."""
    UNPROVEN = "unproven"
    """Nothing this node holds decides it: nobody is blamed for it."""
    PENDING = "pending"
    """An envelope this node has not checked yet decides it: wait."""
    UNCHECKED = "unchecked"
    """Shuffle steps this node took but has not checked yet decide it: check them first."""

    @classmethod
    def of(cls, proven: bool) -> Finding:
        return cls.PROVEN if proven else cls.FALSE


class Evidence:
    """The checks of accusations (read only)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        # What box_holds found, keyed by every input of the check (so a hit is the same
        # answer): the void round judges each dispute again on every update until it
        # decides, and each judgement opens and checks every disputed box.
        self._held: dict[tuple[object, ...], bool] = {}
        # The envelope each accusation cites, decoded once (None: it does not decode):
        # decoding checks a signature, and the same accusation is judged many times.
        self._cited: dict[bytes, Envelope | None] = {}
        # Equivocation evidence -> (its author, the slot's seq), or None if it proves no
        # fork: a pure function of the bytes and the table, asked again for every
        # accusation that cites it each time the void round is weighed.
        self._forks: dict[bytes, tuple[PublicKey, int] | None] = {}

    # One return per finding an accusation comes to.
    def check(self, accuser: int, acc: msg.Accusation, timed_out: set[int]) -> Finding:  # noqa: PLR0911
        """What ``acc``, made by seat ``accuser``, comes to here; ``timed_out`` are the
        seats the void round counts timed out."""
        hand = self.table.hand
        assert hand is not None
        table = self.table
        buyer = acc.accused not in hand.holders
        if acc.accused >= len(table.members) or (
                buyer and acc.kind not in BUYER_FAULTS | SEALED):
            return Finding.FALSE
        if acc.kind == FaultKind.EQUIVOCATION.value:
            return self._equivocation(hand, acc, buyer)
        member = table.member_of[acc.accused]
        accused = table.members[member]
        env = self._cited_by(acc)
        if env is None:
            return Finding.FALSE
        if env.author != accused:
            return Finding.FALSE
        if buyer:
            # Whether it bought is read from its chain before the evidence, once I took the
            # evidence: the verdict waits for every holder's accuse, later in the accuser's
            # chain, never for the buyer's, so every node reads the same prefix.
            if table.consumed[member] < env.seq:
                return Finding.PENDING
            if not self.bought(hand, acc.accused, env.seq):
                return Finding.FALSE
        if acc.kind == FaultKind.BAD_KEY.value and env.kind == msg.KEY:
            # Judged on the evidence alone: a node that holds the other branch of a forked
            # key would find "two envelopes for one slot" and one that holds this branch
            # the key's own verdict. Test:
            # test_accuse_fork.py::test_a_false_bad_key_accusation_citing_a_forked_key_is_judged_alike  # noqa: E501
            return Finding.of(self.bad_key(hand, acc.accused, env))
        held = table.transcript.get(accused, env.seq)
        if held is None:
            return Finding.UNPROVEN
        if held.id != env.id:
            return Finding.PROVEN  # it signed two envelopes for one slot
        if acc.kind in SEALED and env.kind in (msg.DEAL, msg.FORWARD):
            return self.dispute(accuser, acc, env, timed_out)
        if acc.kind == FaultKind.FALSE_FACT.value:
            return self._false_fact(hand, accuser, env, member)
        return self._found_here(hand, accuser, acc, env, member)

    def _cited_by(self, acc: msg.Accusation) -> Envelope | None:
        """The envelope ``acc`` cites as its evidence, or None if it is no envelope of
        this table."""
        if acc.evidence not in self._cited:
            try:
                env: Envelope | None = decode(acc.evidence, table=self.table.config.table_id,
                                              members=self.table.members, kinds=None)
            except RemoteProtocolError:
                env = None
            self._cited[acc.evidence] = env
        return self._cited[acc.evidence]

    def _equivocation(self, hand: Hand, acc: msg.Accusation, buyer: bool) -> Finding:
        table = self.table
        accused = table.members[table.member_of[acc.accused]]
        fork = self._fork(acc.evidence)
        if fork is None or fork[0] != accused:
            return Finding.FALSE
        seq = fork[1]
        if buyer:
            if len(table.transcript.chain(accused)) < seq - 1:
                return Finding.PENDING
            return Finding.of(self.bought(hand, acc.accused, seq))
        return Finding.PROVEN

    def _fork(self, evidence: bytes) -> tuple[PublicKey, int] | None:
        """The author of the fork ``evidence`` proves and the slot's seq; None if none."""
        if evidence not in self._forks:
            table = self.table
            found: tuple[PublicKey, int] | None
            try:
                eq = Equivocation.from_bytes(evidence)
                author = eq.verify(table=table.config.table_id, members=table.members)
                found = (author, decode(eq.first, table=table.config.table_id,
                                        members=table.members, kinds=None).seq)
            except RemoteProtocolError:
                found = None
            self._forks[evidence] = found
        return self._forks[evidence]

    def _false_fact(self, hand: Hand, accuser: int, env: Envelope, member: int) -> Finding:
        """Self-contained: the evidence is the claim, and the accuser's accuse opens the
        card it hid (strict tables: the claim's test decides)."""
        if env.kind not in (msg.ANSWER, msg.DISCLOSE):
            return Finding.FALSE
        if self.table.consumed[member] < env.seq:
            return Finding.PENDING
        index = hand.protocol_seat(accuser)
        if self.table.strict:
            # The accuser shows every other holder's test part: anyone reruns the test.
            tested = hand.claims.tested.get(env.id)
            parts = hand.void.parts.get(index, []) if index is not None else []
            return Finding.of(tested is not None and self.test_shows_lie(tested, parts))
        claim = hand.claims.claimed.get(env.id)
        told = hand.void.opened.get(index, []) if index is not None else []
        opened = [e for t, e in told if claim and t == claim[0]]
        return Finding.of(claim is not None and self.opens_into(claim[0], claim[1], opened))

    def _found_here(self, hand: Hand, accuser: int, acc: msg.Accusation, env: Envelope,
                    member: int) -> Finding:
        """A fault every node finds itself: proven if this node found it too."""
        if acc.kind == FaultKind.BAD_PROOF.value and hand.deck.unchecked:
            return Finding.UNCHECKED  # I took the step but had not checked it yet
        if any(f.hand == hand.number and f.seat == acc.accused and f.kind.value == acc.kind
               for f in self.table.faults):
            return Finding.PROVEN
        if acc.kind == FaultKind.AUDIT.value:
            if not self.before_accusing(accuser, hand.number, msg.REVEAL):
                # An audit needs every reveal, the accuser's own first: an audit
                # accusation it made before revealing cannot rest on an audit. Decided
                # from its chain, so every node agrees, and the stopped hand cannot wait
                # for my audit for ever.
                return Finding.FALSE
            # Every reveal is in the chains (the accuser audited): my audit will come.
            return Finding.FALSE if hand.close.audited else Finding.PENDING
        if acc.kind in PUBLIC_CHECKS and env.kind not in (msg.DEAL, msg.FORWARD):
            # A check every node makes when it consumes the envelope: wait until I have.
            return (Finding.FALSE if self.table.consumed[member] >= env.seq
                    else Finding.PENDING)
        return Finding.UNPROVEN

    # One return per finding a disputed share comes to.
    def dispute(self, accuser: int, acc: msg.Accusation, env: Envelope,  # noqa: PLR0911
                timed_out: set[int]) -> Finding:
        """A sealed share the accuser says was bad: the accused must have disclosed, in
        its own accuse, the plaintext and the ephemeral key of every box that envelope
        sealed to the accuser. Each box must open with its key to that plaintext, which
        must match the signed digest and carry a valid proof; else the sealer is proven
        at fault. If every box passes, the accuser said a good box was bad: false."""
        hand = self.table.hand
        assert hand is not None
        index = hand.protocol_seat(acc.accused)
        # A buyer's disclosure is kept apart from the holders' (and names no maker).
        sealer = keyless_index(len(hand.holders), acc.accused) if index is None else index
        try:
            found = self._disputed_boxes(hand, accuser, acc, env)
        except RemoteProtocolError:
            return Finding.UNPROVEN  # a malformed envelope: every node blamed that itself
        if isinstance(found, Finding):
            return found
        boxes = found
        if not boxes:
            return Finding.FALSE
        if hand.deck.joint is None or not hand.deck.final:
            return Finding.PENDING  # the boxes exist, so the deck does: my deal will come
        if sealer not in hand.void.disclosed or acc.accused in timed_out:
            # Its accuse is awaited (or it timed out or forked, and answered nothing: a
            # timed-out seat's accuse counts for nothing, even where it came in).
            gone = acc.accused in timed_out or any(
                f.kind == FaultKind.EQUIVOCATION and f.seat == acc.accused
                and f.hand == hand.number for f in self.table.faults)
            return Finding.PROVEN if gone else Finding.PENDING
        # A slot can have been sealed twice (a card forwarded, returned and forwarded
        # again): a box is answered if any disclosed entry of its slot opens it.
        opened: dict[tuple[int, int, int | None], list[tuple[bytes, bytes | None]]] = {}
        for t, e, key in hand.void.disclosed[sealer]:
            opened.setdefault((t, e.sender, e.recipient), []).append((e.share, key))
        delivery = self.table.config.members[self.table.member_of[accuser]].delivery
        full = len(hand.void.disclosed[sealer]) >= msg.MAX_DISCLOSED
        for box in boxes:
            entries = opened.get((box.token, box.sender, box.recipient), [])
            if not entries and env.kind == msg.FORWARD and full:
                return Finding.UNPROVEN  # left out for room (at the largest tables only)
            if not entries or not (0 <= box.token < len(hand.deck.final)
                                   and 0 <= box.sender < len(hand.holders)):
                return Finding.PROVEN
            ctx = RevealContext(hand.ctx, box.token, box.sender, box.recipient)
            if not any(self.box_holds(ctx, box, delivery, plain, key, hand.deck.joint, sealer)
                       for plain, key in entries):
                return Finding.PROVEN
        return Finding.FALSE

    def _disputed_boxes(self, hand: Hand, accuser: int, acc: msg.Accusation, env: Envelope
                        ) -> list[msg.BoxEntry] | Finding:
        """The boxes of ``env`` sealed to the accuser, or the finding ``env`` gives on its
        face; :class:`RemoteProtocolError` if it is malformed."""
        if env.kind == msg.FORWARD:
            forward = ForwardBody.parse(env, members=len(self.table.members))
            boxes = list(forward.boxes) if forward.to == accuser else []
            if any(b.token != forward.token for b in boxes):
                # A good box under another slot is still a bad forward (custody.py):
                # judged on the envelope alone, else the sealer framed its recipient with
                # a box that opens.
                return Finding.PROVEN
            return boxes
        # A deal not of one box per other holder, each made by the dealer, is bad on its
        # face (dealing.py), a box missing for the accuser too.
        boxes = list(DealBody.parse(env).boxes)
        dealer = hand.protocol_seat(acc.accused)
        want = {(j, s) for j, s in enumerate(hand.holders) if j != dealer}
        if ({(b.token, b.recipient) for b in boxes} != want or len(boxes) != len(want)
                or any(b.sender != dealer for b in boxes)):
            return Finding.of(accuser in hand.holders and accuser != acc.accused)
        return [b for b in boxes if b.recipient == accuser]

    def box_holds(self, ctx: RevealContext, box: msg.BoxEntry, delivery: bytes,
                  plain: bytes, key: bytes | None, joint: JointKey, sealer: int) -> bool:
        """The box opens with ``key`` to ``plain``, a good share of its slot."""
        hand = self.table.hand
        assert hand is not None
        if key is None:
            return False
        share, card = joint.share_of(box.sender), hand.deck.final[box.token]
        memo = (ctx, box, delivery, plain, key, sealer, share, card)
        found = self._held.get(memo)
        if found is None:
            found = self._held[memo] = self._box_holds(ctx, box, delivery, plain, key,
                                                       share, card, sealer)
        return found

    @staticmethod
    def _box_holds(ctx: RevealContext, box: msg.BoxEntry, delivery: bytes, plain: bytes,
                   key: bytes, share: Point, card: Ciphertext, sealer: int) -> bool:
        try:
            if open_disclosed(key, delivery, ctx.header(), box.box) != plain:
                return False
            check_disclosed_share(ctx, plain, box.digest, share, card, sealer=sealer)
        except RemoteProtocolError:
            return False
        return True

    @staticmethod
    def bad_key(hand: Hand, seat: int, env: Envelope) -> bool:
        """Is ``env`` a key of ``hand`` by holder ``seat`` whose proof fails? A key of
        another hand, or one that does not parse, is no bad key of this one."""
        index = hand.protocol_seat(seat)
        if index is None or msg.hand_of(env) != hand.number:
            return False
        try:
            msg.check_body(env.kind, env.body, env.wire)  # a "share" field, and no more
            share = PublicKeyShare.from_bytes(index, KeyBody.parse(env).share)
        except RemoteProtocolError:
            return False
        try:
            share.verify(hand.ctx)
        except RemoteProtocolError:
            return True
        return False

    def bought(self, hand: Hand, seat: int, before: int) -> bool:
        """Does ``seat``'s chain hold its acceptance of a sale in ``hand`` before seq
        ``before`` (its evidence)? The caller holds that prefix, so every node agrees."""
        member = self.table.member_of[seat]
        for env in self.table.transcript.chain(self.table.members[member]):
            if env.seq >= before:
                break
            if msg.hand_of(env) == hand.number and msg.accepts_sale(env):
                return True
        return False

    def test_shows_lie(self, tested: tuple[PetClaim, Ciphertext, tuple[Point, ...]],
                       parts: Sequence[tuple[int, bytes]]) -> bool:
        """Do ``parts`` (one valid part per key holder but the prover) show the claim
        false? Anything less is a false accusation."""
        hand = self.table.hand
        assert hand is not None
        assert hand.deck.joint is not None
        claim = tested[0]
        prover = claim.context.prover
        if sorted(k for k, _ in parts) != [k for k in range(len(hand.holders)) if k != prover]:
            return False
        try:
            shares = [PetShare.from_bytes(claim, k, data) for k, data in parts]
            for share in shares:
                share.verify(claim, hand.deck.joint.share_of(share.seat))
        except RemoteProtocolError:
            return False
        return bool(pet_matches(claim, shares, holders=len(hand.holders)))

    def opens_into(self, token: int, ranks: frozenset[Rank],
                   entries: Sequence[msg.ShareEntry]) -> bool:
        """Do ``entries`` (one proven share per key holder) open ``token`` to one of
        ``ranks``? Anything less is a false accusation."""
        hand = self.table.hand
        assert hand is not None
        if hand.deck.joint is None or not hand.deck.final or sorted(
                e.sender for e in entries) != list(range(len(hand.holders))):
            return False
        values = []
        try:
            for e in entries:
                share = DecryptionShare.from_bytes(
                    RevealContext(hand.ctx, token, e.sender, e.recipient), e.share)
                share.verify(hand.deck.joint.share_of(e.sender), hand.deck.final[token])
                values.append(share.value)
        except RemoteProtocolError:
            return False
        card = self.core.custody.decode(token, values)
        return card is not None and RANKS[card >> 1] in ranks

    def before_accusing(self, seat: int, number: int, kind: str) -> bool:
        """Does ``seat``'s chain hold its ``kind`` of hand ``number`` before its accuse?"""
        revealed = False
        chain = self.table.transcript.chain(self.table.members[self.table.member_of[seat]])
        for env in chain:
            if msg.hand_of(env) != number:
                continue
            if env.kind == kind:
                revealed = True
            elif env.kind == msg.ACCUSE:
                return revealed
        return revealed

    def sealed_by(self, m: int, number: int) -> set[tuple[int, int, int | None]]:
        """(token, maker, context recipient) of every box in member ``m``'s deal and
        forwards of hand ``number`` (they precede its accuse in its chain)."""
        out: set[tuple[int, int, int | None]] = set()
        for env in self.table.transcript.chain(self.table.members[m]):
            if env.kind in (msg.DEAL, msg.FORWARD) and msg.hand_of(env) == number:
                try:
                    out.update((b.token, b.sender, b.recipient)
                               for b in msg.get_boxes(env.body, env.wire))
                except RemoteProtocolError:
                    continue  # malformed: blamed when it was consumed
        return out
