"""Conformance vectors of the table protocol (docs/protocol.md Part II).

``protocol/vectors/table.json`` holds whole games of a three-member table as the
envelopes in the order they were sent, with every member's secrets and, per hand, the
facts, the state digest and the checkpoint. It is made by running real
:class:`~p2pkille.runtime.node.TableNode` peers (:mod:`p2pkille.vectors.table`), so it
lives outside ``protocol/`` (which may not import ``p2pkille``). Check or rewrite it::

    python -m p2pkille.vectors [--regenerate]

The Part I files are checked and rewritten by ``python -m protocol.vectors``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from protocol.vectors import VECTOR_DIR

__all__ = ["TABLE_VECTORS"]

#: Where the Part II vector file lives: next to the Part I files.
TABLE_VECTORS: Final[Path] = VECTOR_DIR / "table.json"
