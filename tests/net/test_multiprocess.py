"""Gossip peers as separate OS processes: mesh peers that find each other only through
zeroconf on 127.0.0.1 (no addresses given), and peers meeting on a real mosquitto."""

from __future__ import annotations

import os
import sys

import pytest

from p2pkille.net import peer_name
from tests.net.conftest import Broker
from tests.net.nodes import identity
from tests.net.processes import collect, start

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_peers(n: int, *args: str) -> list[dict[str, object]]:
    table = os.urandom(16).hex()
    procs = start([[sys.executable, "-m", "tests.net.gossip_peer", str(i), str(n), table, *args]
                   for i in range(n)])
    return collect(procs, 40 * n)[0]


def check(results: list[dict[str, object]], n: int) -> None:
    names = [peer_name(identity(i).public) for i in range(n)]
    for i, result in enumerate(results):
        assert result["name"] == names[i]
        assert result["seen"] == sorted(f"{o}|{k}" for o in names if o != names[i]
                                        for k in range(10))


@pytest.mark.multiprocess
def test_four_processes_discover_each_other_and_gossip_over_the_mesh() -> None:
    check(run_peers(4, "mesh"), 4)


@pytest.mark.multiprocess
@pytest.mark.broker
def test_four_processes_gossip_over_mosquitto(mosquitto: Broker) -> None:
    check(run_peers(4, "mqtt", str(mosquitto.port)), 4)
