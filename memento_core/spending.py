"""What the agents cost (SPEC §14): one attempt's ``Usage``, and the running totals per UTC day.

The status log is the record: each attempt's entry has a ``Usage`` field
(``12.3k in / 2.1k out tokens, $0.042``). So that `memento status` and the
daily budget never re-read the log and its archive, the tick also adds each
attempt's usage to ``.memento/usage.json``: ``{"days": {"2026-12-01":
{"tokens_in": …, "tokens_out": …, "cost_usd": …}}, "total": {…}}``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from . import owned
from .lines import read_text_file
from .locks import file_lock, lock_path_for
from .workspace import Workspace

KEEP_DAYS = 400


@dataclass(frozen=True)
class Usage:
    """Tokens and cost one attempt used, as the CLI reported them (cost None: not reported)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None and other.cost_usd is None else \
            (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(self.tokens_in + other.tokens_in, self.tokens_out + other.tokens_out, cost)

    @property
    def tokens(self) -> int:
        """What a token budget counts: input (cache reads and writes included) + output."""
        return self.tokens_in + self.tokens_out

    def describe(self) -> str:
        """``12.3k in / 2.1k out tokens, $0.042`` (the status entry's Usage field)."""
        text = f"{_short(self.tokens_in)} in / {_short(self.tokens_out)} out tokens"
        return text + (f", ${self.cost_usd:.3f}" if self.cost_usd is not None else ", cost not reported")


_USAGE_FIELD_RE = re.compile(
    r"(?P<i>[\d.]+)(?P<ik>[kKmM]?) in / (?P<o>[\d.]+)(?P<ok>[kKmM]?) out tokens(?:, \$(?P<c>[\d.]+))?")


def short_count(n: int) -> str:
    """``62.0k``, ``1.2M``: a token count as entries and budget messages write it."""
    return _short(n)


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def _count(number: str, suffix: str) -> int:
    scale = {"k": 1000, "m": 1_000_000}.get(suffix.lower(), 1)
    return int(round(float(number) * scale))


def parse_usage_field(value: str | None) -> Usage | None:
    """A status entry's ``Usage`` field read back (its token counts rounded as written)."""
    m = _USAGE_FIELD_RE.search(value or "")
    if not m:
        return None
    cost = float(m.group("c")) if m.group("c") else None
    return Usage(_count(m.group("i"), m.group("ik")), _count(m.group("o"), m.group("ok")), cost)



def ledger_path(ws: Workspace):
    return ws.project_memento_dir / "usage.json"


def _zero() -> dict:
    return {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}


def read_ledger(ws: Workspace) -> dict:
    """usage.json as ``{"days": {day: totals}, "total": totals}`` (empty when there is none)."""
    try:
        data = json.loads(read_text_file(ledger_path(ws)))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    days = data.get("days") if isinstance(data.get("days"), dict) else {}
    return {"days": {d: _clean(v) for d, v in days.items()}, "total": _clean(data.get("total"))}


def _clean(value) -> dict:
    out = _zero()
    if isinstance(value, dict):
        for key in out:
            v = value.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
                out[key] = float(v) if key == "cost_usd" else int(v)
    return out


def today(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d")


def add_usage(ws: Workspace, usage: Usage, now: datetime | None = None) -> dict:
    """Add one attempt's usage to today's and the overall totals; the ledger as it is now."""
    day = today(now)
    with file_lock(lock_path_for(ledger_path(ws))), owned.LOCK:
        owned.settle(ledger_path(ws))  # never add to what an agent wrote there (SPEC §13)
        ledger = read_ledger(ws)
        for totals in (ledger["days"].setdefault(day, _zero()), ledger["total"]):
            totals["tokens_in"] += usage.tokens_in
            totals["tokens_out"] += usage.tokens_out
            totals["cost_usd"] = round(totals["cost_usd"] + (usage.cost_usd or 0.0), 6)
        ledger["days"] = dict(sorted(ledger["days"].items())[-KEEP_DAYS:])
        owned.write(ledger_path(ws), (json.dumps(ledger, indent=1) + "\n").encode("utf-8"))
    return ledger


def usage_summary(ws: Workspace, now: datetime | None = None) -> dict:
    """``{"today": totals, "total": totals}`` for `memento status --json`."""
    ledger = read_ledger(ws)
    return {"today": ledger["days"].get(today(now), _zero()), "total": ledger["total"]}


def usage_from_entries(entries, now: datetime | None = None) -> dict:
    """``{"today": totals, "total": totals}`` summed from status entries' Usage fields."""
    day, summary = today(now), {"today": _zero(), "total": _zero()}
    for entry in entries:
        usage = parse_usage_field(entry.field("Usage"))
        if usage is None:
            continue
        for key in ("total", "today") if entry.timestamp.startswith(day) else ("total",):
            totals = summary[key]
            totals["tokens_in"] += usage.tokens_in
            totals["tokens_out"] += usage.tokens_out
            totals["cost_usd"] = round(totals["cost_usd"] + (usage.cost_usd or 0.0), 6)
    return summary
