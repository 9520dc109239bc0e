"""Misbehaving peers for the simulator, selectable by name (``p2pkille sim --byzantine``).

Each behaviour is a :class:`~p2pkille.runtime.node.TableNode` subclass that changes
only what that peer SENDS (the bytes it emits or the choices behind them); the
honest peers run the unchanged node. :func:`make_byzantine` turns a built node into
one (the table, its keys and seed stay as they were).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from p2pkille.engine.cards import ANSWERING
from p2pkille.runtime import messages as msg
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.io import Output, Send
from p2pkille.runtime.node import Stage, TableNode
from protocol import canonical
from protocol.deck import decode_deck, encode_deck
from protocol.domain import hash64
from protocol.envelope import Envelope
from protocol.reveal import DecryptionShare

__all__ = ["BEHAVIOURS", "make_byzantine"]


class Equivocate(TableNode):
    """Signs two different key envelopes for one chain slot and sends both to everyone
    (a second valid proof for the same key share)."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.KEY or not self._once("equivocate"):
            super()._emit(out, kind, body)
            return
        seq, prev = self.transcript.next_slot(self.identity.public)
        super()._emit(out, kind, body)
        hand = self.hand
        assert hand is not None
        assert hand.key is not None
        other = hand.key.announce(hand.ctx, self._rng("equivocate", hand.number))
        fork = Envelope.seal(self.identity, table=self.config.table_id, seq=seq, prev=prev,
                             kind=kind, body={**body, "share": canonical.b64encode(
                                 other.to_bytes())})
        out.append(Send(fork.wire))


class BadShuffle(TableNode):
    """Substitutes a card in its shuffle step: slot 0 becomes a copy of slot 1 (so one
    card is gone and another doubled). The audit finds that its witness does not
    reproduce the deck it published."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind == msg.SHUFFLE:
            deck = list(decode_deck(canonical.b64decode(str(body["deck"])), 42))
            deck[0] = deck[1]
            body = {**body, "deck": canonical.b64encode(encode_deck(deck))}
        super()._emit(out, kind, body)


class WrongShare(TableNode):
    """Deals shares with a proof for another slot (a valid point, a failing proof): the
    recipient accuses, and the plaintext it must then disclose proves it."""

    def _share(self, hand: object, token: int, recipient: int | None, purpose: str
               ) -> DecryptionShare:
        share = super()._share(hand, token, recipient, purpose)  # type: ignore[arg-type]
        if purpose.startswith("deal"):
            other = super()._share(hand, (token + 1) % 42, recipient,  # type: ignore[arg-type]
                                   purpose)
            return DecryptionShare(share.context, other.value, other.proof)
        return share


class FalseAnswer(TableNode):
    """Answers plain (lets the swap happen) even when it holds a blocking card; at a
    strict table it also makes the proof of its false claim as best it can."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind == msg.ANSWER and body.get("shown") is not None:
            body = {"hand": body["hand"], "shown": None}
            hand, view = self.hand, self.view
            if self.strict and hand is not None and view is not None:
                token = view.game.hold[view.game.tgt]
                body["pet"] = self._pet_body(hand, token, b"answer", ANSWERING)
        super()._emit(out, kind, body)


class Withhold(TableNode):
    """Never reveals its per-hand key after a hand (the audit cannot run)."""

    def _emit(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        if kind != msg.REVEAL:
            super()._emit(out, kind, body)


class Replay(TableNode):
    """Resends old envelopes (its own and others') after every message it receives that
    brings it a new envelope. (After every message at all, two replaying peers would
    answer each other's replays with more replays without end: a flood that stops the
    simulated clock, not a test of the honest peers.)"""

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        before = len(self.transcript.accepted)
        out = list(super().receive(sender, data, now))
        if len(self.transcript.accepted) == before:
            return out
        self._replays = getattr(self, "_replays", 0) + 1
        for member in self.members:
            chain = self.transcript.chain(member)
            if chain:
                out.append(Send(chain[self._replays % len(chain)].wire))
        return out


class OutOfTurn(TableNode):
    """As soon as the first hand is dealt, sends a decision for the seat in turn (not
    its own seat) and an answer nobody asked for."""

    def _act(self, out: list[Output]) -> bool:
        view, hand = self.view, self.hand
        if (view is not None and hand is not None and self.stage == Stage.PLAY
                and view.game.expect_seat is not None and self._once("out-of-turn")):
            seat = view.game.expect_seat
            if seat == self.my_seat:
                seat = (seat + 1) % len(self.members)
            self._emit(out, msg.ACT, {"at": view.game.fact_count,
                                      "fact": {"seat": seat, "type": "keep"},
                                      "hand": hand.number})
            return True
        return super()._act(out)


class Garbage(TableNode):
    """Sends random bytes (no envelope, or a broken sync) to everyone after every
    message it receives that brings it a new envelope (as :class:`Replay`: three
    peers answering every message, each other's garbage too, flood the table)."""

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        before = len(self.transcript.accepted)
        out = list(super().receive(sender, data, now))
        if len(self.transcript.accepted) == before:
            return out
        self._blobs = getattr(self, "_blobs", 0) + 1
        blob = hash64("garbage", self._secret("garbage"), self._blobs.to_bytes(8, "big"))
        out.append(Send(blob[: 1 + blob[0] % 64] if self._blobs % 3 else b"S" + blob[:20]))
        return out


class FalseAccuse(TableNode):
    """In its first hand, once it holds every key share, accuses the next key holder
    of a bad key share, with that holder's (valid) key envelope as evidence."""

    def _act(self, out: list[Output]) -> bool:
        hand = self.hand
        if (hand is not None and hand.me is not None and self.stage > Stage.KEYS
                and self._once("false-accuse")):
            victim = hand.holders[(hand.me + 1) % len(hand.holders)]
            member = self.members[self.member_of[victim]]
            key = next((e for e in self.transcript.chain(member)
                        if e.kind == msg.KEY and e.body.get("hand") == hand.number), None)
            if key is not None and self._once("accuse", hand.number):
                accusation = msg.Accusation(victim, FaultKind.BAD_KEY.value,
                                            "key-share proof does not verify", key.wire)
                self._emit(out, msg.ACCUSE, {"accusations": [accusation.to_json()],
                                             "disclosed": [], "hand": hand.number})
                return True
        return super()._act(out)


BEHAVIOURS: Final[dict[str, type[TableNode]]] = {
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
    """Turn ``node`` (not started yet) into the misbehaving peer named ``behaviour``."""
    cls = BEHAVIOURS.get(behaviour)
    if cls is None:
        raise ValueError(f"unknown behaviour {behaviour!r}: expected one of "
                         f"{', '.join(BEHAVIOURS)}")
    node.__class__ = cls
    return node

