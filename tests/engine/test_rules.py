"""One test per rule and ruleset, replayed from hand-derived scenarios.

Seats are clockwise; with dealer D of A B C D, förhand is A and the turn order is
A B C D (D acts as dealer). Expected outcomes are worked out in the comments from
rulings.md, not from the engine.
"""

from __future__ import annotations

from typing import Any

import pytest

from p2pkille.replay import ReplayError
from tests.engine.helpers import calls, hand, kinds, play


def one(out: dict[str, Any]) -> dict[str, Any]:
    hands: list[dict[str, Any]] = out["hands"]
    return hands[0]


# ------------------------------------------------------------------ husu / svinhugg


def test_wikipedia_svinhugg_chain_example() -> None:
    # The Wikipedia example: A offers to B, B offers the same card to C, C offers it to D,
    # who holds husu. C gets its 7 back from B, B its 6 from A; A dies. At the showdown
    # B's 6 is lowest among B, C, D(husu), E(12).
    out = one(play("wikipedia", "A B C D E", "E",
                   hand("A=5 B=6 C=7 D=husu E=12", "A swap, B swap, C swap, D keep, E keep")))
    assert out["held"] == {"A": "5", "B": "6", "C": "7", "D": "husu", "E": "12"}
    assert out["died"] == ["A", "B"]
    assert "Svinhugg går igen!" in calls(out)
    revert = next(e for e in out["events"] if e["type"] == "revert")
    assert revert["swaps"] == 2
    died = [e for e in out["events"] if e["type"] == "died"]
    assert died[0] == {"type": "died", "seat": "A", "cause": "svinhugg"}


def test_svinhugg_chain_with_forbi_and_an_interleaved_swap() -> None:
    # A's offer passes B's kavall and lands on C: A gets 5, C gets A's 1. B then swaps
    # with C: B gets the 1, C gets the kavall as a target and offers it on to D's husu.
    # The kavall's chain is only B->C: undone (B has its kavall back, C the 1), B dies.
    # Showdown A(5), C(1), D(husu), E(9): C dies.
    out = one(play("wikipedia", "A B C D E", "E",
                   hand("A=1 B=kavall C=5 D=husu E=9", "A swap, B swap, C swap, D keep, E keep")))
    assert out["held"] == {"A": "5", "B": "kavall", "C": "1", "D": "husu", "E": "9"}
    assert out["died"] == ["B", "C"]
    assert {"type": "died", "seat": "B", "cause": "svinhugg"} in out["events"]


def test_svinhugg_on_first_holder_kills_it_and_last_one_takes_the_pot() -> None:
    # A offers its own card to B's husu: A dies. Showdown B(husu) vs C(9): C dies.
    # Nobody buys back (unnamed seats decline): B is the last one and takes the pot.
    out = play("wikipedia", "A B C", "C", hand("A=5 B=husu C=9", "A swap, B keep, C keep"))
    assert out["hands"][0]["died"] == ["A", "C"]
    assert out["winner"] == "B"
    assert out["hands"][0]["pot"] == 0
    assert out["hands"][0]["chips"] == {"A": 90, "B": 120, "C": 90}


def test_bytes_kille_husu_kills_the_requester_not_the_chain() -> None:
    # A and B exchange; B offers A's 5 on to C's husu: in bytes-kille the requester B dies
    # (no svinhugg chain). Showdown A(6), C(husu), D(10): one killing card, lowest A dies.
    out = one(play("bytes-kille", "A B C D", "D",
                   hand("A=5 B=6 C=husu D=10", "A swap, B swap, C keep, D keep")))
    assert out["died"] == ["A", "B"]
    assert out["held"] == {"A": "6", "B": "5", "C": "husu", "D": "10"}
    assert {"type": "died", "seat": "B", "cause": "husu"} in out["events"]


def test_husar_kills_requester_and_turn_passes_on() -> None:
    out = one(play("enkortskille", "A B C", "C", hand("A=5 B=husar C=9", "A swap, B keep, C keep")))
    assert calls(out)[0] == "Husar hugger!"
    # Showdown B(husar), C(9): one killing card, C lowest.
    assert out["died"] == ["A", "C"]


# ------------------------------------------------------------------ kuku


