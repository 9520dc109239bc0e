"""Hypothesis profiles and the thorough tier; the placement of tests on xdist workers.

``pytest`` is the everyday and CI run: Hypothesis's ``ci`` profile, and the cases marked
``thorough`` (the largest tables, the deepest model-checker runs) skipped with the reason.
``THOROUGH=1 pytest`` is the long run: Hypothesis's ``thorough`` profile, and those cases
too (``HYPOTHESIS_PROFILE`` still picks a profile alone).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from protocol import group

# Every xdist worker and every peer process the suite starts (tests/net, tests/ui)
# imports the same modules. With bytecode writing off (PYTHONDONTWRITEBYTECODE, as on
# some machines), each of them compiled the package and assertion-rewrote every test
# module anew: about 10 s of CPU per worker and 0.3 s per process. The suite keeps its
# bytecode under .pytest_cache instead (pycache_prefix), so the tree stays as clean as
# that setting keeps it, and each module is compiled once.
if sys.dont_write_bytecode:
    _PYCACHE = str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "pycache")
    sys.pycache_prefix = _PYCACHE
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = _PYCACHE
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", max_examples=20, deadline=None)
# Every simulated table runs its peers in this process: they share the results of the
# group operations they all check (protocol.group.share_results; counts are unchanged).
group.share_results(True)

THOROUGH = os.environ.get("THOROUGH", "") not in ("", "0")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "thorough" if THOROUGH else "ci"))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    # ``-n auto``: one worker per core for the simulated tests, and one more for the
    # real-time group, which mostly waits on its processes and sockets (about half its
    # wall time on two cores), so the simulated tests use that idle core time.
    cores = os.cpu_count() or 1
    return cores + 1 if cores > 1 else None


# Modules under tests/net and tests/ui that open no socket, process, broker or terminal
# (codecs, the guard, screens over in-process tables, a simulated restart): they run on
# any worker.
_ANYWHERE = frozenset({
    "test_framing.py", "test_guard.py", "test_late_restart.py", "test_identity.py",
    "test_layout.py", "test_narration.py", "test_parts.py", "test_rules_page.py",
    "test_screen.py", "test_words.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under pytest-xdist (pyproject's addopts), the tests that run real processes,
    # sockets, timers or a terminal (tests/net, tests/ui) stay on one worker, one after
    # another, with their time limits; the simulated ones (a virtual clock) spread over
    # the others. Paths are taken from the project's root, whatever folders the checkout
    # itself sits in.
    if not THOROUGH:
        skip = pytest.mark.skip(reason="a thorough case: THOROUGH=1 pytest runs it")
        for item in items:
            if item.get_closest_marker("thorough") is not None:
                item.add_marker(skip)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    realtime: list[pytest.Item] = []
    for item in items:
        try:
            parts = item.path.relative_to(config.rootpath).parts
        except ValueError:
            continue
        if parts[:2] in (("tests", "net"), ("tests", "ui")) and parts[-1] not in _ANYWHERE:
            item.add_marker(pytest.mark.xdist_group("realtime"))
            realtime.append(item)
    # The real-time group first: it is the longest unit of work (one worker, minutes),
    # so it starts at once and the simulated tests fill the other workers around it.
    chosen = set(map(id, realtime))
    items[:] = realtime + [item for item in items if id(item) not in chosen]
