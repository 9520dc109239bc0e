"""The supported ways to make a table node depart from the protocol, or to watch it work.

:class:`Behaviour` is for protocol testers: the simulator's misbehaving peers
(``p2pkille.sim.byzantine``) and the tests. A node calls its hooks at fixed points of
its own course; the base class keeps the honest course at every one, and a subclass
overrides the hooks it departs in. The honest peers of a table run the base class.

:class:`Probe` is for measurements (``bench.runtime``): it is told each move a node makes
and each envelope it consumes, and changes nothing.

Set them on a node (``node.behaviour = ...``, ``node.probe = ...``) before it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from p2pkille.runtime.io import Output
from protocol.reveal import DecryptionShare

if TYPE_CHECKING:
    from p2pkille.runtime.node import TableNode

__all__ = ["HONEST", "Behaviour", "Body", "Probe"]

Body = dict[str, object]


class Behaviour:
    """How a node departs from the protocol: in nothing, unless a subclass says so."""

    def envelope(self, node: TableNode, kind: str, body: Body) -> list[Body]:
        """The bodies to sign for an envelope of ``kind`` the node is about to send with
        ``body``. The first is signed at the chain's next slot and sent as the node would;
        each further one is signed for that same slot (a fork) and sent to every member
        after it. An empty list withholds the envelope."""
        return [body]

    def share(self, node: TableNode, share: DecryptionShare, purpose: str,
              remake: Callable[[int], DecryptionShare]) -> DecryptionShare:
        """The decryption share the node uses for a box or an open (``purpose`` names
        which, e.g. ``deal-3``, ``open``, ``draw``); ``remake(token)`` makes the honest
        share of another card for the same use."""
        return share

    def move(self, node: TableNode) -> list[tuple[str, Body]]:
        """Envelopes (kind, body) the node sends before its next own move, each through
        :meth:`envelope` as its own are. An ``accuse`` sent here is the node's accuse of
        its hand: it sends no other."""
        return []

    def sending(self, node: TableNode, grew: bool, out: list[Output]) -> list[Output]:
        """What the node sends in answer to one input, a message or a wake (its outputs,
        in order); ``grew``: a message that brought it a new envelope."""
        return out

    def proves_lie(self, node: TableNode, token: int) -> bool:
        """Whether the node, having just learned the face of card ``token`` that a seat
        claimed it is not, proves the lie at once in its accuse (docs/protocol.md
        II.11.1). A node that does not (a colluding witness) still finds the lie at the
        showdown or the audit, as every node does."""
        return True


#: The honest course, shared by every node that departs in nothing.
HONEST = Behaviour()


class Probe(Protocol):
    """What a measurement is told of a node's work."""

    def start(self) -> None:
        """A move or a consumption begins."""

    def moved(self, kinds: Sequence[str]) -> None:
        """The node made one move, signing envelopes of these kinds (none: it only
        checked or moved on)."""

    def consumed(self, kind: str) -> None:
        """The node consumed an envelope of ``kind``."""