def test_wikipedia_kuku_stops_all_swapping() -> None:
    out = one(play("wikipedia", "A B C D", "D", hand("A=5 B=kuku C=2 D=3", "A swap")))
    assert calls(out)[:2] == ["Kuku står, ingen byta får!", "På rygg!"]
    assert out["died"] == ["C"]
    assert out["held"] == {"A": "5", "B": "kuku", "C": "2", "D": "3"}


def test_bytes_kille_kuku_behall_and_no_killing_card() -> None:
    out = one(play("bytes-kille", "A B C D", "D", hand("A=5 B=kuku C=2 D=3", "A swap")))
    assert "Kuku behåll" in calls(out)
    assert out["died"] == []


def test_enkortskille_kuku_undoes_every_swap_then_showdown() -> None:
    # A and B exchange, B offers to C's kuku: the A-B swap is undone; kuku kills in this
    # ruleset, so the lowest (D's 3) dies.
    out = one(play("enkortskille", "A B C D", "D",
                   hand("A=5 B=6 C=kuku D=3", "A swap, B swap")))
    assert out["held"] == {"A": "5", "B": "6", "C": "kuku", "D": "3"}
    assert out["died"] == ["D"]


def test_moves_after_kuku_are_left_over() -> None:
    with pytest.raises(ReplayError) as caught:
        play("wikipedia", "A B C D", "D", hand("A=5 B=kuku C=2 D=3", "A swap, B keep"))
    assert (caught.value.hand, caught.value.move) == (1, 2)
    assert "left over" in caught.value.message


# ------------------------------------------------------------------ förbi and the stock


def test_forbi_chain_passes_beyond_the_acting_dealer_to_the_stock() -> None:
    out = one(play("wikipedia", "A B C", "C",
                   hand("A=2 B=kavall C=vardshus", "A swap, B keep, C keep", stock="9")))
    assert calls(out)[:3] == ["Kavall förbi!", "Värdshus förbi!", "Jag går i lek!"]
    assert "cut" in kinds(out)  # förhand cuts before the hand's first draw
    assert out["held"]["A"] == "9"
    assert out["died"] == ["A"]


@pytest.mark.parametrize(
    ("drawn", "held_c", "died"),
    [
        ("kuku", "2", ["C"]),  # no exchange
        ("kavall", "2", ["C"]),  # no exchange
        ("vardshus", "2", ["C"]),
        ("husar", "2", ["A", "C"]),  # the drawer dies; then A's 5 is lowest
        ("husu", "2", ["A", "C"]),  # svinhugg on C's own card: C dies
        ("kille", "kille", ["A"]),  # taken, and the highest card
        ("9", "9", ["A"]),
    ],
)
def test_wikipedia_dealer_draws_the_top_card(drawn: str, held_c: str, died: list[str]) -> None:
    out = one(play("wikipedia", "A B C", "C",
                   hand("A=5 B=6 C=2", "A keep, B keep, C swap", stock=f"{drawn} 12")))
    assert out["held"]["C"] == held_c
    assert out["died"] == died


def test_wikipedia_drawn_husu_undoes_the_drawers_chain() -> None:
    # B and C exchange (C receives B's 5 as target); C draws husu: the B-C swap is undone
    # and B, who first offered the card, dies. Showdown A(9), C(2): C dies.
    out = one(play("wikipedia", "A B C", "C",
                   hand("A=9 B=5 C=2", "A keep, B swap, C swap", stock="husu")))
    assert out["held"] == {"A": "9", "B": "5", "C": "2"}
    assert out["died"] == ["B", "C"]


def test_bytes_kille_pick_and_repeated_draws() -> None:
    # D names the 2nd card: kavall, put aside; the next card (vardshus) too; then the 9.
    out = one(play("bytes-kille", "A B C D", "D",
                   hand("A=5 B=6 C=7 D=2", "A keep, B keep, C keep, D swap 2",
                        stock="1 kavall vardshus 9 10")))
    drawn = [(e["card"], e["position"]) for e in out["events"] if e["type"] == "stock_card"]
    assert drawn == [("kavall", 2), ("vardshus", 2), ("9", 2)]
    assert out["held"]["D"] == "9"
    assert out["died"] == []  # no killing card shown


@pytest.mark.parametrize(("drawn", "held_d", "died"),
                         [("husar", "2", ["D"]), ("husu", "2", ["D"]), ("kuku", "2", []),
                          ("kille", "kille", ["A"])])
