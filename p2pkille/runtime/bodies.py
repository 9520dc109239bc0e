"""The body of every envelope kind as a typed value: a parser and an encoder per kind.

``parse`` turns a peer's envelope into its kind's body or raises the remote kind of
error: :class:`~protocol.errors.RemoteProtocolError` (a malformed field, the message
naming it), or :class:`~p2pkille.runtime.faults.Blame` where the table's rules say which
fault a malformed field is (docs/protocol.md II.2 lists every field). A parser checks what
the body alone shows, with the table's context where a bound needs it (the number of
members, the deck, the mode); what needs the game (whose turn, which card) is the
handler's. ``to_json`` gives the body to sign. Crypto values stay bytes here: their
decoding (points, proofs) is the handler's, with its own fault.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import ClassVar, Final, Self

from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Fact, fact_from_dict, fact_to_dict
from p2pkille.runtime import messages as msg
from p2pkille.runtime.agreement import MAX_ROUND, Outcome, Proposal, Standing, Vote, VoteStep
from p2pkille.runtime.faults import AUTHOR, Blame, FaultKind
from p2pkille.runtime.messages import Accusation, BoxEntry, ShareEntry
from p2pkille.runtime.steps import Step
from protocol import canonical
from protocol.envelope import MAX_ENVELOPE_SIZE, Envelope
from protocol.errors import InvalidEncoding
from protocol.keys import PublicKeyShare
from protocol.pet import PetShare

__all__ = [
    "AcceptBody",
    "AccuseBody",
    "ActBody",
    "AnswerBody",
    "CheckpointBody",
    "CommitBody",
    "DealBody",
    "DiscloseBody",
    "DrawBody",
    "ForwardBody",
    "KeyBody",
    "NonceBody",
    "OverBody",
    "PetBody",
    "ProposeBody",
    "RevealBody",
    "RewoundBody",
    "SeenBody",
    "ShowBody",
    "ShuffleBody",
    "TimeoutBody",
    "VoteBody",
    "need_proof",
    "need_shares",
]

#: A public decryption share (a draw's): the share and its proof.
DRAW_SIZE: Final = 96


def _bytes(env: Envelope, key: str, what: str, **bounds: int) -> bytes:
    return canonical.get_bytes(env.body, key, what=what, evidence=env.wire, **bounds)


def _int(env: Envelope, key: str, what: str, hi: int = canonical.MAX_INT) -> int:
    return canonical.get_int(env.body, key, lo=0, hi=hi, what=what, evidence=env.wire)


def _b64(data: bytes) -> str:
    return canonical.b64encode(data)


@dataclass(frozen=True, slots=True)
class CommitBody:
    KIND: ClassVar[str] = msg.COMMIT
    commit: bytes

    @classmethod
    def parse(cls, env: Envelope) -> CommitBody:
        return cls(_bytes(env, "commit", "commit", size=32))

    def to_json(self) -> dict[str, object]:
        return {"commit": _b64(self.commit), "hand": 0}


@dataclass(frozen=True, slots=True)
class NonceBody:
    KIND: ClassVar[str] = msg.NONCE
    nonce: bytes

    @classmethod
    def parse(cls, env: Envelope) -> NonceBody:
        return cls(_bytes(env, "nonce", "nonce", size=32))

    def to_json(self) -> dict[str, object]:
        return {"hand": 0, "nonce": _b64(self.nonce)}


@dataclass(frozen=True, slots=True)
class AcceptBody:
    KIND: ClassVar[str] = msg.ACCEPT
    genesis: bytes

    @classmethod
    def parse(cls, env: Envelope) -> AcceptBody:
        return cls(_bytes(env, "genesis", "accept", size=32))

    def to_json(self) -> dict[str, object]:
        return {"genesis": _b64(self.genesis), "hand": 0}


@dataclass(frozen=True, slots=True)
class KeyBody:
    KIND: ClassVar[str] = msg.KEY
    hand: int
    share: bytes
    """The public key share with its proof of knowledge."""

    @classmethod
    def parse(cls, env: Envelope) -> KeyBody:
        return cls(msg.get_hand(env.body, env.wire), _bytes(env, "share", "key",
                                                             size=PublicKeyShare.SIZE))

    def to_json(self) -> dict[str, object]:
        return {"hand": self.hand, "share": _b64(self.share)}


@dataclass(frozen=True, slots=True)
class ShuffleBody:
    """A shuffle step: the deck it made from the one it took (``input``, a digest), and
    a commitment (audit tables) or a proof (strict tables)."""

    KIND: ClassVar[str] = msg.SHUFFLE
    hand: int
    deck: bytes
    input: bytes
    commit: bytes | None = None
    proof: bytes | None = None

    @classmethod
    def parse(cls, env: Envelope, *, strict: bool) -> ShuffleBody:
        deck = _bytes(env, "deck", "shuffle")
        commit = proof = None
        if strict:
            if "commit" in env.body:
                raise Blame(FaultKind.MALFORMED, AUTHOR, "a strict table's step has a proof, "
                            "not a commitment")
            proof = _bytes(env, "proof", "shuffle", max_size=1 << 16) if (
                "proof" in env.body) else _missing(env, "proof")
        else:
            if "proof" in env.body:
                raise Blame(FaultKind.MALFORMED, AUTHOR, "an audit table's step has a "
                            "commitment, not a proof")
            commit = _bytes(env, "commit", "shuffle", size=32) if (
                "commit" in env.body) else _missing(env, "commit")
        return cls(msg.get_hand(env.body, env.wire), deck,
                   _bytes(env, "input", "shuffle", size=32), commit, proof)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"deck": _b64(self.deck), "hand": self.hand,
                           "input": _b64(self.input)}
        if self.commit is not None:
            out["commit"] = _b64(self.commit)
        if self.proof is not None:
            out["proof"] = _b64(self.proof)
        return out


def _missing(env: Envelope, key: str) -> bytes:
    raise Blame(FaultKind.MALFORMED, AUTHOR, f"{env.kind} body: missing {key!r}")


@dataclass(frozen=True, slots=True)
class DealBody:
    KIND: ClassVar[str] = msg.DEAL
    hand: int
    boxes: tuple[BoxEntry, ...]

    @classmethod
    def parse(cls, env: Envelope) -> DealBody:
        return cls(msg.get_hand(env.body, env.wire), tuple(msg.get_boxes(env.body, env.wire)))

    def to_json(self) -> dict[str, object]:
        return {"boxes": [b.to_json() for b in self.boxes], "hand": self.hand}


@dataclass(frozen=True, slots=True)
class ActBody:
    """A decision (``fact``) for the step the game is at (``at``: its fact count)."""

    KIND: ClassVar[str] = msg.ACT
    hand: int
    at: int
    fact: Fact

    @classmethod
    def parse(cls, env: Envelope) -> ActBody:
        fact = fact_from_dict(dict(canonical.get_object(env.body, "fact", what=env.kind,
                                                        evidence=env.wire)))
        return cls(msg.get_hand(env.body, env.wire), _int(env, "at", "act"), fact)

    def to_json(self) -> dict[str, object]:
        return {"at": self.at, "fact": fact_to_dict(self.fact), "hand": self.hand}


def _shown(env: Envelope) -> Rank | None:
    if "shown" not in env.body:
        raise Blame(FaultKind.MALFORMED, AUTHOR, "a show names shown (a rank id or null)")
    raw = env.body["shown"]
    if raw is not None and not isinstance(raw, str):
        raise Blame(FaultKind.MALFORMED, AUTHOR, "shown must be a rank id or null")
    return None if raw is None else Rank.from_id(raw)


def _opened(env: Envelope) -> tuple[ShareEntry, ...] | None:
    return tuple(msg.get_shares(env.body, env.wire)) if "shares" in env.body else None


def need_shares(env: Envelope, shares: tuple[ShareEntry, ...] | None
                ) -> tuple[ShareEntry, ...]:
    """The shares that open a card in public (``shares``); the remote error if there are
    none."""
    if shares is None:
        raise InvalidEncoding("body has no shares", evidence=env.wire)
    return shares


def need_proof(env: Envelope, pet: bytes | None) -> bytes:
    """A strict table's proof of a claim (``pet``); the author's fault if there is none."""
    if pet is None:
        raise Blame(FaultKind.MALFORMED, AUTHOR, f"{env.kind} body: missing 'pet'")
    return pet


def _proof(env: Envelope) -> bytes | None:
    return _bytes(env, "pet", env.kind, max_size=1 << 12) if "pet" in env.body else None


@dataclass(frozen=True, slots=True)
class AnswerBody:
    """An answer to a swap request: the card opened (``shown`` and its ``shares``), or
    no answering card (``shown`` None; strict tables: proved by ``pet``)."""

    KIND: ClassVar[str] = msg.ANSWER
    hand: int
    shown: Rank | None
    shares: tuple[ShareEntry, ...] | None = None
    pet: bytes | None = None

    @classmethod
    def parse(cls, env: Envelope) -> AnswerBody:
        return cls(msg.get_hand(env.body, env.wire), _shown(env), _opened(env), _proof(env))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand,
                           "shown": None if self.shown is None else self.shown.id}
        if self.shares is not None:
            out["shares"] = [s.to_json() for s in self.shares]
        if self.pet is not None:
            out["pet"] = _b64(self.pet)
        return out


@dataclass(frozen=True, slots=True)
class DiscloseBody:
    """Whether the asked card is a kille: opened by ``shares`` if so, else (strict
    tables) proved none by ``pet``."""

    KIND: ClassVar[str] = msg.DISCLOSE
    hand: int
    kille: bool
    shares: tuple[ShareEntry, ...] | None = None
    pet: bytes | None = None

    @classmethod
    def parse(cls, env: Envelope) -> DiscloseBody:
        kille = env.body.get("kille")
        if type(kille) is not bool:
            raise Blame(FaultKind.MALFORMED, AUTHOR, "kille must be true or false")
        return cls(msg.get_hand(env.body, env.wire), kille, _opened(env), _proof(env))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand, "kille": self.kille}
        if self.shares is not None:
            out["shares"] = [s.to_json() for s in self.shares]
        if self.pet is not None:
            out["pet"] = _b64(self.pet)
        return out


@dataclass(frozen=True, slots=True)
class ForwardBody:
    """The shares of card ``token`` its sender holds, sealed to table seat ``to``."""

    KIND: ClassVar[str] = msg.FORWARD
    hand: int
    to: int
    token: int
    boxes: tuple[BoxEntry, ...]

    @classmethod
    def parse(cls, env: Envelope, *, members: int, tokens: int = canonical.MAX_INT + 1
              ) -> ForwardBody:
        return cls(msg.get_hand(env.body, env.wire), _int(env, "to", "forward", members - 1),
                   _int(env, "token", "forward", tokens - 1),
                   tuple(msg.get_boxes(env.body, env.wire)))

    def to_json(self) -> dict[str, object]:
        return {"boxes": [b.to_json() for b in self.boxes], "hand": self.hand, "to": self.to,
                "token": self.token}


@dataclass(frozen=True, slots=True)
class DrawBody:
    """A key holder's public share of the stock card ``token`` being drawn."""

    KIND: ClassVar[str] = msg.DRAW
    hand: int
    token: int
    share: bytes

    @classmethod
    def parse(cls, env: Envelope) -> DrawBody:
        return cls(msg.get_hand(env.body, env.wire), _int(env, "token", "draw", 1023),
                   _bytes(env, "share", "draw", size=DRAW_SIZE))

    def to_json(self) -> dict[str, object]:
        return {"hand": self.hand, "share": _b64(self.share), "token": self.token}


