"""Trace one chaos seed: when each node accepted which envelope, changed stage and recorded
a hand, next to the plan and schedule; for reading why a run of ``p2pkille chaos`` was not
ok.

    PYTHONPATH=. python -m bench.chaos_trace SEED [--nodes n1,n3] [--kinds timeout,seen,tally]
        [--hands 1,2] [--from T] [--to T] [--stages] [--end]

One line per event: virtual time, the node (sim name and seat), what happened. An envelope
line names its author's seat and seq, kind and hand, and for a vote or seen its step
(a respond step also as the step it answers), for a tally its ids, for an accuse what it
accuses. The plan runs exactly as ``p2pkille chaos --seed SEED`` runs it: the script hook
only reads the nodes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence

from p2pkille.runtime.node import Stage, TableNode
from p2pkille.sim import chaos
from p2pkille.sim.network import SimNetwork
from protocol.envelope import Envelope


def _author(node: TableNode, env: Envelope) -> str:
    member = node.members.index(env.author)
    seat_of = node.seat_of
    return f"P{seat_of[member] + 1}" if member < len(seat_of) else f"m{member}"


def _step(body: Mapping[str, object]) -> str:
    seat, stage, at = body.get("seat"), body.get("stage"), body.get("at")
    text = f"(P{seat + 1 if isinstance(seat, int) else seat},{stage},{at})"
    if stage == Stage.RESPOND and isinstance(at, int):
        x_seat, rest = at % 64, at // 64
        text += f" [respond to (P{x_seat + 1},{rest % 16},{rest // 16})]"
    return text


def _body(kind: str, body: Mapping[str, object]) -> str:
    if kind in ("timeout", "seen"):
        return _step(body)
    if kind == "tally":
        ids = body.get("ids")
        shown = [("-" if i is None else str(i)[:8]) for i in ids] if isinstance(ids, list) else ids
        buyers = body.get("buyers")
        return f"ids={shown}" + (f" buyers={buyers}" if buyers else "")
    if kind == "accuse":
        accusations = body.get("accusations")
        items = [f"{a.get('kind')}->P{a['accused'] + 1}" for a in accusations
                 if isinstance(a, dict) and isinstance(a.get("accused"), int)
                 ] if isinstance(accusations, list) else []
        return f"accusations={items}" + (" cause" if body.get("cause") else "")
    if kind == "act":
        return f"at={body.get('at')} fact={body.get('fact')}"
    return ""


def _waiting(node: TableNode, seats: Sequence[int]) -> list[str]:
    return [node.names[s] for s in seats] if node.my_seat is not None else []


class Tracer:
    """The script hook: compares each node with what it held at the previous event."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.nodes = set(filter(None, args.nodes.split(",")))
        self.kinds = set(filter(None, args.kinds.split(",")))
        self.hands = {int(h) for h in args.hands.split(",") if h}
        self.accepted: dict[int, int] = {}
        self.stage: dict[int, Stage] = {}
        self.recorded: dict[int, int] = {}
        self.keep: list[TableNode] = []  # ids stay unique while the run lasts
        self.last: dict[str, TableNode] = {}

    def out(self, t: float, text: str) -> None:
        if self.args.start <= t <= self.args.stop:
            print(f"{t:9.3f}  {text}")

    def __call__(self, net: SimNetwork, current: Mapping[str, TableNode]) -> None:
        for name, node in current.items():
            if not self.nodes or name in self.nodes:
                self.look(net.now, name, node)

    def look(self, now: float, name: str, node: TableNode) -> None:
        key = id(node)
        seat = node.names[node.my_seat] if node.my_seat is not None else "-"
        me = f"{name}({seat})"
        accepted = node.transcript.accepted
        if key not in self.accepted:
            self.keep.append(node)
            self.last[name] = node
            self.recorded[key] = 0
            if accepted:
                self.out(now, f"{me} [new node: {len(accepted)} envelopes already accepted]")
            self.accepted[key] = len(accepted)
        for env in accepted[self.accepted[key]:]:
            hand = env.body.get("hand")
            if (self.kinds and env.kind not in self.kinds) or (
                    self.hands and hand not in self.hands):
                continue
            self.out(now, f"{me} took {_author(node, env)}#{env.seq} {env.kind} h={hand} "
                     f"{_body(env.kind, env.body)}")
        self.accepted[key] = len(accepted)
        if self.args.stages and self.stage.get(key) != node.stage:
            self.out(now, f"{me} stage {node.stage.name} waiting "
                     f"{_waiting(node, node.waiting_for())}")
            self.stage[key] = node.stage
        for o in node.outcomes[self.recorded[key]:]:
            what = (f"voided, eliminated {list(o.eliminated)}" if o.voided
                    else f"committed {o.checkpoint[:12]} died {list(o.died)}")
            self.out(now, f"{me} RECORDS hand {o.hand}: {what}")
        self.recorded[key] = len(node.outcomes)

    def end_state(self, say: Callable[[str], None]) -> None:
        for name, node in self.last.items():
            names = node.names
            faults = [(f.kind.value, names[f.seat] if f.seat is not None else None, f.hand)
                      for f in node.faults]
            say(f"{name}: stage {node.stage.name}, hands {len(node.outcomes)}, waiting "
                f"{_waiting(node, node.waiting_for())}, silent_without_majority "
                f"{[names[s] for s in node.silent_without_majority()]}, rebuilds "
                f"{node.rebuilds}, faults {faults}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("seed", type=int)
    p.add_argument("--nodes", default="", help="sim names to trace (default: all)")
    p.add_argument("--kinds", default="", help="envelope kinds to show (default: all)")
    p.add_argument("--hands", default="", help="hands to show envelopes of (default: all)")
    p.add_argument("--from", dest="start", type=float, default=0.0)
    p.add_argument("--to", dest="stop", type=float, default=float("inf"))
    p.add_argument("--stages", action="store_true", help="also print stage changes")
    p.add_argument("--end", action="store_true",
                   help="print each traced node's state at the end (stage, waiting, silent)")
    args = p.parse_args(argv)
    plan = chaos.Plan.draw(args.seed)
    tracer = Tracer(args)
    obs, schedule, _records = chaos.execute(plan, script=tracer)
    print("--- plan")
    print("\n".join(plan.describe()))
    print("--- schedule")
    print("\n".join(schedule))
    if args.end:
        print("--- end state")
        tracer.end_state(print)
    print("--- class:", "; ".join(f"{f.cls.label}: {f.detail}" for f in chaos.classify(obs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
