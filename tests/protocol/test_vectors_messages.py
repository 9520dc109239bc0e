"""protocol/vectors/messages.json: recomputed byte for byte, and re-checked through the
decoders as another implementation would use the file."""

from __future__ import annotations

import pytest

from protocol import canonical, domain
from protocol.checkpoint import Checkpoint, CommittedCheckpoint
from protocol.envelope import decode
from protocol.errors import InvalidEncoding
from protocol.identity import Identity, PublicKey
from protocol.transcript import Accepted, Cut, Equivocation, Transcript
from protocol.vectors import dumps, generate, load

DOC = load("messages")
TABLE = bytes.fromhex(DOC["table_hex"])
MEMBERS = [PublicKey.from_text(m) for m in DOC["transcript"]["members"]]


def test_the_file_is_what_the_generator_computes() -> None:
    assert dumps(generate("messages")) == dumps(DOC)


def test_labels() -> None:
    for purpose, text in DOC["labels"].items():
        assert domain.label(purpose) == text.encode()
        assert text == f"p2pkille-protocol/v1/{purpose}"


def test_canonical_vectors() -> None:
    for case in DOC["canonical"]["valid"]:
        assert canonical.encode(case["value"]) == case["encoded"].encode()
        assert canonical.decode(case["encoded"].encode()) == case["value"]
    for case in DOC["canonical"]["invalid"]:
        with pytest.raises(InvalidEncoding):
            canonical.decode(bytes.fromhex(case["hex"]))


def test_identity_and_signature_vectors() -> None:
    people = [Identity.from_seed(bytes.fromhex(i["seed_hex"])) for i in DOC["identities"]]
    for person, case in zip(people, DOC["identities"], strict=True):
        assert person.public.raw.hex() == case["public_hex"]
        assert str(person.public) == case["public"]
        assert person.public.fingerprint == case["fingerprint"]
    assert [p.public for p in people] == MEMBERS
    for case in DOC["signatures"]:
        message = bytes.fromhex(case["message_hex"])
        signed = domain.encode(domain.label(case["purpose"]), message)
        assert signed.hex() == case["signed_input_hex"]
        sig = bytes.fromhex(case["signature_hex"])
        assert people[case["signer"]].sign(case["purpose"], message) == sig
        MEMBERS[case["signer"]].verify(case["purpose"], message, sig)


def test_envelope_vectors_decode_and_chain() -> None:
    prev_ids: dict[int, bytes] = {}
    for case in DOC["envelopes"]:
        env = decode(case["wire"].encode(), table=TABLE, members=MEMBERS, kinds=DOC["kinds"])
        assert env.author == MEMBERS[case["author"]]
        assert (env.seq, env.kind, env.body) == (case["seq"], case["kind"], case["body"])
        assert env.signed == case["signed"].encode()
        assert env.id.hex() == case["id_hex"]
        assert env.signature.hex() == case["sig_hex"]
        assert env.prev == prev_ids.get(case["author"], bytes(32))
        prev_ids[case["author"]] = env.id


def test_transcript_root_vectors() -> None:
    t = Transcript(table=TABLE, members=MEMBERS, kinds=DOC["kinds"])
    released = []
    for case in DOC["envelopes"]:
        released += [e for e in t.receive(case["wire"].encode()) if isinstance(e, Accepted)]
    assert len(released) == len(DOC["envelopes"])
    for case in DOC["transcript"]["roots"]:
        assert t.root(Cut(tuple(case["cut"]))).hex() == case["root_hex"]


def test_equivocation_vectors() -> None:
    for case in DOC["equivocations"]:
        ev = Equivocation.from_bytes(case["encoded"].encode())
        assert ev.to_bytes() == case["encoded"].encode()
        assert ev.verify(table=TABLE, members=MEMBERS) == MEMBERS[case["author"]]


def test_checkpoint_vectors() -> None:
    previous: Checkpoint | None = None
    for case in DOC["checkpoints"]:
        cp = Checkpoint.decode(case["statement"].encode(), table=TABLE, members=MEMBERS)
        assert cp.id.hex() == case["id_hex"]
        committed = CommittedCheckpoint.decode(case["committed"].encode(), table=TABLE,
                                               members=MEMBERS)
        assert committed.checkpoint == cp
        assert [s.hex() for s in committed.signatures] == case["signatures_hex"]
        if previous is not None:
            cp.check_follows(previous)
        previous = cp


