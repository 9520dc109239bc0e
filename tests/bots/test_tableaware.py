"""The table-aware bot: legal in every ruleset, deterministic, and it uses what it saw."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkille.bots import ThresholdBot
from p2pkille.bots.base import Strategy
from p2pkille.bots.tableaware import (
    DEFAULT_THRESHOLD,
    SELL_RISK,
    STRATEGIES,
    TableAwareBot,
    make_bot,
)
from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Decision, Fact, Keep, Swap, VoteChoice
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import PRESETS
from p2pkille.engine.peer import PeerView
from p2pkille.engine.referee import Referee
from p2pkille.engine.view import SeatView
from tests.bots.stacked import Table

HAND_CAP = 400
MIXES = ("tableaware", "tableaware,threshold", "tableaware,random", "random,tableaware,threshold")


def _bots(mix: str, n: int, rng: random.Random) -> list[Strategy]:
    names = mix.split(",")
    return [make_bot(names[i % len(names)], rng) for i in range(n)]


def _play(ruleset: str, n: int, seed: int, mix: str, *, stake: int = 10, chips: int = 100
          ) -> tuple[Game, list[Fact]]:
    rng = random.Random(seed)
    game = Game(PRESETS[ruleset], [f"S{i}" for i in range(n)], stake=stake, chips=chips,
                dealer=rng.randrange(n))
    referee = Referee(game, _bots(mix, n, rng), rng)
    facts: list[Fact] = []
    while not game.over and game.hand_no < HAND_CAP:
        fact = referee.next_fact()
        referee.apply(fact)  # an illegal decision raises IllegalMoveError here
        facts.append(fact)
    return game, facts


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, int, int, int, int, str]:
    ruleset = draw(st.sampled_from(sorted(PRESETS)))
    opts = PRESETS[ruleset]
    seats = draw(st.integers(opts.min_players, min(opts.max_players, 9)))
    stake = draw(st.integers(1, 5))
    chips = draw(st.integers(stake, stake * 12))
    seed = draw(st.integers(0, 2**32 - 1))
    return ruleset, seats, stake, chips, seed, draw(st.sampled_from(MIXES))


@given(tables())
def test_only_legal_decisions_in_random_games(table: tuple[str, int, int, int, int, str]
                                              ) -> None:
    ruleset, n, stake, chips, seed, mix = table
    game, _ = _play(ruleset, n, seed, mix, stake=stake, chips=chips)
    assert game.over, f"{ruleset} with {n} seats did not end in {HAND_CAP} hands"
    assert sum(game.chips) == n * chips


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_many_games_per_ruleset_stay_legal(ruleset: str) -> None:
    opts = PRESETS[ruleset]
    for seed in range(40):
        n = opts.min_players + seed % 6
        game, _ = _play(ruleset, n, seed, MIXES[seed % len(MIXES)])
        assert game.over
        assert game.winner is not None


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_deterministic_for_a_seed(ruleset: str) -> None:
    first = _play(ruleset, 5, 1234, "tableaware")[1]
    again = _play(ruleset, 5, 1234, "tableaware")[1]
    other = _play(ruleset, 5, 1235, "tableaware")[1]
    assert first == again
    assert first != other


class _Shadow:
    """Checks that a table-aware seat decides the same from a peer's view (its own card
    and the public facts only) as from the referee's full-information view."""

    def __init__(self, game: Game, seat: int) -> None:
        self.seat = seat
        self.peer = PeerView(game.options, game.names, stake=game.stake, chips=10**6,
                             dealer=game.dealer, own_seat=seat)
        self.bot = TableAwareBot()
        self.decisions = 0

    def view(self) -> SeatView:
        return self.peer.view(self.seat)

    def feed(self, fact: Fact, referee: Referee) -> None:
        self.peer.feed(fact)
        token = self.peer.game.token_of(self.seat)
        if token is not None:
            self.peer.learn(token, referee.face_of(token))
        self.bot.observe(fact, self.view())

    def check(self, game: Game, real: TableAwareBot, real_view: SeatView) -> None:
        if game.expect_seat != self.seat:
            return
        if game.phase == Phase.TURN:
            assert self.bot.turn(self.view()) == real.turn(real_view)
            self.decisions += 1
        elif game.phase == Phase.VOTE:
            assert self.bot.vote(self.view()) == real.vote(real_view)


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_decides_from_public_facts_and_its_own_card_only(ruleset: str) -> None:
    checked = 0
    for seed in range(6):
        rng = random.Random(seed)
        n = 5
        game = Game(PRESETS[ruleset], [f"S{i}" for i in range(n)], stake=10, chips=10**6,
                    dealer=0)
        bots = _bots("tableaware,threshold", n, rng)
        referee = Referee(game, bots, rng)
        shadow = _Shadow(game, 0)
        real = bots[0]
        assert isinstance(real, TableAwareBot)
        while not game.over and game.hand_no < 30:
            shadow.check(game, real, referee.views[0])
            fact = referee.next_fact()
            referee.apply(fact)
            shadow.feed(fact, referee)
        checked += shadow.decisions
    assert checked > 20


