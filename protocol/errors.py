"""The two kinds of error, after h11: ours and the peer's.

A :class:`LocalProtocolError` is the caller's mistake (a bug in this process).
A :class:`RemoteProtocolError` is bad input from outside: a peer, a broker or a
file. Decoders and verifiers raise only the remote kind for anything a peer can
send, so a node can log, blame and carry on instead of crashing.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base of every error this package raises on purpose."""


class LocalProtocolError(ProtocolError):
    """The caller used the API wrongly; never caused by peer input."""


class RemoteProtocolError(ProtocolError):
    """Input from outside is malformed, invalid or dishonest.

    ``evidence`` holds the offending bytes (as received) where there are any, so
    the caller can attach them to an accusation.
    """

    def __init__(self, reason: str, *, evidence: bytes = b"") -> None:
        super().__init__(reason)
        self.reason = reason
        self.evidence = evidence


class InvalidEncoding(RemoteProtocolError):
    """Bytes that do not decode: bad length, non-canonical, not a group element."""


class InvalidProof(RemoteProtocolError):
    """A zero-knowledge proof that does not verify."""


class InvalidSignature(RemoteProtocolError):
    """A signature that does not verify: fail closed."""
