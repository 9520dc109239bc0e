"""Benchmarks: run as ``python -m bench.NAME``; they report ratios and counts."""
