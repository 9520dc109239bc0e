"""Running peer processes in tests: collect each one's JSON, never leave one behind."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start(commands: Sequence[Sequence[str]]) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(list(c), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for c in commands]


def collect(procs: Sequence[subprocess.Popen[bytes]], timeout: float
            ) -> tuple[list[dict[str, object]], list[str]]:
    """Wait for every process (``timeout`` in all), demand exit 0, parse its stdout as
    JSON; returns the documents and the stderr texts. Kills whatever is left running."""
    deadline = time.monotonic() + timeout
    results: list[dict[str, object]] = []
    errors: list[str] = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            text = err.decode(errors="replace")
            assert proc.returncode == 0, text[-3000:]
            results.append(json.loads(out))
            errors.append(text)
    finally:
        stop(procs)
    return results, errors


def stop(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