@dataclass(frozen=True, slots=True)
class ShowBody:
    """A live seat's card at the showdown, opened: one share per key holder."""

    KIND: ClassVar[str] = msg.SHOW
    hand: int
    shares: tuple[ShareEntry, ...]

    @classmethod
    def parse(cls, env: Envelope) -> ShowBody:
        return cls(msg.get_hand(env.body, env.wire), tuple(msg.get_shares(env.body, env.wire)))

    def to_json(self) -> dict[str, object]:
        return {"hand": self.hand, "shares": [s.to_json() for s in self.shares]}


@dataclass(frozen=True, slots=True)
class RevealBody:
    """A key holder's close of the hand: on an audit table its key (``secret``) and its
    shuffle's witness; on a strict table nothing."""

    KIND: ClassVar[str] = msg.REVEAL
    hand: int
    secret: bytes | None = None
    witness: bytes | None = None

    @classmethod
    def parse(cls, env: Envelope, *, strict: bool) -> RevealBody:
        hand = msg.get_hand(env.body, env.wire)
        if strict:
            if "secret" in env.body or "witness" in env.body:
                raise Blame(FaultKind.MALFORMED, AUTHOR, "a strict table's close reveals "
                            "nothing")
            return cls(hand)
        secret = (_bytes(env, "secret", "reveal", max_size=64) if "secret" in env.body
                  else _missing(env, "secret"))
        witness = (_bytes(env, "witness", "reveal", max_size=8192) if "witness" in env.body
                   else _missing(env, "witness"))
        return cls(hand, secret, witness)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand}
        if self.secret is not None:
            out["secret"] = _b64(self.secret)
        if self.witness is not None:
            out["witness"] = _b64(self.witness)
        return out


