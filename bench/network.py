"""What the network costs: ``python -m bench.network [--hands H] [--seed S] [--sizes 4,9]``.

For each table size, plays the same game (the same seed) three ways and prints a table:

- ``sim``: every node in one process on the simulated network (``p2pkille.sim.table``);
- ``mesh``: one OS process per node, over the TCP mesh on 127.0.0.1;
- ``mqtt``: one OS process per node, through a mosquitto this benchmark starts on
  127.0.0.1 on a free port with its own configuration (skipped if mosquitto is missing).

The processes build the simulator's table for the seed (identities, delivery keys, node
secrets, table id), so every way plays the very same cards and decisions, and the
benchmark checks that they commit the same checkpoints. Each process waits until it is
connected to all the others, then starts its node; the clock runs from the earliest start
to the last process's ``H``-th commit. Reported: wall time per hand, envelopes sent per
second (all nodes together), and the slowdown against ``sim``. The lobby is not timed
(``p2pkille peer`` adds about 2 s of zeroconf registration and the lobby's round trips).

A child process is ``python -m bench.network --child INDEX N SEED HANDS TRANSPORT ARG``:
with ``mesh``, ARG lists every node's port; with ``mqtt``, the broker's port.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from p2pkille.net.driver import Driver
from p2pkille.net.mesh import Mesh, PeerAddress, peer_name
from p2pkille.net.mqtt import BrokerUrl, MqttTransport
from p2pkille.net.peer import _Attached, _Switchboard
from p2pkille.runtime.node import TableNode
from p2pkille.sim.table import build_table
from protocol import group

ROOT: Final = Path(__file__).resolve().parents[1]


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


# -- one node as a process ---------------------------------------------------------------


async def child(index: int, n: int, seed: int, hands: int, kind: str, arg: str) -> None:
    table = build_table(n, seed=seed)
    sim_node = table.nodes[index]
    # The simulator's node, renamed as a real transport names it (the name plays no part
    # in the game): same keys, same secret seed, same decider.
    node = TableNode(peer_name(sim_node.identity.public), sim_node.identity,
                     sim_node.delivery, sim_node.config, sim_node.decider,
                     sim_node.seed, sim_node.timing)
    others = {peer_name(k) for k in node.members} - {node.name}
    transport: Mesh | MqttTransport
    if kind == "mesh":
        ports = [int(p) for p in arg.split(",")]
        transport = Mesh(node.identity, node.config.table_id, node.members,
                         port=ports[index], backoff_max=0.2,
                         peers=[PeerAddress("127.0.0.1", p) for i, p in enumerate(ports)
                                if i > index])
    else:
        transport = MqttTransport(node.name, node.config.table_id,
                                  BrokerUrl("127.0.0.1", int(arg)))
    board = _Switchboard()
    loop = asyncio.get_running_loop()
    async with asyncio.TaskGroup() as tg:
        carrier = tg.create_task(transport.run(board.deliver))
        await transport.wait_ready()
        while True:
            up = transport.connected if isinstance(transport, Mesh) else transport.online
            if up >= others:
                break
            await asyncio.sleep(0.01)
        driver = Driver(node, _Attached(transport, board))
        start = time.time()
        t0 = loop.time()
        driving = tg.create_task(driver.run())
        while len(node.outcomes) < hands and not node.done:
            await asyncio.sleep(0.005)
        elapsed = loop.time() - t0
        end = time.time()
        # Stay until the others are done too (they need our envelopes); the parent
        # stops us by closing stdin.
        print(json.dumps({"start": start, "end": end, "elapsed": elapsed,
                          "sent": node.sent_envelopes, "bytes": node.sent_bytes,
                          "checkpoints": [o.checkpoint for o in node.outcomes[:hands]]}),
              flush=True)
        await loop.run_in_executor(None, sys.stdin.read)
        driver.stop()
        await driving
        carrier.cancel()


# -- the parent ----------------------------------------------------------------------------


class Mosquitto:
    def __init__(self) -> None:
        exe = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
        if exe is None:
            raise FileNotFoundError("mosquitto is not installed")
        self.dir = tempfile.TemporaryDirectory()
        self.port = free_ports(1)[0]
        conf = Path(self.dir.name) / "mosquitto.conf"
        conf.write_text(f"listener {self.port} 127.0.0.1\nuser {getpass.getuser()}\n"
                        "persistence false\nset_tcp_nodelay true\n"
                        "max_queued_messages 100000\nallow_anonymous true\n")
        self.proc = subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("mosquitto did not start") from None
                time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.dir.cleanup()


@dataclass(frozen=True, slots=True)
class Row:
    wall: float
    envelopes: int
    bytes: int
    checkpoints: list[str]
    agree: bool


def run_processes(n: int, seed: int, hands: int, kind: str, arg: str) -> Row:
    procs = [subprocess.Popen([sys.executable, "-m", "bench.network", "--child", str(i),
                               str(n), str(seed), str(hands), kind, arg], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
             for i in range(n)]
    reports = []
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                _, err = proc.communicate(timeout=10)
                raise RuntimeError(f"a {kind} process failed: "
                                   f"{err.decode(errors='replace')[-1500:]}")
            reports.append(json.loads(line))
    finally:
        for proc in procs:
            if proc.poll() is None:
                assert proc.stdin is not None
                proc.stdin.close()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    checkpoints = [r["checkpoints"] for r in reports]
    return Row(wall, sum(int(r["sent"]) for r in reports),
               sum(int(r["bytes"]) for r in reports), list(checkpoints[0]),
               all(c == checkpoints[0] for c in checkpoints))


def run_sim(n: int, seed: int, hands: int) -> Row:
    result = build_table(n, seed=seed).run(max_hands=hands)
    return Row(result.wall_s, result.envelopes, result.bytes,
               [o.checkpoint for o in result.nodes[0].outcomes[:hands]], result.honest_agree)


def main(argv: list[str] | None = None) -> int:
    group.share_results(False)  # each peer pays for its own checks (protocol.group)
    parser = argparse.ArgumentParser(prog="python -m bench.network", description=__doc__)
    parser.add_argument("--hands", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="4,9")
    parser.add_argument("--transports", default="sim,mesh,mqtt")
    parser.add_argument("--child", nargs=6, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        i, n, seed, hands, kind, arg = args.child
        asyncio.run(child(int(i), int(n), int(seed), int(hands), kind, arg))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = args.transports.split(",")
    print(f"{'peers':>5} {'way':>5} {'hands':>5} {'wall s':>8} {'s/hand':>8} "
          f"{'env/s':>8} {'envs':>7} {'x sim':>6} {'same':>5}")
    for n in sizes:
        base: Row | None = None
        for kind in kinds:
            broker: Mosquitto | None = None
            try:
                if kind == "sim":
                    row = run_sim(n, args.seed, args.hands)
                elif kind == "mesh":
                    row = run_processes(n, args.seed, args.hands, "mesh",
                                        ",".join(map(str, free_ports(n))))
                else:
                    try:
                        broker = Mosquitto()
                    except (FileNotFoundError, RuntimeError) as exc:
                        print(f"{n:>5} {kind:>5}  skipped: {exc}")
                        continue
                    row = run_processes(n, args.seed, args.hands, "mqtt", str(broker.port))
            finally:
                if broker is not None:
                    broker.stop()
            if base is None:
                base = row
            wall, envs = row.wall, row.envelopes
            same = row.checkpoints == base.checkpoints and row.agree
            print(f"{n:>5} {kind:>5} {args.hands:>5} {wall:>8.2f} {wall / args.hands:>8.3f} "
                  f"{envs / wall:>8.0f} {envs:>7} "
                  f"{wall / base.wall:>6.2f} {'yes' if same else 'NO':>5}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