def _turn(view: SeatView, bot: Strategy) -> Decision:
    return bot.turn(view)


def test_a_swap_taught_it_who_holds_the_blaren() -> None:
    # wikipedia, E deals: A (förhand) swaps its 5 for B's blaren. B now holds the 5
    # and knows A holds the blaren, the certain lowest card: keeping cannot lose.
    bots: list[Strategy] = [ThresholdBot(), *(TableAwareBot() for _ in range(4))]
    view = Table("wikipedia", "A B C D E", "E", bots, ["5", "blaren", "7", "8", "9"]
                 ).until_turn_of("B")
    assert view.rank is Rank.FIVE
    seen = bots[1]
    assert isinstance(seen, TableAwareBot)
    assert seen.risks(view)[0] == 0.0
    assert _turn(view, seen) == Keep(1)
    assert _turn(view, ThresholdBot()) == Swap(1)
    # A bot that did not watch the swap sees a real risk in keeping the same 5.
    assert TableAwareBot().risks(view)[0] > 0.2


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_a_shown_husar_and_vardshus_make_it_draw(ruleset: str) -> None:
    # D deals. A offers its 3; B's vardshus passes it on; C's husar hews A. D holds a 12,
    # which the threshold bot keeps, but D has seen that B and C hold higher cards, and
    # C's husar is a killing card under every ruleset: keeping the 12 is certain death.
    bots: list[Strategy] = [ThresholdBot(), *(TableAwareBot() for _ in range(3))]
    table = Table(ruleset, "A B C D", "D", bots, ["3", "vardshus", "husar", "12"])
    view = table.until_turn_of("D")
    kinds = [e.kind for e in table.game.events or ()]
    assert kinds[:5] == ["deal", "offer", "pass", "husar", "died"]
    seen = bots[3]
    assert isinstance(seen, TableAwareBot)
    keep_risk, draw_risk = seen.risks(view)
    assert keep_risk == pytest.approx(1.0)
    assert draw_risk < keep_risk
    assert _turn(view, seen) == Swap(3)
    assert _turn(view, ThresholdBot()) == Keep(3)
    assert _turn(view, TableAwareBot()) == Keep(3)  # the same card, nothing seen


@pytest.mark.parametrize("ruleset", ["bytes-kille", "enkortskille"])
def test_a_shown_kille_marks_the_lowest_card(ruleset: str) -> None:
    # E deals. A offers its 4 to B, whose kille moves face up to A: a kille got by a swap is
    # the lowest card of the showdown. C holds the blaren, which the threshold bot swaps;
    # C saw the kille go to A, so A, not C, holds the lowest card: C keeps.
    bots: list[Strategy] = [ThresholdBot(), *(TableAwareBot() for _ in range(4))]
    table = Table(ruleset, "A B C D E", "E", bots, ["4", "kille", "blaren", "8", "9"])
    view = table.until_turn_of("C")
    assert [e.kind for e in table.game.events or ()][-2:] == ["kille_moves", "keep"]
    assert view.rank is Rank.BLAREN
    seen = bots[2]
    assert isinstance(seen, TableAwareBot)
    keep_risk, swap_risk = seen.risks(view)
    assert keep_risk < swap_risk
    assert _turn(view, seen) == Keep(2)
    assert _turn(view, ThresholdBot()) == Swap(2)
    assert _turn(view, TableAwareBot()) == Swap(2)  # the same card, nothing seen


