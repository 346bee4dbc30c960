"""The morning report (SPEC §15): what happened while nobody watched, what needs a person first.

Built from docs/TICK_STATUS.md and its archive alone (nothing new is kept):
archive files wholly before the window are never opened, the others are
parsed once each and folded into running totals, so a report over a long
history costs one pass over the files it covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .durations import parse_duration
from .errors import MementoError
from .lines import clipped, message_text
from .runlog import utc_stamp
from .status_log import ARCHIVE_GLOB, TickEntry, parse_status
from .workspace import Workspace

DEFAULT_SINCE = "24h"
# Reason categories of a failed attempt, in the order they are tried and shown.
CATEGORIES = ("verify", "guard", "timeout", "agent error", "rate limit", "review", "other")
# A guard's reasons; compiled at the first reason read (re's own cache), not at import: `memento
# status` imports this module for what needs a person and reads no reason (SPEC §11).
_GUARD_WORDS = (
    r"guard file changed|outside context_files|diff too large|commit\(s\) of its own|\bedited\b|"
    r"replaced Memento's own|changed git's own|docs/TICK_STATUS\.md|docs/HUMAN_NOTES\.md|deleted the plan|"
    r"removed or broke|verify changed|symbolic link")
_STAMP_RE = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)")


def category(reason: str) -> str:
    """Which kind of failure a Reason field names (review's reasons start with "review:")."""
    text = (reason or "").strip()
    low = text.lower()
    if low.startswith("review:"):
        return "review"
    if low.startswith("rate limited") or "rate limit" in low[:40]:
        return "rate limit"
    if "timed out" in low:
        return "timeout"
    if re.search(_GUARD_WORDS, text, re.I):
        return "guard"
    if low.startswith("verify"):
        return "verify"
    if low.startswith("agent") or "could not start" in low or "not found" in low:
        return "agent error"
    return "other"


def window(since: str | None = None, date: str | None = None, now: datetime | None = None) -> tuple[str, str]:
    """The report's [start, end) as stamps: ``--date YYYY-MM-DD`` (that UTC day) or ``--since 12h``."""
    now = now or datetime.now(UTC)
    if date:
        try:
            day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise MementoError(f"--date: expected YYYY-MM-DD, got {date!r}") from None
        return utc_stamp(day), utc_stamp(day + timedelta(days=1))
    try:
        seconds = parse_duration(since or DEFAULT_SINCE)
    except ValueError as exc:
        raise MementoError(f"--since: {exc}") from None
    return utc_stamp(now - timedelta(seconds=seconds)), utc_stamp(now + timedelta(seconds=1))


def stamp_of(entry: TickEntry) -> str:
    """The entry's stamp as ``YYYY-MM-DDTHH:MM:SSZ`` (a hand-written ``2026-11-29 14:45`` too); '' if none."""
    m = _STAMP_RE.search(entry.timestamp)
    if not m:
        return ""
    clock = m.group(2) if len(m.group(2)) == 8 else m.group(2) + ":00"
    return f"{m.group(1)}T{clock}Z"


def history_files(ws: Workspace, archive_dir: Path, start: str) -> list[Path]:
    """The archive files that may hold entries at or after ``start`` (oldest first), then TICK_STATUS.md.

    An archive's name starts with its first entry's stamp, so a file is wholly
    before ``start`` when the next file's first stamp is.
    """
    archives = sorted(Path(archive_dir).glob(ARCHIVE_GLOB)) if Path(archive_dir).is_dir() else []
    key = _safe(start)
    keep = [f for i, f in enumerate(archives)
            if i + 1 >= len(archives) or archives[i + 1].name[len("TICK_STATUS_"):] >= key]
    return [*keep, ws.status_path]


def _safe(stamp: str) -> str:
    return stamp.replace(":", "-")


def entries_between(files: Iterable[Path], start: str, end: str) -> Iterator[TickEntry]:
    """Entries of ``files`` (parsed one file at a time) with a stamp in [start, end)."""
    for path in files:
        for entry in parse_status(path):
            stamp = stamp_of(entry)
            if start <= stamp < end:
                yield entry


# --------------------------------------------------------------------------- the totals


def tally(entries: Iterable[TickEntry]) -> dict:
    """What the entries say, in one pass: ticks, passes with commits, failures by category,
    events, time and usage."""
    ticks: set[int] = set()
    passed, failed, events, asked = [], {c: [] for c in CATEGORIES}, [], []
    seconds, tokens_in, tokens_out, cost = 0.0, 0, 0, 0.0
    for e in entries:
        if e.tick is not None:
            ticks.add(e.tick)
        status = e.status
        # An attempt has a Status (a rate-limited or interrupted one too); an event has an Event.
        if e.field("Event") is not None or not e.task_id or e.field("Status") is None:
            events.append({"at": stamp_of(e), "tick": e.tick, "event": status,
                           "text": " ".join((e.field("Event") or e.field("Status") or "").split())[:200]})
            continue
        seconds += e.duration_seconds or 0.0
        usage = e.usage
        if usage is not None:
            tokens_in, tokens_out = tokens_in + (usage.tokens_in or 0), tokens_out + (usage.tokens_out or 0)
            cost += usage.cost_usd or 0.0
        if status == "SUCCESS":
            passed.append({"task": e.task_id, "title": e.task_title, "commit": e.commit_sha,
                           "at": stamp_of(e), "tick": e.tick})
        elif status == "NEEDS INPUT":  # a question is no failure (SPEC §18)
            asked.append({"task": e.task_id, "question": e.field("Question") or "", "at": stamp_of(e),
                          "tick": e.tick})
        else:
            reason = " ".join((e.field("Reason") or e.error or "no reason recorded").split())
            failed[category(reason)].append({"task": e.task_id, "reason": reason[:300], "at": stamp_of(e),
                                             "tick": e.tick, "blocked": status == "BLOCKED"})
    return {"ticks": len(ticks), "passed": passed, "asked": asked,
            "failed": {c: v for c, v in failed.items() if v},
            "failed_count": sum(len(v) for v in failed.values()), "events": events,
            "time_seconds": round(seconds, 1),
            "usage": {"tokens_in": tokens_in, "tokens_out": tokens_out, "cost_usd": round(cost, 4)}}


def build_report(ws: Workspace, *, since: str | None = None, date: str | None = None,
                 now: datetime | None = None) -> dict:
    """The report as plain data (the schema of `memento report --json`)."""
    from .plan.scan import parse_plan

    start, end = window(since, date, now)
    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    files = history_files(ws, ws.root / plan.meta.status_archive_dir, start)
    from .status_log import entries_with_commits

    totals = tally(entries_with_commits(ws.root, entries_between(files, start, end)))
    current = parse_status(ws.status_path)
    needs, summary, notes = _needs(ws, plan, current)
    return clean({
        "project": plan.title or ws.root.name,
        "root": str(ws.root),
        "since": start, "until": end,
        "state": summary["state"],  # the one word (state_word.pipeline_word), as `memento status` says it
        "needs_you": needs,
        **totals,
        "blocked": [{"id": b["id"], "title": b["title"], "retries": b["retries"],
                     "last_reason": " ".join(str(b.get("last_error") or "no reason recorded").split())}
                    for b in summary.get("blocked") or []],
        "skipped": skipped_after_work(plan, totals),
        "questions": [{k: q[k] for k in ("id", "title", "question", "choices", "asked")}
                      for q in summary.get("questions") or []],
        "unread_notes": [{"target": n.target, "at": n.timestamp, "text": " ".join(n.text.split())[:200]}
                         for n in notes if not n.read and not n.archived],
    })


def skipped_after_work(plan, totals: dict) -> list[dict]:
    """Tasks attempted in the window that a person (or the architect) has skipped since: the
    end of their story, which the status log alone does not tell (a skip is a plan edit)."""
    worked = {f["task"] for items in totals["failed"].values() for f in items}
    return [{"id": t.id, "title": t.title, "reason": " ".join((t.reason or "no reason given").split())}
            for t in plan.tasks if t.status == "-" and t.id in worked]


def clean(doc):
    """``doc`` with every string in it made :func:`~memento_core.lines.message_text` (no control,
    bidi or format characters, mentions defused): the report, printed, as JSON or in the
    dashboard, is read by people and forwarded to chats (SPEC §15)."""
    if isinstance(doc, str):
        return message_text(doc)
    if isinstance(doc, dict):
        return {clean(k): clean(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [clean(v) for v in doc]
    return doc


def _needs(ws: Workspace, plan, entries) -> tuple[list[dict], dict, list]:
    """overview.needs_you's list (as dicts), the status summary and the notes."""
    from . import overview
    from .state import TickState

    state = TickState.load(ws)
    summary = overview.summarize(ws, plan, entries)
    word, why = overview.pipeline_word(summary, state)
    summary["state"] = word
    needs, notes = needs_of(ws, plan, summary, state, word, why)
    return needs, summary, notes


def needs_of(ws: Workspace, plan, summary: dict, state, word: str, why: str) -> tuple[list[dict], list]:
    """What needs a person (overview.needs_you, as dicts) given the status ``summary`` and its one
    word: `memento report --json` and `memento status --json` say the same. Also the notes read."""
    from . import overview
    from .checkpoint import unsurfaced_results
    from .notes import parse_notes

    try:
        notes = parse_notes(ws.notes_path)
    except (MementoError, OSError):
        notes = []
    try:
        unsurfaced = unsurfaced_results(ws, state)
    except Exception:  # noqa: BLE001 - an unreadable acknowledgement file hides nothing else
        unsurfaced = []
    needs = overview.needs_you(summary, state, plan, notes, unsurfaced, idle_why=why if word == "IDLE" else "")
    return [need_dict(n) for n in needs], notes


def need_dict(need) -> dict:
    """A needs-you item as JSON: a failing check's name, url and pull request only on that kind."""
    return {k: v for k, v in asdict(need).items() if k not in ("name", "url", "pr") or need.kind == "check"}


# --------------------------------------------------------------------------- the human form


def report_lines(doc: dict) -> list[str]:
    """The human form, as plain lines (`memento report` and the dashboard's Report view make
    each one safe to show)."""
    lines = [f"Report for {doc['project']}: {doc['since']} to {doc['until']} ({doc['state']})", ""]
    if doc["needs_you"]:
        lines.append(f"[warn] needs you ({len(doc['needs_you'])}):")
        # The command line's words (`memento ack`), not the dashboard's keys: this is a terminal.
        lines += [f"  - {n['text']}" + (f"  → {n.get('command') or n['action']}" if n.get("command") or n["action"]
                                         else "") for n in doc["needs_you"]]
    else:
        lines.append("[ok] nothing needs you")
    usage = doc["usage"]
    lines += ["", f"{doc['ticks']} tick{'' if doc['ticks'] == 1 else 's'}, {len(doc['passed'])} passed, {doc['failed_count']} failed; "
              f"time {_clock(doc['time_seconds'])}; tokens {usage['tokens_in']:,} in / {usage['tokens_out']:,} out; "
              f"cost ${usage['cost_usd']:.2f}"]
    if doc["passed"]:
        lines += ["", "Passed:"]
        lines += [f"  {p['task']} {p['title'] or ''} ({p['commit'] or 'no commit'})".rstrip() for p in doc["passed"]]
    if doc["failed"]:
        lines += ["", "Failed attempts:"]
        for kind, items in doc["failed"].items():
            lines.append(f"  {kind} ({len(items)}):")
            groups = grouped_failures(items)  # the same failure nine times is one line, ×9
            for (task, reason), count in groups[-10:]:
                lines.append(f"    {task}: {clipped(reason, 160)}" + (f" ×{count}" if count > 1 else ""))
            if len(groups) > 10:
                lines.append(f"    … and {len(groups) - 10} earlier")
    if doc.get("skipped"):
        lines += ["", "Skipped after failing:"]
        lines += [f"  {t['id']} {t['title']}: {clipped(t['reason'], 160)}" for t in doc["skipped"]]
    if doc["blocked"]:
        lines += ["", "Blocked:"]
        lines += [f"  {b['id']} {b['title']} (after {b['retries']} retries): {clipped(b['last_reason'], 160)}"
                  for b in doc["blocked"]]
    if doc.get("questions"):
        lines += ["", "Waiting for your answer:"]
        for q in doc["questions"]:
            lines.append(f"  {q['id']} {q['title']}: {clipped(q['question'], 160)}")
            lines += [f"    [{n}] {clipped(c, 120)}" for n, c in enumerate(q.get("choices") or [], 1)]
    if doc.get("asked"):
        lines += ["", f"Questions asked ({len(doc['asked'])}):"]
        lines += [f"  {a['task']}: {clipped(a['question'], 160)}" for a in doc["asked"][-10:]]
    if doc["unread_notes"]:
        lines += ["", f"Unread notes ({len(doc['unread_notes'])}):"]
        lines += [f"  → {n['target']}: {clipped(n['text'], 120)}" for n in doc["unread_notes"]]
    return lines


def grouped_failures(items: list[dict]) -> list[tuple[tuple[str, str], int]]:
    """((task, reason), how many times), in the order each failure was last seen."""
    counts: dict[tuple[str, str], int] = {}
    for f in items:
        key = (str(f.get("task") or "?"), " ".join(str(f.get("reason") or "").split()))
        counts[key] = counts.pop(key, 0) + 1  # re-inserted: the order is the last occurrence's
    return list(counts.items())


def _clock(seconds: float) -> str:
    from .durations import format_duration

    return format_duration(seconds) if seconds else "0s"