@dataclass(frozen=True, slots=True)
class CheckpointBody:
    """A key holder's signature (``sig``) of the hand's checkpoint (``id``). A node checks
    the signature against the checkpoint it made itself: the id is for readers, and one
    that is no checkpoint id reads as None."""

    KIND: ClassVar[str] = msg.CHECKPOINT
    hand: int
    id: bytes | None
    sig: bytes

    @classmethod
    def parse(cls, env: Envelope) -> CheckpointBody:
        """Raises :class:`RemoteProtocolError` for a signature that is no 64 bytes."""
        try:
            checkpoint_id: bytes | None = _bytes(env, "id", "checkpoint", size=32)
        except InvalidEncoding:
            checkpoint_id = None
        return cls(msg.get_hand(env.body, env.wire), checkpoint_id,
                   _bytes(env, "sig", "checkpoint", size=64))

    def to_json(self) -> dict[str, object]:
        assert self.id is not None
        return {"hand": self.hand, "id": _b64(self.id), "sig": _b64(self.sig)}


@dataclass(frozen=True, slots=True)
class AccuseBody:
    """A key holder's accusations of a stopped hand with their evidence, the boxes it
    sealed (``disclosed``, each with its one-time key), the shares that open a card a
    claim hid (``opened``), the test parts that show a strict claim false (``parts``),
    and why it joined if it accuses nothing (``cause``: an accuse's id; ``root``: that
    accuse's bytes); ``seen``: per key holder the id of its accuse its author held when it
    wrote this one (what it disclosed is answer to), or None."""

    KIND: ClassVar[str] = msg.ACCUSE
    hand: int
    accusations: tuple[Accusation, ...]
    disclosed: tuple[tuple[int, ShareEntry, bytes | None], ...]
    opened: tuple[tuple[int, ShareEntry], ...] = ()
    parts: tuple[tuple[int, bytes], ...] = ()
    cause: bytes | None = None
    root: bytes | None = None
    seen: tuple[bytes | None, ...] = ()

    @classmethod
    def parse(cls, env: Envelope) -> AccuseBody:
        body, wire = env.body, env.wire
        return cls(msg.get_hand(body, wire), tuple(msg.get_accusations(body, wire)),
                   tuple(msg.get_disclosed(body, wire)), tuple(msg.get_opened(body, wire)),
                   tuple(msg.get_parts(body, wire)),
                   _bytes(env, "cause", "accuse", size=32) if "cause" in body else None,
                   _bytes(env, "root", "accuse", min_size=1, max_size=MAX_ENVELOPE_SIZE)
                   if "root" in body else None, _seen(env))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "accusations": [a.to_json() for a in self.accusations],
            "disclosed": [disclosed_json(t, e, k) for t, e, k in self.disclosed],
            "hand": self.hand}
        if self.opened:
            out["opened"] = [{**e.to_json(), "token": t} for t, e in self.opened]
        if self.parts:
            out["parts"] = [{"by": k, "share": _b64(data)} for k, data in self.parts]
        if self.cause is not None:
            out["cause"] = _b64(self.cause)
        if self.root is not None:
            out["root"] = _b64(self.root)
        if any(i is not None for i in self.seen):
            out["seen"] = [None if i is None else _b64(i) for i in self.seen]
        return out


