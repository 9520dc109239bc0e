"""A game-agnostic toolkit for card games played without a trusted dealer.

Pure (sans-I/O): no sockets, no clocks, no global randomness. Callers inject an
:class:`protocol.rng.Rng`. Input from a peer can only ever raise
:class:`protocol.errors.RemoteProtocolError`.
"""
