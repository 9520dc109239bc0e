"""The silent-set rule of II.11.3 as a pure function, against a brute-force reading.

A holder is timed out when some set S holding it has, for every member, a step that every
holder outside S voted out, and the holders outside S are a strict majority (or S is the
holder alone and every other voted). The search in the node prunes by size; here every
subset is tried. The search lives in ``p2pkille.runtime.timeouts`` (``set_bound``,
``silent_set``, and ``Timeouts.silent`` that feeds it a hand's votes)."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pkille.runtime.timeouts import set_bound, silent_set

Outs = dict[int, set[frozenset[int]]]


def _reference(holders: int, outs: Outs) -> set[int]:
    """Every member of every qualifying set, by trying every subset."""
    found: set[int] = set()
    for size in range(1, holders):
        if size > 1 and 2 * (holders - size) <= holders:
            break
        for members in map(frozenset, combinations(range(holders), size)):
            if all(any(out <= members for out in outs.get(seat, ())) for seat in members):
                found |= members
    return found


def _union(holders: int, outs: Outs) -> set[int]:
    found: set[int] = set()
    for seat in sorted(outs):
        if seat not in found:
            members = silent_set(seat, outs, set_bound(holders))
            if members is not None:
                found |= members
    return found


@st.composite
def _votes(draw: st.DrawFn) -> tuple[int, Outs]:
    holders = draw(st.integers(2, 8))
    outs: Outs = {}
    for seat in range(holders):
        for _ in range(draw(st.integers(0, 3))):
            # The holders that did not vote this step of `seat` out: `seat` and some others.
            others = draw(st.sets(st.sampled_from(range(holders)), max_size=holders))
            outs.setdefault(seat, set()).add(frozenset(others | {seat}))
    return holders, outs


@settings(max_examples=400, deadline=None)
@given(_votes())
def test_the_search_finds_exactly_the_qualifying_sets(case: tuple[int, Outs]) -> None:
    holders, outs = case
    assert _union(holders, outs) == _reference(holders, outs)


@settings(max_examples=200, deadline=None)
@given(_votes(), st.data())
def test_more_votes_never_take_a_time_out_back(case: tuple[int, Outs], data: st.DataObject
                                               ) -> None:
    # Monotone: a node that learns more votes only adds to the set, so nodes that learn
    # the same votes in any order end with the same time-outs.
    holders, outs = case
    before = _union(holders, outs)
    more = {seat: {frozenset(out - data.draw(st.sets(st.sampled_from(sorted(out - {seat})))))
                   if out - {seat} else out for out in steps} for seat, steps in outs.items()}
    assert before <= _union(holders, more)


def test_two_silent_of_five_are_agreed_and_one_impatient_holder_agrees_nothing() -> None:
    # 0 and 1 silent: 2, 3 and 4 voted a step of each.
    assert _union(5, {0: {frozenset({0, 1})}, 1: {frozenset({0, 1})}}) == {0, 1}
    # 0 impatient: it voted every other holder out; nobody else voted.
    impatient = {seat: {frozenset(set(range(1, 5)) - {seat} | {seat})} for seat in range(1, 5)}
    assert _union(5, impatient) == set()
    # Two of four: outside them is no majority, so a partition in halves agrees nothing.
    assert _union(4, {0: {frozenset({0, 1})}, 1: {frozenset({0, 1})}}) == set()
    # One holder and every other voted: the old rule, also with two holders.
    assert _union(2, {1: {frozenset({1})}}) == {1}


def test_a_peers_wait_for_answers_outlasts_every_limit_it_was_given() -> None:
    # A holder whose own limits are long must not be voted out for answering a vote late.
    from p2pkille.net.lobby import Offer
    from p2pkille.net.peer import PeerSettings
    from p2pkille.runtime.node import Timing

    offer = Offer("t", 3)
    assert PeerSettings(offer=offer).timing.answer_limit == Timing().answer_limit
    slow = PeerSettings(offer=offer, limit=90.0, decide_limit=300.0).timing
    assert slow.answer_limit == 600.0 > slow.decide_limit > slow.limit


def test_the_vote_that_completes_a_holders_own_time_out_keeps_it_in_every_set() -> None:
    # A's key step voted by 0, 3 and 4; Z's respond step for it voted by the same three.
    # Z's own late vote on A's step (a member without a key holds nothing back) may come
    # before or after the last respond vote: A alone is then timed out by the rule for one
    # seat, and the set {A, Z} must still be found, in every order the votes arrive in (a
    # member that missed it would stall in a hand the holders voided without A and Z).
    from itertools import permutations

    from p2pkille.engine.machine import GameSnapshot
    from p2pkille.runtime.core import Core
    from p2pkille.runtime.records import Hand
    from p2pkille.runtime.steps import Stage, Step
    from p2pkille.sim.table import build_table
    from protocol.keys import HandContext

    node = build_table(5, seed=1, chips=3).nodes[0]
    # A machine of its own for the node's member: its time-out part judges the hands below.
    timeouts = Core(node, node.identity, node.delivery, node.config, node.decider, node.seed,
                    node.timing).timeouts
    a, z = 1, 2
    step = Step(a, Stage.KEYS, 0)
    respond = step.respond(z)
    votes = [(step, 0), (step, 3), (step, 4), (respond, 0), (respond, 3), (respond, 4),
             (step, z)]
    outcomes = set()
    for order in permutations(range(len(votes))):
        hand = Hand(1, HandContext(node.config.table_id, 1), (0, 1, 2, 3, 4), None,
                    GameSnapshot({}))  # the game before the deal: not read here
        for k in order:
            vote, voter = votes[k]
            hand.timeouts.votes.setdefault(vote, set()).add(voter)
            timeouts.settle(hand)
        # What the votes agree silent: the void a holder endorses (II.11.5).
        outcomes.add(timeouts.silent(hand))
    assert outcomes == {frozenset({a, z})}
