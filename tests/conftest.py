"""Hypothesis profiles: ``ci`` (default, sized for CI's time) and ``thorough``; and the
grouping of real-time tests onto one xdist worker.

Choose with ``HYPOTHESIS_PROFILE=thorough pytest``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under pytest-xdist (pyproject's addopts), the tests that run real processes,
    # sockets, timers or a terminal (tests/net, tests/ui) stay on one worker, one after
    # another, with their time limits; the simulated ones (a virtual clock) spread over
    # the others. Two workers halve the suite's time on CI's two cores. Paths are taken
    # from the project's root, whatever folders the checkout itself sits in.
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        try:
            parts = item.path.relative_to(config.rootpath).parts
        except ValueError:
            continue
        if parts[:2] in (("tests", "net"), ("tests", "ui")):
            item.add_marker(pytest.mark.xdist_group("realtime"))
