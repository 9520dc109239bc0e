"""A deterministic in-memory network with a virtual clock and fault injection, for tests."""

from __future__ import annotations

from p2pkille.sim.faults import Faults
from p2pkille.sim.network import SimError, SimNetwork, SimStats, StopReason, Tap

__all__ = ["Faults", "SimError", "SimNetwork", "SimStats", "StopReason", "Tap"]
