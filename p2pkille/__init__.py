"""Byteskille: the rules engine, the peer runtime and the transports."""

__version__ = "0.1.0"