def _seen(env: Envelope) -> tuple[bytes | None, ...]:
    """An accuse's ``seen`` (absent: none): 1 to 64 entries, each a 32-byte id or null,
    one at least an id."""
    if "seen" not in env.body:
        return ()
    raw = canonical.get_list(env.body, "seen", what="accuse", evidence=env.wire)
    seen = tuple(None if value is None else canonical.get_bytes(
        {"id": value}, "id", what="accuse.seen", size=32, evidence=env.wire) for value in raw)
    if not 1 <= len(seen) <= msg.MAX_SEATS or all(i is None for i in seen):
        raise InvalidEncoding(f"accuse.seen: 1 to {msg.MAX_SEATS} entries, an id among them",
                              evidence=env.wire)
    return seen


def disclosed_json(token: int, entry: ShareEntry, key: bytes | None) -> dict[str, object]:
    out: dict[str, object] = {**entry.to_json(), "token": token}
    if key is not None:
        out["key"] = _b64(key)
    return out


@dataclass(frozen=True, slots=True)
class TimeoutBody:
    """A vote that ``step``'s seat timed out."""

    KIND: ClassVar[str] = msg.TIMEOUT
    hand: int
    step: Step

    @classmethod
    def parse(cls, env: Envelope) -> TimeoutBody:
        """A ``timeout``'s or a ``seen``'s body (they have the same fields)."""
        return cls(msg.get_hand(env.body, env.wire), msg.get_step(env.body, env.wire))

    def to_json(self) -> dict[str, object]:
        return self.step.body(self.hand)


