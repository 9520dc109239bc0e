"""Strict tables (issue 7, docs/protocol.md II.13): every shuffle step is proved and
checked before the next, every plain answer and every "no kille" is proved at once,
and no per-hand key is ever revealed. The same seed and decisions reach the same
results as an audit table."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.node import TableNode
from p2pkille.sim.faults import Faults
from p2pkille.sim.table import SimTable, TableRun, build_table
from protocol.envelope import decode
from tests.runtime.bots import Restless
from tests.runtime.helpers import flipped, misbehave

CHEATER = 1  # seat P2


def _results(node: TableNode) -> list[tuple[int, list[str], int, dict[str, int], bool]]:
    return [(o.hand, o.died, o.pot, o.chips, o.voided) for o in node.outcomes]


@pytest.mark.parametrize(("ruleset", "peers"), [
    ("wikipedia", 4), ("bytes-kille", 3), ("enkortskille", 5)])
def test_strict_and_audit_tables_reach_the_same_results(ruleset: str, peers: int) -> None:
    audit = build_table(peers, seed=7, ruleset=ruleset, deciders=lambda _i: Restless())
    strict = build_table(peers, seed=7, ruleset=ruleset, mode="strict",
                         deciders=lambda _i: Restless())
    a, s = audit.run(max_hands=2), strict.run(max_hands=2)
    assert a.honest_agree
    assert s.honest_agree
    assert _results(s.nodes[0])[:2] == _results(a.nodes[0])[:2]
    for node in s.nodes:
        assert node.faults == []
        assert all(o.faces == () for o in node.outcomes), "nothing was opened for an audit"
    # The checkpoint differs (other envelopes) but binds the same game state.
    assert [o.checkpoint for o in s.nodes[0].outcomes[:2]] != [
        o.checkpoint for o in a.nodes[0].outcomes[:2]]


def _hand_envelopes(run: TableRun, hand: int) -> list[tuple[str, str]]:
    node = run.honest[0]
    return [(node.names[node.seat_of[m]], e.kind) for m, member in enumerate(node.members)
            for e in node.transcript.chain(member) if e.body.get("hand") == hand]


def _strict(behaviour: str, *, seed: int = 5, hands: int | None = None) -> TableRun:
    table = build_table(4, seed=seed, chips=4, mode="strict",
                        byzantine={CHEATER: behaviour}, deciders=lambda _i: Restless())
    return table.run(until=900.0, max_hands=hands)


def test_a_bad_shuffle_is_refused_before_the_deal() -> None:
    run = _strict("bad-shuffle", hands=2)
    assert run.honest_agree
    (index,) = run.byzantine
    cheater = run.nodes[index]
    for node in run.honest:
        first = node.outcomes[0]
        assert first.voided
        assert first.eliminated == ["P2"]
        fault = next(f for f in node.faults if f.seat == CHEATER)
        assert fault.kind is FaultKind.BAD_PROOF
        env = decode(fault.evidence, table=node.config.table_id, members=node.members,
                     kinds=None)
        assert (env.author, env.kind) == (cheater.identity.public, msg.SHUFFLE)
    kinds = {k for _, k in _hand_envelopes(run, 1)}
    # Stopped before any card was dealt: no deal, no open, no key revealed.
    assert kinds.isdisjoint({msg.DEAL, msg.FORWARD, msg.DRAW, msg.SHOW, msg.REVEAL})


def test_a_false_answer_is_caught_at_the_answer() -> None:
    for seed in range(1, 40):
        run = _strict("false-answer", seed=seed, hands=3)
        honest = run.honest
        if not any(o.voided for o in honest[0].outcomes):
            continue
        assert run.honest_agree
        voided = next(o for o in honest[0].outcomes if o.voided)
        assert voided.eliminated == ["P2"]
        assert [(a["accused"], a["kind"], a["verdict"]) for a in voided.accusations
                if a["accused"] == "P2"][:1] == [("P2", "false-fact", "proven")]
        for node in honest:
            # Every honest node ran the test itself: nobody had to trust the requester.
            assert any(f.kind is FaultKind.FALSE_FACT and f.seat == CHEATER
                       for f in node.faults)
        sent = _hand_envelopes(run, voided.hand)
        assert (("P2", msg.ANSWER) in sent)
        assert all(k != msg.REVEAL for _, k in sent)
        # The liar never got the requester's card: no forward went to it.
        for node in honest:
            for e in node.transcript.chain(node.identity.public):
                if e.kind == msg.FORWARD and e.body.get("hand") == voided.hand:
                    assert e.body.get("to") != CHEATER
        return
    pytest.fail("no seed let the liar answer falsely")


def test_sim_cli_runs_a_strict_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--peers", "3", "--hands", "1", "--mode", "strict", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["honest_agree"] is True
    assert len(doc["hands"]) == 1
    assert main(["sim", "--peers", "3", "--mode", "loose"]) == 2
    assert "--mode" in capsys.readouterr().err


def test_a_part_for_the_next_claim_waits_while_one_claim_is_under_test() -> None:
    # Under drops and reordering a node still testing one claim can receive a part for
    # the next one (the others moved on): it waits for that claim, where taking the part
    # as an illegal act would split the table.
    table = build_table(5, seed=106, chips=4, mode="strict", byzantine={4: "bad-shuffle"},
                        faults=Faults.parse("drop=0.1,dup=0.05,reorder=0.1,delay=50ms"),
                        deciders=lambda _i: Restless())
    run = table.run(until=3000.0, max_hands=4)
    assert run.honest_agree
    assert all(f.kind is not FaultKind.ILLEGAL_ACT or f.seat == 4 for n in run.honest
               for f in n.faults)


class BadPart(Behaviour):
    """Gives its part of every test with a broken proof (the value is right)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.PET:  # byte 40: the proof's challenge no longer fits
            body = {**body, "share": flipped(body["share"], 40)}
        return [body]


