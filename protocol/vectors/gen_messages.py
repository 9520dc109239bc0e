"""Vectors for messages: canonical JSON, identities, envelopes, a transcript, checkpoints.

Everything comes from ``DeterministicRng(SEED)``: three identity seeds, then
deterministic Ed25519 signatures. Text fields (``wire``, ``signed``, ``statement``)
are the exact UTF-8 bytes as a JSON string; hex fields are raw bytes.
"""

from __future__ import annotations

from typing import Any, Final

from protocol import canonical, domain
from protocol.checkpoint import Checkpoint, SignatureCollector
from protocol.envelope import ZERO_HASH, Envelope
from protocol.identity import Identity
from protocol.rng import DeterministicRng
from protocol.transcript import Cut, Equivocation, Transcript

SEED: Final = b"p2pkille messages vectors v1"
TABLE: Final = b"vector-table-0001"
KINDS: Final = ("chat", "deal.step", "hand.open")

# Canonical encodings: (value, canonical text). Covers key order by code point
# (not UTF-16 order: U+FF21 sorts before U+1F600), escapes, integer bounds, nesting.
CANONICAL_VALID: Final[list[tuple[Any, str]]] = [
    ({}, "{}"),
    ([], "[]"),
    ({"b": 1, "a": [True, False, None], "": "x"}, '{"":"x","a":[true,false,null],"b":1}'),
    ({"\U0001f600": 1, "\uff21": 2, "Z": 3, "a": 4},
     '{"Z":3,"a":4,"\uff21":2,"\U0001f600":1}'),
    ("quote\" backslash\\ nl\n tab\t bs\b ff\f cr\r nul\x00 us\x1f del\x7f",
     '"quote\\" backslash\\\\ nl\\n tab\\t bs\\b ff\\f cr\\r nul\\u0000 us\\u001f del\x7f"'),
    ("Kille \u00e5\u00e4\u00f6 \u2660 \U0001f0a1", '"Kille \u00e5\u00e4\u00f6 \u2660 \U0001f0a1"'),
    ("ls\u2028 ps\u2029 bom\ufeff", '"ls\u2028 ps\u2029 bom\ufeff"'),
    ("e\u0301", '"e\u0301"'),  # not normalised: NFD stays NFD
    ([0, -1, 9007199254740991, -9007199254740991], "[0,-1,9007199254740991,-9007199254740991]"),
    ({"bytes": canonical.b64encode(bytes(range(5)))}, '{"bytes":"AAECAwQ"}'),
]

# Byte strings every decoder must refuse with InvalidEncoding, and why.
CANONICAL_INVALID: Final[list[tuple[bytes, str]]] = [
    (b'{"a":1,"a":1}', "duplicate key"),
    (b'{"b":1,"a":2}', "keys out of order"),
    (b'{"a": 1}', "insignificant whitespace"),
    (b'{"a":1}\n', "trailing newline"),
    (b'\xef\xbb\xbf{"a":1}', "byte order mark"),
    (b'{"a":1.0}', "float"),
    (b'{"a":1e3}', "exponent"),
    (b'{"a":-0}', "negative zero"),
    (b'{"a":01}', "leading zero"),
    (b'{"a":9007199254740992}', "integer beyond 2**53 - 1"),
    (b'{"a":NaN}', "NaN"),
    (b'{"a":"\\u0041"}', "needless escape"),
    (b'{"a":"\\/"}', "escaped solidus"),
    (b'{"a":"\\u001F"}', "uppercase hex escape"),
    (b'{"a":"\\ud800"}', "lone surrogate"),
    (b'{"a":"\xed\xa0\x80"}', "UTF-8 encoded surrogate"),
    (b'{"a":"\xc0\xaf"}', "overlong UTF-8"),
    (b'{"a":"\x01"}', "raw control character"),
    (b"[" * 33 + b"]" * 33, "nesting deeper than 32"),
    (b"{'a':1}", "not JSON"),
    (b"", "empty"),
]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8")


