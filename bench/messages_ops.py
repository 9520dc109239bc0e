"""Envelope and transcript throughput: ``python -m bench.messages_ops``.

Prints a table (no asserts): Ed25519 alone, canonical JSON alone, envelope seal
(encode + sign) and decode (parse + checks + verify), wire bytes for typical
bodies, and transcript ingest in order and in reverse order.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from protocol import canonical, group
from protocol.envelope import ZERO_HASH, Envelope, decode, member_index
from protocol.identity import Identity
from protocol.rng import DeterministicRng
from protocol.transcript import Transcript

TABLE = b"bench-table-0001"


def _rate(fn: Callable[[], object], *, seconds: float = 0.5) -> float:
    """Calls per second of ``fn``, over at least ``seconds``."""
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        n += 50
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def _bodies(rng: DeterministicRng) -> dict[str, dict[str, object]]:
    b64 = canonical.b64encode
    return {
        "chat (short text)": {"text": "hej, din tur"},
        "reveal share (point + DLEQ proof)": {
            "slot": 17, "recipient": 2, "share": b64(rng.randbytes(32)),
            "proof": {"c": b64(rng.randbytes(32)), "z": b64(rng.randbytes(32))}},
        "42-card deck (84 points)": {
            "step": 1, "deck": [[b64(rng.randbytes(32)), b64(rng.randbytes(32))]
                                for _ in range(42)],
            "commitment": b64(rng.randbytes(32))},
    }


def main() -> None:
    group.share_results(False)  # each peer pays for its own checks (protocol.group)
    rng = DeterministicRng(b"bench.messages_ops")
    people = [Identity.generate(rng) for _ in range(3)]
    members = [p.public for p in people]
    index = member_index(members)
    bodies = _bodies(rng)
    typical = bodies["reveal share (point + DLEQ proof)"]
    env = Envelope.seal(people[0], table=TABLE, seq=1, prev=ZERO_HASH, kind="reveal",
                        body=typical)
    message = env.signed

    rows: list[tuple[str, float]] = [
        ("Ed25519 sign (raw, ~300 B)", _rate(lambda: people[0].sign("envelope", message))),
        ("Ed25519 verify (raw, ~300 B)",
         _rate(lambda: members[0].verify("envelope", message, env.signature))),
        ("canonical encode (typical body)", _rate(lambda: canonical.encode(typical))),
        ("canonical decode (typical envelope)", _rate(lambda: canonical.decode(env.wire))),
        ("envelope seal = encode + sign", _rate(lambda: Envelope.seal(
            people[0], table=TABLE, seq=1, prev=ZERO_HASH, kind="reveal", body=typical))),
        ("envelope decode + verify", _rate(lambda: decode(
            env.wire, table=TABLE, members=index, kinds={"reveal"}))),
    ]

    # A transcript of 3 authors x 100 envelopes, ingested in order and reversed.
    stream: list[bytes] = []
    for person in people:
        prev = ZERO_HASH
        for seq in range(1, 101):
            e = Envelope.seal(person, table=TABLE, seq=seq, prev=prev, kind="reveal",
                              body=typical)
            stream.append(e.wire)
            prev = e.id

    def ingest(order: list[bytes]) -> float:
        t = Transcript(table=TABLE, members=members, kinds={"reveal"}, max_ahead=128,
                       max_buffered=512)
        start = time.perf_counter()
        for data in order:
            t.receive(data)
        elapsed = time.perf_counter() - start
        if t.heads().heads != (100, 100, 100):
            raise RuntimeError(f"transcript stopped at {t.heads()}")
        return len(order) / elapsed

    rows.append(("transcript ingest, in order", max(ingest(stream) for _ in range(3))))
    rows.append(("transcript ingest, reversed (buffered)",
                 max(ingest(stream[::-1]) for _ in range(3))))
    rows.append(("transcript ingest, every envelope twice",
                 max(ingest([d for d in stream for _ in (0, 1)]) for _ in range(3))))

    print(f"{'operation':<44} {'per second':>12} {'us each':>10}")
    print("-" * 68)
    for name, rate in rows:
        print(f"{name:<44} {rate:>12,.0f} {1e6 / rate:>10.1f}")
    print()
    print(f"{'body':<44} {'body B':>8} {'envelope B':>11}")
    print("-" * 65)
    for name, body in bodies.items():
        e = Envelope.seal(people[1], table=TABLE, seq=1, prev=ZERO_HASH, kind="bench",
                          body=body)
        print(f"{name:<44} {len(canonical.encode(body)):>8} {len(e.wire):>11}")
    print(f"(table id of {len(TABLE)} bytes; envelope limit "
          f"{canonical.MAX_SIZE} bytes)")


if __name__ == "__main__":
    main()
