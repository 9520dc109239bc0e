"""The transcript: chain order, duplicates, reordering, gaps, equivocation, roots."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.domain import encode, label
from protocol.envelope import ZERO_HASH, Envelope, NotAMember, WrongTable
from protocol.errors import InvalidEncoding, LocalProtocolError
from protocol.identity import Identity
from protocol.rng import DeterministicRng
from protocol.transcript import (
    Accepted,
    Buffered,
    BufferFull,
    Cut,
    Equivocated,
    Equivocation,
    InvalidEvidence,
    TooFarAhead,
    Transcript,
    root_of,
)

TABLE = b"table-T"
RNG = DeterministicRng(b"test_transcript")
PEOPLE = [Identity.generate(RNG) for _ in range(3)]
MEMBERS = [p.public for p in PEOPLE]
OUTSIDER = Identity.generate(RNG)


def _chain(who: Identity, n: int, *, tag: str = "", start: Envelope | None = None,
           table: bytes = TABLE) -> list[Envelope]:
    out: list[Envelope] = []
    prev, first = (start.id, start.seq + 1) if start else (ZERO_HASH, 1)
    for seq in range(first, first + n):
        env = Envelope.seal(who, table=table, seq=seq, prev=prev, kind="chat",
                            body={"seq": seq, "tag": tag})
        out.append(env)
        prev = env.id
    return out


CHAINS = [_chain(p, 4) for p in PEOPLE]
ALL = [e for c in CHAINS for e in c]


def _fresh(**kw: int) -> Transcript:
    return Transcript(table=TABLE, members=MEMBERS, kinds={"chat"}, **kw)


def test_in_order_envelopes_are_accepted_at_once() -> None:
    t = _fresh()
    for env in CHAINS[0]:
        assert t.receive(env.wire) == [Accepted(env)]
    assert t.chain(MEMBERS[0]) == tuple(CHAINS[0])
    assert t.heads() == Cut((4, 0, 0))
    assert t.get(MEMBERS[0], 2) == CHAINS[0][1]
    assert t.get(MEMBERS[0], 5) is None
    assert t.get(OUTSIDER.public, 1) is None


def test_next_slot_is_where_our_own_next_envelope_goes() -> None:
    t = _fresh()
    assert t.next_slot(MEMBERS[1]) == (1, ZERO_HASH)
    for _ in range(3):
        seq, prev = t.next_slot(MEMBERS[1])
        env = Envelope.seal(PEOPLE[1], table=TABLE, seq=seq, prev=prev, kind="chat", body={})
        assert t.receive(env.wire) == [Accepted(env)]
    assert t.next_slot(MEMBERS[1]) == (4, t.chain(MEMBERS[1])[-1].id)
    with pytest.raises(LocalProtocolError):
        t.next_slot(OUTSIDER.public)


def test_reorder_buffer_releases_in_chain_order() -> None:
    t = _fresh()
    a1, a2, a3, a4 = CHAINS[0]
    assert t.receive(a3.wire) == [Buffered(MEMBERS[0], 3)]
    assert t.receive(a2.wire) == [Buffered(MEMBERS[0], 2)]
    assert t.buffered == 2
    assert t.receive(a1.wire) == [Accepted(a1), Accepted(a2), Accepted(a3)]
    assert t.buffered == 0
    assert t.receive(a4.wire) == [Accepted(a4)]
    assert t.accepted == [a1, a2, a3, a4]


def test_duplicates_are_dropped_silently_and_counted() -> None:
    t = _fresh()
    a1, a2, a3, _ = CHAINS[0]
    t.receive(a1.wire)
    t.receive(a3.wire)
    assert t.receive(a1.wire) == []  # accepted already: a replay
    assert t.receive(a3.wire) == []  # waiting in the buffer already
    assert t.duplicates == 2
    assert t.receive(a2.wire) == [Accepted(a2), Accepted(a3)]
    assert t.accepted == [a1, a2, a3]
    assert t.equivocations == []


def test_a_byte_duplicate_is_not_decoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Gap fill re-sends a lot: a copy of held bytes costs no second signature check.
    import protocol.transcript as transcript_module
    from protocol.envelope import decode as real

    t = _fresh()
    a1, _, a3, _ = CHAINS[0]
    t.receive(a1.wire)
    t.receive(a3.wire)
    calls: list[bytes] = []

    def counting(data: bytes, **kwargs: object) -> Envelope:
        calls.append(data)
        return real(data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(transcript_module, "decode", counting)
    assert t.receive(a1.wire) == []
    assert t.receive(a3.wire) == []
    assert calls == []
    assert t.duplicates == 2


def test_an_own_envelope_is_taken_without_a_second_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import protocol.transcript as transcript_module

    t = _fresh()
    calls: list[bytes] = []
    monkeypatch.setattr(transcript_module, "decode",
                        lambda data, **_kw: calls.append(data))  # never reached
    a1, a2, a3, _ = CHAINS[0]
    assert t.receive_own(a1) == [Accepted(a1)]
    assert t.receive_own(a3) == [Buffered(MEMBERS[0], 3)]
    assert t.receive_own(a2) == [Accepted(a2), Accepted(a3)]
    assert t.receive_own(a2) == []
    assert calls == []
    assert t.duplicates == 1
    # The same chain rules as for anyone's: a second envelope for a slot is a fork.
    other = _chain(PEOPLE[0], 1, tag="other")[0]
    assert [type(e) for e in t.receive_own(other)] == [Equivocated]
    # Only this table's members and kinds.
    for env in (_chain(OUTSIDER, 1)[0], _chain(PEOPLE[1], 1, table=b"table-U")[0],
                Envelope.seal(PEOPLE[1], table=TABLE, seq=1, prev=ZERO_HASH, kind="other",
                              body={})):
        with pytest.raises(LocalProtocolError):
            t.receive_own(env)


def test_adopt_holds_the_other_branch_of_a_fork_and_takes_its_successors() -> None:
    t = _fresh()
    a1, a2, a3, a4 = CHAINS[0]
    other = _chain(PEOPLE[0], 2, tag="b", start=a1)  # seq 2 and 3 of a second branch
    for env in (a1, other[0], other[1]):
        t.receive(env.wire)
    assert t.chain(MEMBERS[0]) == (a1, other[0], other[1])
    # The first branch's seq 3 does not link here: a fork, and it is not held.
    assert [type(e) for e in t.receive(a2.wire)] == [Equivocated]
    assert [type(e) for e in t.receive(a3.wire)] == [Equivocated]
    assert t.adopt(a2) == [Accepted(a2)]
    assert t.chain(MEMBERS[0]) == (a1, a2)
    assert t.receive(a3.wire) == [Accepted(a3)]  # its successors link now
    assert t.receive(a4.wire) == [Accepted(a4)]
    assert t.adopt(a2) == []  # held already
    with pytest.raises(LocalProtocolError):
        t.adopt(other[1])  # seq 3 of the dropped branch: does not link to a2
    with pytest.raises(LocalProtocolError):
        t.adopt(CHAINS[1][0])  # nothing held for that member yet


def test_a_second_signature_over_the_same_content_is_a_duplicate_not_a_fork() -> None:
    # Ed25519 lets a signer make many signatures on one message; the id does not
    # cover the signature, so this is the same envelope.
    import json

    from protocol import canonical
    a1 = CHAINS[0][0]
    obj = json.loads(a1.signed)
    other_sig = PEOPLE[0].sign("envelope", a1.signed)  # deterministic: same bytes
    assert other_sig == a1.signature
    obj["sig"] = canonical.b64encode(other_sig)
    t = _fresh()
    t.receive(a1.wire)
    assert t.receive(canonical.encode(obj)) == []


def test_equivocation_same_seq_after_acceptance() -> None:
    t = _fresh()
    for env in CHAINS[1][:2]:
        t.receive(env.wire)
    fork = _chain(PEOPLE[1], 1, tag="fork", start=CHAINS[1][0])[0]
    events = t.receive(fork.wire)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, Equivocated)
    assert event.author == MEMBERS[1]
    assert t.equivocations == [event.evidence]
    assert t.chain(MEMBERS[1]) == tuple(CHAINS[1][:2])  # the first one seen stays
    # A third party who knows only the table and its members convicts the author.
    assert event.evidence.verify(table=TABLE, members=MEMBERS) == MEMBERS[1]
    # The same evidence again is not news.
    assert t.receive(fork.wire) == []


def test_equivocation_same_seq_in_the_buffer() -> None:
    t = _fresh()
    a3 = CHAINS[0][2]
    fork3 = _chain(PEOPLE[0], 1, tag="fork", start=CHAINS[0][1])[0]
    t.receive(a3.wire)
    [event] = t.receive(fork3.wire)
    assert isinstance(event, Equivocated)
    assert event.evidence.verify(table=TABLE, members=MEMBERS) == MEMBERS[0]


def test_equivocation_by_a_broken_link_in_order_and_from_the_buffer() -> None:
    a1, a2 = CHAINS[2][:2]
    fork2 = _chain(PEOPLE[2], 1, tag="fork", start=a1)[0]
    fork3 = _chain(PEOPLE[2], 1, tag="fork", start=fork2)[0]
    # In order: seq 3 whose prev is the fork's id, not a2's.
    t = _fresh()
    for env in (a1, a2):
        t.receive(env.wire)
    [event] = t.receive(fork3.wire)
    assert isinstance(event, Equivocated)
    assert event.evidence.verify(table=TABLE, members=MEMBERS) == MEMBERS[2]
    assert t.heads() == Cut((0, 0, 2))
    # Buffered first, found out when a2 releases it.
    t = _fresh()
    t.receive(a1.wire)
    assert t.receive(fork3.wire) == [Buffered(MEMBERS[2], 3)]
    events = t.receive(a2.wire)
    assert events[0] == Accepted(a2)
    assert isinstance(events[1], Equivocated)
    assert t.buffered == 0
    assert t.missing() == []


def test_equivocation_evidence_round_trips_and_is_order_independent() -> None:
    a2 = CHAINS[0][1]
    fork = _chain(PEOPLE[0], 1, tag="x", start=CHAINS[0][0])[0]
    ev = Equivocation.of(a2, fork)
    assert ev == Equivocation.of(fork, a2)
    back = Equivocation.from_bytes(ev.to_bytes())
    assert back == ev
    assert back.verify(table=TABLE, members=MEMBERS) == MEMBERS[0]


def test_evidence_that_proves_nothing_is_refused() -> None:
    a1, a2, a3, _ = CHAINS[0]
    b1 = CHAINS[1][0]
    cases = {
        "different authors": Equivocation(a1.wire, b1.wire),
        "same envelope": Equivocation(a1.wire, a1.wire),
        "a chain, not a fork": Equivocation(a1.wire, a2.wire),
        "far apart": Equivocation(a1.wire, a3.wire),
        "wrong order": Equivocation(a2.wire, a1.wire),
    }
    for name, ev in cases.items():
        with pytest.raises(InvalidEvidence) as info:
            ev.verify(table=TABLE, members=MEMBERS)
        assert info.value.evidence == ev.to_bytes(), name
    fork = _chain(PEOPLE[0], 1, tag="x", start=a1)[0]
    good = Equivocation.of(a2, fork)
    with pytest.raises(WrongTable):
        good.verify(table=b"other", members=MEMBERS)
    with pytest.raises(NotAMember):
        good.verify(table=TABLE, members=MEMBERS[1:])
    with pytest.raises(InvalidEncoding):
        Equivocation.from_bytes(b'{"first":"AA"}')


def test_gap_detection_names_the_missing_slots() -> None:
    t = _fresh()
    t.receive(CHAINS[0][0].wire)
    t.receive(CHAINS[0][3].wire)
    t.receive(CHAINS[2][2].wire)
    assert t.missing() == [(MEMBERS[0], 2), (MEMBERS[0], 3), (MEMBERS[2], 1), (MEMBERS[2], 2)]
    # A head announced by a peer (or a checkpoint) extends what to ask for.
    assert t.missing({MEMBERS[1]: 2, MEMBERS[0]: 1}) == [
        (MEMBERS[0], 2), (MEMBERS[0], 3), (MEMBERS[1], 1), (MEMBERS[1], 2),
        (MEMBERS[2], 1), (MEMBERS[2], 2)]
    # Filling the gaps from any peer completes the chains.
    for env in (CHAINS[0][1], CHAINS[0][2], CHAINS[2][0], CHAINS[2][1]):
        t.receive(env.wire)
    assert t.missing() == []
    assert t.heads() == Cut((4, 0, 3))


def test_reorder_window_and_buffer_are_bounded() -> None:
    long_chain = _chain(PEOPLE[0], 12)
    t = _fresh(max_ahead=4, max_buffered=3)
    with pytest.raises(TooFarAhead) as info:
        t.receive(long_chain[5].wire)  # seq 6 with head 0: 6 > 4
    assert info.value.evidence == long_chain[5].wire
    for env in long_chain[1:4]:
        t.receive(env.wire)
    assert t.buffered == 3
    with pytest.raises(BufferFull):
        t.receive(CHAINS[1][1].wire)
    assert t.missing({MEMBERS[0]: 100}) == [(MEMBERS[0], 1)]  # capped by the window
    assert t.receive(long_chain[0].wire)[-1] == Accepted(long_chain[3])
    assert t.buffered == 0


def test_envelopes_from_outside_the_table_are_refused() -> None:
    t = _fresh()
    with pytest.raises(NotAMember):
        t.receive(_chain(OUTSIDER, 1)[0].wire)
    with pytest.raises(WrongTable):
        t.receive(_chain(PEOPLE[0], 1, table=b"elsewhere")[0].wire)
    with pytest.raises(InvalidEncoding):
        t.receive(CHAINS[0][0].wire[:-3])
    assert t.heads() == Cut((0, 0, 0))


def test_root_is_defined_over_the_cut() -> None:
    t = _fresh()
    for env in ALL:
        t.receive(env.wire)
    cut = Cut((2, 0, 4))
    # The definition written out by hand: SHA-256 over the labelled, length-prefixed
    # table, member count and (key, head, id of the head envelope) per member.
    parts = [TABLE, (3).to_bytes(8, "big")]
    for member, head, chain in zip(MEMBERS, cut.heads, CHAINS, strict=True):
        parts += [member.raw, head.to_bytes(8, "big"), chain[head - 1].id if head else ZERO_HASH]
    expected = hashlib.sha256(encode(label("transcript-root"), *parts)).digest()
    assert t.root(cut) == expected
    assert root_of(TABLE, MEMBERS, cut.heads,
                   [CHAINS[0][1].id, ZERO_HASH, CHAINS[2][3].id]) == expected
    assert t.root() == t.root(Cut((4, 4, 4))) != expected
    with pytest.raises(LocalProtocolError):
        t.root(Cut((5, 0, 0)))
    assert not t.covers(Cut((1, 1)))


@given(st.permutations(ALL), st.permutations(ALL), st.lists(st.sampled_from(ALL), max_size=6))
def test_roots_agree_whatever_the_arrival_order(first: list[Envelope], second: list[Envelope],
                                                 replays: list[Envelope]) -> None:
    roots = []
    for order in (first, second + replays):
        t = _fresh()
        released: list[Envelope] = []
        for env in order:
            released += [e.envelope for e in t.receive(env.wire) if isinstance(e, Accepted)]
        # Each author's envelopes came out in chain order.
        for member in MEMBERS:
            seqs = [e.seq for e in released if e.author == member]
            assert seqs == [1, 2, 3, 4]
        assert t.duplicates == (len(replays) if order is not first else 0)
        roots.append((t.root(), t.root(Cut((1, 2, 3)))))
    assert roots[0] == roots[1]


def test_roots_differ_for_other_members_or_tables() -> None:
    cut = (0, 0, 0)
    ids = [ZERO_HASH] * 3
    base = root_of(TABLE, MEMBERS, cut, ids)
    assert base != root_of(b"other", MEMBERS, cut, ids)
    assert base != root_of(TABLE, list(reversed(MEMBERS)), cut, ids)


def test_cut_text_round_trip() -> None:
    cut = Cut((3, 0, 12))
    assert str(cut) == "3,0,12"
    assert Cut.from_text("3,0,12") == cut
    assert eval(repr(cut), {"Cut": Cut}) == cut
    # A head beyond 2**53 - 1, and one too long for int() at all (Python refuses
    # more than 4300 digits with a ValueError): both are remote input errors.
    for bad in ("", "1,,2", "01", "-1", "1.5", "\u0661", str(2**53), "1" * 5000):
        with pytest.raises(InvalidEncoding):
            Cut.from_text(bad)
    with pytest.raises(LocalProtocolError):
        Cut(())


def test_members_must_be_distinct() -> None:
    with pytest.raises(LocalProtocolError):
        Transcript(table=TABLE, members=[MEMBERS[0], MEMBERS[0]], kinds=None)