def test_bytes_kille_draw_answers(drawn: str, held_d: str, died: list[str]) -> None:
    # kille drawn is the highest and a killing card: the lowest (A's 5) dies.
    out = one(play("bytes-kille", "A B C D", "D",
                   hand("A=5 B=6 C=7 D=2", "A keep, B keep, C keep, D swap", stock=drawn)))
    assert out["held"]["D"] == held_d
    assert out["died"] == died


def test_bytes_kille_stock_running_out_means_no_exchange() -> None:
    # 38 players leave a stock of 4; the dealer picks the 4th (kavall): no next card.
    seats = [f"P{i:02}" for i in range(38)]
    stock = ["1", "1", "2", "kavall"]
    pool = [r for r in ["kille", "kuku", "husar", "husu", "kavall", "vardshus",
                        *map(str, range(2, 13)), "kransen", "blompottan", "blaren"]
            for _ in range(2)]
    pool.remove("2")
    pool.remove("kavall")
    cards = dict(zip(seats, pool, strict=True))
    moves = [[s, "keep"] for s in seats[:-1]] + [[seats[-1], "swap", 4]]
    from p2pkille.replay import run_replay

    out = run_replay({"ruleset": "bytes-kille", "seats": seats, "stake": 1, "chips": 10,
                      "dealer": seats[-1], "hands": [{"cards": cards, "stock": stock,
                                                       "moves": moves}]})
    h: dict[str, Any] = out["hands"][0]  # type: ignore[index]
    assert "stock_empty" in kinds(h)
    assert h["held"][seats[-1]] == cards[seats[-1]]


def test_enkortskille_drawn_kuku_undoes_swaps_and_ends_swapping() -> None:
    # A and B exchange; B draws? No: C acts as dealer and draws kuku: every swap is undone
    # and the showdown follows at once. Killing card: none of 5, 6, 2 -> nobody dies.
    out = one(play("enkortskille", "A B C", "C",
                   hand("A=5 B=6 C=2", "A swap, B keep, C swap", stock="kuku")))
    assert out["held"] == {"A": "5", "B": "6", "C": "2"}
    assert out["died"] == []


def test_enkortskille_repeated_draws_through_passers() -> None:
    out = one(play("enkortskille", "A B C", "C",
                   hand("A=5 B=6 C=2", "A keep, B keep, C swap", stock="kavall vardshus 12")))
    assert out["held"]["C"] == "12"


def test_stock_too_short_is_bad_input_naming_the_move() -> None:
    with pytest.raises(ReplayError) as caught:
        play("enkortskille", "A B C", "C",
             hand("A=5 B=6 C=2", "A keep, B keep, C swap", stock="kavall"))
    assert (caught.value.hand, caught.value.move) == (1, 3)
    assert "stock is too short" in caught.value.message


# ------------------------------------------------------------------ kille


def test_wikipedia_kille_received_by_swap_dies() -> None:
    out = one(play("wikipedia", "A B C D", "D",
                   hand("A=5 B=kille C=6 D=7", "A swap, B keep, C keep, D keep")))
    assert {"type": "died", "seat": "A", "cause": "kille"} in out["events"]
    assert out["died"] == ["A", "B"]  # then B's 5 is lowest


def test_wikipedia_kille_given_away_kills_the_receiver() -> None:
    out = one(play("wikipedia", "A B C D", "D",
                   hand("A=kille B=5 C=6 D=7", "A swap, C keep, D keep")))
    moves = [e for e in out["events"] if e["type"] == "kille_moves"]
    assert moves == [{"type": "kille_moves", "seat": "A", "to": "B", "card": "kille"}]
    assert out["died"] == ["A", "B"]


def test_bytes_kille_swapped_kille_is_lowest() -> None:
    out = one(play("bytes-kille", "A B C D", "D",
                   hand("A=5 B=kille C=husar D=7", "A swap, B keep, C keep, D keep")))
    assert out["died"] == ["A"]


def test_enkortskille_revert_restores_an_unswapped_kille() -> None:
    # A's kille goes to B by swap, then C's kuku undoes it: A's kille is unswapped again,
    # so it is the highest card and a killing card. Killing cards: kille, kuku -> the two
    # lowest (B's 5, D's 7) die.
    out = one(play("enkortskille", "A B C D", "D",
                   hand("A=kille B=5 C=kuku D=7", "A swap, B swap")))
    assert out["held"]["A"] == "kille"
    assert out["died"] == ["B", "D"]


