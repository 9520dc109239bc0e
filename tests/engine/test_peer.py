"""The peer view: the same machine fed the referee's public facts as JSON text."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from p2pkille.bots import RandomBot, ThresholdBot
from p2pkille.engine.cards import RANKS, Rank
from p2pkille.engine.facts import Answer, Deal, Disclosure, Fact, Swap, fact_to_json
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from p2pkille.engine.peer import PeerView
from p2pkille.engine.referee import Referee


def _pair(ruleset: str, n: int, seed: int, random_bots: bool = True,
          own_seat: int | None = None) -> tuple[Referee, PeerView]:
    rng = random.Random(seed)
    names = [f"S{i}" for i in range(n)]
    game = Game(PRESETS[ruleset], names, stake=2, chips=20, dealer=0)
    bots = [RandomBot(rng) if random_bots else ThresholdBot() for _ in range(n)]
    peer = PeerView(PRESETS[ruleset], names, stake=2, chips=20, dealer=0, own_seat=own_seat)
    return Referee(game, bots, rng), peer


def _truth(referee: Referee) -> dict[int, Rank]:
    return {token: RANKS[index >> 1] for token, index in enumerate(referee.resolve_all())}


@given(st.sampled_from(sorted(PRESETS)), st.integers(0, 2**32 - 1), st.booleans())
def test_peer_view_reaches_the_referees_deaths_pot_and_chips(ruleset: str, seed: int,
                                                             random_bots: bool) -> None:
    opts = PRESETS[ruleset]
    n = random.Random(seed).randint(opts.min_players, min(opts.max_players, 8))
    referee, peer = _pair(ruleset, n, seed, random_bots, own_seat=0)
    game, view = referee.game, peer.game
    while not game.over and game.hand_no < 300:
        while True:
            fact = referee.next_fact()
            referee.apply(fact)
            assert peer.feed_json(fact_to_json(fact)) is None  # honest facts: no liar
            if type(fact) is Deal and view.position_of(0) is not None:
                token = view.token_of(0)
                assert token is not None
                peer.learn(token, referee.face_of(token))
                assert peer.own_rank == referee.views[0].rank
            if game.phase in (Phase.DEAL, Phase.OVER):
                break
        assert view.result == game.result
        assert (view.pot, view.chips, view.in_game) == (game.pot, game.chips, game.in_game)
        assert peer.audit(_truth(referee)) is None
    assert view.winner == game.winner


def _lying_game(ruleset: str, seed: int) -> tuple[PeerView, Referee, Answer, bool] | None:
    """Play until a target shows husar, answer "plain exchange" instead, finish the hand."""
    referee, peer = _pair(ruleset, 5, seed, random_bots=False)
    game = referee.game
    lie: Answer | None = None
    found_at_showdown = False
    while not game.over and game.hand_no < 50:
        fact: Fact = referee.next_fact()
        if lie is None and type(fact) is Answer and fact.shown is Rank.HUSAR:
            fact = lie = Answer(fact.seat, None)
        referee.apply(fact)
        if peer.feed_json(fact_to_json(fact)) is not None:
            found_at_showdown = True
        if lie is not None and game.phase in (Phase.DEAL, Phase.OVER):
            return peer, referee, lie, found_at_showdown
    return None


def test_a_false_plain_answer_is_detected_naming_the_liar() -> None:
    detected_at_showdown = 0
    for seed in range(40):
        played = _lying_game("wikipedia", seed)
        if played is None:
            continue
        peer, referee, lie, at_showdown = played
        false = peer.false_fact if at_showdown else peer.audit(_truth(referee))
        assert false is not None
        assert false.seat == lie.seat
        assert false.claim.fact == lie
        assert false.actual is Rank.HUSAR
        assert "lied" in false.describe(referee.game.names)
        detected_at_showdown += at_showdown
    assert detected_at_showdown >= 3


def test_a_false_disclosure_is_caught_by_the_audit() -> None:
    referee, peer = _pair("bytes-kille", 4, 7, random_bots=False)
    game = referee.game
    referee.apply(Deal())
    peer.feed(Deal())
    faces = referee.resolve_all()
    # Give förhand (token 0) a kille and its target (token 1) a plain 5.
    for token, rank in ((0, Rank.KILLE), (1, Rank.FIVE)):
        index = next(i for i, face in enumerate(faces) if face >> 1 == rank)
        faces[token], faces[index] = faces[index], faces[token]
    forhand, target = game.order[0], game.order[1]
    # Förhand swaps its kille away but discloses "no kille".
    for fact in (Swap(forhand), Answer(target, None), Disclosure(forhand, False)):
        referee.apply(fact)
        assert peer.feed_json(fact_to_json(fact)) is None
    false = peer.audit(_truth(referee))
    assert false is not None
    assert false.seat == forhand
    assert false.actual is Rank.KILLE


def test_a_falsely_shown_blocking_card_is_caught_at_the_showdown() -> None:
    # B claims husar (A dies) but shows a 3 at the showdown: B is the liar.
    from p2pkille.engine.facts import Keep, Showdown

    peer = PeerView(PRESETS["wikipedia"], ["A", "B", "C"], stake=1, chips=5, dealer=2)
    facts: list[Fact] = [Deal(), Swap(0), Answer(1, Rank.HUSAR), Keep(1), Keep(2)]
    for fact in facts:
        assert peer.feed_json(fact_to_json(fact)) is None
    assert peer.game.alive == [False, True, True]
    false = peer.feed(Showdown((Rank.THREE, Rank.NINE)))
    assert false is not None
    assert false.seat == 1
    assert false.claim.rank is Rank.HUSAR
    assert false.actual is Rank.THREE
    assert peer.false_fact == false
    assert "B lied" in false.describe(peer.game.names)
