"""A table of one human and N bots, every one a real peer of the protocol.

Each peer has its own identity, delivery key and secret seed; they all run as
:class:`~p2pkille.net.driver.Driver` tasks on one asyncio loop over a
:class:`~p2pkille.ui.localnet.LocalNet`. The human's node is a
:class:`~p2pkille.ui.hooknode.HumanTableNode` with a
:class:`~p2pkille.ui.human.HumanDecider`; after the player answers,
:meth:`LocalTable.decided` pokes its driver so the node acts at once. With
``TableSpec.pace`` each bot takes that long over a decision (a
:class:`~p2pkille.ui.paced.PacedDecider`), so a person can follow the play. Given a
``log`` path, the human's node logs every envelope it accepts there
(:class:`~p2pkille.runtime.log.LoggedNode`), for ``p2pkille verify``.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from p2pkille.bots.tableaware import make_bot
from p2pkille.engine.view import Decider
from p2pkille.net.driver import Driver
from p2pkille.runtime.config import Member, TableConfig
from p2pkille.runtime.io import Node
from p2pkille.runtime.log import LoggedNode
from p2pkille.runtime.node import TableNode, Timing
from p2pkille.ui.hooknode import HumanTableNode
from p2pkille.ui.human import HumanDecider
from p2pkille.ui.identity import Seated, display_names
from p2pkille.ui.localnet import LocalNet
from p2pkille.ui.paced import PacedDecider
from protocol.domain import hash32
from protocol.group import Workers
from protocol.identity import Identity
from protocol.keys import DeliveryKeyPair

__all__ = ["BOT_NAMES", "LocalTable", "TableSpec", "local_table"]

#: Enough names for the largest table a ruleset allows (bytes-kille: as many players as
#: the deck allows, 38).
BOT_NAMES: Final = ("Anna", "Björn", "Cecilia", "David", "Eva", "Fredrik", "Greta", "Hugo",
                    "Ingrid", "Johan", "Karin", "Lars", "Maja", "Nils", "Olle", "Pia", "Rut",
                    "Sven", "Tove", "Ulf", "Vera", "Wilhelm", "Ylva", "Åke", "Örjan", "Agnes",
                    "Bertil", "Doris", "Erik", "Frida", "Gustav", "Hanna", "Ivar", "Jenny",
                    "Klara", "Linnea", "Magnus")
BOT_KINDS: Final = ("tableaware", "threshold")


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What the player chose for a table with bots."""

    bots: int = 3
    ruleset: str = "wikipedia"
    stake: int = 1
    chips: int = 10
    name: str = "Du"
    seed: int | None = None
    pace: float = 0.0
    """Seconds each bot takes over a decision (0: at once), so a person can follow."""
    mode: str = "audit"
    """``audit`` or ``strict`` (docs/protocol.md II.13)."""


class LocalTable:
    """The peers of one local table; :meth:`run` drives them until :meth:`stop`."""

    def __init__(self, spec: TableSpec, net: LocalNet, human: HumanTableNode,
                 decider: HumanDecider, bots: Sequence[TableNode],
                 names: dict[str, str], log: Path | None = None) -> None:
        self.spec = spec
        self.net = net
        self.human = human
        self.decider = decider
        self.bots = list(bots)
        self.names_by_peer = names
        self.log_path = log
        """Where the human's node logs the game (``None``: nowhere)."""
        self.logged = LoggedNode(human, log) if log is not None else None
        front: Node = self.logged if self.logged is not None else human
        self.drivers = [Driver(node, net.transport(node.name)) for node in [front, *bots]]
        self.driver = self.drivers[0]

    @property
    def nodes(self) -> list[TableNode]:
        return [self.human, *self.bots]

    def seat_names(self) -> list[str]:
        """Display names in seat order, once the genesis has seated everyone (a bot that
        shares the player's name is told apart by its key)."""
        return display_names(self.seated())

    def seated(self) -> list[Seated]:
        """Who sits where (the player and bots), once the genesis has seated everyone."""
        node = self.human
        by_member = {n.me: self.names_by_peer[n.name] for n in self.nodes}
        return [Seated(node.members[member], by_member[member], bot=seat != node.my_seat)
                for seat, member in enumerate(node.member_of)]

    def gone(self) -> list[int]:
        """Seats whose connection closed: none, every peer is in this process."""
        return []

    def decided(self) -> None:
        """The player answered: let the human's node act now."""
        self.driver.poke()

    async def run(self) -> None:
        # A strict table's proof checks are most of its work: every node here is on this
        # machine, so they share its cores (the results do not depend on it).
        cores = min(os.cpu_count() or 1, 4)
        pool = ThreadPoolExecutor(cores, thread_name_prefix="table-mult") if (
            self.spec.mode == "strict" and cores > 1) else None
        for node in self.nodes:
            node.workers = Workers(pool, cores) if pool is not None else None
        try:
            async with asyncio.TaskGroup() as tg:
                for driver in self.drivers:
                    tg.create_task(driver.run())
        finally:
            for node in self.nodes:
                node.workers = None
            if pool is not None:
                pool.shutdown()
            if self.logged is not None:
                self.logged.close()

    def stop(self) -> None:
        for driver in self.drivers:
            driver.stop()


def _derive(seed: int, *parts: str) -> bytes:
    return hash32("play-table", seed.to_bytes(8, "big"), *(p.encode() for p in parts))


def local_table(spec: TableSpec, timing: Timing | None = None, *,
                log_to: Callable[[bytes], Path] | None = None) -> LocalTable:
    """Build the table (nothing runs until :meth:`LocalTable.run`). ``spec.seed`` fixes
    every key and secret (tests); without it they come from the operating system.
    ``log_to`` names a new file for the human node's game log from the table id (it
    raises ``OSError`` if the file cannot be made)."""
    seed = spec.seed if spec.seed is not None else int.from_bytes(os.urandom(8), "big")
    count = spec.bots + 1
    identities = [Identity.from_seed(_derive(seed, "identity", str(i))) for i in range(count)]
    delivery = [DeliveryKeyPair.from_private(_derive(seed, "delivery", str(i)))
                for i in range(count)]
    config = TableConfig(
        table_id=_derive(seed, "table")[:16], name=f"{spec.name[:40]} + bots",
        ruleset=spec.ruleset,
        members=tuple(Member(identities[i].public, delivery[i].public) for i in range(count)),
        stake=spec.stake, chips=spec.chips, mode=spec.mode,
    )
    peers = [f"peer{i}" for i in range(count)]
    decider = HumanDecider()
    human = HumanTableNode(peers[0], identities[0], delivery[0], config, decider,
                           _derive(seed, "secret", "0"), timing)
    rng = random.Random(seed)
    bots: list[TableNode] = []
    paced: list[PacedDecider] = []
    for i in range(1, count):
        bot: Decider = make_bot(BOT_KINDS[i % len(BOT_KINDS)], rng)
        if spec.pace > 0:
            bot = PacedDecider(bot, spec.pace)
            paced.append(bot)
        bots.append(HumanTableNode(peers[i], identities[i], delivery[i], config, bot,
                                   _derive(seed, "secret", str(i)), timing))
    names = {peers[0]: spec.name, **{peers[i]: BOT_NAMES[(i - 1) % len(BOT_NAMES)]
                                     for i in range(1, count)}}
    log = log_to(config.table_id) if log_to is not None else None
    table = LocalTable(spec, LocalNet(peers), human, decider, bots, names, log)
    if paced:
        for pacer, driver in zip(paced, table.drivers[1:], strict=True):
            pacer.poke = driver.poke
    return table