# ------------------------------------------------------------------ showdown rules


@pytest.mark.parametrize(
    ("ruleset", "cards", "died"),
    [
        ("wikipedia", "A=3 B=3 C=9 D=9", ["A", "B"]),  # ties at the lowest all die
        ("bytes-kille", "A=5 B=6 C=7 D=8", []),  # no killing card
        ("bytes-kille", "A=husar B=2 C=2 D=9", ["B", "C"]),  # one: the lowest, tied
        ("bytes-kille", "A=husar B=husu C=2 D=3", ["C", "D"]),  # two: the two lowest
        ("bytes-kille", "A=kuku B=2 C=5 D=9", []),  # kuku is no killing card here
        ("enkortskille", "A=kuku B=2 C=5 D=9", ["B"]),  # but it is in enkortskille
        ("enkortskille", "A=husar B=husu C=2 D=5", ["C", "D"]),
    ],
)
def test_showdown_rules(ruleset: str, cards: str, died: list[str]) -> None:
    out = one(play(ruleset, "A B C D", "D", hand(cards, "A keep, B keep, C keep, D keep")))
    assert out["died"] == died


def test_killing_cards_tie_at_second_lowest_kills_three() -> None:
    out = one(play("enkortskille", "A B C D E", "E",
                   hand("A=husar B=husu C=2 D=3 E=3", "A keep, B keep, C keep, D keep, E keep")))
    assert out["died"] == ["C", "D", "E"]


def test_showdown_never_kills_everyone() -> None:
    out = one(play("wikipedia", "A B C", "C",
                   hand("A=5 B=husar C=husar", "A swap, B keep, C keep")))
    assert out["died"] == ["A"]
    spared = [e["seat"] for e in out["events"] if e["type"] == "spared"]
    assert spared == ["B", "C"]


def test_a_death_during_the_draw_never_leaves_nobody_alive() -> None:
    out = one(play("enkortskille", "A B", "B",
                   hand("A=5 B=husar", "A swap, B swap", stock="husar")))
    assert out["died"] == ["A"]
    assert {"type": "spared", "seat": "B", "cause": "husar"} in out["events"]


# ------------------------------------------------------------------ buy-backs


def _dies(first: str, order: str) -> tuple[str, str]:
    cards = {"A": "1", "B": "5", "C": "6", "D": "7"}
    return " ".join(f"{s}={cards[s]}" for s in order.split()), ", ".join(
        f"{s} keep" for s in order.split()
    )


def test_wikipedia_buyback_schedule_and_limit() -> None:
    # Stake 5, four seats: pot 20. A dies every hand (its 1 is lowest) and buys back:
    # 1st = the stake (5, pot 25), 2nd = half the pot rounded up (13, pot 38),
    # 3rd = the whole pot (38, pot 76). The dealer moves to the previous förhand.
    orders = ["A B C D", "B C D A", "C D A B"]
    hands = [hand(*_dies("A", order), after="A buyin") for order in orders]
    out = play("wikipedia", "A B C D", "D", *hands, stake=5, chips=200)
    assert [h["dealer"] for h in out["hands"]] == ["D", "A", "B"]
    assert [h["pot"] for h in out["hands"]] == [25, 38, 76]
    assert out["hands"][-1]["chips"]["A"] == 200 - 5 - 5 - 13 - 38
    fourth = hand(*_dies("A", "D A B C"), after="A buyin")
    with pytest.raises(ReplayError) as caught:
        play("wikipedia", "A B C D", "D", *hands, fourth, stake=5, chips=200)
    assert (caught.value.hand, caught.value.move) == (4, None)
    assert "A has no buy-in choice" in caught.value.message


def test_wikipedia_buyback_only_right_after_dying() -> None:
    first = hand(*_dies("A", "A B C D"))
    later = hand("B=5 C=6 D=1", "B keep, C keep, D keep", after="A buyin")
    with pytest.raises(ReplayError, match="hand 2: after: A has no buy-in choice"):
        play("wikipedia", "A B C D", "D", first, later)


