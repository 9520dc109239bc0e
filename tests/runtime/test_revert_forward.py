"""A revert after a card sale owes the buyer a forward (docs/protocol.md II.4, II.11.3).

A kuku (``enkortskille``) or a svinhugg gives positions back the cards they held
earlier. A position sold since then has a new occupant that never held the card it
gets back: only the seller did, so the seller owes the buyer those shares. Without them
the honest buyer could not show its card at the showdown: holding a key, it would be
timed out and eliminated; holding none, it would stall the table. Each table here is
rigged (every shuffle step is a real one, with a chosen permutation) so that the
scenario happens for sure: hand 1 eliminates one seat, which in hand 2 buys a position
that then gets a card back by a revert.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from p2pkille.bots.base import Strategy, keep, swap
from p2pkille.engine.cards import DECK_SIZE, RANKS, Rank
from p2pkille.engine.facts import Answer, Decision, Fact, SaleAnswer, Sell, StockCard
from p2pkille.engine.view import SeatView
from p2pkille.runtime import dealing
from p2pkille.runtime import messages as msg
from p2pkille.runtime.node import TableNode
from p2pkille.sim.table import build_table
from protocol.deck import (
    Ciphertext,
    ShuffleContext,
    ShuffleStep,
    ShuffleWitness,
    apply_witness,
)
from protocol.group import Point, Workers
from protocol.rng import Rng
from tests.runtime.bots import Restless

# Hand 1: everyone keeps; the husar is the one killing card shown, so the lowest card
# (the blaren, the dealer's) dies, and its seat declines the buy-back: out of the game.
HAND1 = (Rank.HUSAR, Rank.TWELVE, Rank.ELEVEN, Rank.BLAREN)


def _cards(ranks: Sequence[Rank]) -> list[int]:
    """Card indices for ``ranks``, each copy used once."""
    used: set[int] = set()
    out = []
    for rank in ranks:
        card = next(c for c in range(DECK_SIZE) if RANKS[c >> 1] is rank and c not in used)
        used.add(card)
        out.append(card)
    return out


def _rig(monkeypatch: pytest.MonkeyPatch, hands: dict[int, Sequence[Rank]]) -> None:
    """Deal ``hands[h]`` in hand h: token i (position i at the deal, then the stock from
    the top) gets the i-th rank. The first step permutes the plain initial deck so; the
    other steps keep the order. Each step is still re-masked and committed, so every
    node checks it as any other."""
    def rigged(deck_in: Sequence[Ciphertext], joint: Point, ctx: ShuffleContext, rng: Rng,
               *, workers: Workers | None = None) -> tuple[ShuffleStep, ShuffleWitness]:
        drawn = ShuffleWitness.generate(len(deck_in), rng)
        perm = list(range(len(deck_in)))
        if ctx.step == 0 and ctx.hand.hand in hands:
            first = _cards(hands[ctx.hand.hand])
            perm = first + [c for c in perm if c not in first]
        witness = ShuffleWitness(drawn.salt, tuple(perm), drawn.scalars)
        out = apply_witness(deck_in, joint, witness, workers=workers)
        return ShuffleStep(ctx, out, witness.commitment(ctx, deck_in)), witness

    monkeypatch.setattr(dealing, "shuffle_step", rigged)


class Script(Strategy):
    """Keeps, except at the hand-2 positions in ``swaps`` (swap) and ``sells`` (sell to
    the seat out of the game, whose turn it then is: it swaps). Buys what it is offered;
    never buys back in."""

    name = "script"

    def __init__(self, swaps: frozenset[int], sells: frozenset[int]) -> None:
        self.swaps = swaps
        self.sells = sells

    def turn(self, view: SeatView) -> Decision:
        pos = view.position
        if view.game.hand_no != 2 or pos is None:
            return keep(view.seat)
        if pos in self.sells and view.buyers:
            return Sell(view.seat, view.buyers[0], 0)
        if pos in self.swaps or pos in self.sells:
            return swap(view.seat)
        return keep(view.seat)

    def answer_sale(self, view: SeatView) -> bool:
        return True

    def buyin(self, view: SeatView) -> bool:
        return False


def _play(monkeypatch: pytest.MonkeyPatch, hand2: Sequence[Rank], swaps: set[int],
          sells: set[int]) -> tuple[list[TableNode], int]:
    """Play hands 1 and 2; the seat that bought last in hand 2."""
    _rig(monkeypatch, {1: HAND1, 2: hand2})
    script = Script(frozenset(swaps), frozenset(sells))
    table = build_table(4, seed=1, ruleset="enkortskille", chips=10,
                        deciders=lambda _i: script)
    run = table.run(until=3600.0, max_hands=2)
    nodes = run.nodes
    # Everyone is honest: no fault, no time-out, no void, the same two hands everywhere.
    assert run.honest_agree
    for node in nodes:
        assert node.faults == []
        assert [o.voided for o in node.outcomes[:2]] == [False, False]
    first = nodes[0].outcomes
    assert [len(o.holders) for o in first[:2]] == [4, 3]
    buyers = [f.seat for f in first[1].facts if type(f) is SaleAnswer and f.accept]
    return nodes, buyers[-1]


def _kinds(facts: Sequence[Fact]) -> list[str]:
    out = []
    for f in facts:
        if type(f) is Answer:
            out.append(f"answer:{f.shown.id if f.shown else '-'}")
        elif type(f) is StockCard:
            out.append(f"stock:{f.rank.id}")
        else:
            out.append(type(f).__name__)
    return out


@pytest.mark.parametrize(("hand2", "swaps", "sells", "kinds", "forwards", "keyed"), [
    # Position 1, target of position 0's swap, sells; the buyer's offer meets the kuku:
    # every swap is undone and position 1 gets back the six only its seller held.
    pytest.param((Rank.FIVE, Rank.SIX, Rank.KUKU), {0}, {1},
                 ["Swap", "answer:-", "Disclosure", "Sell", "SaleAnswer", "Swap",
                  "answer:kuku", "Showdown"], 2, False, id="kuku-answered"),
    # The same from the stock: the acting dealer draws the kuku.
    pytest.param((Rank.FIVE, Rank.SIX, Rank.SEVEN, Rank.KUKU), {0, 2}, {1},
                 ["Swap", "answer:-", "Disclosure", "Sell", "SaleAnswer", "Swap",
                  "answer:-", "Disclosure", "Swap", "stock:kuku", "Showdown"], 3, False,
                 id="kuku-drawn"),
    # The seat that sells position 0 buys position 1 (it is out of the game then): a
    # buyer that holds a key.
    pytest.param((Rank.FIVE, Rank.SIX, Rank.KUKU), set(), {0, 1},
                 ["Sell", "SaleAnswer", "Swap", "answer:-", "Disclosure", "Sell",
                  "SaleAnswer", "Swap", "answer:kuku", "Showdown"], 2, True,
                 id="kuku-answered-buyer-holds-a-key"),
    # The buyer offers on the five that came to position 1 as a target; the husu undoes
    # that swap (position 0 dies) and position 1 gets back the seller's six.
    pytest.param((Rank.FIVE, Rank.SIX, Rank.HUSU), {0}, {1},
                 ["Swap", "answer:-", "Disclosure", "Sell", "SaleAnswer", "Swap",
                  "answer:husu", "Keep", "Showdown"], 2, False, id="svinhugg-answered"),
    # Position 2 gets the five by position 0's swap (past the kavall), then the kavall
    # by position 1's, and sells; the buyer draws the husu, which undoes position 1's
    # swap: position 2 gets back the five, a card its seller got by an exchange.
    pytest.param((Rank.FIVE, Rank.KAVALL, Rank.SIX, Rank.HUSU), {0, 1}, {2},
                 ["Swap", "answer:kavall", "answer:-", "Disclosure", "Swap", "answer:-",
                  "Disclosure", "Sell", "SaleAnswer", "Swap", "stock:husu", "Showdown"], 2,
                 False, id="svinhugg-drawn"),
])
def test_a_revert_after_a_sale_has_the_seller_forward_the_buyer_its_card(
        monkeypatch: pytest.MonkeyPatch, hand2: Sequence[Rank], swaps: set[int],
        sells: set[int], kinds: list[str], forwards: int, keyed: bool) -> None:
    nodes, buyer = _play(monkeypatch, hand2, swaps, sells)
    for node in nodes:
        hand = node.outcomes[1]
        # The scenario happened: a sale, then a revert, then the showdown.
        played = _kinds(hand.facts[1:])  # from the Deal on, up to the buy-ins
        assert played[:played.index("Showdown") + 1] == kinds
        assert (node.names[buyer] in hand.holders) is keyed
        # Every forward to the buyer: the sale's, any exchange's, and the revert's.
        assert len([e for e in node.transcript.accepted if e.kind == msg.FORWARD
                    and e.body.get("hand") == 2 and e.body.get("to") == buyer]) == forwards


@pytest.mark.parametrize("mode", ["audit", "strict"])
def test_a_selling_table_dealt_at_random_times_out_no_honest_seat(mode: str) -> None:
    # Unrigged: this table's sales meet reverts too, and a strict table's buyer proves
    # its "no kille" without a key.
    table = build_table(7, seed=2, ruleset="enkortskille", chips=3, mode=mode,
                        deciders=lambda _i: Restless())
    run = table.run(until=3000.0, max_hands=20)
    assert run.honest_agree
    reverts = 0
    for node in run.nodes:
        assert node.faults == []
        assert not any(o.voided for o in node.outcomes)
        for hand in node.outcomes:
            kinds = _kinds(hand.facts)
            if "SaleAnswer" in kinds:
                after = kinds[kinds.index("SaleAnswer"):]
                reverts += sum(k in after for k in ("answer:kuku", "answer:husu",
                                                    "stock:kuku", "stock:husu"))
    assert reverts