@dataclass(frozen=True, slots=True)
class SeenBody:
    """``step``'s envelope is held: it did not come too late."""

    KIND: ClassVar[str] = msg.SEEN
    hand: int
    step: Step

    def to_json(self) -> dict[str, object]:
        return self.step.body(self.hand)


@dataclass(frozen=True, slots=True)
class PetBody:
    """A key holder's part of the test of the claim made at fact count ``at``."""

    KIND: ClassVar[str] = msg.PET
    hand: int
    at: int
    share: bytes

    @classmethod
    def parse(cls, env: Envelope) -> PetBody:
        return cls(msg.get_hand(env.body, env.wire), _int(env, "at", "pet"),
                   _bytes(env, "share", "pet", size=PetShare.SIZE))

    def to_json(self) -> dict[str, object]:
        return {"at": self.at, "hand": self.hand, "share": _b64(self.share)}


@dataclass(frozen=True, slots=True)
class RewoundBody:
    """Its author took back its own decision at fact count ``at``: what it sent since,
    up to here, was built on it."""

    KIND: ClassVar[str] = msg.REWOUND
    hand: int
    at: int

    @classmethod
    def parse(cls, env: Envelope) -> RewoundBody:
        return cls(msg.get_hand(env.body, env.wire), _int(env, "at", "rewound"))

    def to_json(self) -> dict[str, object]:
        return {"at": self.at, "hand": self.hand}


