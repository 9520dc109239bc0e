"""Custody of the cards: the decryption shares a node holds, the boxes it seals, and the
forwards a card that changes hands is owed (docs/protocol.md II.4, II.11.3).

A card (token) is opened by one share per key holder. Its holder keeps its own share and
receives the others sealed (deal boxes, forwards); a card opened in public carries every
share. When a card changes hands (an exchange, a sale, a revert), each seat that held
shares of it for the old holder forwards them, sealed, to the new one; the table waits for
each forward owed, and a seat that withholds one is timed out, not its victim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from p2pkille.engine.cards import RANKS
from p2pkille.runtime import messages as msg
from p2pkille.runtime.bodies import ForwardBody
from p2pkille.runtime.config import card_deck
from p2pkille.runtime.emit import replay_key
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Hand
from protocol.deck import Ciphertext
from protocol.envelope import Envelope
from protocol.errors import RemoteProtocolError
from protocol.group import Point, Scalar
from protocol.keys import DeliveryKeyPair, KeyShare
from protocol.reveal import BadShare, DecryptionShare, RevealContext, unmask, verify_shares
from protocol.rng import DeterministicRng
from protocol.seal import SealError, open_share, seal_share, sealed_digest

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["Custody"]

NOBODY: Final = 2**63
"""The rng context of a public share (no recipient)."""
NO_RNG: Final = DeterministicRng(bytes(32))
"""seal_share draws nothing when given its ephemeral key."""


class Custody:
    """Writes each hand's :class:`~p2pkille.runtime.records.ShareRecord`,
    :class:`~p2pkille.runtime.records.SealRecord` and
    :class:`~p2pkille.runtime.records.ForwardRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table

    # -- shares this node holds -----------------------------------------------------------

    def take_box(self, box: msg.BoxEntry) -> None:
        """Open, check and keep a share sealed to me; a bad one is the sealer's fault
        (the envelope's author: a forwarder could check what it forwards)."""
        hand = self.table.hand
        assert hand is not None
        assert hand.deck.joint is not None
        if not 0 <= box.token < len(hand.deck.final) or not 0 <= box.sender < len(hand.holders):
            raise Blame(FaultKind.BAD_SEAL, AUTHOR, "box for a slot or seat out of range")
        ctx = RevealContext(hand.ctx, box.token, box.sender, box.recipient)
        try:
            share = open_share(self.table.delivery, ctx, box.box)
            if sealed_digest(ctx.header(), share.to_bytes()) != box.digest:
                raise Blame(FaultKind.BAD_SEAL, AUTHOR, "sealed share does not match digest")
            share.verify(hand.deck.joint.share_of(box.sender), hand.deck.final[box.token])
        except SealError as exc:
            raise Blame(FaultKind.BAD_SEAL, AUTHOR, f"sealed box: {exc}") from exc
        except RemoteProtocolError as exc:
            raise Blame(FaultKind.BAD_SHARE, AUTHOR, f"sealed share: {exc}") from exc
        hand.shares.held.setdefault(box.token, {}).setdefault(box.sender, share)

    def take_public(self, hand: Hand, token: int, publisher: int,
                    share: DecryptionShare) -> None:
        """A checked public share of ``token`` by holder ``publisher`` (a draw)."""
        hand.shares.public.append(share)
        hand.shares.publishers.append(publisher)
        hand.shares.held.setdefault(token, {}).setdefault(publisher, share)

    def decode(self, token: int, values: Sequence[Point]) -> int | None:
        """The card index ``token`` opens to with these share values, if any."""
        hand = self.table.hand
        assert hand is not None
        plain = unmask(hand.deck.final[token], list(values))
        return None if plain is None else card_deck().index_of(plain)

    def own_value(self, token: int) -> Point | None:
        hand = self.table.hand
        assert hand is not None
        if hand.deck.key is None or hand.me is None:
            return None
        return hand.deck.final[token].c1 * hand.deck.key.secret

    def learn_all(self) -> None:
        """Learn the face of every token whose shares I hold in full."""
        hand = self.table.hand
        view = self.table.view
        assert hand is not None
        assert view is not None
        for token, shares in hand.shares.held.items():
            if token in view.known:
                continue
            values = {s: sh.value for s, sh in shares.items()}
            if hand.me is not None and hand.me not in values:
                own = self.own_value(token)
                if own is not None:
                    values[hand.me] = own
            if len(values) < len(hand.holders):
                continue
            card = self.decode(token, list(values.values()))
            if card is None:
                self.core.accusations.fault(FaultKind.AUDIT, None,
                                            f"slot {token} opens to no card")
                continue
            view.learn(token, RANKS[card >> 1])
            self.core.claims.expose(token)

    def complete(self, hand: Hand, token: int) -> bool:
        """Do I hold a share of ``token`` of every key holder (mine included)?"""
        held = set(hand.shares.held.get(token, {}))
        if hand.me is not None:
            held.add(hand.me)
        return len(held) == len(hand.holders)

    def opening(self, hand: Hand, token: int) -> list[DecryptionShare]:
        """A public share of ``token`` from every key holder: the ones opened in public,
        or made from the revealed keys after the audit; empty if I cannot."""
        public = {sh.context.sender: sh for sh in hand.shares.public
                  if sh.context.slot == token}
        if len(public) < len(hand.holders):
            # A card shown by a seat without a key (a buyer): its shares came sealed.
            for k, sh in hand.shares.held.get(token, {}).items():
                public.setdefault(k, sh)
        if len(public) < len(hand.holders) and len(hand.close.secrets) == len(hand.holders):
            for k, secret in hand.close.secrets.items():
                if k in public:
                    continue
                try:
                    key = KeyShare.from_secret(k, Scalar.from_bytes(secret))
                except RemoteProtocolError:
                    return []
                public[k] = DecryptionShare.make(key, hand.deck.final[token],
                                                 RevealContext(hand.ctx, token, k, None),
                                                 self.table.rng("expose", hand.number, token, k))
        if sorted(public) != list(range(len(hand.holders))):
            return []
        return [public[k] for k in sorted(public)]

    def open_public(self, m: int, entries: Sequence[msg.ShareEntry], token: int) -> int:
        """Check member ``m``'s public open of ``token`` (one share per key holder); the
        card index."""
        hand = self.table.hand
        assert hand is not None
        assert hand.deck.joint is not None
        if sorted(e.sender for e in entries) != list(range(len(hand.holders))):
            raise Blame(FaultKind.BAD_SHARE, AUTHOR, "an open needs one share per key holder")
        shares = []
        unchecked: list[tuple[DecryptionShare, Point, Ciphertext]] = []
        try:
            for e in entries:
                ctx = RevealContext(hand.ctx, token, e.sender, e.recipient)
                try:
                    share = DecryptionShare.from_bytes(ctx, e.share)
                except RemoteProtocolError:
                    verify_shares(unchecked)  # an earlier bad share is the fault named
                    raise
                shares.append(share)
                if hand.shares.held.get(token, {}).get(e.sender) != share:  # else checked
                    unchecked.append((share, hand.deck.joint.share_of(e.sender),
                                      hand.deck.final[token]))
            # One batch: the threads split it, where one share's check is too small to split.
            verify_shares(unchecked, workers=self.table.workers)
        except BadShare as exc:
            raise Blame(FaultKind.BAD_SHARE, AUTHOR, f"opened share: {exc}") from exc
        publisher = hand.protocol_seat(self.table.seat_of[m])
        for share in shares:
            hand.shares.held.setdefault(token, {}).setdefault(share.context.sender, share)
            if publisher is not None:
                hand.shares.public.append(share)
                hand.shares.publishers.append(publisher)
        card = self.decode(token, [s.value for s in shares])
        if card is None:
            raise Blame(FaultKind.FALSE_SHOW, None, f"slot {token} opens to no card")
        assert self.table.view is not None
        self.table.view.learn(token, RANKS[card >> 1])
        return card

    # -- shares this node makes -----------------------------------------------------------

    def share(self, hand: Hand, token: int, recipient: int | None, purpose: str
              ) -> DecryptionShare:
        """My share of ``token`` for ``recipient`` (None: public), as my behaviour makes it."""
        made = self._share(hand, token, recipient, purpose)
        return self.core.behaviour.share(
            self.core.node, made, purpose,
            lambda other: self._share(hand, other, recipient, purpose))

    def _share(self, hand: Hand, token: int, recipient: int | None, purpose: str
               ) -> DecryptionShare:
        assert hand.deck.key is not None
        assert hand.me is not None
        ctx = RevealContext(hand.ctx, token, hand.me, recipient)
        return DecryptionShare.make(hand.deck.key, hand.deck.final[token], ctx,
                                    self.table.rng(purpose, hand.number, token,
                                                   NOBODY if recipient is None else recipient))

    def box(self, hand: Hand, token: int, to: int, purpose: str) -> msg.BoxEntry:
        """My share of ``token`` sealed to seat ``to`` (a deal box), kept to disclose."""
        share = self.share(hand, token, to, purpose)
        delivery = self.table.config.members[self.table.member_of[to]].delivery
        slot = (token, share.context.sender, share.context.recipient, to)
        hand.seals.plain[slot] = share.to_bytes()
        ephemeral = DeliveryKeyPair.generate(self.table.rng("seal-" + purpose, hand.number,
                                                            token, to))
        hand.seals.box_keys[slot] = ephemeral.private
        hand.seals.deal_boxes.add(slot)
        box, digest = seal_share(share, delivery, NO_RNG, ephemeral=ephemeral)
        return msg.BoxEntry(token, share.context.sender, to, box, digest)

    def holdings(self, hand: Hand, token: int, recipient: int | None
                 ) -> list[DecryptionShare]:
        """Every share I hold for ``token`` plus my own (made for ``recipient``)."""
        shares = dict(hand.shares.held.get(token, {}))
        if hand.me is not None and hand.me not in shares:
            shares[hand.me] = self.share(hand, token, recipient, "open")
        return [shares[s] for s in sorted(shares)]

    def open_entries(self, hand: Hand, token: int) -> tuple[msg.ShareEntry, ...]:
        """What opens ``token`` in public: every share I hold of it and mine."""
        return tuple(msg.ShareEntry(s.context.sender, s.context.recipient, s.to_bytes())
                     for s in self.holdings(hand, token, None))

    # -- forwards -------------------------------------------------------------------------

    @staticmethod
    def owe(hand: Hand, token: int, to: int, seat: int, at: int) -> None:
        """``seat`` now owes ``to`` a forward of slot ``token`` (II.11.3), unless I already
        took it: its sender may act on the exchange before this node applies it, and an
        owed forward never cleared had this node wait for it (and vote no other step of
        that seat) for ever."""
        if (token, to, seat) in hand.forwards.early:
            hand.forwards.early.discard((token, to, seat))
        else:
            hand.forwards.owed[(token, to)] = (seat, at)

    def exchanged(self, hand: Hand, to_target: int, target: int, to_asker: int, asker: int,
                  at: int) -> None:
        """A swap at fact count ``at``: ``target`` now holds ``to_target``, ``asker`` holds
        ``to_asker``; each forwards what it holds for its old card."""
        self.owe(hand, to_target, target, asker, at)
        self.owe(hand, to_asker, asker, target, at)
        if self.table.my_seat == asker:
            hand.forwards.to_send.append((to_target, target))
        elif self.table.my_seat == target:
            hand.forwards.to_send.append((to_asker, asker))

    def sold(self, hand: Hand, position: int, token: int, seller: int, buyer: int,
             at: int) -> None:
        """``seller`` sold ``position`` (holding ``token``) to ``buyer`` at fact count ``at``."""
        self.owe(hand, token, buyer, seller, at)
        hand.forwards.sold[position] = (seller, token, at)
        if seller == self.table.my_seat:
            hand.forwards.to_send.append((token, buyer))

    def owe_reverted(self, hand: Hand, before: Sequence[int]) -> None:
        """A revert (kuku, svinhugg) gave positions back cards they held earlier. Earlier
        holders hold every share of their old cards, but a position sold since then has
        a new occupant: a card the position held before the sale, other than the one it
        sold, only the seller holds (it held every card of the position up to the sale,
        a position is sold on its own turn, and no position is a target after its turn),
        so the seller owes the buyer a forward of it. A dead position shows nothing and
        offers nothing: nothing is owed to it."""
        view = self.table.view
        assert view is not None
        game = view.game
        at = game.fact_count
        for pos, token in enumerate(game.hold):
            sale = hand.forwards.sold.get(pos)
            if sale is None or token == before[pos] or not game.alive[pos]:
                continue
            seller, bought, _ = sale
            if token == bought:
                continue
            buyer = game.order[pos]
            self.owe(hand, token, buyer, seller, at)
            if seller == self.table.my_seat:
                hand.forwards.to_send.append((token, buyer))

    def owing(self, hand: Hand) -> dict[int, int]:
        """Seats that owe a forward, with the fact count it became owed at (the earliest,
        if several)."""
        out: dict[int, int] = {}
        for seat, since in hand.forwards.owed.values():
            out[seat] = min(since, out.get(seat, since))
        return out

    def on_forward(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        body = ForwardBody.parse(env, members=len(self.table.members),
                                 tokens=len(hand.deck.final))
        to, token, boxes = body.to, body.token, body.boxes
        owed = hand.forwards.owed.get((token, to))
        if owed is not None and owed[0] == self.table.seat_of[m]:
            del hand.forwards.owed[(token, to)]
        else:
            hand.forwards.early.add((token, to, self.table.seat_of[m]))
        if to != self.table.my_seat:
            return
        for box in boxes:
            if box.token != token:
                raise Blame(FaultKind.BAD_SEAL, AUTHOR, "forwarded box for another slot")
            self.take_box(box)
        self.learn_all()

    def send_forward(self, out: list[Output], hand: Hand) -> bool:
        """My next forward owed, sealed: every share I hold of the card and mine."""
        if not hand.forwards.to_send:
            return False
        n = hand.number
        token, to = hand.forwards.to_send.pop(0)
        boxes: list[msg.BoxEntry] = []
        for share in self.holdings(hand, token, to):
            delivery = self.table.config.members[self.table.member_of[to]].delivery
            slot = (token, share.context.sender, share.context.recipient, to)
            hand.seals.plain[slot] = share.to_bytes()
            ephemeral = DeliveryKeyPair.generate(self.table.rng(
                "seal-forward", n, token, to, share.context.sender))
            hand.seals.box_keys[slot] = ephemeral.private
            box, digest = seal_share(share, delivery, NO_RNG, ephemeral=ephemeral)
            boxes.append(msg.BoxEntry(token, share.context.sender, share.context.recipient,
                                      box, digest))
        fwd = ForwardBody(n, to, token, tuple(boxes))
        if self.core.outbox.replayed.get(replay_key(msg.FORWARD, fwd.to_json()), 0) > 0:
            self._sent_slots(hand, token, to)
        self.core.outbox.emit(out, fwd)
        return True

    def _sent_slots(self, hand: Hand, token: int, to: int) -> None:
        """Replaying: my forward of ``token`` to ``to`` is in my chain and may hold fewer
        shares than I hold now; what I may disclose of it is what it held."""
        mine = [ForwardBody.parse(env, members=len(self.table.members))
                for env in self.table.transcript.chain(self.table.identity.public)
                if env.kind == msg.FORWARD and msg.hand_of(env) == hand.number]
        sent = {(b.token, b.sender, b.recipient) for fwd in mine
                if fwd.token == token and fwd.to == to for b in fwd.boxes}
        for slot in [sl for sl in hand.seals.plain if sl[0] == token and sl[3] == to
                     and sl[:3] not in sent]:
            del hand.seals.plain[slot]
            hand.seals.box_keys.pop(slot, None)

    def rewind_to(self, hand: Hand, at: int) -> None:
        """Forget the forwards owed and the sales past fact count ``at`` (a rewind)."""
        hand.forwards.owed = {k: v for k, v in hand.forwards.owed.items() if v[1] <= at}
        hand.forwards.sold = {k: v for k, v in hand.forwards.sold.items() if v[2] <= at}
