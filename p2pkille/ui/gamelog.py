"""Where the games the terminal UI plays are logged: the user's data directory.

Every game's log (:class:`~p2pkille.runtime.log.LoggedNode`: every envelope the
player's node accepted, with its keys) goes to ``games/`` under the user's data
directory as :mod:`platformdirs` finds it on each system (on Linux
``$XDG_DATA_HOME/p2pkille``, by default ``~/.local/share/p2pkille``), so ``p2pkille
verify`` can check the game later. The log holds the player's secret keys: the
directory is private to the user (mode 0700) and each log is created with mode 0600.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Final

import platformdirs

__all__ = ["APP", "games_dir", "new_log_path"]

APP: Final = "p2pkille"
SUFFIX: Final = ".p2pklog"


def games_dir() -> Path:
    """The directory of the game logs (created, private to the user)."""
    path = platformdirs.user_data_path(APP, appauthor=False) / "games"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def new_log_path(table_id: bytes, when: datetime.datetime | None = None) -> Path:
    """A fresh log file name for a game at table ``table_id`` started ``when`` (now): the
    date and time, then the table id's first hex digits; a number is added if the name is
    taken."""
    when = when or datetime.datetime.now().astimezone()
    stem = f"{when:%Y-%m-%d-%H%M%S}-{table_id.hex()[:8]}"
    folder = games_dir()
    path = folder / f"{stem}{SUFFIX}"
    n = 1
    while path.exists() or os.path.lexists(path):
        n += 1
        path = folder / f"{stem}-{n}{SUFFIX}"
    return path
