"""Checkpoints: one statement, every seat's signature, verifiable by a third party."""

from __future__ import annotations

import json
from typing import Any

import pytest

from protocol import canonical
from protocol.checkpoint import (
    BrokenCheckpointChain,
    Checkpoint,
    CommittedCheckpoint,
    MalformedCheckpoint,
    SignatureCollector,
    WrongMembers,
    WrongRoot,
)
from protocol.domain import hash32
from protocol.envelope import ZERO_HASH, Envelope, NotAMember, WrongTable
from protocol.errors import InvalidEncoding, InvalidSignature, LocalProtocolError
from protocol.identity import Identity
from protocol.rng import DeterministicRng
from protocol.transcript import Cut, Transcript

TABLE = b"table-C"
RNG = DeterministicRng(b"test_checkpoint")
PEOPLE = [Identity.generate(RNG) for _ in range(3)]
MEMBERS = [p.public for p in PEOPLE]
OUTSIDER = Identity.generate(RNG)
STATE = hash32("game-state", b"after hand 1")


def _transcript(n: int = 2) -> Transcript:
    t = Transcript(table=TABLE, members=MEMBERS, kinds=None)
    for person in PEOPLE:
        prev = ZERO_HASH
        for seq in range(1, n + 1):
            env = Envelope.seal(person, table=TABLE, seq=seq, prev=prev, kind="move",
                                body={"seq": seq})
            t.receive(env.wire)
            prev = env.id
    return t


def _committed(cp: Checkpoint) -> CommittedCheckpoint:
    collector = SignatureCollector(cp)
    result = None
    for person in PEOPLE:
        assert result is None
        result = collector.add(person.public, cp.sign(person))
    assert result is not None
    return result


def test_statement_round_trip_and_id() -> None:
    cp = Checkpoint.of(_transcript(), hand=1, state=STATE)
    data = cp.encode()
    assert Checkpoint.decode(data, table=TABLE, members=MEMBERS) == cp
    assert cp.id == hash32("checkpoint-id", data)
    assert json.loads(data)["cut"] == [2, 2, 2]


def test_committed_checkpoint_is_verifiable_by_a_third_party() -> None:
    cp = Checkpoint.of(_transcript(), hand=1, state=STATE)
    committed = _committed(cp)
    committed.verify()
    # Someone without the transcript: knows only the table id and its members.
    back = CommittedCheckpoint.decode(committed.encode(), table=TABLE, members=MEMBERS)
    assert back == committed
    # Someone with the transcript also checks the root.
    back.checkpoint.check_root(_transcript())


def test_collector_waits_for_every_seat_and_ignores_repeats() -> None:
    cp = Checkpoint.of(_transcript(), hand=1, state=STATE)
    collector = SignatureCollector(cp)
    assert collector.add(MEMBERS[2], cp.sign(PEOPLE[2])) is None
    assert collector.add(MEMBERS[2], cp.sign(PEOPLE[2])) is None
    assert collector.waiting_for == (MEMBERS[0], MEMBERS[1])
    assert collector.add(MEMBERS[0], cp.sign(PEOPLE[0])) is None
    done = collector.add(MEMBERS[1], cp.sign(PEOPLE[1]))
    assert done is not None
    assert done.signatures == tuple(cp.sign(p) for p in PEOPLE)


def test_signature_from_a_non_member_or_for_another_statement_is_rejected() -> None:
    t = _transcript()
    cp = Checkpoint.of(t, hand=1, state=STATE)
    other = Checkpoint.of(t, hand=2, state=STATE)
    collector = SignatureCollector(cp)
    outsider_sig = OUTSIDER.sign("checkpoint", cp.encode())
    with pytest.raises(NotAMember) as info:
        collector.add(OUTSIDER.public, outsider_sig, evidence=b"carrier")
    assert info.value.evidence == b"carrier"
    with pytest.raises(InvalidSignature):
        collector.add(MEMBERS[0], other.sign(PEOPLE[0]))
    with pytest.raises(InvalidSignature):
        collector.add(MEMBERS[0], cp.sign(PEOPLE[1]))  # someone else's signature
    with pytest.raises(InvalidSignature):
        # An envelope signature over the same bytes is for another purpose.
        collector.add(MEMBERS[0], PEOPLE[0].sign("envelope", cp.encode()))
    assert collector.waiting_for == tuple(MEMBERS)
    with pytest.raises(LocalProtocolError):
        cp.sign(OUTSIDER)


def _tampered(committed: CommittedCheckpoint, edit: Any) -> bytes:
    obj = json.loads(committed.encode())
    edit(obj)
    return canonical.encode(obj)