@pytest.mark.parametrize(("threshold", "direction"), [(Rank.TWO, -1), (Rank.KAVALL, 1)])
def test_learns_a_seats_keep_threshold(threshold: Rank, direction: int) -> None:
    rng = random.Random(5)
    watcher = TableAwareBot()
    # B sees the cards A hands it, and the showdowns show what A kept and gave away.
    bots: list[Strategy] = [ThresholdBot(threshold), watcher,
                            *(ThresholdBot() for _ in range(3))]
    game = Game(PRESETS["bytes-kille"], ["A", "B", "C", "D", "E"], stake=1, chips=10**6)
    referee = Referee(game, bots, rng)
    referee.play(60)
    learnt = watcher.threshold(0)
    assert (learnt - DEFAULT_THRESHOLD) * direction > 0
    assert (learnt - int(threshold)) * direction <= 0


class _Recorder(TableAwareBot):
    """A table-aware bot that records the buy-in and sale situations it met."""

    def __init__(self) -> None:
        super().__init__()
        self.buyins: list[tuple[int, int, int, int, bool]] = []
        self.sales: list[tuple[int, int, int, int, bool]] = []
        self.sells: list[tuple[float, int]] = []

    def buyin(self, view: SeatView) -> bool:
        decision = super().buyin(view)
        self.buyins.append((view.price, view.chips, view.pot, view.game.n_in, decision))
        return decision

    def answer_sale(self, view: SeatView) -> bool:
        decision = super().answer_sale(view)
        assert view.sale is not None
        self.sales.append((view.sale[1], view.chips, view.pot, view.game.n_in, decision))
        return decision

    def turn(self, view: SeatView) -> Decision:
        decision = super().turn(view)
        if decision.TYPE == "sell":
            self.sells.append((min(self.risks(view)), view.game.n_in))
        return decision


def _recorded(ruleset: str, games: int, seats: int) -> list[_Recorder]:
    out: list[_Recorder] = []
    for seed in range(games):
        rng = random.Random(seed)
        bots: Sequence[_Recorder] = [_Recorder() for _ in range(seats)]
        game = Game(PRESETS[ruleset], [f"S{i}" for i in range(seats)], stake=10, chips=100)
        Referee(game, bots, rng).play(HAND_CAP)
        out += bots
    return out


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_buys_back_only_when_the_pot_share_covers_the_price(ruleset: str) -> None:
    seen = [b for bot in _recorded(ruleset, 25, 5) for b in bot.buyins]
    assert seen
    for price, chips, pot, n_in, bought in seen:
        assert bought == (0 < price <= chips and pot + price >= price * (n_in + 1))
        if price >= pot:  # a whole-pot buy-back, or the two-left buy-in at twice the pot
            assert not bought
    if ruleset == "wikipedia":
        # The first buy-back costs one stake: worth it; half the pot later often is not.
        assert any(bought for *_, bought in seen)
        assert not all(bought for *_, bought in seen)


def test_card_sales_in_enkortskille() -> None:
    bots = _recorded("enkortskille", 40, 4)
    sells = [s for bot in bots for s in bot.sells]
    answers = [s for bot in bots for s in bot.sales]
    assert sells
    assert answers
    assert all(risk >= SELL_RISK for risk, _ in sells)
    for price, chips, pot, n_in, accepted in answers:
        if accepted:
            assert price <= chips // 2
            assert price <= max(1, pot // (2 * n_in))


def test_redeal_requests_and_votes_in_three_player_games() -> None:
    for ruleset in ("bytes-kille", "enkortskille"):
        votes: set[VoteChoice] = set()
        asked = 0
        for seed in range(30):
            rng = random.Random(seed)
            game = Game(PRESETS[ruleset], ["A", "B", "C"], stake=10, chips=100,
                        record_events=True)
            Referee(game, [TableAwareBot() for _ in range(3)], rng).play(HAND_CAP)
            events = game.events or []
            asked += sum(e.kind == "redeal_asked" for e in events)
            votes |= {VoteChoice(e.cause) for e in events if e.kind == "redeal_vote"}
        assert asked > 0, ruleset
        assert VoteChoice.REFUSE in votes, ruleset
        if ruleset == "bytes-kille":
            assert VoteChoice.DEPENDS in votes


def test_strategies_by_name() -> None:
    rng = random.Random(0)
    assert set(STRATEGIES) >= {"threshold", "tableaware", "random"}
    for name in STRATEGIES:
        assert make_bot(name, rng).name == name
    with pytest.raises(KeyError, match="unknown strategy 'nope'"):
        make_bot("nope", rng)
