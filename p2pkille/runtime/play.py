"""Play: the game's facts in the order the table agrees on them, and my own moves.

Decisions (``act``) come from the seat the game expects, one at a time; answers and
disclosures from the asked seat (a card opened in public, or a claim that it is none of
the answering ranks: proved at once on a strict table); a stock card from every holder's
public share; the showdown from every live seat's open card. Each becomes a fact the rules
engine applies (:meth:`Play.feed`); every node applies the same facts in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from p2pkille.engine.cards import ANSWERING, RANKS, Rank
from p2pkille.engine.facts import (
    Answer,
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decline,
    Disclosure,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Showdown,
    StockCard,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.machine import Phase
from p2pkille.engine.view import DecisionPending
from p2pkille.runtime.bodies import (
    ActBody,
    AnswerBody,
    DiscloseBody,
    DrawBody,
    RewoundBody,
    ShowBody,
    need_shares,
)
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.io import Output
from p2pkille.runtime.records import Hand
from p2pkille.runtime.steps import Stage, Step
from protocol.envelope import Envelope
from protocol.errors import RemoteProtocolError
from protocol.reveal import DecryptionShare, RevealContext

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["DECIDING", "Play", "default_fact"]

#: The phases where a seat decides (and gets the default if it does not in time).
DECIDING: Final = frozenset({Phase.TURN, Phase.VOTE, Phase.SALE, Phase.CUT, Phase.AFTER})
ACT_TYPES: Final = (Keep, Swap, AskRedeal, Sell, Vote, SaleAnswer, Cut, BuyIn, Decline)
KILLE_ONLY: Final = frozenset({Rank.KILLE})
REVERTING: Final = frozenset({Rank.KUKU, Rank.HUSU})


def may_revert(fact: Fact) -> bool:
    """Whether ``fact`` may undo swaps: a kuku or a husu, answered or drawn (a husu
    that kills and a kuku that stops move no card; the caller looks at what moved)."""
    if type(fact) is Answer:
        return fact.shown in REVERTING
    return type(fact) is StockCard and fact.rank in REVERTING


def default_fact(phase: int, seat: int) -> Fact:
    """What a seat that did not decide in time gets: keep, refuse, decline, no cut."""
    if phase == Phase.TURN:
        return Keep(seat)
    if phase == Phase.VOTE:
        return Vote(seat, VoteChoice.REFUSE)
    if phase == Phase.SALE:
        return SaleAnswer(seat, False)
    if phase == Phase.CUT:
        return Cut(seat, 0)
    return Decline(seat)


class Play:
    """Feeds the game; writes each hand's :class:`~p2pkille.runtime.records.PlayRecord`."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.fed = 0
        """Facts fed to the game so far (Deals included): marks my moves (``once``)."""

    # -- the game -------------------------------------------------------------------------

    def begin(self, hand: Hand) -> None:
        """A hand was dealt (its Deal fed)."""
        view = self.table.view
        assert view is not None
        game = view.game
        hand.play.facts.append(Deal())
        hand.play.phase_at[game.fact_count] = (game.phase, game.expect_seat)

    def feed(self, fact: Fact) -> None:
        """Apply ``fact`` to the game; a claim it shows false is accused."""
        view = self.table.view
        assert view is not None
        hand = self.table.hand
        before = list(view.game.hold) if may_revert(fact) else None
        found = view.feed(fact)
        self.fed += 1
        if hand is not None and type(fact) is not Deal:
            hand.play.facts.append(fact)
            game = view.game
            hand.play.phase_at[game.fact_count] = (game.phase, game.expect_seat)
            if before is not None:
                self.core.custody.owe_reverted(hand, before)
        decider = self.table.decider
        if getattr(decider, "wants_facts", False) and self.table.my_seat is not None:
            decider.observe(fact, view.view(self.table.my_seat))
        if found is not None:
            self.core.claims.false_fact(found, self.table.last_of(found.seat))
        self.table.tell("fact")

    def rewind_to(self, hand: Hand, at: int) -> None:
        """Take the game back to fact count ``at``: replay the hand's facts up to there,
        and forget what play built past it. Every face learnt stays (none is untrue)."""
        view = self.table.view
        assert view is not None
        known = dict(view.known)
        view.game.restore(hand.snapshot)
        view.false_fact = None
        kept: list[Fact] = []
        for fact in hand.play.facts:
            if view.game.fact_count == at:
                break
            view.feed(fact)
            kept.append(fact)
        hand.play.facts = kept
        view.known.update(known)
        hand.play.draws, hand.play.shows = {}, {}
        hand.play.phase_at = {k: v for k, v in hand.play.phase_at.items() if k <= at}

    def give_back(self, hand: Hand, at: int) -> dict[int, int]:
        """What I took of the others past fact count ``at``: per member the seq to go back
        to (their envelopes on the table's branch, which may fit a late decision too: one
        equal to the default), and the late decision of another seat at ``at`` with it,
        so that I drop what its seat built on it up to its rewound, as the others did."""
        back: dict[int, int] = {}
        for played, m, seq in hand.play.consumed:
            if played > at and m not in back:
                back[m] = seq
        for played, m, seq in hand.play.acted:
            if played == at and m != self.table.me:
                back[m] = min(seq, back.get(m, seq))
            elif played > at and m == self.table.me:
                # My own decision past the step, made on the late branch: it is in my
                # chain, so it is taken again on the table's branch, as the others take
                # it, and never made a second time.
                back[m] = min(seq, back.get(m, seq))
        hand.play.consumed = [c for c in hand.play.consumed
                              if c[2] < back.get(c[1], c[2] + 1)]
        hand.play.acted = [a for a in hand.play.acted if a[0] < at]
        return back

    def consumed(self, hand: Hand, m: int, seq: int) -> None:
        """I took member ``m``'s envelope ``seq`` in play or after (a rewind gives back
        what came past its step)."""
        view = self.table.view
        assert view is not None
        hand.play.consumed.append((view.game.fact_count, m, seq))

    def void(self, hand: Hand, blamed: list[int]) -> None:
        """The hand is voided: the game goes back to before its deal, the blamed seats out
        (the last seat left has won: nobody to expel then)."""
        view = self.table.view
        assert view is not None
        view.game.restore(hand.snapshot)
        view.false_fact = None
        for seat in blamed:
            if not view.game.over:
                view.game.expel(seat)

    def rewound(self, hand: Hand, at: int) -> None:
        """My own decision at ``at`` came too late: I mark it with a ``rewound``."""
        hand.play.rewound.append(at)

    def awaited(self, hand: Hand) -> tuple[int, ...]:
        """The seats play waits for: the claim under test's parts, the stock card's
        shares, the showdown's cards, or the seat the game expects."""
        view = self.table.view
        assert view is not None
        game, holders = view.game, hand.holders
        pet = hand.claims.pet
        if pet is not None:
            return tuple(s for k, s in enumerate(holders)
                         if k != pet.prover and k not in pet.parts and k not in pet.pending)
        if game.phase == Phase.STOCK:
            return tuple(s for k, s in enumerate(holders) if k not in hand.play.draws)
        if game.phase == Phase.SHOWDOWN:
            return tuple(game.order[p] for p in range(len(game.alive))
                         if game.alive[p] and p not in hand.play.shows)
        return () if game.expect_seat is None else (game.expect_seat,)

    # -- the others' moves ----------------------------------------------------------------

    def on_act(self, m: int, env: Envelope) -> None:
        body = ActBody.parse(env)
        fact = body.fact
        if getattr(fact, "seat", None) != self.table.seat_of[m]:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a fact for another seat")
        if not isinstance(fact, ACT_TYPES):
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, f"{fact.TYPE} is not a decision")
        view = self.table.view
        hand = self.table.hand
        assert view is not None
        assert hand is not None
        game, at = view.game, body.at
        if at != game.fact_count:
            if Step(self.table.seat_of[m], Stage.PLAY, at) in hand.timeouts.defaulted:
                # Late: the table agreed its time ran out and gave the default. Its node
                # took it and may have built on it until it heard: skip to its rewound.
                hand.play.skipping.add(self.table.seat_of[m])
                return
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR,
                        f"a decision for step {at}, the game is at step {game.fact_count}")
        seller = game.order[game.turn] if game.phase == Phase.SALE else None
        hand.play.acted.append((game.fact_count, m, env.seq))
        self.feed(fact)
        if type(fact) is SaleAnswer and fact.accept and seller is not None and (
                game.phase != Phase.OVER):
            self.core.custody.sold(hand, game.turn, game.hold[game.turn], seller, fact.seat,
                                   game.fact_count)

    def on_answer(self, m: int, env: Envelope) -> None:
        view = self.table.view
        hand = self.table.hand
        assert view is not None
        assert hand is not None
        game = view.game
        body = AnswerBody.parse(env)
        fact = Answer(self.table.seat_of[m], body.shown)
        if hand.claims.pet is not None:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second answer")
        claims = self.core.claims
        if fact.shown is not None:
            claims.no_pet(body.pet)
            card = self.core.custody.open_public(m, need_shares(env, body.shares),
                                                 game.hold[game.tgt])
            if RANKS[card >> 1] is not fact.shown:
                raise Blame(FaultKind.FALSE_SHOW, AUTHOR,
                            f"showed {RANKS[card >> 1].id} as {fact.shown.id}")
        elif claims.pet_claim(m, env, body.pet, game.hold[game.tgt], b"answer", ANSWERING,
                              fact):
            return  # applied when every key holder has done its part of the test
        elif not self.table.strict:
            claims.claim(env, game.hold[game.tgt], fact.seat, ANSWERING)
        self.answered(fact)

    def answered(self, fact: Answer) -> None:
        """Apply an answer; a plain one (or a kille) exchanges the two cards."""
        hand, view = self.table.hand, self.table.view
        assert hand is not None
        assert view is not None
        game = view.game
        req_seat, tgt_seat = game.order[game.req], fact.seat
        self.feed(fact)
        if fact.shown is None or fact.shown is Rank.KILLE:
            self.core.custody.exchanged(hand, game.hold[game.tgt], tgt_seat,
                                        game.hold[game.req], req_seat, game.fact_count)

    def on_disclose(self, m: int, env: Envelope) -> None:
        view = self.table.view
        assert view is not None
        game = view.game
        body = DiscloseBody.parse(env)
        kille = body.kille
        hand = self.table.hand
        assert hand is not None
        if hand.claims.pet is not None:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second disclosure")
        fact = Disclosure(self.table.seat_of[m], kille)
        claims = self.core.claims
        if kille:
            claims.no_pet(body.pet)
            card = self.core.custody.open_public(m, need_shares(env, body.shares),
                                                 game.hold[game.tgt])
            if RANKS[card >> 1] is not Rank.KILLE:
                raise Blame(FaultKind.FALSE_SHOW, AUTHOR, "disclosed a kille that is none")
        elif claims.pet_claim(m, env, body.pet, game.hold[game.tgt], b"disclose",
                              KILLE_ONLY, fact):
            return
        elif not self.table.strict:
            claims.claim(env, game.hold[game.tgt], self.table.seat_of[m], KILLE_ONLY)
        self.feed(fact)

    def on_draw(self, m: int, env: Envelope) -> None:
        view = self.table.view
        hand = self.table.hand
        assert view is not None
        assert hand is not None
        assert hand.deck.joint is not None
        index = self.table.holder(m)
        game = view.game
        token = game.stock[game.draw_index]
        data = DrawBody.parse(env).share
        share = DecryptionShare.from_bytes(RevealContext(hand.ctx, token, index, None), data)
        try:
            share.verify(hand.deck.joint.share_of(index), hand.deck.final[token])
        except RemoteProtocolError as exc:
            raise Blame(FaultKind.BAD_SHARE, AUTHOR, f"draw share: {exc}") from exc
        if index in hand.play.draws:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a second draw share")
        hand.play.draws[index] = share
        self.core.custody.take_public(hand, token, index, share)
        if len(hand.play.draws) == len(hand.holders):
            card = self.core.custody.decode(token, [s.value for s in hand.play.draws.values()])
            hand.play.draws = {}
            if card is None:
                raise Blame(FaultKind.AUDIT, None, f"stock slot {token} opens to no card")
            view.learn(token, RANKS[card >> 1])
            self.feed(StockCard(game.order[game.req], RANKS[card >> 1]))

    def on_show(self, m: int, env: Envelope) -> None:
        view = self.table.view
        hand = self.table.hand
        assert view is not None
        assert hand is not None
        game = view.game
        pos = game.position_of(self.table.seat_of[m])
        if pos is None or not game.alive[pos] or pos in hand.play.shows:
            raise Blame(FaultKind.ILLEGAL_ACT, AUTHOR, "a show from a seat that is not live")
        hand.play.shows[pos] = self.core.custody.open_public(m, ShowBody.parse(env).shares,
                                                             game.hold[pos])
        live = [p for p in range(len(game.alive)) if game.alive[p]]
        if sorted(hand.play.shows) == live:
            ranks = tuple(RANKS[hand.play.shows[p] >> 1] for p in live)
            hand.play.shows = {}
            self.feed(Showdown(ranks))

    def on_rewound(self, m: int, env: Envelope) -> None:
        hand = self.table.hand
        assert hand is not None
        RewoundBody.parse(env)
        hand.play.skipping.discard(self.table.seat_of[m])

    # -- my own moves ---------------------------------------------------------------------

    def mark_rewound(self, out: list[Output], hand: Hand) -> bool:
        """Mark my next late step taken back with a ``rewound``."""
        if not hand.play.rewound:
            return False
        self.core.outbox.emit(out, RewoundBody(hand.number, hand.play.rewound.pop(0)))
        return True

    def leave_when_over(self, hand: Hand) -> bool:
        """A stopped hand whose play is over goes on consuming (no move of mine): an
        accusation of the hand's audit is decided by my own audit (a node replaying its
        log takes the accuses, read ahead, before it has consumed the play to its end)."""
        view = self.table.view
        if (self.table.stage == Stage.PLAY and hand.claims.pet is None and view is not None
                and view.game.phase in (Phase.DEAL, Phase.OVER)):
            self.table.move(Stage.REVEAL)
            return True
        return False

    # One return per kind of move owed, in priority order.
    def act(self, out: list[Output], hand: Hand) -> bool:  # noqa: PLR0911
        """My next move in play: a forward I owe, my part of a claim's test, my share of
        a stock card, my card at the showdown, or the move the game asks of my seat."""
        view = self.table.view
        assert view is not None
        game = view.game
        if self.core.custody.send_forward(out, hand):
            return True
        if hand.claims.pet is not None:
            return self.core.claims.send_part(out, hand)
        phase = game.phase
        if phase in (Phase.DEAL, Phase.OVER):
            self.table.move(Stage.REVEAL)
            return True
        n, outbox, seat = hand.number, self.core.outbox, self.table.my_seat
        if phase == Phase.STOCK:
            token = game.stock[game.draw_index]
            if hand.me is not None and outbox.once("draw", n, self.fed):
                share = self.core.custody.share(hand, token, None, "draw")
                outbox.emit(out, DrawBody(n, token, share.to_bytes()))
                return True
            return False
        if seat is None:
            return False
        pos = game.position_of(seat)
        if phase == Phase.SHOWDOWN:
            if (pos is None or not game.alive[pos]
                    or not self.core.custody.complete(hand, game.hold[pos])):
                return False
            if outbox.once("show", n):
                outbox.emit(out, ShowBody(n, self.core.custody.open_entries(hand,
                                                                            game.hold[pos])))
                return True
            return False
        if game.expect_seat != seat:
            return False
        if pos is not None and phase not in (Phase.AFTER, Phase.DISCLOSE) and (
                game.hold[pos] not in view.known):
            return False  # my card is still on its way
        if not outbox.once("decide", n, self.fed):
            return False
        return self._answer_or_decide(out, hand, seat)

    def _answer_or_decide(self, out: list[Output], hand: Hand, seat: int) -> bool:
        view = self.table.view
        assert view is not None
        game, n = view.game, hand.number
        phase, outbox, custody = game.phase, self.core.outbox, self.core.custody
        if phase == Phase.ANSWER:
            token = game.hold[game.tgt]
            rank = view.known[token]
            if rank in ANSWERING:
                outbox.emit(out, AnswerBody(n, rank, shares=custody.open_entries(hand, token)))
            else:
                outbox.emit(out, AnswerBody(n, None, pet=self._proof(hand, token, b"answer",
                                                                     ANSWERING)))
        elif phase == Phase.DISCLOSE:
            token = game.hold[game.tgt]
            if view.known.get(token) is Rank.KILLE:
                outbox.emit(out, DiscloseBody(n, True,
                                              shares=custody.open_entries(hand, token)))
            else:
                outbox.emit(out, DiscloseBody(n, False, pet=self._proof(hand, token,
                                                                        b"disclose",
                                                                        KILLE_ONLY)))
        else:
            try:
                fact = self.decide(phase, seat)
            except DecisionPending:
                # A person is still choosing: nothing was sent, so forget the mark and
                # ask again on the next receive or wake.
                outbox.unmark("decide", n, self.fed)
                return False
            outbox.emit(out, ActBody(n, game.fact_count, fact))
        return True

    def _proof(self, hand: Hand, token: int, purpose: bytes, ranks: frozenset[Rank]
               ) -> bytes | None:
        """My proof that ``token`` is none of ``ranks`` (strict tables; None on audit ones)."""
        if not self.table.strict:
            return None
        return self.core.claims.pet_body(hand, token, purpose, ranks)

    def decide(self, phase: int, seat: int) -> Fact:
        """My seat's decision, from the decider."""
        view = self.table.view
        assert view is not None
        sv = view.view(seat)
        d = self.table.decider
        if phase == Phase.TURN:
            return d.turn(sv)
        if phase == Phase.VOTE:
            return Vote(seat, d.vote(sv))
        if phase == Phase.SALE:
            return SaleAnswer(seat, d.answer_sale(sv))
        if phase == Phase.CUT:
            return Cut(seat, d.cut(sv))
        if d.buyin(sv) and sv.chips >= sv.price:
            return BuyIn(seat)
        return Decline(seat)