def generate() -> dict[str, Any]:
    rng = DeterministicRng(SEED)
    seeds = [rng.randbytes(32) for _ in range(3)]
    people = [Identity.from_seed(s) for s in seeds]
    members = [p.public for p in people]

    signature_message = b"vector message"
    signatures = [
        {
            "signer": i,
            "purpose": purpose,
            "message_hex": signature_message.hex(),
            "signed_input_hex": domain.encode(domain.label(purpose), signature_message).hex(),
            "signature_hex": people[i].sign(purpose, signature_message).hex(),
        }
        for i, purpose in [(0, "envelope"), (0, "checkpoint"), (1, "envelope")]
    ]

    # Three envelopes per author, author-major; seq 2 of author 1 has a nested body.
    chains: list[list[Envelope]] = []
    for i, person in enumerate(people):
        chain: list[Envelope] = []
        prev = ZERO_HASH
        for seq in (1, 2, 3):
            body: dict[str, object] = {"n": seq, "seat": i, "text": f"hej fr\u00e5n {i}"}
            if (i, seq) == (1, 2):
                body["nested"] = {"list": [1, [2, [3]]], "bytes": canonical.b64encode(b"\xff")}
            env = Envelope.seal(person, table=TABLE, seq=seq, prev=prev, kind=KINDS[seq - 1],
                                body=body)
            chain.append(env)
            prev = env.id
        chains.append(chain)
    flat = [e for chain in chains for e in chain]
    envelopes = [
        {"author": i, "seq": e.seq, "kind": e.kind, "body": e.body, "signed": _text(e.signed),
         "wire": _text(e.wire), "id_hex": e.id.hex(), "sig_hex": e.signature.hex()}
        for i, chain in enumerate(chains) for e in chain
    ]

    transcript = Transcript(table=TABLE, members=members, kinds=KINDS)
    for env in reversed(flat):
        transcript.receive(env.wire)
    partial = Cut((2, 0, 3))
    roots = [{"cut": list(c.heads), "root_hex": transcript.root(c).hex()}
             for c in (Cut((0, 0, 0)), partial, transcript.heads())]

    fork = Envelope.seal(people[2], table=TABLE, seq=2, prev=chains[2][0].id, kind="chat",
                         body={"n": 2, "forked": True})
    same_seq = Equivocation.of(chains[2][1], fork)
    link_fork = Envelope.seal(people[2], table=TABLE, seq=3, prev=fork.id, kind="chat",
                              body={"n": 3})
    broken_link = Equivocation.of(chains[2][1], link_fork)

    first = Checkpoint.of(transcript, hand=1, state=domain.hash32("vector-state", b"1"),
                          cut=partial)
    second = Checkpoint.of(transcript, hand=2, state=domain.hash32("vector-state", b"2"),
                           prev=first.id)
    checkpoints = []
    for cp in (first, second):
        collector = SignatureCollector(cp)
        committed = None
        for person in people:
            committed = collector.add(person.public, cp.sign(person))
        assert committed is not None
        checkpoints.append({
            "statement": _text(cp.encode()),
            "id_hex": cp.id.hex(),
            "signatures_hex": [s.hex() for s in committed.signatures],
            "committed": _text(committed.encode()),
        })

    return {
        "description": "p2pkille message vectors: docs/protocol.md section 10",
        "seed": _text(SEED),
        "labels": {p: _text(domain.label(p)) for p in
                   ("identity-fingerprint", "envelope", "envelope-id", "transcript-root",
                    "checkpoint", "checkpoint-id")},
        "canonical": {
            "valid": [{"value": v, "encoded": t} for v, t in CANONICAL_VALID],
            "invalid": [{"hex": b.hex(), "reason": r} for b, r in CANONICAL_INVALID],
        },
        "identities": [
            {"seed_hex": s.hex(), "public": str(p.public), "public_hex": p.public.raw.hex(),
             "fingerprint": p.public.fingerprint}
            for s, p in zip(seeds, people, strict=True)
        ],
        "signatures": signatures,
        "table_hex": TABLE.hex(),
        "kinds": list(KINDS),
        "envelopes": envelopes,
        "transcript": {"members": [str(m) for m in members], "roots": roots},
        "equivocations": [
            {"case": "same seq", "encoded": _text(same_seq.to_bytes()), "author": 2},
            {"case": "broken link", "encoded": _text(broken_link.to_bytes()), "author": 2},
        ],
        "checkpoints": checkpoints,
    }
