"""Real transports for the sans-I/O node: zeroconf discovery, a TCP mesh, MQTT, and the
asyncio driver that runs a node over any of them.

On a real transport a peer's name is the text of its public key (:func:`peer_name`); nothing a
transport says about a sender is trusted for authorship, since envelopes carry signatures.
"""

from __future__ import annotations

from p2pkille.net.driver import Driver, DriverError, Transport
from p2pkille.net.framing import MAX_FRAME, FrameError
from p2pkille.net.mesh import HandshakeError, Mesh, PeerAddress, peer_name

__all__ = [
    "MAX_FRAME",
    "Driver",
    "DriverError",
    "FrameError",
    "HandshakeError",
    "Mesh",
    "PeerAddress",
    "Transport",
    "peer_name",
]
