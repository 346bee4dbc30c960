"""What an agent's own output says about its usage and its rate limits (SPEC §14).

Each preset module has ``parse_usage(log_text) -> Usage | None`` and
``rate_limit(log_text, now) -> RateLimit | None``: pure functions on what the
agent printed in one attempt. This module holds the values and the pieces
they share: JSON objects found in a log, HTTP 429 and "try again" wording;
the reset times CLIs print are read by reset_times.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from ..spending import Usage

__all__ = ["RateLimit", "Usage", "Window", "generic_rate_limit", "json_objects", "last_words", "tail_rate_limit"]

LAST_LINES = 8  # what a CLI says last: where it reports that it gave up on a refusal


@dataclass(frozen=True)
class RateLimit:
    """The model's service refused for rate or usage limits; ``until`` when the CLI said when."""

    until: datetime | None
    message: str


WINDOW_LABELS = {"five_hour": "5-hour", "seven_day": "7-day", "seven_day_opus": "7-day Opus",
                 "seven_day_sonnet": "7-day Sonnet", "seven_day_overage_included": "7-day with extra usage"}


@dataclass(frozen=True)
class Window:
    """One of the provider's usage windows as the CLI reported it (SPEC §20): ``utilization``
    the share used (0.96 = 96 %), ``resets_at`` when it starts over."""

    name: str
    utilization: float
    resets_at: datetime | None

    @property
    def label(self) -> str:
        return WINDOW_LABELS.get(self.name, self.name.replace("_", " "))

    @property
    def percent(self) -> float:
        return self.utilization * 100


# ------------------------------------------------------------------ JSON in a log


def _json_spans(text: str) -> Iterator[tuple[int, int, object]]:
    """(start, end, value) of each JSON value that opens with ``{`` at the start of a line."""
    decoder = json.JSONDecoder()
    pos, length = 0, len(text)
    while pos < length:
        start = text.find("{", pos)
        if start < 0:
            return
        if start and text[start - 1] not in "\n\r":
            pos = start + 1
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        yield start, end, value
        pos = end


def json_objects(text: str) -> Iterator[dict]:
    """Every JSON object in ``text`` that starts a line: JSONL events, or one pretty-printed object.

    A log holds Memento's own lines and the CLI's stderr around the JSON; what
    is not JSON is skipped.
    """
    for _, _, value in _json_spans(text):
        if isinstance(value, dict):
            yield value


def lines_with(text: str, needle: str) -> Iterator[dict]:
    """The JSON objects of the lines of ``text`` holding ``needle`` (JSONL events of one kind),
    found without parsing the others."""
    pos = text.find(needle)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        try:
            value = json.loads(text[start:end])
        except ValueError:
            value = None
        if isinstance(value, dict):
            yield value
        pos = text.find(needle, end)


def plain_lines(text: str) -> str:
    """``text`` without its JSON objects: the CLI's stderr and Memento's lines, where a limit
    message is looked for outside the JSON (an answer that talks about rate limits is not one)."""
    out, last = [], 0
    for start, end, _ in _json_spans(text):
        out.append(text[last:start])
        last = end
    out.append(text[last:])
    return "".join(out)


def number(value) -> int:
    """An int from a JSON value that should be a token count (0 if it is not one)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    return 0


# ------------------------------------------------------------------ rate limits

HTTP_429_RE = re.compile(
    r"\b429\b[^\n]{0,80}(?:too many requests|rate.?limit|resource.?exhausted|quota)"
    r"|(?:too many requests|rate_limit_error|rate.?limit(?:ed)?|resource_exhausted)[^\n]{0,80}\b429\b"
    r"|\bstatus(?:\s*code)?[\s:=]+429\b|\bError code: 429\b|\b429 Too Many Requests\b",
    re.I)


def answer_text(obj: dict | None, key: str) -> str | None:
    """``obj[key]`` when it is non-blank text (a CLI's JSON answer, for the log), else None."""
    text = obj.get(key) if obj else None
    return text if isinstance(text, str) and text.strip() else None


def refused_429(said: str, now: datetime) -> RateLimit:
    """A refusal the CLI reported as HTTP 429: the reset time it printed, if any."""
    from .reset_times import reset_time

    return RateLimit(reset_time(said, now), (said or "HTTP 429").strip()[:300])


def generic_rate_limit(text: str, now: datetime | None = None) -> RateLimit | None:
    """An HTTP 429 in ``text``, with a reset time when one is printed near it."""
    return limit_from(text, HTTP_429_RE, now or datetime.now(UTC))


def last_words(text: str, count: int = LAST_LINES) -> str:
    """The last ``count`` non-blank lines the agent printed, Memento's own ``[memento]`` lines
    (its command line, its exit) left out: a CLI that gives up on a refusal says so there,
    while a 429 it met and got past, or one in the code it wrote, is earlier."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("[memento] ")]
    return "\n".join(lines[-count:])


def tail_rate_limit(text: str, now: datetime | None = None) -> RateLimit | None:
    """An HTTP 429 in the agent's last words (any CLI: ``command``, ``script``, openclaw)."""
    return generic_rate_limit(last_words(text), now)


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start:end if end >= 0 else len(text)]


def limit_from(text: str, pattern: re.Pattern, now: datetime) -> RateLimit | None:
    """A RateLimit from the lines of ``text`` that ``pattern`` matches: the last one that
    names a reset time, else the last one (the CLI's final word); None if none matches."""
    lines = [_line_at(text, m.start()) for m in pattern.finditer(text)]
    if not lines:
        return None
    from .reset_times import reset_time  # only where a limit was found

    timed = [(line, reset_time(line, now)) for line in lines]
    line, until = next(((ln, t) for ln, t in reversed(timed) if t is not None), (lines[-1], None))
    return RateLimit(until, line.strip()[:300])