def test_enkortskille_buyback_any_later_hand_at_twice_the_stake() -> None:
    # Hand 1: husar is the one killing card, A's 1 dies; A declines. Hand 2 (dealer A,
    # the seat left of D): D's 2 dies; now A buys back at twice the stake.
    first = hand("A=1 B=husar C=6 D=7", "A keep, B keep, C keep, D keep")
    second = hand("B=husar C=6 D=2", "B keep, C keep, D keep", after="A buyin")
    out = play("enkortskille", "A B C D", "D", first, second)
    assert out["hands"][1]["dealer"] == "A"
    assert out["hands"][1]["in_game"] == ["A", "B", "C"]
    assert out["hands"][1]["chips"]["A"] == 100 - 10 - 20
    assert out["hands"][1]["pot"] == 60


def test_bytes_kille_two_left_buyin_at_twice_the_growing_pot() -> None:
    # Two killing cards: C and D die, two are left. Every seat out may buy in at twice
    # the pot as it stands, settled from förhand A: C pays 80 (pot 120), D pays 240.
    out = one(play("bytes-kille", "A B C D", "D",
                   hand("A=husar B=husu C=2 D=3", "A keep, B keep, C keep, D keep",
                        after="D buyin, C buyin"), chips=1000))
    assert out["pot"] == 360
    assert out["chips"] == {"A": 990, "B": 990, "C": 910, "D": 750}
    assert out["in_game"] == ["A", "B", "C", "D"]


def test_bytes_kille_buybacks_end_at_three_left() -> None:
    with pytest.raises(ReplayError, match="D has no buy-in choice"):
        play("bytes-kille", "A B C D", "D",
             hand("A=husar B=5 C=6 D=2", "A keep, B keep, C keep, D keep", after="D buyin"))


def test_bytes_kille_buybacks_stay_closed_after_a_two_left_buyin_refills_the_table() -> None:
    # Hand 1 (dealer E, förhand A): husar and husu are two killing cards, so the two lowest
    # values die with their ties: C's 2, D's 3, E's 3. Two are left, so buy-backs have
    # ended; the two-left buy-in, from förhand A: C pays 2 x 50 = 100 (pot 150), D
    # declines its 300, E pays 300 (pot 450). Hand 2 (dealer A: B C E A) shows no killing
    # card and four stay in the game, yet D may not buy back: "ingen mer chans" (004).
    first = hand("A=husar B=husu C=2 D=3 E=3", "A keep, B keep, C keep, D keep, E keep",
                 after="C buyin, D decline, E buyin")
    second = hand("B=5 C=6 E=7 A=8", "B keep, C keep, E keep, A keep")
    out = play("bytes-kille", "A B C D E", "E", first, second, chips=500)
    assert out["hands"][0]["in_game"] == ["A", "B", "C", "E"]
    assert out["hands"][0]["pot"] == 450
    assert out["hands"][1]["died"] == []
    assert out["hands"][1]["in_game"] == ["A", "B", "C", "E"]
    assert "buyin" not in kinds(out["hands"][1])
    assert "decline" not in kinds(out["hands"][1])
    late = hand("B=5 C=6 E=7 A=8", "B keep, C keep, E keep, A keep", after="D buyin")
    with pytest.raises(ReplayError, match="D has no buy-in choice") as caught:
        play("bytes-kille", "A B C D E", "E", first, late, chips=500)
    assert (caught.value.hand, caught.value.move) == (2, None)


def test_bytes_kille_two_left_buyin_only_when_deaths_bring_the_count_to_two() -> None:
    # Hand 1 (dealer C, förhand A): husar is the one killing card, A's 1 dies and two are
    # left: A is offered the two-left buy-in (2 x 30 = 60) and declines. Hand 2 (dealer
    # A: B C) shows no killing card: nobody dies, the count stays at two, nothing is
    # offered (004: "om det är t ex fyra kvar som spelar och två av dessa blir utslagna").
    first = hand("A=1 B=husar C=6", "A keep, B keep, C keep", after="A decline")
    second = hand("B=5 C=6", "B keep, C keep")
    out = play("bytes-kille", "A B C", "C", first, second)
    assert kinds(out["hands"][0])[-1] == "decline"
    assert out["hands"][1]["died"] == []
    assert "decline" not in kinds(out["hands"][1])
    late = hand("B=5 C=6", "B keep, C keep", after="A buyin")
    with pytest.raises(ReplayError, match="A has no buy-in choice") as caught:
        play("bytes-kille", "A B C", "C", first, late)
    assert (caught.value.hand, caught.value.move) == (2, None)


