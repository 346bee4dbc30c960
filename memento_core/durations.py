"""Durations as people write them (``90s``, ``5min``, ``1h30m``) and as Memento shows them.

One grammar for every file: memento.toml timeouts and schedule, a task's
``estimate`` and ``timeout``, the plan's ``stale_lock_timeout`` and the
``Duration`` field of a status entry. It lives apart from config/ so that
the format modules (plan, status log) read durations without loading the
config reader.
"""

from __future__ import annotations

import re

_UNITS: dict[str, float] = {
    "ms": 0.001,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}
_PART_RE = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]+)\s*")
_NUMBER_RE = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*")


def parse_duration(text: str | int | float) -> float:
    """Seconds in ``text``: ``90s``, ``5min``, ``5m``, ``1h``, ``1h30m``, ``2d``, ``250ms``;
    a bare number is seconds.

    Raises ValueError with a sentence saying what was wrong.
    """
    if isinstance(text, bool):
        raise ValueError(f"expected a duration such as 90s, 5min or 1h, got {text!r}")
    if isinstance(text, int | float):
        if text < 0:
            raise ValueError(f"a duration cannot be negative, got {text!r}")
        return float(text)
    if not isinstance(text, str):
        raise ValueError(f"expected a duration such as 90s, 5min or 1h, got {text!r}")
    if _NUMBER_RE.fullmatch(text):
        return float(text)
    pos = 0
    total = 0.0
    seen = False
    while pos < len(text):
        m = _PART_RE.match(text, pos)
        if not m:
            break
        unit = m.group(2).lower()
        if unit not in _UNITS:
            raise ValueError(
                f"unknown unit {m.group(2)!r} in duration {text!r} (use s, min or m, h, d)"
            )
        total += float(m.group(1)) * _UNITS[unit]
        pos = m.end()
        seen = True
    if not seen or pos != len(text):
        raise ValueError(
            f"invalid duration {text!r}: expected e.g. 90s, 5min, 5m, 1h, 1h30m, 2d or seconds"
        )
    return total


def duration_or_none(text: str | None) -> float | None:
    """Seconds in ``text``, or None when it is empty or not a duration.

    For values that are shown, not enforced (a status entry's ``Duration``, a
    task's ``estimate`` whose problem the plan reports separately).
    """
    if not text:
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None


def format_duration(seconds: float) -> str:
    """A short human duration: ``0.4s``, ``38s``, ``4m52s``, ``1h02m``, ``2d03h``."""
    if 0 < seconds < 9.95 and seconds != int(seconds):
        return f"{seconds:.1f}s"  # a fast task reads "0.4s", not "0s"
    total = max(0, int(round(seconds)))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    if total < 86400:
        return f"{total // 3600}h{total % 3600 // 60:02d}m"
    return f"{total // 86400}d{total % 86400 // 3600:02d}h"
