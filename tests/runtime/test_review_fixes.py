"""Regressions for crafted peer input found in review: each once crashed or stalled
every honest node."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2pkille.runtime import messages as msg
from p2pkille.runtime.config import Member
from p2pkille.runtime.io import Output
from p2pkille.runtime.node import Stage, TableNode, Timing
from p2pkille.sim.network import StopReason
from p2pkille.sim.table import build_table
from protocol import canonical
from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair, check_delivery_key

Body = Callable[[TableNode], dict[str, object]]
# A point of order 8 on Curve25519 (its x-coordinate), as listed with the other
# low-order points in the X25519 literature.
_ORDER_8 = "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"


def _injecting(body: Body) -> type[TableNode]:
    class Injecting(TableNode):
        """Sends one extra accuse envelope as soon as hand 1 is in play."""

        def _act(self, out: list[Output]) -> bool:
            if (self.stage == Stage.PLAY and self.hand is not None and self.hand.number == 1
                    and self._once("inject")):
                self._emit(out, msg.ACCUSE, body(self))
                return True
            return super()._act(out)

    return Injecting


def _run_with(body: Body) -> tuple[StopReason, bool, list[dict[str, object]]]:
    table = build_table(3, seed=3, chips=4, timing=Timing(limit=5.0, decide_limit=5.0))
    index = table.seats()[1]
    table.nodes[index].__class__ = _injecting(body)
    table.byzantine = frozenset({index})
    run = table.run(until=400.0, max_hands=2)
    first = run.honest[0].outcomes[0]
    return run.stop, run.honest_agree, list(first.accusations)


def test_an_accusation_of_a_seat_that_does_not_exist_blames_the_accuser() -> None:
    def body(node: TableNode) -> dict[str, object]:
        return {"hand": 1, "disclosed": [], "accusations": [{
            "accused": 63, "kind": "audit", "reason": "r",
            "evidence": canonical.b64encode(b"x" * 10)}]}

    stop, agree, accusations = _run_with(body)
    assert stop is StopReason.STOPPED
    assert agree
    assert accusations
    assert {a["accused"] for a in accusations} == {"P2"}
    assert all(a["verdict"] == "proven" for a in accusations)


def test_an_audit_accusation_made_before_revealing_is_false_and_does_not_stall() -> None:
    def body(node: TableNode) -> dict[str, object]:
        own = node.transcript.chain(node.identity.public)[0]
        return {"hand": 1, "disclosed": [], "accusations": [{
            "accused": node.my_seat, "kind": "audit", "reason": "r",
            "evidence": canonical.b64encode(own.wire)}]}

    stop, agree, accusations = _run_with(body)
    assert stop is StopReason.STOPPED  # it used to wait for an audit that never came
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
