"""The engine's typed errors.

Every message names the offending input and the state it met (phase, whose turn),
so a log line alone says what went wrong. A rejected input never changes the state:
handlers validate everything before they mutate anything.
"""

from __future__ import annotations

from protocol.errors import RemoteProtocolError


class EngineError(Exception):
    """Base of every error the rules engine raises on purpose."""


class IllegalMoveError(EngineError):
    """A well-formed input that the rules forbid in the current state.

    Examples: a move out of turn, a swap by a dead player, a pick under a ruleset
    without picking, a buy-in the player is not entitled to or cannot pay.
    """


class InvalidCardError(EngineError, ValueError):
    """Card or rank text that does not name a card of the Kille deck."""


class InvalidOptionsError(EngineError, ValueError):
    """Rule options (a preset name or an override) that are unknown or malformed."""


class InvalidFactError(EngineError, RemoteProtocolError):
    """A fact from outside (a peer, a file) that cannot be parsed.

    It is the remote kind of error (:class:`protocol.errors.RemoteProtocolError`):
    peer input can only ever raise this, never crash the node.
    """

    def __init__(self, reason: str, *, evidence: bytes = b"") -> None:
        RemoteProtocolError.__init__(self, reason, evidence=evidence)


class InvalidSetupError(EngineError, ValueError):
    """Game parameters the rules reject: too few or too many seats, a bad stake or chips."""
