"""The runtime's golden corpus: what a fixed set of simulated tables do, byte for byte.

Each scenario (:mod:`tests.golden.scenarios`) runs a table in the simulator, fixed by
its seed, and returns one JSON document: the ``p2pkille sim --json`` document (wall time
left out) and a trace of every node: its hands with their facts, its faults, the
decisions the table defaulted, rewinds and rebuilds, what it sent, the digest of every
envelope it accepted in the order it accepted them, and its own votes. The documents
are checked in under ``tests/golden/data``; :mod:`tests.golden.test_golden` runs every
scenario again and compares. A change to the runtime that keeps its behaviour keeps
every document; one that changes behaviour on purpose regenerates them::

    python -m tests.golden --regenerate [NAME ...]
"""