def test_the_file_has_every_section() -> None:
    for key in ("canonical", "identities", "signatures", "envelopes", "transcript",
                "equivocations", "checkpoints"):
        assert DOC[key], key
    assert len(DOC["envelopes"]) == 9


def test_the_spec_lists_every_label_this_part_uses() -> None:
    import re
    from pathlib import Path

    from protocol import checkpoint, envelope, transcript
    spec = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    table = spec.split("Labels used by this part")[1].split("### 10.2")[0]
    in_spec = set(re.findall(r"^\| `([a-z-]+)` +\|", table, re.MULTILINE))
    in_code = {"identity-fingerprint", envelope.SIGN_PURPOSE, envelope.ID_PURPOSE,
               transcript.ROOT_PURPOSE, checkpoint.SIGN_PURPOSE, checkpoint.ID_PURPOSE}
    assert in_spec == in_code == set(DOC["labels"])


def test_identities_are_in_ascending_key_order_as_a_table_orders_members() -> None:
    raws = [bytes.fromhex(i["public_hex"]) for i in DOC["identities"]]
    assert raws == sorted(raws)
    assert [m.raw for m in MEMBERS] == raws


def test_every_refused_public_key_is_refused() -> None:
    cases = DOC["refused"]["public_keys"]
    assert len(cases) >= 16
    for case in cases:
        with pytest.raises(InvalidEncoding):
            PublicKey.from_bytes(bytes.fromhex(case["hex"]))


def test_the_small_order_keys_listed_are_every_point_of_order_1_2_4_or_8() -> None:
    from protocol import identity as ed

    small = set()
    for case in DOC["refused"]["public_keys"]:
        if case["reason"].startswith("small order"):
            point = ed._decompress(bytes.fromhex(case["hex"]))
            assert point is not None, case
            assert ed._is_identity(ed._mul(8, point)), case
            small.add(case["hex"])
    # A cyclic group of order 8: eight points, each listed once, canonically encoded.
    assert len(small) == 8
    mixed = next(c for c in DOC["refused"]["public_keys"] if c["reason"].startswith("mixed"))
    point = ed._decompress(bytes.fromhex(mixed["hex"]))
    assert point is not None
    assert not ed._is_identity(ed._mul(2**252 + 27742317777372353535851937790883648493, point))


def test_every_refused_delivery_key_is_refused() -> None:
    from protocol.keys import check_delivery_key

    for case in DOC["refused"]["delivery_keys"]:
        with pytest.raises(InvalidEncoding):
            check_delivery_key(bytes.fromhex(case["hex"]))


def test_every_refused_signature_is_refused() -> None:
    from protocol.errors import InvalidSignature

    cases = DOC["refused"]["signatures"]
    for case in cases:
        with pytest.raises(InvalidSignature):
            MEMBERS[case["signer"]].verify(case["purpose"], bytes.fromhex(case["message_hex"]),
                                           bytes.fromhex(case["signature_hex"]))
    # The identity-R signature is no mere garbage: RFC 8032's cofactorless equation (and
    # OpenSSL) accepts it, which is why docs 10.3 lists it.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    identity_r = next(c for c in cases if c["reason"].startswith("R = the identity, S"))
    Ed25519PublicKey.from_public_bytes(MEMBERS[0].raw).verify(
        bytes.fromhex(identity_r["signature_hex"]),
        domain.encode(domain.label("envelope"), bytes.fromhex(identity_r["message_hex"])))


def test_every_refused_envelope_fails_at_its_check_with_its_error() -> None:
    from protocol import envelope
    from protocol.errors import InvalidSignature

    errors = {cls.__name__: cls for cls in (
        envelope.MalformedEnvelope, envelope.WrongVersion, envelope.WrongTable,
        envelope.UnknownKind, envelope.NotAMember, InvalidSignature)}
    cases = DOC["refused"]["envelopes"]
    assert {c["check"] for c in cases} == set(range(3, 10))
    for case in cases:
        with pytest.raises(errors[case["error"]]) as info:
            decode(case["wire"].encode(), table=TABLE, members=MEMBERS, kinds=DOC["kinds"])
        assert type(info.value) is errors[case["error"]], case["reason"]
        assert info.value.evidence == case["wire"].encode()
