"""Signing this member's own envelopes: each once, none twice after a restart.

Every envelope a node makes goes through :meth:`Outbox.emit`. A node replaying its log
re-derives its own envelopes byte for byte (every secret comes from its seed): one already
in its chain is found by its :func:`replay_key` and not sent again. The node's
:class:`~p2pkille.runtime.behaviour.Behaviour` sees every envelope before it is signed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, Protocol

from p2pkille.runtime import messages as msg
from p2pkille.runtime.io import Output, Send
from protocol import canonical
from protocol.envelope import Envelope

if TYPE_CHECKING:
    from p2pkille.runtime.core import Core

__all__ = ["HAND_FLOW", "Body", "Outbox", "replay_key"]


class Body(Protocol):
    """A typed envelope body (bodies.py)."""

    KIND: ClassVar[str]

    def to_json(self) -> dict[str, object]: ...


#: Envelopes that only a hand's own course produces: never one for a hand my chain has left.
HAND_FLOW: Final = frozenset({msg.KEY, msg.SHUFFLE, msg.DEAL, msg.ACT, msg.ANSWER,
                              msg.DISCLOSE, msg.FORWARD, msg.DRAW, msg.SHOW, msg.PET,
                              msg.REVEAL, msg.CHECKPOINT})


def replay_key(kind: str, body: Mapping[str, object]) -> tuple[object, ...]:
    """What makes a re-derived envelope the same as one in my chain. A forward carries the
    shares its sender held for the card when it wrote it, which a replay may hold more of
    (so its bytes differ): it is the same forward when it is for the same hand, card and
    recipient (the k-th such one, counted)."""
    if kind == msg.FORWARD:
        return (kind, body.get("hand"), body.get("token"), body.get("to"))
    return (kind, canonical.encode(body))


class Outbox:
    """This member's own envelopes: what it sent once (:meth:`once`), what its log holds
    (``replayed``), and the other members' wires it passes on (``extra``)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table = core.table
        self.sent: set[tuple[object, ...]] = set()
        """The marks of what this node did once (:meth:`once`)."""
        self.replayed: dict[tuple[object, ...], int] = {}
        """replay_key -> how many of my envelopes with that key my log held and I have not
        re-derived yet."""
        self.extra: list[bytes] = []
        """Wires to send every member: forks' branches, accuses to echo."""
        self.own_top = -1
        """The latest hand any envelope of my own chain is of."""
        self.sent_envelopes = 0
        self.sent_bytes = 0

    def carry(self, old: Outbox) -> None:
        """A rebuild from ``old``'s machine: what it sent counts on."""
        self.sent_envelopes, self.sent_bytes = old.sent_envelopes, old.sent_bytes

    def once(self, *key: object) -> bool:
        """True the first time ``key`` is asked for, then False: the mark of a move made."""
        if key in self.sent:
            return False
        self.sent.add(key)
        return True

    def unmark(self, *key: object) -> None:
        """Forget one mark: the move was not made after all (asked again later)."""
        self.sent.discard(key)

    def forget(self, number: int, marks: tuple[object, ...]) -> None:
        """Forget the marks of hand ``number`` that start with one of ``marks`` (a rewind
        makes those moves again)."""
        self.sent = {k for k in self.sent
                     if not (len(k) >= 2 and k[1] == number and k[0] in marks)}

    def closed(self, number: object) -> bool:
        """Does my own chain hold an envelope of a hand after ``number``? Not only its
        last: a late seen or over of an earlier hand may follow."""
        return type(number) is int and self.own_top > number

    def took_own(self, number: int | None) -> None:
        """My own chain took an envelope of hand ``number``."""
        if number is not None:
            self.own_top = max(self.own_top, number)

    def replay(self, chain: Sequence[Envelope]) -> None:
        """Count my own envelopes of a log taken back (:meth:`emit` skips each once)."""
        for env in chain:
            key = replay_key(env.kind, env.body)
            self.replayed[key] = self.replayed.get(key, 0) + 1

    def emit(self, out: list[Output], body: Body) -> None:
        """Sign ``body`` as my next envelope and send it to every member (see :meth:`send`)."""
        self.send(out, body.KIND, body.to_json())

    def send(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        """Sign ``body`` as my next envelope of ``kind`` and send it to every member;
        nothing if my log held it already, or if it is a step of a hand my chain has left
        (replaying its log, a node may re-derive one: it was sent already or is too
        late, and its peers would record it as a fault). The behaviour's bodies are what
        is signed: any after the first at the same chain slot, sent to every member."""
        if self.core.probe is not None:
            self.core.signed_kinds.append(kind)
        bodies = self.core.behaviour.envelope(self.core.node, kind, body)
        if not bodies:
            return
        seq, prev = self.table.transcript.next_slot(self.table.identity.public)
        self._sign(out, kind, bodies[0])
        for fork in bodies[1:]:
            env = Envelope.seal(self.table.identity, table=self.table.config.table_id,
                                seq=seq, prev=prev, kind=kind, body=fork)
            out.append(Send(env.wire))

    def _sign(self, out: list[Output], kind: str, body: dict[str, object]) -> None:
        key = replay_key(kind, body)
        if self.replayed.get(key, 0) > 0:
            self.replayed[key] -= 1
            return
        if (kind in HAND_FLOW or kind == msg.TIMEOUT) and self.closed(body.get("hand")):
            return
        seq, prev = self.table.transcript.next_slot(self.table.identity.public)
        env = Envelope.seal(self.table.identity, table=self.table.config.table_id, seq=seq,
                            prev=prev, kind=kind, body=body)
        self.core.intake.took(self.table.transcript.receive_own(env))
        self.sent_envelopes += 1
        self.sent_bytes += len(env.wire)
        out.append(Send(env.wire))

    def flush(self, out: list[Output]) -> None:
        """Send the other members' wires this node passes on."""
        out += [Send(wire) for wire in self.extra]
        self.extra.clear()

    def pass_on(self, wires: list[bytes]) -> None:
        """Send ``wires`` to every member with my next output."""
        self.extra += wires