@dataclass(frozen=True, slots=True)
class _HandOnly:
    """A body that holds its hand alone."""

    KIND: ClassVar[str]
    hand: int

    @classmethod
    def parse(cls, env: Envelope) -> Self:
        return cls(msg.get_hand(env.body, env.wire))

    def to_json(self) -> dict[str, object]:
        return {"hand": self.hand}


@dataclass(frozen=True, slots=True)
class OverBody(_HandOnly):
    """A key holder of counted hand ``hand`` with no key in the next one moved on."""

    KIND: ClassVar[str] = msg.OVER


_SEATS: Final = r"(?:[0-9]{1,2}(?:,[0-9]{1,2})*)?"
_OUTCOME: Final = re.compile(
    rf"commit:[0-9a-f]{{64}}|void:{_SEATS}"
    rf"|verdict:(?:[0-9a-f]{{64}}|-)(?:,(?:[0-9a-f]{{64}}|-)){{0,{msg.MAX_SEATS - 1}}}"
    rf";{_SEATS};{_SEATS}")


class Instance(enum.Enum):
    """Which agreement of a hand an agreement envelope is of: the hand's outcome, or the
    verdict of its void round (the field ``of``, absent for the first)."""

    HAND = "hand"
    VERDICT = "verdict"


_INSTANCES: Final = re.compile("verdict")


def _instance(env: Envelope, what: str) -> Instance:
    if "of" not in env.body:
        return Instance.HAND
    return Instance(canonical.get_str(env.body, "of", what=what, pattern=_INSTANCES,
                                      evidence=env.wire))


def _with_instance(out: dict[str, object], instance: Instance) -> dict[str, object]:
    if instance is not Instance.HAND:
        out["of"] = instance.value
    return out


@dataclass(frozen=True, slots=True)
class LeaveBody:
    """Its author quits the table, in hand ``hand`` (0 before the first deal). A key holder
    of an undecided hand names the votes it stands by in that hand's agreement
    (:class:`~p2pkille.runtime.agreement.Standing`): ``stand``, from round ``first_round``
    on, relying on the polka of ``pol_round``: of the hand's outcome, or, once the hand is
    voided, of its verdict (``instance``)."""

    KIND: ClassVar[str] = msg.LEAVE
    hand: int
    stand: Outcome | None = None
    first_round: int = 0
    pol_round: int = -1
    instance: Instance = Instance.HAND

    @classmethod
    def parse(cls, env: Envelope) -> LeaveBody:
        msg.check_body(msg.LEAVE, env.body, env.wire)
        hand = msg.get_hand(env.body, env.wire)
        if "stand" not in env.body:
            if "from" in env.body or "pol" in env.body or "of" in env.body:
                raise InvalidEncoding("leave: a round without the outcome it stands by",
                                      evidence=env.wire)
            return cls(hand)
        stand = _outcome_field(env, "stand", "leave")
        return cls(hand, stand, _int(env, "from", "leave", hi=MAX_ROUND),
                   _round_or_none(env, "pol", "leave"), _instance(env, "leave"))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand}
        if self.stand is not None:
            out["stand"] = str(self.stand)
            out["from"] = self.first_round
            if self.pol_round >= 0:
                out["pol"] = self.pol_round
            _with_instance(out, self.instance)
        return out

    def standing(self, seat: int) -> Standing | None:
        """The agreement's input, ``seat`` being the author's table seat."""
        if self.stand is None:
            return None
        return Standing(seat, self.stand, self.first_round, self.pol_round)


def _outcome(env: Envelope, what: str) -> Outcome | None:
    """The ``value`` field: an outcome's text form, or null (a nil vote)."""
    if "value" not in env.body:
        raise InvalidEncoding(f"{what}.value: missing", evidence=env.wire)
    if env.body["value"] is None:
        return None
    return _outcome_field(env, "value", what)