@pytest.mark.parametrize(("name", "edit", "error"), [
    ("hand", lambda o: o["checkpoint"].update(hand=7), InvalidSignature),
    ("root", lambda o: o["checkpoint"].update(root=canonical.b64encode(bytes(32))),
     InvalidSignature),
    ("state", lambda o: o["checkpoint"].update(state="AA"), InvalidSignature),
    ("cut", lambda o: o["checkpoint"].update(cut=[2, 2, 1]), InvalidSignature),
    ("sig swapped", lambda o: o.update(sigs=[o["sigs"][1], o["sigs"][0], o["sigs"][2]]),
     InvalidSignature),
    ("sig missing", lambda o: o["sigs"].pop(), MalformedCheckpoint),
    ("sig extra", lambda o: o["sigs"].append(o["sigs"][0]), MalformedCheckpoint),
    ("members reordered", lambda o: o["checkpoint"]["members"].reverse(), WrongMembers),
    ("table", lambda o: o["checkpoint"].update(table="AA"), WrongTable),
    ("version", lambda o: o["checkpoint"].update(v=2), MalformedCheckpoint),
    ("cut too short", lambda o: o["checkpoint"].update(cut=[1]), MalformedCheckpoint),
    ("extra field", lambda o: o.update(x=1), MalformedCheckpoint),
    ("bad sig encoding", lambda o: o["sigs"].__setitem__(0, "!"), MalformedCheckpoint),
])
def test_tampered_committed_checkpoints_are_rejected(name: str, edit: Any,
                                                     error: type[Exception]) -> None:
    committed = _committed(Checkpoint.of(_transcript(), hand=1, state=STATE))
    data = _tampered(committed, edit)
    with pytest.raises(error) as info:
        CommittedCheckpoint.decode(data, table=TABLE, members=MEMBERS)
    assert isinstance(info.value, InvalidEncoding | InvalidSignature | WrongMembers | WrongTable)
    assert info.value.evidence == data, name


def test_verify_catches_a_bad_signature_in_a_built_value() -> None:
    cp = Checkpoint.of(_transcript(), hand=1, state=STATE)
    good = _committed(cp)
    bad = CommittedCheckpoint(cp, (good.signatures[0], good.signatures[0], good.signatures[2]))
    with pytest.raises(InvalidSignature, match=MEMBERS[1].fingerprint):
        bad.verify()
    with pytest.raises(MalformedCheckpoint):
        CommittedCheckpoint(cp, good.signatures[:2]).verify()


def test_a_different_transcript_gives_a_different_root() -> None:
    cp = Checkpoint.of(_transcript(2), hand=1, state=STATE)
    longer = _transcript(3)
    cp.check_root(longer)  # the same cut (2, 2, 2) inside a longer transcript
    lying = Checkpoint(TABLE, 1, tuple(MEMBERS), cp.cut, bytes(32), STATE)
    with pytest.raises(WrongRoot):
        lying.check_root(longer)


def test_checkpoints_chain() -> None:
    t = _transcript(3)
    first = Checkpoint.of(t, hand=1, state=STATE, cut=Cut((1, 1, 1)))
    second = Checkpoint.of(t, hand=2, state=STATE, prev=first.id)
    second.check_follows(first)
    for bad in (
        Checkpoint.of(t, hand=2, state=STATE),  # prev not set
        Checkpoint.of(t, hand=0, state=STATE, prev=first.id),  # hand went back
    ):
        with pytest.raises(BrokenCheckpointChain):
            bad.check_follows(first)
    with pytest.raises(BrokenCheckpointChain):
        first.check_follows(second)


def test_statement_bounds_are_ours_to_respect() -> None:
    cut = Cut((0, 0, 0))
    for kw in ({"state": b""}, {"state": bytes(65)}, {"root": bytes(31)}, {"hand": -1},
               {"table": b""}):
        args: dict[str, Any] = {"table": TABLE, "hand": 1, "members": tuple(MEMBERS),
                                "cut": cut, "root": bytes(32), "state": STATE}
        args.update(kw)
        with pytest.raises(LocalProtocolError):
            Checkpoint(**args)
    with pytest.raises(LocalProtocolError):
        Checkpoint(TABLE, 1, tuple(MEMBERS), Cut((0, 0)), bytes(32), STATE)


def test_a_cut_beyond_our_transcript_is_a_remote_error() -> None:
    # A peer's checkpoint over envelopes we have not accepted yet: not our bug (the
    # spec says WrongRoot); we fetch what transcript.missing names and check again.
    ahead = Checkpoint.of(_transcript(3), hand=1, state=STATE)
    behind = _transcript(2)
    with pytest.raises(WrongRoot, match="not covered"):
        ahead.check_root(behind)
    other = Checkpoint(TABLE, 1, tuple(MEMBERS[:2]), Cut((1, 1)), bytes(32), STATE)
    with pytest.raises(WrongRoot):
        other.check_root(behind)
