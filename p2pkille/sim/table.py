"""A table of N bot peers on a :class:`SimNetwork`: build, run, collect results.

Everything is derived from one integer seed: identities, delivery keys, node
secrets, the table id and the network's faults. The same seed gives the same game.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from p2pkille.bots.threshold import ThresholdBot
from p2pkille.engine.view import Decider
from p2pkille.runtime.config import Member, TableConfig
from p2pkille.runtime.node import HandOutcome, TableNode, Timing
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork, StopReason
from protocol.domain import hash32
from protocol.group import counters
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

__all__ = ["SimTable", "TableRun", "build_table"]

DeciderFactory = Callable[[int], Decider]


@dataclass(slots=True)
class TableRun:
    """What :meth:`SimTable.run` returns: per node outcomes plus cost figures."""

    nodes: list[TableNode]
    stop: StopReason
    wall_s: float
    scalar_mults: int
    envelopes: int
    bytes: int
    virtual_s: float
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def honest_agree(self) -> bool:
        """Every node committed the same checkpoints, each signed by all its key holders,
        and the run ended because the nodes finished (not at the time limit)."""
        if self.stop is not StopReason.STOPPED:
            return False
        first = [o.checkpoint for o in self.nodes[0].outcomes]
        return all([o.checkpoint for o in n.outcomes] == first for n in self.nodes) and all(
            o.agreed_by == o.holders and not o.voided for n in self.nodes for o in n.outcomes)

    def document(self) -> dict[str, object]:
        """The ``p2pkille sim --json`` document, from the first node's view."""
        node = self.nodes[0]
        view = node.view
        winner = None
        if view is not None and view.game.winner is not None:
            winner = node.names[view.game.winner]
        return {
            "hands": [o.to_json() for o in node.outcomes],
            "honest_agree": self.honest_agree,
            "stats": {"bytes": self.bytes, "envelopes": self.envelopes,
                      "scalar_mults": self.scalar_mults, "wall_s": round(self.wall_s, 3)},
            "winner": winner,
        }


class SimTable:
    """N nodes on one simulated network."""

    def __init__(self, nodes: list[TableNode], network: SimNetwork) -> None:
        self.nodes = nodes
        self.network = network

    def run(self, *, until: float = 36000.0, max_hands: int | None = None,
            on_hand: Callable[[HandOutcome], None] | None = None) -> TableRun:
        """Run until every node is done (or ``max_hands`` are committed everywhere), or
        the virtual clock reaches ``until``. ``on_hand`` sees each hand the first node
        commits."""
        reported = 0

        def finished(_: SimNetwork) -> bool:
            nonlocal reported
            outcomes = self.nodes[0].outcomes
            while on_hand is not None and reported < len(outcomes):
                on_hand(outcomes[reported])
                reported += 1
            if max_hands is not None and all(len(n.outcomes) >= max_hands for n in self.nodes):
                return True
            return all(n.done for n in self.nodes)

        counters.reset()
        start = time.perf_counter()
        stop = self.network.run(until=until, stop=finished)
        wall = time.perf_counter() - start
        return TableRun(
            nodes=self.nodes, stop=stop, wall_s=wall, scalar_mults=counters.scalar_mults,
            envelopes=sum(n.sent_envelopes for n in self.nodes),
            bytes=sum(n.sent_bytes for n in self.nodes),
            virtual_s=self.network.now,
        )


def _seed(seed: int, *parts: str) -> bytes:
    return hash32("sim-table", seed.to_bytes(8, "big"), *(p.encode() for p in parts))


def build_table(peers: int, *, seed: int = 1, ruleset: str = "wikipedia", stake: int = 1,
                chips: int = 10, overrides: Mapping[str, object] | None = None,
                faults: Faults | None = None, deciders: DeciderFactory | None = None,
                timing: Timing | None = None) -> SimTable:
    """Peers named ``n1``..``nN`` (transport names; seats come from the genesis)."""
    identities = [Identity.from_seed(_seed(seed, "identity", str(i))) for i in range(peers)]
    delivery = [DeliveryKeyPair.from_private(_seed(seed, "delivery", str(i)))
                for i in range(peers)]
    config = TableConfig(
        table_id=_seed(seed, "table")[:16], name=f"sim-{seed}", ruleset=ruleset,
        members=tuple(Member(identities[i].public, delivery[i].public) for i in range(peers)),
        stake=stake, chips=chips, overrides=dict(overrides or {}),
    )
    make = deciders or (lambda _i: ThresholdBot())
    nodes = [TableNode(f"n{i + 1}", identities[i], delivery[i], config, make(i),
                       _seed(seed, "secret", str(i)), timing or Timing())
             for i in range(peers)]
    network = SimNetwork(seed, faults or Faults())
    for node in nodes:
        network.add(node)
    return SimTable(nodes, network)
