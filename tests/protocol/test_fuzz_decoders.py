"""Fuzzing (after h11's fuzzer): peer input into any message decoder either decodes or
raises RemoteProtocolError; never another exception."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from protocol import canonical
from protocol.checkpoint import Checkpoint, CommittedCheckpoint, SignatureCollector
from protocol.envelope import ZERO_HASH, Envelope, decode
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.identity import Identity, PublicKey
from protocol.rng import DeterministicRng
from protocol.transcript import Accepted, Cut, Equivocation, Transcript

TABLE = b"fuzz-table"
RNG = DeterministicRng(b"test_fuzz_decoders")
PEOPLE = [Identity.generate(RNG) for _ in range(2)]
MEMBERS = [p.public for p in PEOPLE]


def _chain(who: Identity, n: int, tag: str = "") -> list[Envelope]:
    out: list[Envelope] = []
    prev = ZERO_HASH
    for seq in range(1, n + 1):
        env = Envelope.seal(who, table=TABLE, seq=seq, prev=prev, kind="chat",
                            body={"seq": seq, "tag": tag, "list": [1, {"x": None}]})
        out.append(env)
        prev = env.id
    return out


CHAINS = [_chain(p, 3) for p in PEOPLE]
FORKS = [_chain(p, 3, tag="fork") for p in PEOPLE]
VALID = [e.wire for c in CHAINS + FORKS for e in c]


def _committed() -> bytes:
    t = Transcript(table=TABLE, members=MEMBERS, kinds=None)
    for env in CHAINS[0]:
        t.receive(env.wire)
    cp = Checkpoint.of(t, hand=1, state=b"state")
    collector = SignatureCollector(cp)
    done = None
    for person in PEOPLE:
        done = collector.add(person.public, cp.sign(person))
    assert done is not None
    return done.encode()


COMMITTED = _committed()
EVIDENCE = Equivocation.of(CHAINS[0][1], FORKS[0][1]).to_bytes()


def _decoders() -> list[Callable[[bytes], object]]:
    return [
        canonical.decode,
        lambda d: decode(d, table=TABLE, members=MEMBERS, kinds={"chat"}),
        lambda d: Transcript(table=TABLE, members=MEMBERS, kinds=None).receive(d),
        lambda d: Checkpoint.decode(d, table=TABLE, members=MEMBERS),
        lambda d: CommittedCheckpoint.decode(d, table=TABLE, members=MEMBERS),
        lambda d: Equivocation.from_bytes(d).verify(table=TABLE, members=MEMBERS),
        PublicKey.from_bytes,
        lambda d: PublicKey.from_text(d.decode("utf-8", "replace")),
        lambda d: Cut.from_text(d.decode("utf-8", "replace")),
        lambda d: canonical.b64decode(d.decode("latin-1")),
    ]


def _only_remote_errors(data: bytes) -> None:
    for decoder in _decoders():
        with contextlib.suppress(RemoteProtocolError):
            decoder(data)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "splice"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and data:
            data[i] = draw(st.sampled_from(b'"{}[],:\\0123456789-+eE.tfn \x00\x80\xff'))
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del data[i:i + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[i:]
        else:
            other = draw(st.sampled_from(seeds))
            j = draw(st.integers(0, len(other)))
            data[i:] = other[j:]
    return bytes(data)


json_leaf = (st.none() | st.booleans() | st.integers() | st.text(max_size=8)
             | st.sampled_from(["", "AA", "A", "=", str(MEMBERS[0])]))
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                          max_leaves=6)


@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    _only_remote_errors(data)


@given(mutated([*VALID, COMMITTED, EVIDENCE]))
def test_mutated_valid_messages(data: bytes) -> None:
    _only_remote_errors(data)


@given(st.sampled_from([*VALID, COMMITTED, EVIDENCE]), st.data())
def test_structurally_mutated_messages(seed: bytes, data: st.DataObject) -> None:
    # Canonical JSON whose fields are replaced by arbitrary values: reaches the
    # schema checks rather than stopping at the parser.
    obj: Any = json.loads(seed)
    target = obj
    while isinstance(target, dict) and target and data.draw(st.booleans()):
        inner = target[data.draw(st.sampled_from(sorted(target)))]
        if not isinstance(inner, dict) or not inner:
            break
        target = inner
    if isinstance(target, dict) and target:
        key = data.draw(st.sampled_from(sorted(target)) | st.text(max_size=4))
        if data.draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = data.draw(json_value)
    try:
        encoded = canonical.encode(obj)
    except LocalProtocolError:  # an integer beyond 2**53 drawn above: not sendable anyway
        return
    _only_remote_errors(encoded)


@given(st.lists(st.sampled_from(VALID) | mutated(VALID), max_size=20))
def test_transcript_survives_any_stream(stream: list[bytes]) -> None:
    t = Transcript(table=TABLE, members=MEMBERS, kinds={"chat"}, max_ahead=2, max_buffered=3)
    for data in stream:
        try:
            events = t.receive(data)
        except RemoteProtocolError:
            continue
        for event in events:
            if isinstance(event, Accepted):
                assert event.envelope in t.chain(event.envelope.author)
    # Whatever came in, every chain held is a valid hash chain.
    for member in MEMBERS:
        prev = ZERO_HASH
        for seq, env in enumerate(t.chain(member), start=1):
            assert (env.seq, env.prev) == (seq, prev)
            prev = env.id
    for evidence in t.equivocations:
        assert evidence.verify(table=TABLE, members=MEMBERS) in MEMBERS
    assert t.buffered <= 3
