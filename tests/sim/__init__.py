"""Tests of the simulated network (p2pkille.sim)."""
