"""The machine itself: the table, expectations, determinism, the referee's deal."""

from __future__ import annotations

import random
from collections import Counter

from p2pkille.bots import RandomBot, ThresholdBot
from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Answer, Deal, Fact, Keep, Swap, fact_to_json
from p2pkille.engine.machine import TRANSITIONS, Expect, Game, Phase, transition_rows
from p2pkille.engine.options import PRESETS
from p2pkille.engine.peer import PeerView
from p2pkille.engine.referee import Referee


def test_every_phase_but_over_accepts_something() -> None:
    phases = {Phase(phase) for phase, _ in TRANSITIONS}
    assert phases == set(Phase) - {Phase.OVER}
    rows = transition_rows()
    assert ("TURN", "Swap", "swap") in rows
    assert len(rows) == len(TRANSITIONS)


def test_expecting_tells_the_driver_whom_to_ask() -> None:
    g = Game(PRESETS["wikipedia"], ["A", "B", "C", "D"], stake=1, chips=5, dealer=3)
    assert g.expecting == Expect(Phase.DEAL, None)
    g.apply(Deal())
    assert g.expecting == Expect(Phase.TURN, 0)
    g.apply(Swap(0))
    assert g.expecting == Expect(Phase.ANSWER, 1)
    g.apply(Answer(1, Rank.KAVALL))  # förbi: C answers next
    assert g.expecting == Expect(Phase.ANSWER, 2)
    g.apply(Answer(2, None))
    assert g.expecting == Expect(Phase.DISCLOSE, 0)
    assert g.describe() == "hand 1, phase disclose: waiting for the requester's kille " \
        "disclosure from A"


def _facts(seed: int) -> list[str]:
    rng = random.Random(seed)
    g = Game(PRESETS["enkortskille"], [f"S{i}" for i in range(6)], stake=1, chips=9)
    ref = Referee(g, [RandomBot(rng) for _ in range(6)], rng)
    out: list[str] = []
    while not g.over and g.hand_no < 100:
        fact = ref.next_fact()
        ref.apply(fact)
        out.append(fact_to_json(fact))
    return out


def test_the_referee_is_deterministic_given_its_rng() -> None:
    assert _facts(5) == _facts(5)
    assert _facts(5) != _facts(6)


def test_the_lazy_deal_is_uniform_enough() -> None:
    # Token 0 (förhand's card) over many deals: every rank about 1/21 of the time.
    rng = random.Random(1)
    g = Game(PRESETS["wikipedia"], ["A", "B", "C"], stake=1, chips=10**9)
    ref = Referee(g, [ThresholdBot() for _ in range(3)], rng)
    seen: Counter[Rank] = Counter()
    deals = 21_000
    for _ in range(deals):
        ref.apply(Deal())
        seen[ref.face_of(0)] += 1
        seen_all = sorted(ref.resolve_all())
        assert seen_all == list(range(42))
        g.phase = int(Phase.DEAL)  # re-deal without playing: only the deal is measured
    assert set(seen) == set(Rank)
    assert all(800 < count < 1200 for count in seen.values()), seen


def test_a_peer_view_gives_bots_only_known_faces() -> None:
    peer = PeerView(PRESETS["wikipedia"], ["A", "B", "C"], stake=1, chips=5, dealer=2,
                    own_seat=0)
    peer.feed(Deal())
    assert peer.view(0).rank is None  # not learnt yet
    peer.learn(0, Rank.SEVEN)
    assert peer.view(0).rank is Rank.SEVEN
    assert peer.own_rank is Rank.SEVEN
    assert peer.view(1).rank is None
    facts: list[Fact] = [Keep(0), Keep(1)]
    for fact in facts:
        peer.feed(fact)
    assert peer.game.expecting == Expect(Phase.TURN, 2)
