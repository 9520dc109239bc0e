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
from p2pkille.runtime.config import Member, TableConfig, genesis
from p2pkille.runtime.node import HandOutcome, TableNode, Timing
from p2pkille.sim.byzantine import make_byzantine
from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimNetwork, StopReason
from protocol.domain import hash32
from protocol.group import Workers, counters
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

__all__ = ["HAND_CAP", "SimTable", "TableRun", "build_table"]

HAND_CAP = 1000

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
    byzantine: frozenset[int] = frozenset()
    """Indices (in ``nodes``) of the misbehaving peers."""
    max_hands: int | None = None
    """The run stopped once every honest node had this many hands (some may have more)."""
    unfinished: bool = False
    """Stopped at :data:`HAND_CAP` hands with the game still on (see :meth:`SimTable.run`)."""

    @property
    def honest(self) -> list[TableNode]:
        """The nodes still at the table and not misbehaving (a node that left is not)."""
        return [n for i, n in enumerate(self.nodes)
                if i not in self.byzantine and not n.has_quit]

    @property
    def honest_agree(self) -> bool:
        """Every honest node has the same hands (checkpoints, voids, eliminations, chips),
        each committed one signed by all its key holders, and the run ended because the
        honest nodes finished (not at the time limit)."""
        honest = self.honest
        if self.stop is not StopReason.STOPPED or not honest:
            return False
        # A run cut at max_hands compares those hands: a node may already be one ahead.
        upto = self.max_hands
        first = [o.to_json() for o in honest[0].outcomes[:upto]]
        return all([o.to_json() for o in n.outcomes[:upto]] == first for n in honest) and all(
            o.voided or o.agreed_by == o.holders for n in honest for o in n.outcomes[:upto])

    def document(self) -> dict[str, object]:
        """The ``p2pkille sim --json`` document, from the first honest node's view."""
        honest = self.honest
        node = honest[0] if honest else self.nodes[0]
        view = node.view
        winner = None
        if view is not None and view.game.winner is not None:
            winner = node.names[view.game.winner]
        return {
            "hands": [o.to_json() for o in node.outcomes[:self.max_hands]],
            "honest_agree": self.honest_agree,
            "stats": {"bytes": self.bytes, "envelopes": self.envelopes,
                      "scalar_mults": self.scalar_mults, "unfinished": self.unfinished,
                      "wall_s": round(self.wall_s, 3)},
            "winner": winner,
        }


class SimTable:
    """N nodes on one simulated network."""

    def __init__(self, nodes: list[TableNode], network: SimNetwork,
                 byzantine: frozenset[int] = frozenset()) -> None:
        self.nodes = nodes
        self.network = network
        self.byzantine = byzantine

    def seats(self) -> list[int]:
        """Node index per seat, known before the start: the genesis is computed from
        the nonces every node will commit to."""
        config = self.nodes[0].config
        start = genesis(config, [n.genesis_nonce for n in
                                 sorted(self.nodes, key=lambda n: n.identity.public.raw)])
        by_member = sorted(range(len(self.nodes)),
                           key=lambda i: self.nodes[i].identity.public.raw)
        return [by_member[member] for member in start.seats]

    def run(self, *, until: float = 36000.0, max_hands: int | None = None,
            on_hand: Callable[[HandOutcome], None] | None = None,
            hand_cap: int = HAND_CAP) -> TableRun:
        """Run until every node is done (or ``max_hands`` are committed everywhere), or
        the virtual clock reaches ``until``. ``on_hand`` sees each hand the first node
        commits. Without ``max_hands`` a run stops after ``hand_cap`` hands: players who
        agree to every redeal never finish, and with no network delay the virtual clock
        never reaches ``until``."""
        capped = max_hands is None
        if max_hands is None:
            max_hands = hand_cap
        reported = 0
        honest = [n for i, n in enumerate(self.nodes) if i not in self.byzantine]

        def finished(_: SimNetwork) -> bool:
            nonlocal reported
            # A node that left the table is not waited for.
            playing = [n for n in honest if not n.has_quit] or honest
            outcomes = playing[0].outcomes
            while on_hand is not None and reported < len(outcomes):
                on_hand(outcomes[reported])
                reported += 1
            if max_hands is not None and all(len(n.outcomes) >= max_hands for n in playing):
                return True
            return all(n.done for n in playing)

        counters.reset()
        start = time.perf_counter()
        stop = self.network.run(until=until, stop=finished)
        wall = time.perf_counter() - start
        done = all(n.done for n in honest if not n.has_quit)
        return TableRun(
            nodes=self.nodes, stop=stop, wall_s=wall, scalar_mults=counters.scalar_mults,
            envelopes=sum(n.sent_envelopes for n in self.nodes),
            bytes=sum(n.sent_bytes for n in self.nodes),
            virtual_s=self.network.now, byzantine=self.byzantine,
            max_hands=None if capped and done else max_hands,
            unfinished=capped and not done,
        )


def _seed(seed: int, *parts: str) -> bytes:
    return hash32("sim-table", seed.to_bytes(8, "big"), *(p.encode() for p in parts))


def build_table(peers: int, *, seed: int = 1, ruleset: str = "wikipedia", stake: int = 1,
                chips: int = 10, overrides: Mapping[str, object] | None = None,
                faults: Faults | None = None, deciders: DeciderFactory | None = None,
                timing: Timing | None = None, timings: Mapping[int, Timing] | None = None,
                byzantine: Mapping[int, str] | None = None, mode: str = "audit",
                workers: Workers | None = None) -> SimTable:
    """Peers named ``n1``..``nN`` (transport names; seats come from the genesis).
    ``timings`` overrides ``timing`` per node index (skewed clocks); ``byzantine`` maps
    a SEAT (0-based, as in ``P1``..``PN``) to a behaviour of
    :data:`p2pkille.sim.byzantine.BEHAVIOURS`; ``mode`` is ``audit`` or ``strict``;
    ``workers``: threads every node may use for its large sums (the caller owns them)."""
    identities = [Identity.from_seed(_seed(seed, "identity", str(i))) for i in range(peers)]
    delivery = [DeliveryKeyPair.from_private(_seed(seed, "delivery", str(i)))
                for i in range(peers)]
    config = TableConfig(
        table_id=_seed(seed, "table")[:16], name=f"sim-{seed}", ruleset=ruleset,
        members=tuple(Member(identities[i].public, delivery[i].public) for i in range(peers)),
        stake=stake, chips=chips, overrides=dict(overrides or {}), mode=mode,
    )
    make = deciders or (lambda _i: ThresholdBot())
    nodes = [TableNode(f"n{i + 1}", identities[i], delivery[i], config, make(i),
                       _seed(seed, "secret", str(i)),
                       (timings or {}).get(i, timing or Timing()))
             for i in range(peers)]
    for node in nodes:
        node.workers = workers
    network = SimNetwork(seed, faults or Faults())
    table = SimTable(nodes, network)
    if byzantine:
        seats = table.seats()
        for seat, behaviour in byzantine.items():
            make_byzantine(nodes[seats[seat]], behaviour)
        table.byzantine = frozenset(seats[seat] for seat in byzantine)
    for node in nodes:
        network.add(node)
    return table