def _outcome_field(env: Envelope, key: str, what: str) -> Outcome:
    text = canonical.get_str(env.body, key, what=what, pattern=_OUTCOME, evidence=env.wire)
    try:
        return Outcome.from_text(text)
    except InvalidEncoding as exc:
        raise InvalidEncoding(f"{what}.{key}: {exc}", evidence=env.wire) from None


def _round_or_none(env: Envelope, key: str, what: str) -> int:
    """An optional round field: absent means -1 (no polka)."""
    if key not in env.body:
        return -1
    return _int(env, key, what, hi=MAX_ROUND)


@dataclass(frozen=True, slots=True)
class ProposeBody:
    """Its author, the proposer of ``round`` in hand ``hand``'s agreement, proposes
    ``value``; ``valid_round`` is the round of the polka it relies on (-1: none)."""

    KIND: ClassVar[str] = msg.PROPOSE
    hand: int
    round: int
    value: Outcome
    valid_round: int = -1
    instance: Instance = Instance.HAND

    @classmethod
    def parse(cls, env: Envelope) -> ProposeBody:
        msg.check_body(msg.PROPOSE, env.body, env.wire)
        value = _outcome(env, "propose")
        if value is None:
            raise InvalidEncoding("propose.value: a proposal names an outcome",
                                  evidence=env.wire)
        return cls(msg.get_hand(env.body, env.wire), _int(env, "round", "propose",
                                                          hi=MAX_ROUND),
                   value, _round_or_none(env, "valid", "propose"), _instance(env, "propose"))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand, "round": self.round,
                                  "value": str(self.value)}
        if self.valid_round >= 0:
            out["valid"] = self.valid_round
        return _with_instance(out, self.instance)

    def event(self, proposer: int) -> Proposal:
        """The agreement's input, ``proposer`` being the author's table seat."""
        return Proposal(self.round, self.value, self.valid_round, proposer)

    @classmethod
    def of(cls, hand: int, proposal: Proposal,
           instance: Instance = Instance.HAND) -> ProposeBody:
        return cls(hand, proposal.round, proposal.value, proposal.valid_round, instance)


_VOTE_STEPS: Final = re.compile("prevote|precommit")


@dataclass(frozen=True, slots=True)
class VoteBody:
    """Its author's ``step`` vote in ``round`` of hand ``hand``'s agreement: ``value``, or
    None (nil); ``pol_round`` (a prevote for a value: the polka it relies on, else -1)."""

    KIND: ClassVar[str] = msg.VOTE
    hand: int
    round: int
    step: VoteStep
    value: Outcome | None
    pol_round: int = -1
    instance: Instance = Instance.HAND

    @classmethod
    def parse(cls, env: Envelope) -> VoteBody:
        msg.check_body(msg.VOTE, env.body, env.wire)
        step = VoteStep(canonical.get_str(env.body, "step", what="vote", pattern=_VOTE_STEPS,
                                          evidence=env.wire))
        return cls(msg.get_hand(env.body, env.wire), _int(env, "round", "vote", hi=MAX_ROUND),
                   step, _outcome(env, "vote"), _round_or_none(env, "pol", "vote"),
                   _instance(env, "vote"))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"hand": self.hand, "round": self.round,
                                  "step": self.step.value,
                                  "value": None if self.value is None else str(self.value)}
        if self.pol_round >= 0:
            out["pol"] = self.pol_round
        return _with_instance(out, self.instance)

    def event(self, seat: int) -> Vote:
        """The agreement's input, ``seat`` being the author's table seat."""
        return Vote(seat, self.round, self.step, self.value, self.pol_round)

    @classmethod
    def of(cls, hand: int, vote: Vote, instance: Instance = Instance.HAND) -> VoteBody:
        return cls(hand, vote.round, vote.step, vote.value, vote.pol_round, instance)
