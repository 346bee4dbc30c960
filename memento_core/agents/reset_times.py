"""The reset times CLIs print at a rate or usage limit (SPEC §14): "resets 2pm (Europe/Rome)",
"try again at 3:28 PM", "try again in 3 days 6 hours", codex's "Aug 8th, 2026 12:30 PM",
Claude's "…|1766502000". Imported where a limit was found (usage.limit_from, the presets that
read one): a tick whose agent met none compiles none of these patterns.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_EPOCH_RE = re.compile(r"\|(?P<epoch>1\d{9})\b")
_CLOCK_RE = re.compile(
    r"(?:resets?|reset at|try again at|available again at)\s+(?:at\s+)?"
    r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<tz>[A-Za-z_]+(?:/[A-Za-z_+\-]+)*)\)|\s*(?P<utc>UTC|GMT)\b)?",
    re.I)
_IN_RE = re.compile(r"(?:try again|resets?|retry)\s+(?:in|after)\s+"
                    r"(?P<rest>(?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)", re.I)
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
# codex, when the reset is not today: "Try again at Aug 8th, 2026 12:30 PM." (local time)
_DATED_RE = re.compile(
    r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? (?P<day>\d{1,2})(?:st|nd|rd|th)?,? "
    r"(?P<year>\d{4}),? (?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[AaPp][Mm])")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def reset_time(text: str, now: datetime) -> datetime | None:
    """When a limit resets, from the wording a CLI printed; None if it named no time.

    A clock time without a date is its next occurrence after ``now``, in the
    named time zone, else UTC when it says UTC, else this machine's local time.
    """
    m = _EPOCH_RE.search(text)
    if m:
        return datetime.fromtimestamp(int(m.group("epoch")), UTC)
    m = _IN_RE.search(text)
    if m:
        seconds = sum(float(n) * (0.001 if unit.lower().startswith("ms") else _UNIT_SECONDS.get(unit[0].lower(), 0))
                      for n, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", m.group("rest"), re.I))
        if seconds:
            return (now + timedelta(seconds=seconds)).astimezone(UTC)
    m = _DATED_RE.search(text)
    if m:
        return _dated(m)
    m = _CLOCK_RE.search(text)
    if m:
        return _next_clock(m, now)
    return None


def _dated(m: re.Match) -> datetime | None:
    hour = int(m.group("h")) % 12 + (12 if m.group("ampm").lower() == "pm" else 0)
    try:
        local = datetime(int(m.group("year")), _MONTHS.index(m.group("mon").lower()[:3]) + 1,
                         int(m.group("day")), hour, int(m.group("m")))
    except ValueError:
        return None
    return local.astimezone().astimezone(UTC)  # a naive time is this machine's local time


def _next_clock(m: re.Match, now: datetime) -> datetime | None:
    hour, minute = int(m.group("h")), int(m.group("m") or 0)
    ampm = (m.group("ampm") or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    zone = _zone(m.group("tz"), m.group("utc"))
    local_now = now.astimezone(zone)
    at = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at <= local_now:
        at += timedelta(days=1)
    return at.astimezone(UTC)


def _zone(name: str | None, utc: str | None):
    if utc:
        return UTC
    if name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only when a zone is named

        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return datetime.now().astimezone().tzinfo
