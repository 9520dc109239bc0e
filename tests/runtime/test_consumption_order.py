"""Envelopes the honest nodes consume at different points of their own course judged
alike (docs/protocol.md II.6, II.7): a bad checkpoint signature, a second envelope of a
stage, and an answer taken before the test of the claim before it. Each must end with
every honest node in the same hand, with the same faults."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.sim.network import StopReason
from p2pkille.sim.table import build_table
from protocol import canonical
from protocol.envelope import Envelope
from protocol.identity import PublicKey
from tests.runtime.bots import Restless
from tests.runtime.helpers import misbehave

Mutate = Callable[[dict[str, object]], dict[str, object]]


class OnceInHand1(Behaviour):
    """Alters its first ``kind`` envelope of hand 1 with ``mutate`` or, with ``twice``,
    sends it and then the altered one as its next envelope."""

    def __init__(self, kind: str, mutate: Mutate, twice: bool) -> None:
        self.kind = kind
        self.mutate = mutate
        self.twice = twice
        self.done = False
        self.repeat: Body | None = None

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind != self.kind or body.get("hand") != 1 or self.done:
            return [body]
        self.done = True
        if self.twice:
            self.repeat = self.mutate(dict(body))
            return [body]
        return [self.mutate(dict(body))]

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        if self.repeat is None:
            return []
        repeat, self.repeat = self.repeat, None
        return [(self.kind, repeat)]


Seen = tuple[bool, list[str], list[tuple[object, object, object]], set[tuple[str, int | None]]]


def _first_hand(kind: str, mutate: Mutate, *, twice: bool = False, seed: int = 3
                ) -> list[Seen]:
    """Per honest node: hand 1 voided?, eliminated, accusations, its faults of hand 1."""
    table = build_table(3, seed=seed, chips=4, timing=Timing(limit=5.0, decide_limit=5.0))
    bad = OnceInHand1(kind, mutate, twice)
    misbehave(table, 1, bad)  # "P2"
    run = table.run(until=400.0, max_hands=2)
    assert bad.done, "it sent the bad envelope"
    assert bad.repeat is None, "and its repeat"
    assert run.stop is StopReason.STOPPED
    assert run.honest_agree
    firsts = []
    for node in run.honest:
        first = node.outcomes[0]
        assert first.hand == 1
        firsts.append((first.voided, first.eliminated,
                       [(a["accused"], a["kind"], a["verdict"]) for a in first.accusations],
                       {(f.kind.value, f.seat) for f in node.faults if f.hand == 1}))
    return firsts


def _garbage(body: dict[str, object]) -> dict[str, object]:
    return {**body, "sig": "xx"}


def _wrong(body: dict[str, object]) -> dict[str, object]:
    return {**body, "sig": canonical.b64encode(b"\x01" * 64)}


@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("mutate", [_garbage, _wrong], ids=["garbage", "wrong"])
def test_a_bad_checkpoint_signature_voids_the_hand_and_blames_its_author(
        mutate: Mutate, seed: int) -> None:
    # It counts as a missing signature: its time-out is agreed (no accuse stops the hand
    # on it, which would disclose the hand's forwards though a good one may still come).
    for voided, eliminated, accusations, faults in _first_hand("checkpoint", mutate,
                                                               seed=seed):
        assert voided
        assert eliminated == ["P2"]
        assert accusations == [("P2", "timeout", "agreed")]
        assert ("checkpoint", 1) in faults


def _same(body: dict[str, object]) -> dict[str, object]:
    return body


@pytest.mark.parametrize("kind", ["key", "shuffle", "deal", "reveal"])
def test_a_second_envelope_of_a_stage_is_an_illegal_act_of_its_author(kind: str) -> None:
    for voided, eliminated, accusations, faults in _first_hand(kind, _same, twice=True):
        assert ("illegal-act", 1) in faults
        assert voided
        assert eliminated == ["P2"]
        assert accusations
        assert {(a, k) for a, k, _ in accusations} == {("P2", "illegal-act")}
        assert all(v == "proven" for _, _, v in accusations)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_second_checkpoint_is_an_illegal_act_however_late_it_is_consumed(seed: int) -> None:
    # Signed by everyone first, the hand commits at every node; the repeat is an
    # illegal act of hand 1 whether a node consumed it before or after committing.
    for voided, eliminated, _, faults in _first_hand("checkpoint", _same, twice=True,
                                                     seed=seed):
        assert not voided
        assert not eliminated
        assert faults == {("illegal-act", 1)}


def test_an_answer_after_a_claim_under_test_waits_for_the_test() -> None:
    # Strict table, hand 2: a target answered "none" (a claim under test), forwarded a
    # card, and answered the next request, with nothing else between in its chain. A
    # node that takes that next answer before the test's parts (as one replaying its log
    # after a crash may) must not read it as a second answer to the first request (the
    # phase has not moved on) and blame an honest seat: it waits for the test. Here each
    # node's log is replayed into a fresh node, the other holders' test parts of hand 2
    # last.
    table = build_table(5, seed=12, chips=3, ruleset="enkortskille", mode="strict",
                        deciders=lambda _i: Restless())
    table.run(max_hands=2)
    probe = table.nodes[0]
    def first_answers(m: PublicKey) -> list[int]:
        return [e.seq for e in probe.transcript.chain(m)
                if e.kind == msg.ANSWER and e.body.get("hand") == 2][:2]

    target = next(m for m in probe.members
                  if len(seqs := first_answers(m)) == 2 and seqs[1] == seqs[0] + 2)
    first = first_answers(target)[0]
    assert [e.kind for e in probe.transcript.chain(target)[first - 1:first + 2]] == [
        msg.ANSWER, msg.FORWARD, msg.ANSWER]
    for old in table.nodes:
        def late(env: Envelope, old: TableNode = old) -> bool:
            return (env.kind == msg.PET and env.body.get("hand") == 2
                    and env.author not in (target, old.identity.public))

        accepted = old.transcript.accepted
        fresh = TableNode(old.name, old.identity, old.delivery, old.config, Restless(),
                          old.seed, old.timing)
        fresh.replay([e.wire for e in accepted if not late(e)])
        fresh.start(0.0)
        for env in accepted:
            if late(env):
                fresh.receive("peer", env.wire, 0.0)
        assert fresh.faults == []
        assert [o.to_json() for o in fresh.outcomes] == [o.to_json() for o in old.outcomes]
