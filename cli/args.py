"""What every command does with a bad argument: one clear line on stderr, exit 2."""

from __future__ import annotations


class BadArgs(Exception):
    """An argument the command rejects; the message is the one line for stderr."""


def whole_number(name: str, text: object, low: int, high: int | None = None) -> int:
    """``--name``'s value as an int in ``low..high`` (no upper bound without ``high``).

    Numbers are read as text and checked here, so a bad value gives one line that
    names the option, instead of argparse's usage dump.
    """
    try:
        value = int(str(text))
    except ValueError:
        raise BadArgs(f"--{name} must be a whole number, got {text!r}") from None
    if high is not None and not low <= value <= high:
        raise BadArgs(f"--{name} must be in {low}..{high}, got {value}")
    if value < low:
        raise BadArgs(f"--{name} must be at least {low}, got {value}")
    return value
