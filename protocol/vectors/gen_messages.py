"""Vectors for messages: canonical JSON, identities, envelopes, a transcript, checkpoints.

Everything comes from ``DeterministicRng(SEED)``: three identity seeds, then
deterministic Ed25519 signatures. Text fields (``wire``, ``signed``, ``statement``)
are the exact UTF-8 bytes as a JSON string; hex fields are raw bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from protocol import canonical, domain
from protocol import identity as ed
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
    drawn = [rng.randbytes(32) for _ in range(3)]
    # Members in ascending key order, as a table orders them (docs II.1): author i of
    # every vector below is member i of that order.
    seeds = sorted(drawn, key=lambda s: Identity.from_seed(s).public.raw)
    people = [Identity.from_seed(s) for s in seeds]
    members = [p.public for p in people]
    outsider = Identity.from_seed(rng.randbytes(32))

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
        "refused": _refused(seeds, people, outsider, chains[0][1]),
    }


# -- what a receiver must refuse (docs/protocol.md 10.3, 10.4) -----------------------------

_P: Final = 2**255 - 19
_L: Final = 2**252 + 27742317777372353535851937790883648493
# The y of the points of order 8 (the other is -y); libsodium lists the same two.
_Y8: Final = 2707385501144840649318225287225658788936804267575313519463743609750303402022
# The u of the X25519 points of order 8 (RFC 7748's curve; libsodium lists the same two).
_U8: Final = (325606250916557431795983626356110631294008115727848805560023387167927233504,
              39382357235489614581723060781553021112529911719440698176882885853963445705823)


def _ed(y: int, sign: int = 0) -> bytes:
    """An Ed25519 point encoding: y little-endian with the sign of x in bit 255."""
    return (y | sign << 255).to_bytes(32, "little")


def _bad_public_keys(honest: bytes) -> list[tuple[bytes, str]]:
    base = ed._decompress(honest)
    order4 = ed._decompress(bytes(32))
    assert base is not None
    assert order4 is not None
    x, y, z, _ = ed._add(base, order4)
    zi = pow(z, -1, _P)
    mixed = _ed(y * zi % _P, x * zi % _P & 1)
    return [
        (_ed(1), "small order: the identity (order 1)"),
        (_ed(_P - 1), "small order: y = -1, x = 0 (order 2)"),
        (_ed(0, 0), "small order: y = 0 (order 4)"),
        (_ed(0, 1), "small order: y = 0, the other x (order 4)"),
        (_ed(_Y8, 0), "small order: order 8"),
        (_ed(_Y8, 1), "small order: order 8, the other x"),
        (_ed(_P - _Y8, 0), "small order: order 8 (y negated)"),
        (_ed(_P - _Y8, 1), "small order: order 8 (y negated), the other x"),
        (mixed, "mixed order: a member's key plus the point of order 4 with y = 0"),
        (_ed(1, 1), "not canonical: x = 0 with the sign bit set (the identity)"),
        (_ed(_P - 1, 1), "not canonical: x = 0 with the sign bit set (order 2)"),
        (_ed(_P), "not canonical: y = p (y = 0, order 4)"),
        (_ed(_P + 1), "not canonical: y = p + 1 (the identity)"),
        (_ed(2), "not on the curve: y = 2 has no x"),
        (bytes(31), "31 bytes"),
        (honest + b"\x00", "33 bytes"),
    ]


def _bad_delivery_keys() -> list[tuple[bytes, str]]:
    # A clamped X25519 scalar is a multiple of 8: each of these u maps to the all-zero
    # shared secret, for every private key.
    u = [(0, "u = 0"), (1, "u = 1"), (_U8[0], "u of a point of order 8"),
         (_U8[1], "u of the other point of order 8"), (_P - 1, "u = p - 1"),
         (_P, "u = p, not reduced (u = 0)"), (_P + 1, "u = p + 1, not reduced (u = 1)")]
    out = [(v.to_bytes(32, "little"), "low order: " + why) for v, why in u]
    out.append(((1 << 255).to_bytes(32, "little"),
                "low order: u = 0 with bit 255 set (X25519 ignores bit 255)"))
    out.append(((_U8[0] | 1 << 255).to_bytes(32, "little"),
                "low order: a point of order 8 with bit 255 set"))
    out.append((bytes(31), "31 bytes"))
    return out


def _scalar_of(seed: bytes) -> int:
    """The Ed25519 secret scalar of an RFC 8032 seed (clamped)."""
    h = hashlib.sha512(seed).digest()
    return int.from_bytes(h[:32], "little") & ((1 << 254) - 8) | (1 << 254)


def _bad_signatures(seeds: list[bytes], people: list[Identity]) -> list[dict[str, object]]:
    message = b"vector message"
    purpose = "envelope"
    signed = domain.encode(domain.label(purpose), message)
    good = people[0].sign(purpose, message)
    s = int.from_bytes(good[32:], "little")

    def identity_r(r: bytes) -> bytes:
        # The key's owner can make R the identity: S = k a gives [S]B - [k]A = identity.
        k = int.from_bytes(hashlib.sha512(r + people[0].public.raw + signed).digest(),
                           "little") % _L
        return r + (k * _scalar_of(seeds[0]) % _L).to_bytes(32, "little")

    cases = [
        (good[:63], "63 bytes"),
        (good + b"\x00", "65 bytes"),
        (bytes([good[0] ^ 1]) + good[1:], "R with one bit flipped"),
        (good[:32] + bytes([good[32] ^ 1]) + good[33:], "S with one bit flipped"),
        (good[:32] + (s + _L).to_bytes(32, "little"), "S + L: S must be below L"),
        (identity_r(_ed(1)), "R = the identity, S = k a: satisfies [S]B = R + [k]A "
         "(OpenSSL accepts it); refused as a small-order R"),
        (identity_r(_ed(_P + 1)), "R = the identity encoded y = p + 1 (not canonical): "
         "R is compared as bytes"),
        (people[0].sign("checkpoint", message), "signed for the purpose checkpoint"),
        (people[1].sign(purpose, message), "signed by member 1"),
    ]
    return [{"signer": 0, "purpose": purpose, "message_hex": message.hex(),
             "signature_hex": sig.hex(), "reason": why} for sig, why in cases]


def _bad_envelopes(people: list[Identity], outsider: Identity, good: Envelope
                   ) -> list[dict[str, object]]:
    base = canonical.decode_object(good.wire)

    def edit(reason: str, check: int, error: str, **changes: object) -> dict[str, object]:
        obj: dict[str, object] = {k: v for k, v in base.items()
                                  if changes.get(k, 0) is not None}
        obj.update({k: v for k, v in changes.items() if v is not None})
        return {"check": check, "error": error, "reason": reason,
                "wire": _text(canonical.encode(obj))}

    def sealed(reason: str, check: int, error: str, who: Identity, *, table: bytes = TABLE,
               kind: str = "chat") -> dict[str, object]:
        env = Envelope.seal(who, table=table, seq=1, prev=ZERO_HASH, kind=kind,
                            body={"n": 1})
        return {"check": check, "error": error, "reason": reason, "wire": _text(env.wire)}

    b64 = canonical.b64encode
    changed = dict(good.body)
    changed["n"] = 3
    forged = canonical.decode_object(Envelope.seal(
        people[1], table=TABLE, seq=good.seq, prev=good.prev, kind=good.kind,
        body=good.body).wire)["sig"]
    return [
        edit("no field v", 3, "MalformedEnvelope", v=None),
        edit("v = 2", 4, "WrongVersion", v=2),
        edit("v = true", 4, "WrongVersion", v=True),
        edit('v = "1"', 4, "WrongVersion", v="1"),
        edit("a ninth field", 5, "MalformedEnvelope", x=1),
        edit("no field sig", 5, "MalformedEnvelope", sig=None),
        edit("seq = 0", 5, "MalformedEnvelope", seq=0),
        edit("seq is a string", 5, "MalformedEnvelope", seq="2"),
        edit("seq = 1 with a non-zero prev", 5, "MalformedEnvelope", seq=1),
        edit("seq = 2 with the zero prev", 5, "MalformedEnvelope", prev=b64(ZERO_HASH)),
        edit("prev of 31 bytes", 5, "MalformedEnvelope", prev=b64(bytes(31))),
        edit("author of 31 bytes", 5, "MalformedEnvelope", author=b64(bytes(31))),
        edit("table of 65 bytes", 5, "MalformedEnvelope", table=b64(bytes(65))),
        edit("table of 0 bytes", 5, "MalformedEnvelope", table=""),
        edit("kind with an upper-case letter", 5, "MalformedEnvelope", kind="Chat"),
        edit("body is not an object", 5, "MalformedEnvelope", body=[1]),
        edit("sig of 63 bytes", 5, "MalformedEnvelope", sig=b64(bytes(63))),
        sealed("signed for another table", 6, "WrongTable", people[0], table=b"another-table"),
        sealed("a kind outside the receiver's set", 7, "UnknownKind", people[0],
               kind="chat.unknown"),
        sealed("signed by a key that is no member", 8, "NotAMember", outsider),
        edit("body changed after signing", 9, "InvalidSignature", body=changed),
        edit("signed by member 1, author member 0", 9, "InvalidSignature", sig=forged),
    ]


def _refused(seeds: list[bytes], people: list[Identity], outsider: Identity, good: Envelope
             ) -> dict[str, object]:
    return {
        "public_keys": [{"hex": raw.hex(), "reason": why}
                        for raw, why in _bad_public_keys(people[0].public.raw)],
        "delivery_keys": [{"hex": raw.hex(), "reason": why}
                          for raw, why in _bad_delivery_keys()],
        "signatures": _bad_signatures(seeds, people),
        "envelopes": _bad_envelopes(people, outsider, good),
    }
