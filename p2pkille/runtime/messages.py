"""Envelope kinds of a table and their bodies; parsing raises only RemoteProtocolError.

Every body carries ``"hand"`` (0 during genesis). Bytes are base64 (canonical JSON).
See ``docs/protocol.md`` Part II for each kind's fields and when it is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from p2pkille.engine.facts import SaleAnswer
from p2pkille.runtime.steps import Step
from protocol import canonical
from protocol.canonical import JsonObject
from protocol.envelope import Envelope
from protocol.errors import InvalidEncoding

__all__ = [
    "KINDS",
    "Accusation",
    "BoxEntry",
    "ShareEntry",
    "check_body",
    "get_accusations",
    "get_boxes",
    "get_disclosed",
    "get_hand",
    "get_shares",
    "get_step",
]

COMMIT: Final = "commit"
NONCE: Final = "nonce"
ACCEPT: Final = "accept"
KEY: Final = "key"
SHUFFLE: Final = "shuffle"
DEAL: Final = "deal"
ACT: Final = "act"
ANSWER: Final = "answer"
DISCLOSE: Final = "disclose"
FORWARD: Final = "forward"
DRAW: Final = "draw"
SHOW: Final = "show"
REVEAL: Final = "reveal"
CHECKPOINT: Final = "checkpoint"
ACCUSE: Final = "accuse"
TIMEOUT: Final = "timeout"
SEEN: Final = "seen"
PET: Final = "pet"
REWOUND: Final = "rewound"
OVER: Final = "over"
LEAVE: Final = "leave"
PROPOSE: Final = "propose"
VOTE: Final = "vote"
KINDS: Final = frozenset({COMMIT, NONCE, ACCEPT, KEY, SHUFFLE, DEAL, ACT, ANSWER, DISCLOSE,
                          FORWARD, DRAW, SHOW, REVEAL, CHECKPOINT, ACCUSE, TIMEOUT, SEEN, PET,
                          REWOUND, OVER, LEAVE, PROPOSE, VOTE})
#: Per kind: the fields a body must have, and those it may have.
FIELDS: Final[dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    kind: (frozenset({"hand", *need}), frozenset(may))
    for kind, need, may in (
        (COMMIT, ("commit",), ()),
        (NONCE, ("nonce",), ()),
        (ACCEPT, ("genesis",), ()),
        (KEY, ("share",), ()),
        # audit tables: commit (no proof); strict tables: proof (no commit)
        (SHUFFLE, ("deck", "input"), ("commit", "proof")),
        (DEAL, ("boxes",), ()),
        (ACT, ("fact", "at"), ()),
        (ANSWER, ("shown",), ("shares", "pet")),
        (DISCLOSE, ("kille",), ("shares", "pet")),
        (FORWARD, ("to", "token", "boxes"), ()),
        (DRAW, ("token", "share"), ()),
        (SHOW, ("shares",), ()),
        (REVEAL, (), ("secret", "witness")),  # strict tables reveal nothing: a close
        (CHECKPOINT, ("id", "sig"), ()),
        # opened: shares that open a card a claim hid (audit tables); parts: the test
        # parts that show a strict claim false. Both prove a false-fact accusation.
        # cause: the id of the other holder's accuse that made an accuse with no
        # accusations join the void round; root: that accuse's bytes (II.11.1).
        # seen: per key holder, the id of its accuse the author held as it wrote this one
        (ACCUSE, ("accusations", "disclosed"), ("opened", "parts", "cause", "root",
                                                 "seen")),
        (TIMEOUT, ("seat", "stage", "at"), ()),
        (SEEN, ("seat", "stage", "at"), ()),
        (PET, ("at", "share"), ()),
        # after a node took back its own late decision: what it sent since is void
        (REWOUND, ("at",), ()),
        # a key holder of the game's last hand, after it counted that hand: tells the
        # members without a key that it moved on (docs/protocol.md II.7)
        (OVER, (), ()),
        # a member quits the table: its last envelope; ``hand`` is the hand it was in
        # (0 before the first deal). Its steps after it are due at once (II.11.4). A key
        # holder of that hand names the votes it stands by in the hand's agreement: the
        # outcome, the first round it signed nothing in, and the round of the polka the
        # standing prevote relies on (II.11.5)
        # (``of``: "verdict" once the hand is voided)
        (LEAVE, (), ("stand", "from", "pol", "of")),
        # the hand's agreements (II.11.5): a round's proposal of an outcome
        # ("commit:<hex>" or "void:<seats>"; with ``of`` "verdict", the void round's
        # verdict "verdict:<ids>;<seats>;<seats>") with the round of the polka it relies on
        (PROPOSE, ("round", "value"), ("valid", "of")),
        # a holder's prevote or precommit: an outcome, or null for nil; a prevote for an
        # outcome names the round of the polka it relies on
        (VOTE, ("round", "step", "value"), ("pol", "of")),
    )
}
#: The hand agreement's kinds (docs/agreement.md; p2pkille/runtime/decision.py).
AGREEMENT_KINDS: Final = frozenset({PROPOSE, VOTE})
MAX_SEATS: Final = 64
MAX_ENTRIES: Final = 64
# An accuse discloses its author's deal boxes and the forwards it sealed (a box per share
# of the card): with 38 holders, 37 + 2 x 37 entries of about 230 bytes, ~26 kB.
MAX_DISCLOSED: Final = 160
MAX_EVIDENCE: Final = 3 * 65536
MAX_REASON: Final = 200
_REASON: Final = re.compile(f"[ -~]{{0,{MAX_REASON}}}")
_KIND: Final = re.compile(r"[a-z-]{1,32}")


@dataclass(frozen=True, slots=True)
class Accusation:
    """One accusation of an ``accuse`` body: the accused table seat, the fault kind
    (a :class:`~p2pkille.runtime.faults.FaultKind` value), a printable reason and the
    evidence (an envelope of the accused, or equivocation evidence)."""

    accused: int
    kind: str
    reason: str
    evidence: bytes

    def to_json(self) -> JsonObject:
        return {"accused": self.accused, "evidence": canonical.b64encode(self.evidence),
                "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ShareEntry:
    """A public decryption share: its maker (protocol seat), the recipient of its context
    (table seat, ``None`` for a public share) and its 96 bytes."""

    sender: int
    recipient: int | None
    share: bytes

    def to_json(self) -> JsonObject:
        return {"by": self.sender, "for": self.recipient,
                "share": canonical.b64encode(self.share)}


@dataclass(frozen=True, slots=True)
class BoxEntry:
    """A sealed share: slot (token), maker, recipient of its context, box and digest."""

    token: int
    sender: int
    recipient: int | None
    box: bytes
    digest: bytes

    def to_json(self) -> JsonObject:
        return {"box": canonical.b64encode(self.box), "by": self.sender,
                "digest": canonical.b64encode(self.digest), "for": self.recipient,
                "token": self.token}


def check_body(kind: str, body: Mapping[str, object], evidence: bytes) -> None:
    """The body has every field its kind needs and nothing else (InvalidEncoding)."""
    need, may = FIELDS[kind]
    have = set(body)
    if not need <= have or not have <= need | may:
        raise InvalidEncoding(
            f"{kind} body: missing {sorted(need - have)}, unexpected {sorted(have - need - may)}",
            evidence=evidence)


def hand_of(env: Envelope) -> int | None:
    """The hand ``env`` names, read ahead of its consumption: None if it names none (a
    malformed one is its author's fault when it is consumed)."""
    number = env.body.get("hand")
    return number if type(number) is int else None


def act_of(env: Envelope) -> tuple[int | None, int | None]:
    """The seat and the step (fact count) a decision names, read ahead of consumption:
    None where it names none."""
    fact, at = env.body.get("fact"), env.body.get("at")
    seat = fact.get("seat") if isinstance(fact, dict) else None
    return (seat if type(seat) is int else None), (at if type(at) is int else None)


def peek_int(env: Envelope, key: str) -> int | None:
    """The integer field ``key`` of ``env``'s body, read ahead of consumption; None if
    there is none."""
    value = env.body.get(key)
    return value if type(value) is int else None


def carries_root(env: Envelope) -> bool:
    """Is ``env`` an accuse that carries the accuse it cites (read without parsing it)?"""
    return "root" in env.body


def accepts_sale(env: Envelope) -> bool:
    """Is ``env`` a decision that accepts a card sale (read ahead of consumption)?"""
    fact = env.body.get("fact")
    return (env.kind == ACT and isinstance(fact, dict)
            and fact.get("type") == SaleAnswer.TYPE and fact.get("accept") is True)


def get_hand(body: Mapping[str, object], evidence: bytes) -> int:
    return canonical.get_int(body, "hand", lo=0, hi=canonical.MAX_INT, what="body",
                             evidence=evidence)


def _seat(obj: Mapping[str, object], key: str, evidence: bytes, *, null: bool = False
          ) -> int | None:
    value = obj.get(key)
    if value is None and null and key in obj:
        return None
    return canonical.get_int(obj, key, lo=0, hi=MAX_SEATS - 1, what="entry", evidence=evidence)


def _entries(body: Mapping[str, object], key: str, evidence: bytes,
             limit: int = MAX_ENTRIES) -> list[JsonObject]:
    if key not in body:
        raise InvalidEncoding(f"body has no {key}", evidence=evidence)
    raw = canonical.get_list(body, key, what="body", evidence=evidence)
    if len(raw) > limit or not all(isinstance(e, dict) for e in raw):
        raise InvalidEncoding(f"{key}: a list of at most {limit} objects",
                              evidence=evidence)
    return [e for e in raw if isinstance(e, dict)]


def get_shares(body: Mapping[str, object], evidence: bytes) -> list[ShareEntry]:
    out = []
    for e in _entries(body, "shares", evidence):
        canonical.require_keys(e, ("by", "for", "share"), what="share", evidence=evidence)
        sender = _seat(e, "by", evidence)
        assert sender is not None
        out.append(ShareEntry(sender, _seat(e, "for", evidence, null=True),
                              canonical.get_bytes(e, "share", what="share", size=96,
                                                  evidence=evidence)))
    return out


def get_boxes(body: Mapping[str, object], evidence: bytes) -> list[BoxEntry]:
    out = []
    for e in _entries(body, "boxes", evidence):
        canonical.require_keys(e, ("box", "by", "digest", "for", "token"), what="box",
                               evidence=evidence)
        sender = _seat(e, "by", evidence)
        recipient = _seat(e, "for", evidence, null=True)
        assert sender is not None
        out.append(BoxEntry(
            canonical.get_int(e, "token", lo=0, hi=1023, what="box", evidence=evidence),
            sender, recipient,
            canonical.get_bytes(e, "box", what="box", min_size=1, max_size=4096,
                                evidence=evidence),
            canonical.get_bytes(e, "digest", what="box", size=32, evidence=evidence),
        ))
    return out


def get_accusations(body: Mapping[str, object], evidence: bytes) -> list[Accusation]:
    out = []
    for e in _entries(body, "accusations", evidence):
        canonical.require_keys(e, ("accused", "evidence", "kind", "reason"), what="accusation",
                               evidence=evidence)
        accused = _seat(e, "accused", evidence)
        assert accused is not None
        out.append(Accusation(
            accused,
            canonical.get_str(e, "kind", what="accusation", pattern=_KIND, evidence=evidence),
            canonical.get_str(e, "reason", what="accusation", pattern=_REASON,
                              evidence=evidence),
            canonical.get_bytes(e, "evidence", what="accusation", min_size=1,
                                max_size=MAX_EVIDENCE, evidence=evidence)))
    return out


def get_disclosed(body: Mapping[str, object], evidence: bytes
                  ) -> list[tuple[int, ShareEntry, bytes | None]]:
    """The ``disclosed`` list of an accuse body: (token, share entry, the sealed box's
    ephemeral private key or ``None``) per share its author opens, to answer a dispute
    over a box it sealed (with the key) or to prove a card (without)."""
    out = []
    for e in _entries(body, "disclosed", evidence, MAX_DISCLOSED):
        keys = ("by", "for", "share", "token")
        canonical.require_keys(e, (*keys, "key") if "key" in e else keys, what="disclosed",
                               evidence=evidence)
        sender = _seat(e, "by", evidence)
        assert sender is not None
        key = canonical.get_bytes(e, "key", what="disclosed", size=32,
                                  evidence=evidence) if "key" in e else None
        out.append((canonical.get_int(e, "token", lo=0, hi=1023, what="disclosed",
                                      evidence=evidence),
                    ShareEntry(sender, _seat(e, "for", evidence, null=True),
                               canonical.get_bytes(e, "share", what="disclosed", size=96,
                                                   evidence=evidence)),
                    key))
    return out


def get_opened(body: Mapping[str, object], evidence: bytes) -> list[tuple[int, ShareEntry]]:
    """The ``opened`` list of an accuse body: (token, share with its context's recipient)
    per share that opens a card the accused's claim hid (absent: none)."""
    if "opened" not in body:
        return []
    out = []
    for e in _entries(body, "opened", evidence):
        canonical.require_keys(e, ("by", "for", "share", "token"), what="opened",
                               evidence=evidence)
        sender = _seat(e, "by", evidence)
        assert sender is not None
        out.append((canonical.get_int(e, "token", lo=0, hi=1023, what="opened",
                                      evidence=evidence),
                    ShareEntry(sender, _seat(e, "for", evidence, null=True),
                               canonical.get_bytes(e, "share", what="opened", size=96,
                                                   evidence=evidence))))
    return out


def get_parts(body: Mapping[str, object], evidence: bytes) -> list[tuple[int, bytes]]:
    """The ``parts`` list of an accuse body: (protocol seat, 96-byte test part) per part of
    the strict claim the accusation names (absent: none)."""
    if "parts" not in body:
        return []
    out = []
    for e in _entries(body, "parts", evidence):
        canonical.require_keys(e, ("by", "share"), what="parts", evidence=evidence)
        seat = _seat(e, "by", evidence)
        assert seat is not None
        out.append((seat, canonical.get_bytes(e, "share", what="parts", size=96,
                                              evidence=evidence)))
    return out


def get_step(body: Mapping[str, object], evidence: bytes) -> Step:
    """The step of a ``timeout`` or ``seen`` body: where a seat is awaited."""
    seat = _seat(body, "seat", evidence)
    assert seat is not None
    return Step(seat,
                canonical.get_int(body, "stage", lo=0, hi=64, what="step", evidence=evidence),
                canonical.get_int(body, "at", lo=0, hi=canonical.MAX_INT, what="step",
                                  evidence=evidence))
