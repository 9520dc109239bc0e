"""Crafted peer input that must neither crash nor stall the honest nodes: accuses that
name a seat that does not exist or an audit before any reveal, and delivery keys of low
order."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.config import Member
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.network import StopReason
from p2pkille.sim.table import build_table
from protocol import canonical
from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair, check_delivery_key
from tests.runtime.helpers import misbehave, own_envelopes

Made = Callable[[TableNode], Body]
# A point of order 8 on Curve25519 (its x-coordinate), as listed with the other
# low-order points in the X25519 literature.
_ORDER_8 = "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"


class Injecting(Behaviour):
    """Sends ``made(node)`` as its accuse as soon as hand 1 is in play."""

    def __init__(self, made: Made) -> None:
        self.made = made
        self.sent = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if self.sent or node.stage != Stage.PLAY or status is None or status.number != 1:
            return []
        self.sent = True
        return [(msg.ACCUSE, self.made(node))]


def _run_with(made: Made) -> tuple[StopReason, bool, list[dict[str, object]]]:
    table = build_table(3, seed=3, chips=4, timing=Timing(limit=5.0, decide_limit=5.0))
    node = misbehave(table, 1, Injecting(made))
    run = table.run(until=400.0, max_hands=2)
    assert [e.body for e in own_envelopes(node, msg.ACCUSE, 1)] == [made(node)], (
        "the crafted accuse went out")
    first = run.honest[0].outcomes[0]
    return run.stop, run.honest_agree, list(first.accusations)


def test_an_accusation_of_a_seat_that_does_not_exist_blames_the_accuser() -> None:
    def made(node: TableNode) -> Body:
        return {"hand": 1, "disclosed": [], "accusations": [{
            "accused": 63, "kind": "audit", "reason": "r",
            "evidence": canonical.b64encode(b"x" * 10)}]}

    stop, agree, accusations = _run_with(made)
    assert stop is StopReason.STOPPED
    assert agree
    assert {a["accused"] for a in accusations} == {"P2"}
    # Each honest seat proves it; its own accuse, malformed, counts for nothing, so it
    # is timed out in the void round as well.
    assert {(a["by"], a["kind"], a["verdict"]) for a in accusations} == {
        ("P1", "illegal-act", "proven"), ("P3", "illegal-act", "proven"),
        (None, "timeout", "agreed")}


def test_an_audit_accusation_made_before_revealing_is_false_and_does_not_stall() -> None:
    def made(node: TableNode) -> Body:
        own = node.transcript.chain(node.identity.public)[0]
        return {"hand": 1, "disclosed": [], "accusations": [{
            "accused": node.my_seat, "kind": "audit", "reason": "r",
            "evidence": canonical.b64encode(own.wire)}]}

    stop, agree, accusations = _run_with(made)
    assert stop is StopReason.STOPPED  # nobody waits for an audit that never comes
    assert agree
    assert [(a["accused"], a["by"], a["verdict"]) for a in accusations] == [
        ("P2", "P2", "false")]


@pytest.mark.parametrize("key", [bytes(32), bytes([1]) + bytes(31), bytes.fromhex(_ORDER_8)])
def test_a_low_order_delivery_key_is_refused_where_it_is_announced(key: bytes) -> None:
    with pytest.raises(InvalidEncoding):
        check_delivery_key(key)
    identity = Identity.from_seed(bytes(32))
    with pytest.raises(RemoteProtocolError):
        Member(identity.public, key)


def test_a_real_delivery_key_is_accepted() -> None:
    pair = DeliveryKeyPair.from_private(bytes(range(32)))
    assert check_delivery_key(pair.public) == pair.public
    assert Member(Identity.from_seed(bytes(32)).public, pair.public).delivery == pair.public
