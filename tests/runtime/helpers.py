"""Shared helpers: run a simulated table and replay its hands in the referee."""

from __future__ import annotations

from p2pkille.engine.facts import Deal, Fact
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.referee import oracle_fact
from p2pkille.runtime.behaviour import Behaviour
from p2pkille.runtime.node import TableNode
from p2pkille.sim.table import SimTable
from protocol import canonical

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