def test_bytes_kille_two_left_buyin_is_offered_again_when_deaths_bring_two_again() -> None:
    # Hand 1 (dealer D): husar and husu kill the two lowest, C and D; two are left. C
    # buys in for 80 (pot 120), D declines. Hand 2 (dealer A: B C A): husar kills the
    # lowest, B; the count is down to two again, so every starter out of the game is
    # asked again, D too: B declines 240, D buys in for 240 (pot 360).
    first = hand("A=husar B=husu C=2 D=3", "A keep, B keep, C keep, D keep",
                 after="C buyin, D decline")
    second = hand("B=2 C=husar A=6", "B keep, C keep, A keep", after="B decline, D buyin")
    out = play("bytes-kille", "A B C D", "D", first, second, chips=1000)
    assert out["hands"][0]["pot"] == 120
    assert out["hands"][1]["died"] == ["B"]
    assert out["hands"][1]["pot"] == 360
    assert out["hands"][1]["in_game"] == ["A", "C", "D"]


def test_a_buyin_that_cannot_be_paid_is_bad_input() -> None:
    with pytest.raises(ReplayError, match="cannot pay"):
        play("bytes-kille", "A B C D", "D",
             hand("A=husar B=husu C=2 D=3", "A keep, B keep, C keep, D keep", after="C buyin"),
             chips=50)


# ------------------------------------------------------------------ redeals


def test_frage_kille_depends_hands_the_decision_to_the_third() -> None:
    # A asks; the acting dealer C answers first ("det beror på"); B's yes decides.
    out = play("bytes-kille", "A B C", "C",
               hand("A=1 B=2 C=3", "A redeal, C depends, B agree"),
               hand("A=husar B=2 C=3", "A keep, B keep, C keep"))
    first = out["hands"][0]
    assert first["redealt"] is True
    assert first["died"] == []
    assert out["hands"][1]["dealer"] == "C"  # the same dealer deals again
    assert out["hands"][1]["died"] == ["B"]


def test_frage_kille_refusal_then_the_asker_plays_on() -> None:
    out = one(play("bytes-kille", "A B C", "C",
                   hand("A=1 B=2 C=husar", "A redeal, C agree, B refuse, A keep, B keep, C keep")))
    assert "redealt" not in out
    assert out["died"] == ["A"]


def test_frage_kille_dealer_asks_forhand_answers_first() -> None:
    out = one(play("bytes-kille", "A B C", "C",
                   hand("A=1 B=2 C=husar", "A keep, B keep, C redeal, A agree, B agree")))
    assert out["redealt"] is True


def test_only_the_first_frage_kille_voter_may_depend() -> None:
    with pytest.raises(ReplayError, match="first voter") as caught:
        play("bytes-kille", "A B C", "C", hand("A=1 B=2 C=3", "A redeal, C depends, B depends"))
    assert caught.value.move == 3


@pytest.mark.parametrize(("ruleset", "first_voter"),
                         [("bytes-kille", "C"), ("enkortskille", "B")])
def test_one_redeal_request_per_hand(ruleset: str, first_voter: str) -> None:
    # A asks and is refused; then comes an ordinary swap round and the showdown: B may
    # not ask again in this hand (004: "då blir det i stället en sedvanlig bytesrunda och
    # efter den är det 'upp till bevis'"; rulings: one redeal request per hand).
    refused = f"A redeal, {first_voter} refuse, A keep"
    with pytest.raises(ReplayError, match="one redeal request per hand") as caught:
        play(ruleset, "A B C", "C", hand("A=1 B=2 C=3", f"{refused}, B redeal"))
    assert (caught.value.hand, caught.value.move) == (1, 4)
    # The next hand may ask again (nobody died: no killing card was shown).
    out = play(ruleset, "A B C", "C", hand("A=1 B=2 C=3", f"{refused}, B keep, C keep"),
               hand("B=1 C=2 A=3", "B redeal, C agree, A agree" if ruleset == "enkortskille"
                    else "B redeal, A agree, C agree"))
    assert out["hands"][0]["died"] == []
    assert out["hands"][1]["redealt"] is True


