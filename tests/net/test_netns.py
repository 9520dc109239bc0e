"""Real multicast between machines, as far as one host can fake them: three network
namespaces joined by a bridge (in a fourth namespace), one ``p2pkille peer`` in each, that
find each other only through zeroconf over that bridge and play.

Everything lives in the test's own namespaces: the veth pairs are created inside the bridge's
namespace and moved, so no interface of the host is touched, and deleting the namespaces
removes them all. It needs root and a working ``ip netns``; where either is missing the test
is skipped, under ``CI=true`` too (it is the issue's optional test, unlike the broker and
multi-process tests that CI must run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from tests.net.processes import collect, start
from tests.net.test_peer_processes import check_identical, peer_command

SUBNET = "10.213.77"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _netns_available() -> str:
    """Why the test cannot run here, or ``""``."""
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root"
    if shutil.which("ip") is None:
        return "needs the ip command (iproute2)"
    probe = f"p2pk-probe-{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (subprocess.SubprocessError, OSError) as exc:
        return f"ip netns does not work here: {exc}"
    _ip("netns", "del", probe)
    return ""


@pytest.fixture
def namespaces() -> Iterator[list[tuple[str, str]]]:
    """Three namespaces on one bridge: (namespace, its address) each."""
    why = _netns_available()
    if why:
        pytest.skip(f"netns multicast test: {why}")
    tag = os.urandom(3).hex()
    bridge = f"p2pk-{tag}-br"
    peers = [(f"p2pk-{tag}-{i}", f"{SUBNET}.{i + 1}") for i in range(3)]
    made: list[str] = []
    try:
        for name in (bridge, *(n for n, _ in peers)):
            _ip("netns", "add", name)
            made.append(name)
        _ip("-n", bridge, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        _ip("-n", bridge, "link", "set", "br0", "up")
        for i, (name, address) in enumerate(peers):
            outer, inner = f"veth{i}", f"eth{i}"
            _ip("-n", bridge, "link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("-n", bridge, "link", "set", inner, "netns", name)
            _ip("-n", bridge, "link", "set", outer, "master", "br0", "up")
            _ip("-n", name, "link", "set", "lo", "up")
            _ip("-n", name, "addr", "add", f"{address}/24", "dev", inner)
            _ip("-n", name, "link", "set", inner, "up", "multicast", "on")
            _ip("-n", name, "route", "add", "224.0.0.0/4", "dev", inner)
        yield peers
    finally:
        for name in reversed(made):
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True,
                           timeout=10)


@pytest.mark.multiprocess
def test_three_peers_in_three_namespaces_discover_each_other_by_multicast(
        namespaces: list[tuple[str, str]]) -> None:
    table = f"t-{os.urandom(4).hex()}"
    # No --peer: only multicast DNS across the bridge can bring them together.
    commands = [["ip", "netns", "exec", name,
                 *peer_command(i, table, 3, "--interface", address)]
                for i, (name, address) in enumerate(namespaces)]
    results, errors = collect(start(commands), 55)
    check_identical(results, 3)
    for text, (_, address) in zip(errors, namespaces, strict=True):
        assert f"on {address}:" in text  # each listened on its own namespace's address
