"""Shared helpers: run a simulated table, replay its hands in the referee, and the
misbehaving seats more than one test file uses."""

from __future__ import annotations

from p2pkille.engine.facts import Deal, Fact
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.referee import oracle_fact
from p2pkille.runtime import gapfill
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim.table import SimTable
from protocol import canonical
from protocol.envelope import Envelope, decode
from protocol.errors import RemoteProtocolError

ORACLE = {Phase.ANSWER, Phase.DISCLOSE, Phase.STOCK, Phase.SHOWDOWN}


def referee_replay(node: TableNode) -> list[tuple[int, list[str], int, dict[str, int]]]:
    """Replay every committed hand from the audited faces and the decisions alone:
    the oracle produces answers, disclosures, stock cards and the showdown."""
    names = node.names
    game = Game(node.config.options, names, stake=node.config.stake,
                chips=node.config.chips, dealer=node.first_dealer)
    out = []
    for outcome in node.outcomes:
        decisions: list[Fact] = [f for f in outcome.facts
                                 if type(f).__name__ not in ("Deal", "Answer", "Disclosure",
                                                             "StockCard", "Showdown")]
        assert outcome.faces, "an honest hand has audited faces"
        faces = list(outcome.faces)
        game.apply(Deal())
        it = iter(decisions)
        while game.phase not in (Phase.DEAL, Phase.OVER):
            if game.phase in ORACLE:
                game.apply(oracle_fact(game, faces))
            else:
                game.apply(next(it))
        assert next(it, None) is None, "every decision was used"
        assert game.result is not None
        died = [names[s] for s in sorted(set(game.result.died))]
        out.append((game.hand_no, died, game.pot, dict(zip(names, game.chips, strict=True))))
    return out


def node_results(node: TableNode) -> list[tuple[int, list[str], int, dict[str, int]]]:
    return [(o.hand, o.died, o.pot, o.chips) for o in node.outcomes]


def misbehave(table: SimTable, seat: int, behaviour: Behaviour | type[Behaviour]
              ) -> TableNode:
    """Give the node at ``seat`` (0-based, ``P1``..) ``behaviour`` (what it sends instead
    of the honest course) and count it as misbehaving, so ``honest`` leaves it out."""
    index = table.seats()[seat]
    node = table.nodes[index]
    node.behaviour = behaviour() if isinstance(behaviour, type) else behaviour
    table.byzantine = table.byzantine | {index}
    return node


def flipped(text: object, byte: int) -> str:
    """Base64url ``text`` with the low bit of byte ``byte`` flipped (a broken proof or box)."""
    raw = bytearray(canonical.b64decode(str(text)))
    raw[byte] ^= 1
    return canonical.b64encode(bytes(raw))


def envelope_in(node: TableNode, data: bytes) -> Envelope | None:
    """The envelope ``data`` carries (as ``node`` reads it); None for a sync or junk."""
    if data.startswith(gapfill.PREFIX):
        return None
    try:
        return decode(data, table=node.config.table_id, members=node.members, kinds=None)
    except RemoteProtocolError:
        return None


def own_envelopes(node: TableNode, kind: str, hand: int | None = None) -> list[Envelope]:
    """``node``'s own envelopes of ``kind`` in its chain (of ``hand`` only, if given)."""
    return [e for e in node.transcript.chain(node.identity.public)
            if e.kind == kind and (hand is None or e.body.get("hand") == hand)]


class StopsForNothing(Behaviour):
    """Stops hand 1 once play starts, with an accuse that accuses nobody (and discloses
    the boxes it sealed, as every accuse does)."""

    def __init__(self) -> None:
        self.stopped = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.stopped or status is None or status.number != 1 or status.me is None
                or node.stage != Stage.PLAY or status.voiding):
            return []
        self.stopped = True
        return [(msg.ACCUSE, {"accusations": [], "disclosed": node.disclosures(), "hand": 1})]


#: The two colluders' seats of :class:`Silent` and :class:`Trigger` (P2 and P3).
C_SEAT, D_SEAT = 1, 2


class Silent(Behaviour):
    """Colluder C: never signs hand 1's checkpoint, never accuses in it, never votes D
    out."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if body.get("hand") == 1 and (kind in (msg.CHECKPOINT, msg.ACCUSE) or (
                kind == msg.TIMEOUT and body.get("seat") == D_SEAT)):
            return []
        return [body]


class Trigger(Behaviour):
    """Colluder D: once every honest holder signed hand 1, stops it with an accuse that
    accuses nobody; never signs, never votes C out."""

    def __init__(self) -> None:
        self.stopped = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if body.get("hand") == 1 and (kind == msg.CHECKPOINT or (
                kind == msg.TIMEOUT and body.get("seat") == C_SEAT)):
            return []
        return [body]

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.stopped or status is None or status.number != 1
                or node.stage != Stage.CHECKPOINT or status.voiding):
            return []
        honest = {k for k, s in enumerate(status.holders) if s not in (C_SEAT, D_SEAT)}
        if not honest <= status.signed:
            return []
        self.stopped = True
        return [(msg.ACCUSE, {"accusations": [], "disclosed": node.disclosures(), "hand": 1})]