def _bad_part_table(peers: int, seed: int) -> tuple[SimTable, TableNode]:
    table = build_table(peers, seed=seed, chips=4, mode="strict",
                        deciders=lambda _i: Restless())
    return table, misbehave(table, CHEATER, BadPart)


def test_a_bad_test_part_is_blamed_on_its_giver_by_every_honest_node() -> None:
    for seed in range(1, 30):
        table, cheater = _bad_part_table(4, seed)
        run = table.run(until=900.0, max_hands=2)
        voided = [o for o in run.honest[0].outcomes if o.voided]
        if not voided:
            continue  # no test in these hands needed the cheater's part
        assert run.honest_agree
        assert cheater.my_seat is not None
        assert voided[0].eliminated == [cheater.names[cheater.my_seat]]
        for node in run.honest:
            fault = next(f for f in node.faults if f.seat == cheater.my_seat)
            assert fault.kind is FaultKind.BAD_PROOF
            env = decode(fault.evidence, table=node.config.table_id, members=node.members,
                         kinds=None)
            assert env.kind == msg.PET
            assert env.author == cheater.identity.public
        return
    pytest.fail("no seed had a test the cheater gave a part of")


class NoPart(Behaviour):
    """Never gives its part of a test (a withheld step: it is timed out)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        return [] if kind == msg.PET else [body]


def test_a_bad_test_part_is_blamed_even_when_the_test_never_ends() -> None:
    # Parts are checked together once all are in; when another holder withholds its
    # part the test never ends, and the parts taken are checked as the hand stops: the
    # bad one's giver is accused and eliminated with the withholder.
    for seed in range(1, 40):
        table, cheater = _bad_part_table(5, seed)
        misbehave(table, 3, NoPart)
        run = table.run(until=3000.0, max_hands=1)
        assert run.honest_agree
        first = run.honest[0].outcomes[0]
        assert first.voided
        node = run.honest[0]
        gave = [e for e in node.transcript.chain(cheater.identity.public)
                if e.kind == msg.PET and e.body.get("hand") == 1]
        if not gave:
            continue  # the stalled test was the cheater's own claim
        assert cheater.my_seat is not None
        assert cheater.names[cheater.my_seat] in first.eliminated
        for honest in run.honest:
            fault = next(f for f in honest.faults if f.seat == cheater.my_seat)
            assert fault.kind is FaultKind.BAD_PROOF
            assert fault.evidence == gave[0].wire
        return
    pytest.fail("no seed had the cheater give a part of the test that never ended")


def test_a_withheld_test_part_times_out_only_its_withholder() -> None:
    # The parts taken wait to be checked together; their givers have answered and are
    # not waited for: only the withholder is timed out.
    voided = 0
    for seed in range(1, 7):
        table = build_table(5, seed=seed, chips=4, mode="strict",
                            deciders=lambda _i: Restless())
        withholder = misbehave(table, 3, NoPart)
        run = table.run(until=3000.0, max_hands=1)
        assert run.honest_agree
        first = run.honest[0].outcomes[0]
        if first.voided:
            voided += 1
            assert withholder.my_seat is not None
            assert first.eliminated == [withholder.names[withholder.my_seat]]
    assert voided >= 3


class BadThenGoodPart(Behaviour):
    """Gives a bad part of every test and, as its next envelope, the good one."""

    def __init__(self) -> None:
        self.good: list[Body] = []
        self.giving = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != msg.PET or self.giving:
            return [body]
        self.good.append(body)
        return [{**body, "share": flipped(body["share"], 40)}]

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        good, self.good = self.good, []
        self.giving = bool(good)  # until its next move: they go out as they are
        return [(msg.PET, body) for body in good]


@pytest.mark.parametrize("seed", [2, 7, 8])
def test_a_second_part_after_a_bad_one_is_judged_alike_in_any_order(seed: int) -> None:
    # The pending parts are checked before a second part from the same seat is judged:
    # a node that checked the bad part before the second came and one that still held it
    # unchecked accuse alike, whatever order the parts arrive in.
    table = build_table(5, seed=seed, chips=4, mode="strict", deciders=lambda _i: Restless(),
                        faults=Faults(delay=0.05, jitter=0.3))
    cheater = misbehave(table, CHEATER, BadThenGoodPart)
    run = table.run(until=3000.0, max_hands=1)
    parts = [e.body["at"] for e in cheater.transcript.chain(cheater.identity.public)
             if e.kind == msg.PET]
    assert parts[:2] == [parts[0]] * 2, "a bad part and a good one for one test"
    assert run.honest_agree
    assert cheater.my_seat is not None
    for node in run.honest:
        assert node.outcomes[0].eliminated == [cheater.names[cheater.my_seat]]
        fault = next(f for f in node.faults if f.seat == cheater.my_seat)
        assert fault.kind is FaultKind.BAD_PROOF


def _keyless_claims(node: TableNode) -> list[tuple[int, str]]:
    """(hand, author) of every "no kille" proved without a key (a buyer's: no D_p, no s_x)."""
    from protocol import canonical
    from protocol.pet import PetClaim

    return [(canonical.get_int(e.body, "hand", lo=0, hi=canonical.MAX_INT, what="disclose"),
             node.names[node.seat_of[m]])
            for m, member in enumerate(node.members) for e in node.transcript.chain(member)
            if e.kind == msg.DISCLOSE and "pet" in e.body
            and len(canonical.get_bytes(e.body, "pet", what="disclose"))
            == PetClaim.size(2, keyless=True)]


def test_a_buyer_proves_its_no_kille_without_a_key() -> None:
    # A buyer holds no key of the hand (the seller stays the key holder): its claim is
    # keyless, checked without a key share, and every key holder answers it.
    strict = build_table(4, seed=2, chips=3, ruleset="enkortskille", mode="strict",
                         deciders=lambda _i: Restless()).run(until=3000.0)
    audit = build_table(4, seed=2, chips=3, ruleset="enkortskille",
                        deciders=lambda _i: Restless()).run(until=3000.0)
    assert _keyless_claims(strict.nodes[0]) == [(2, "P2")]
    assert strict.honest_agree
    assert strict.document()["winner"] is not None
    assert all(node.faults == [] for node in strict.nodes)
    assert _results(strict.nodes[0]) == _results(audit.nodes[0])
