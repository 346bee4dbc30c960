"""The journal layer: journal/YYYY-MM-DD.md, append-only, one section per tick (SPEC §9).

A tick section looks like this (``distill`` reads it back):

    ## 14:45:00Z — Tick #14

    - T-101 ✅ passed in 12s — commit abc1234 — status: [Tick #14](../../docs/TICK_STATUS.md) [2026-11-29T14:45:00Z]
      - Outputs: added the users table
    - T-102 ❌ failed: verify exited 1 — status: [Tick #14](../../docs/TICK_STATUS.md) [2026-11-29T14:45:00Z]
      - Verify Output: `AssertionError: …` (exit code 1)
      - 💡 Lesson candidate: T-102 failed because "verify exited 1"; …

Sections written by ``memento memory write journal/…`` are
``## HH:MM:SSZ — summary (source)`` followed by free text: notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..git.repo import head
from ..workspace import Workspace
from .store import commit_leftovers, locked, record_journal

STATUS_LINK = "../../docs/TICK_STATUS.md"
FIELD_MAX = 400
LESSON = "💡 Lesson candidate"

_SECTION_RE = re.compile(r"^## (?P<time>\d{2}:\d{2}:\d{2}Z) — (?P<title>.*)$")
_TICK_RE = re.compile(r"^Tick #(?P<n>\d+)")
_TASK_RE = re.compile(
    r"^- (?P<task>[A-Z][A-Z0-9]*-\d+) (?P<mark>✅ passed|❌ failed|🚫 blocked)(?P<rest>.*)$"
)
_SUB_RE = re.compile(r"^\s+- (?P<key>[^:]+?): (?P<value>.*)$")


def journal_header(day: str) -> str:
    return (f"---\nsummary: \"Journal {day}: what each tick did\"\npriority: low\n---\n\n"
            f"# Journal {day}\n")


def journal_rel(day: str) -> str:
    return f"journal/{day}.md"


def _one_line(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= FIELD_MAX else text[: FIELD_MAX - 1] + "…"


def tick_section(number: int | None, stamp: str, results, entries=()) -> str:
    """The journal section of one tick; ``entries`` are its TICK_STATUS.md entries, for details."""
    time = stamp[11:19] + "Z" if len(stamp) >= 19 else stamp
    link = f"status: [Tick #{number}]({STATUS_LINK}) [{stamp}]"
    by_task = {e.task_id: e for e in entries if getattr(e, "task_id", None)}
    lines = [f"## {time} — Tick #{number}", ""]
    for r in results:
        entry = by_task.get(r.task_id)
        took = f" in {r.duration:.0f}s" if r.duration else ""
        if r.passed:
            sha = f" — commit {r.commit[:7]}" if r.commit else ""
            lines.append(f"- {r.task_id} ✅ passed{took}{sha} — {link}")
            outputs = entry.field("Outputs") if entry else None
            if outputs:
                lines.append(f"  - Outputs: {_one_line(outputs)}")
            continue
        mark = "🚫 blocked" if r.blocked else "❌ failed"
        lines.append(f"- {r.task_id} {mark}: {_one_line(r.reason) or 'no reason given'}{took} — {link}")
        for name in ("Verify Output", "Error Analysis"):
            value = entry.field(name) if entry else None
            if value:
                lines.append(f"  - {name}: {_one_line(value)}")
        if "interrupted" in (r.reason or "").lower():
            continue  # stopped from outside: nothing to learn about the task
        lines.append(f"  - {LESSON}: {r.task_id} failed because \"{_one_line(r.reason)}\"; if this "
                     "says something lasting, record it with `memento memory write "
                     f"knowledge/lessons/<topic>.md --summary … --source {r.task_id}`")
    return "\n".join(lines) + "\n"


def record_tick(ws: Workspace, number: int | None, stamp: str, results) -> str | None:
    """Append this tick to today's journal page (committed with the ticks around it: store.record_journal);
    returns memory/'s HEAD after it."""
    if not results:
        return None
    entries = []
    try:
        from .. import status_log

        entries = [e for e in status_log.parse_status(ws.status_path) if e.tick == number]
    except Exception:  # noqa: BLE001 - details are a bonus; the journal line is not
        entries = []
    day = stamp[:10] if re.match(r"\d{4}-\d{2}-\d{2}", stamp) else datetime.now(UTC).strftime("%Y-%m-%d")
    rel = journal_rel(day)
    section = tick_section(number, stamp, results, entries)
    with locked(ws) as root:
        commit_leftovers(ws, root, flush=False)  # the journal waiting for its commit goes on waiting
        target = root / rel
        old = target.read_text(encoding="utf-8", errors="replace") if target.exists() else journal_header(day)
        words = "; ".join(f"{r.task_id} {'passed' if r.passed else 'blocked' if r.blocked else 'failed'}"
                          for r in results)
        record_journal(ws, root, rel, old.rstrip("\n") + "\n\n" + section, (number, words))
        return head(root)


# --------------------------------------------------------------------------- reading back


@dataclass
class Attempt:
    """One attempt of a task as a journal page tells it."""

    task: str
    outcome: str  # passed | failed | blocked
    tick: int | None
    time: str
    reason: str = ""
    details: dict[str, str] = field(default_factory=dict)


@dataclass
class JournalDay:
    """A day's journal page, read back: its ticks, attempts and notes."""

    day: str
    ticks: list[int] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    notes: list[tuple[str, str, str]] = field(default_factory=list)  # (time, title, text)


def parse_journal(day: str, text: str) -> JournalDay:
    """Tick sections and notes of a journal page; lines it does not know are skipped."""
    out = JournalDay(day)
    time, title, tick = "", "", None
    note: list[str] | None = None
    current: Attempt | None = None

    def close_note() -> None:
        nonlocal note
        if note is not None:
            out.notes.append((time, title, "\n".join(note).strip()))
        note = None

    for line in text.replace("\r\n", "\n").split("\n"):
        m = _SECTION_RE.match(line)
        if m:
            close_note()
            time, title = m.group("time"), m.group("title").strip()
            current = None
            t = _TICK_RE.match(title)
            tick = int(t.group("n")) if t else None
            if tick is not None:
                out.ticks.append(tick)
            else:
                note = []
            continue
        if note is not None:
            note.append(line)
            continue
        if tick is None:
            continue
        m = _TASK_RE.match(line)
        if m:
            outcome = {"✅ passed": "passed", "❌ failed": "failed", "🚫 blocked": "blocked"}[m.group("mark")]
            rest = m.group("rest")
            reason = ""
            if outcome != "passed":
                reason = rest.lstrip(":").split(" — status:")[0].strip()
                reason = re.sub(r" in \d+s$", "", reason)
            current = Attempt(m.group("task"), outcome, tick, time, reason)
            out.attempts.append(current)
            continue
        m = _SUB_RE.match(line)
        if m and current is not None:
            current.details[m.group("key").strip()] = m.group("value").strip()
    close_note()
    return out
