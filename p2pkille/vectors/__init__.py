"""Conformance vectors of the table protocol (docs/protocol.md Part II).

``protocol/vectors/table.json`` (Part II) holds whole games of a three-member table as the
envelopes in the order they were sent, with every member's secrets and, per hand, the
facts, the state digest and the checkpoint. It is made by running real
:class:`~p2pkille.runtime.node.TableNode` peers (:mod:`p2pkille.vectors.table`), so it
lives outside ``protocol/`` (which may not import ``p2pkille``). Check or rewrite it::

    python -m p2pkille.vectors [--regenerate] [table] [lobby]

``lobby.json`` (Part III: the lobby, discovery and the transports) is made from the real
lobby state machines and transport helpers (:mod:`p2pkille.vectors.lobby`) the same way.

The Part I files are checked and rewritten by ``python -m protocol.vectors``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from protocol.vectors import VECTOR_DIR

__all__ = ["LOBBY_VECTORS", "TABLE_VECTORS"]

#: Where the Part II vector file lives: next to the Part I files.
TABLE_VECTORS: Final[Path] = VECTOR_DIR / "table.json"
#: Where the Part III vector file lives (finding and joining a table: lobby messages,
#: adverts, mesh frames, a signed sync, MQTT topics; :mod:`p2pkille.vectors.lobby`).
LOBBY_VECTORS: Final[Path] = VECTOR_DIR / "lobby.json"