def test_enkortskille_redeal_the_two_others_answer_in_turn_order() -> None:
    out = one(play("enkortskille", "A B C", "C",
                   hand("A=1 B=2 C=3", "A keep, B redeal, C agree, A agree")))
    assert out["redealt"] is True
    with pytest.raises(ReplayError, match="out of turn"):
        play("enkortskille", "A B C", "C", hand("A=1 B=2 C=3", "A keep, B redeal, A agree"))


def test_no_redeal_with_four_players() -> None:
    with pytest.raises(ReplayError, match="exactly 3 live players"):
        play("bytes-kille", "A B C D", "D", hand("A=1 B=2 C=3 D=4", "A redeal"))


# ------------------------------------------------------------------ selling, rotation, end


def test_enkortskille_card_sale_and_two_left_sale_ends_the_game() -> None:
    # Hand 1: husar kills the lowest, D. Hand 2 (dealer A): B sells its 9 to D for 30;
    # D plays B's place; husar kills A's 4. Hand 3 (dealer B): C sells to D, the other
    # of the two left, for 10: the game ends and D wins the pot.
    out = play(
        "enkortskille", "A B C D", "D",
        hand("A=5 B=6 C=husar D=1", "A keep, B keep, C keep, D keep"),
        hand("B=9 C=husar A=4", "B sell D 30, D accept, D keep, C keep, A keep"),
        hand("C=5 D=6", "C sell D 10, D accept"),
    )
    second, third = out["hands"][1], out["hands"][2]
    assert second["dealer"] == "A"
    assert second["died"] == ["A"]
    assert second["in_game"] == ["C", "D"]
    assert second["chips"] == {"A": 90, "B": 120, "C": 90, "D": 60}
    assert third["dealer"] == "B"
    assert out["winner"] == "D"
    assert third["pot"] == 0
    assert third["chips"] == {"A": 90, "B": 120, "C": 100, "D": 50 + 40}


def test_enkortskille_a_seller_may_never_buy_back() -> None:
    # Hand 1 (dealer D): husar kills the lowest, B. Hand 2 (dealer A: C D A): C sells its 9
    # to B for 25; A's kuku kills the lowest, D's 2. C sold, so it may never buy back
    # (rulings: "a seller may never buy back in"); D, who died, may, for 20.
    first = hand("A=5 B=blaren C=7 D=husar", "A keep, B keep, C keep, D keep")
    moves = "C sell B 25, B accept, B keep, D keep, A keep"
    with pytest.raises(ReplayError, match="C has no buy-in choice") as caught:
        play("enkortskille", "A B C D", "D", first, hand("A=kuku C=9 D=2", moves,
                                                          after="C buyin"))
    assert (caught.value.hand, caught.value.move) == (2, None)
    second = hand("A=kuku C=9 D=2", moves, after="D buyin")
    out = play("enkortskille", "A B C D", "D", first, second)
    assert out["hands"][1]["in_game"] == ["A", "B", "D"]
    assert out["hands"][1]["chips"] == {"A": 90, "B": 65, "C": 115, "D": 70}
    assert [e["seat"] for e in out["hands"][1]["events"] if e["type"] == "decline"] == []
    # Like any player out of the game it may still be offered a card (E: "sälja sitt kort
    # till någon utslagen"): hand 3 (dealer B: D A B), D sells its 4 to C for 10.
    third = hand("D=4 A=5 B=6", "D sell C 10, C accept, C keep, A keep, B keep")
    out = play("enkortskille", "A B C D", "D", first, second, third)
    assert out["hands"][2]["in_game"] == ["A", "B", "C"]
    assert out["hands"][2]["chips"] == {"A": 90, "B": 65, "C": 105, "D": 80}


def test_wikipedia_dealer_seat_of_an_eliminated_forhand_still_deals() -> None:
    out = play("wikipedia", "A B C D", "D",
               hand("A=1 B=5 C=6 D=7", "A keep, B keep, C keep, D keep"),
               hand("B=1 C=6 D=7", "B keep, C keep, D keep"))
    assert [h["dealer"] for h in out["hands"]] == ["D", "A"]
    assert out["hands"][1]["died"] == ["B"]


def test_hand_after_the_game_has_ended() -> None:
    with pytest.raises(ReplayError, match="after the game has ended") as caught:
        play("wikipedia", "A B C", "C", hand("A=5 B=husu C=9", "A swap, B keep, C keep"),
             hand("B=1", ""))
    assert (caught.value.hand, caught.value.move) == (2, None)
