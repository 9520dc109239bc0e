"""Misbehaving peers for the simulator, selectable by name (``p2pkille sim --byzantine``).

Each is a :class:`~p2pkille.runtime.behaviour.Behaviour`: it changes only what its peer
SENDS (the bytes it emits or the choices behind them); the honest peers run the
unchanged node. :func:`make_byzantine` gives a built node one (the table, its keys and
seed stay as they were).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from p2pkille.engine.cards import ANSWERING
from p2pkille.runtime import messages as msg
from p2pkille.runtime.behaviour import Behaviour, Body
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.steps import Stage
from protocol import canonical
from protocol.deck import decode_deck, encode_deck
from protocol.domain import hash64
from protocol.keys import HandContext
from protocol.reveal import DecryptionShare

if TYPE_CHECKING:
    from p2pkille.runtime.node import TableNode

__all__ = ["BEHAVIOURS", "make_byzantine"]


class Equivocate(Behaviour):
    """Signs two different key envelopes for one chain slot and sends both to everyone
    (a second valid proof for the same key share)."""

    def __init__(self) -> None:
        self.forked = False

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        status, key = node.status(), node.own_key()
        if kind != msg.KEY or self.forked or status is None or key is None:
            return [body]
        self.forked = True
        ctx = HandContext(node.config.table_id, status.number)
        other = key.announce(ctx, node.rng("equivocate", status.number))
        return [body, {**body, "share": canonical.b64encode(other.to_bytes())}]


class BadShuffle(Behaviour):
    """Substitutes a card in its shuffle step: slot 0 becomes a copy of slot 1 (so one
    card is gone and another doubled). The audit finds that its witness does not
    reproduce the deck it published."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.SHUFFLE:
            deck = list(decode_deck(canonical.b64decode(str(body["deck"])), 42))
            deck[0] = deck[1]
            body = {**body, "deck": canonical.b64encode(encode_deck(deck))}
        return [body]


class WrongShare(Behaviour):
    """Deals shares with a proof for another slot (a valid point, a failing proof): the
    recipient accuses, and the plaintext it must then disclose proves it."""

    def share(self, node: TableNode, share: DecryptionShare, purpose: str,
              remake: Callable[[int], DecryptionShare]) -> DecryptionShare:
        if purpose.startswith("deal"):
            other = remake((share.context.slot + 1) % 42)
            return DecryptionShare(share.context, other.value, other.proof)
        return share


class FalseAnswer(Behaviour):
    """Answers plain (lets the swap happen) even when it holds a blocking card; at a
    strict table it also makes the proof of its false claim as best it can."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        if kind == msg.ANSWER and body.get("shown") is not None:
            body = {"hand": body["hand"], "shown": None}
            view = node.view
            if node.strict and node.status() is not None and view is not None:
                token = view.game.hold[view.game.tgt]
                body["pet"] = node.claim_proof(token, b"answer", ANSWERING)
        return [body]


class Withhold(Behaviour):
    """Never reveals its per-hand key after a hand (the audit cannot run)."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        return [] if kind == msg.REVEAL else [body]


class Replay(Behaviour):
    """Resends old envelopes (its own and others') after every message it receives that
    brings it a new envelope. (After every message at all, two replaying peers would
    answer each other's replays with more replays without end: a flood that stops the
    simulated clock, not a test of the honest peers.)"""

    def __init__(self) -> None:
        self.replays = 0

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if not grew:
            return out
        self.replays += 1
        for member in node.members:
            chain = node.transcript.chain(member)
            if chain:
                out.append(Send(chain[self.replays % len(chain)].wire))
        return out


class OutOfTurn(Behaviour):
    """As soon as the first hand is dealt, sends a decision for the seat in turn (not
    its own seat) and an answer nobody asked for."""

    def __init__(self) -> None:
        self.sent = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        view, status = node.view, node.status()
        if (self.sent or view is None or status is None or node.stage != Stage.PLAY
                or view.game.expect_seat is None):
            return []
        self.sent = True
        seat = view.game.expect_seat
        if seat == node.my_seat:
            seat = (seat + 1) % len(node.members)
        return [(msg.ACT, {"at": view.game.fact_count, "fact": {"seat": seat, "type": "keep"},
                           "hand": status.number})]


class Garbage(Behaviour):
    """Sends random bytes (no envelope, or a broken sync) to everyone after every
    message it receives that brings it a new envelope (as :class:`Replay`: three
    peers answering every message, each other's garbage too, flood the table)."""

    def __init__(self) -> None:
        self.blobs = 0

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        if not grew:
            return out
        self.blobs += 1
        blob = hash64("garbage", node.secret("garbage"), self.blobs.to_bytes(8, "big"))
        out.append(Send(blob[: 1 + blob[0] % 64] if self.blobs % 3 else b"S" + blob[:20]))
        return out


class FalseAccuse(Behaviour):
    """In its first hand, once it holds every key share, accuses the next key holder
    of a bad key share, with that holder's (valid) key envelope as evidence."""

    def __init__(self) -> None:
        self.tried = False

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        status = node.status()
        if (self.tried or status is None or status.me is None
                or node.stage <= Stage.KEYS):
            return []
        self.tried = True
        victim = status.holders[(status.me + 1) % len(status.holders)]
        member = node.members[node.member_of[victim]]
        key = next((e for e in node.transcript.chain(member)
                    if e.kind == msg.KEY and e.body.get("hand") == status.number), None)
        if key is None:
            return []
        accusation = msg.Accusation(victim, FaultKind.BAD_KEY.value,
                                    "key-share proof does not verify", key.wire)
        return [(msg.ACCUSE, {"accusations": [accusation.to_json()], "disclosed": [],
                              "hand": status.number})]


BEHAVIOURS: Final[dict[str, type[Behaviour]]] = {
    "equivocate": Equivocate,
    "bad-shuffle": BadShuffle,
    "wrong-share": WrongShare,
    "false-answer": FalseAnswer,
    "withhold": Withhold,
    "replay": Replay,
    "out-of-turn": OutOfTurn,
    "garbage": Garbage,
    "false-accuse": FalseAccuse,
}


def make_byzantine(node: TableNode, behaviour: str) -> TableNode:
    """Make ``node`` (not started yet) the misbehaving peer named ``behaviour``."""
    cls = BEHAVIOURS.get(behaviour)
    if cls is None:
        raise ValueError(f"unknown behaviour {behaviour!r}: expected one of "
                         f"{', '.join(BEHAVIOURS)}")
    node.behaviour = cls()
    return node
