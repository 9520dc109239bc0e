"""Fault settings for the simulated network, with the text form ``p2pkille sim --faults`` takes.

``Faults.parse("drop=0.1,dup=0.05,reorder=0.1,delay=50ms,jitter=5ms")``; ``str()`` gives the
same text back (only the settings that are not zero; ``none`` when all are).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

_PROBABILITIES = ("drop", "dup", "reorder")
_DURATIONS = ("delay", "jitter")
# Longest suffix first, so "ms" is not read as "m" + "s".
_UNITS: tuple[tuple[str, float], ...] = (("us", 1e6), ("ms", 1e3), ("s", 1.0))
_NONE = "none"


@dataclass(frozen=True, slots=True)
class Faults:
    """What can go wrong on a link.

    ``drop``, ``dup`` and ``reorder`` are per-message probabilities; ``delay`` is the base
    latency and ``jitter`` the most extra latency (uniform) added to it, both in seconds.
    """

    drop: float = 0.0
    dup: float = 0.0
    reorder: float = 0.0
    delay: float = 0.0
    jitter: float = 0.0

    def __post_init__(self) -> None:
        for name in _PROBABILITIES:
            value = getattr(self, name)
            if isinstance(value, bool) or not (
                isinstance(value, int | float) and 0.0 <= value <= 1.0
            ):
                raise ValueError(f"fault {name}={value!r}: a probability must be in 0..1")
        for name in _DURATIONS:
            value = getattr(self, name)
            if isinstance(value, bool) or not (
                isinstance(value, int | float) and math.isfinite(value) and value >= 0.0
            ):
                raise ValueError(
                    f"fault {name}={value!r}: a duration must be a finite number of seconds >= 0"
                )

    @classmethod
    def parse(cls, text: str) -> Faults:
        """Read ``key=value`` items separated by commas; ``none`` or empty text means no faults.

        Probabilities are numbers in 0..1 or percentages (``10%``); durations take a unit
        (``s``, ``ms``, ``us``) unless they are 0.
        """
        stripped = text.strip()
        if stripped in ("", _NONE):
            return cls()
        values: dict[str, float] = {}
        for raw in stripped.split(","):
            item = raw.strip()
            key, sep, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                raise ValueError(f"fault item {item!r} in {text!r}: expected key=value")
            if key in values:
                raise ValueError(f"fault item {item!r} in {text!r}: {key} is given twice")
            if key in _PROBABILITIES:
                values[key] = _parse_probability(item, value)
            elif key in _DURATIONS:
                values[key] = _parse_duration(item, value)
            else:
                known = ", ".join(_PROBABILITIES + _DURATIONS)
                raise ValueError(f"fault item {item!r} in {text!r}: unknown key (known: {known})")
        return cls(**values)

    def __str__(self) -> str:
        items = []
        for field in fields(self):
            value = float(getattr(self, field.name))
            if value == 0.0:
                continue
            shown = _format_duration(value) if field.name in _DURATIONS else _format_number(value)
            items.append(f"{field.name}={shown}")
        return ",".join(items) or _NONE


def _parse_number(item: str, text: str, what: str = "a number") -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"fault item {item!r}: {text!r} is not {what}") from None
    if not math.isfinite(value):
        raise ValueError(f"fault item {item!r}: {text!r} is not a finite number")
    return value


def _parse_probability(item: str, text: str) -> float:
    if text.endswith("%"):
        value = _parse_number(item, text[:-1]) / 100.0
    else:
        value = _parse_number(item, text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"fault item {item!r}: a probability must be in 0..1 (or 0%..100%)")
    return value


def _parse_duration(item: str, text: str) -> float:
    for unit, per_second in _UNITS:
        if text.endswith(unit):
            value = _parse_number(item, text[: -len(unit)]) / per_second
            break
    else:
        value = _parse_number(item, text, "a duration (a number and s, ms or us)")
        if value != 0.0:
            raise ValueError(f"fault item {item!r}: a duration needs a unit (s, ms or us)")
    if value < 0.0:
        raise ValueError(f"fault item {item!r}: a duration must not be negative")
    return value


def _format_number(value: float) -> str:
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _format_duration(seconds: float) -> str:
    # The shortest text in any unit that reads back as exactly the same float.
    best = _format_number(seconds) + "s"
    for unit, per_second in _UNITS:
        shown = _format_number(seconds * per_second) + unit
        if len(shown) < len(best) and _parse_duration(shown, shown) == seconds:
            best = shown
    return best
