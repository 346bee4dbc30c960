"""What the dashboard shows, read from the files in a worker thread (no Textual here).

A :class:`Snapshot` is rebuilt part by part: the watcher says which files
changed and only those parts are read again; the rest is carried over from the
previous snapshot. The files stay the source of truth; nothing here is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memento_core import overview, status_log
from memento_core.config.load import load_config
from memento_core.config.model import Config
from memento_core.errors import MementoError
from memento_core.notes import Note, parse_notes
from memento_core.plan.model import Plan
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.status_log import TickEntry
from memento_core.workspace import Workspace

if TYPE_CHECKING:
    from memento_core.doctor import Finding as DoctorFinding

# The parts of a snapshot; the watcher maps changed paths to these.
PLAN = "plan"
STATUS = "status"
NOTES = "notes"
CHECKPOINT = "checkpoint"
STATE = "state"
CONFIG = "config"
LOGS = "logs"
ALL_PARTS = frozenset({PLAN, STATUS, NOTES, CHECKPOINT, STATE, CONFIG, LOGS})

TIMELINE_LIMIT = 5000  # newest entries shown, current file first, then archives


@dataclass(frozen=True)
class Finding:
    severity: str
    check: str
    message: str
    path: str = ""
    line: int = 0


@dataclass(frozen=True)
class Snapshot:
    ws: Workspace
    plan: Plan | None = None
    plan_error: str = ""
    summary: dict[str, Any] = field(default_factory=dict)  # `memento status --json`
    entries: tuple[TickEntry, ...] = ()  # newest first
    last_by_task: dict[str, TickEntry] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    notes_error: str = ""
    checkpoint_text: str | None = None
    findings: tuple[Finding, ...] | None = None  # None: the doctor has not run yet (the first read skips it)
    findings_error: str = ""
    state: TickState = field(default_factory=TickState)
    claims: tuple[str, ...] = ()  # task ids with a claim file: a tick is running them
    alert: bool = False
    config: Config = field(default_factory=Config)
    config_error: str = ""
    cron_installed: bool = False
    cron_schedule: str | None = None  # the entry's five fields, for a real countdown
    cron_daemon: bool = False  # a cron daemon process is alive (an entry without one never runs)
    unsurfaced: tuple[dict, ...] = ()  # passed tasks nobody acknowledged (checkpoint.unsurfaced_results)
    newest_log: str | None = None  # logs/tick_*.log most recently modified
    # The parts read from disk for this snapshot (the rest came from the previous one):
    # the dashboard redraws only the panes that show them.
    parts_read: frozenset[str] = ALL_PARTS

    @property
    def project(self) -> str:
        if self.plan is not None and self.plan.title:
            return self.plan.title
        return self.ws.root.name

    def needs(self, idle_why: str = "") -> list:
        """What a person must do now (overview.needs_you), from what this snapshot read."""
        if not self.summary:
            from memento_core.overview import Need

            return [Need("invalid", f"plan unreadable: {self.plan_error}", "fix the plan (memento lint)")] \
                if self.plan_error else []
        return overview.needs_you(self.summary, self.state, self.plan, self.notes, self.unsurfaced,
                                  idle_why=idle_why)



def load(ws: Workspace, parts: frozenset[str] | set[str], previous: Snapshot | None = None) -> Snapshot:
    """A snapshot with ``parts`` read again from disk and the rest taken from ``previous``."""
    snap = previous or Snapshot(ws)
    parts = set(ALL_PARTS if previous is None else parts)
    changes: dict[str, Any] = {"parts_read": frozenset(parts)}
    if PLAN in parts or STATUS in parts:
        changes.update(_load_plan_and_status(ws, load_entries=STATUS in parts or previous is None,
                                             previous=snap))
    if NOTES in parts:
        try:
            changes["notes"] = tuple(parse_notes(ws.notes_path))
            changes["notes_error"] = ""
        except (MementoError, OSError) as exc:
            changes["notes_error"] = str(exc)
    if previous is not None and (CHECKPOINT in parts or PLAN in parts or STATE in parts):
        # The first load skips the doctor (it re-reads every file): the app asks for it right after.
        changes["checkpoint_text"] = _read_text(ws.checkpoint_path)
        changes.update(_doctor(ws))
    if STATE in parts:
        changes["state"] = TickState.load(ws)
        changes["claims"] = _claims(ws)
        changes["alert"] = ws.alert_path.exists()
    if STATE in parts or CHECKPOINT in parts:
        changes["unsurfaced"] = _unsurfaced(ws, changes.get("state", snap.state))
    if CONFIG in parts:
        try:
            changes["config"] = load_config(ws.config_path)
            changes["config_error"] = ""
        except MementoError as exc:
            changes["config"] = Config()
            changes["config_error"] = str(exc)
        changes["cron_schedule"] = _cron_schedule(ws)
        changes["cron_installed"] = changes["cron_schedule"] is not None
    if (CONFIG in parts or STATE in parts) and changes.get("cron_installed", snap.cron_installed):
        from memento_core.cron import daemon_running

        changes["cron_daemon"] = daemon_running()
    if LOGS in parts or STATE in parts:
        changes["newest_log"] = newest_log(ws)
    return replace(snap, **changes)


def _unsurfaced(ws: Workspace, state: TickState) -> tuple[dict, ...]:
    from memento_core.checkpoint import unsurfaced_results

    try:
        return tuple(unsurfaced_results(ws, state))
    except Exception:  # an unreadable acknowledgement file: nothing to show, never a crash
        return ()


def _cron_schedule(ws: Workspace) -> str | None:
    """The five fields of this workspace's cron entry, or None when there is none."""
    from memento_core.cron import installed_schedule

    try:
        return installed_schedule(ws.root)
    except Exception:  # a missing crontab binary is "not installed", not a crash
        return None


def _load_plan_and_status(ws: Workspace, load_entries: bool, previous: Snapshot) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
        out["plan"], out["plan_error"] = plan, ""
    except (MementoError, OSError) as exc:
        plan = None
        out["plan"], out["plan_error"] = None, str(exc)
    if load_entries:
        archive = ws.root / (plan.meta.status_archive_dir if plan is not None else "logs/status_archive/")
        entries = timeline_entries(ws, archive)
        out["entries"] = tuple(entries)
        last: dict[str, TickEntry] = {}
        for entry in reversed(entries):  # oldest first, so the newest wins
            if entry.task_id and not entry.is_event:
                last[entry.task_id] = entry
        out["last_by_task"] = last
    entries = out.get("entries", previous.entries)
    out["summary"] = summarize(ws, plan, entries) if plan is not None else {}
    return out


def summarize(ws: Workspace, plan: Plan, entries_newest_first: tuple[TickEntry, ...]) -> dict[str, Any]:
    """The `memento status --json` document, from the plan and entries already read."""
    return overview.summarize(ws, plan, entries_newest_first[::-1])


def timeline_entries(ws: Workspace, archive: Path, limit: int = TIMELINE_LIMIT) -> list[TickEntry]:
    """Newest first: the status file, then archived files newest first, up to ``limit``."""
    try:
        entries = status_log.parse_status(ws.status_path)
    except (MementoError, OSError):
        entries = []
    out = list(reversed(entries))
    if len(out) < limit:
        try:
            files = sorted(archive.glob(status_log.ARCHIVE_GLOB), reverse=True)
        except OSError:
            files = []
        for file in files:
            try:
                out.extend(reversed(status_log.parse_archive(file)))
            except (MementoError, OSError):
                continue
            if len(out) >= limit:
                break
    # A success names its commit by the commit's trailer: resolved here, so the diff key finds it.
    from memento_core.status_log import entries_with_commits

    return entries_with_commits(ws.root, out[:limit])


def _read_text(path: Path) -> str | None:
    from memento_core.lines import read_text_file

    try:
        return read_text_file(path, "replace")  # never blocks on a FIFO
    except OSError:
        return None


def _doctor(ws: Workspace) -> dict[str, Any]:
    # Imported here: the doctor re-reads every file, and the first read (the first paint) skips it.
    from memento_core.doctor import check_workspace

    try:
        found = check_workspace(ws)
    except Exception as exc:  # the doctor is read-only; its failure is shown, not raised
        return {"findings": (), "findings_error": f"doctor failed: {type(exc).__name__}: {exc}"}
    return {"findings": tuple(_finding(f) for f in found), "findings_error": ""}


def _finding(f: DoctorFinding) -> Finding:
    return Finding(severity=f.severity, check=f.check, message=f.message, path=f.path or "", line=f.line or 0)


def _claims(ws: Workspace) -> tuple[str, ...]:
    try:
        return tuple(sorted(p.stem for p in ws.claims_dir.glob("*.json")))
    except OSError:
        return ()


def newest_log(ws: Workspace) -> str | None:
    """The most recently modified ``logs/tick_*.log``, relative to the root."""
    best: tuple[float, str] | None = None
    try:
        with os.scandir(ws.logs_dir) as it:
            for item in it:
                if item.name.startswith("tick_") and item.name.endswith(".log"):
                    mtime = item.stat().st_mtime
                    if best is None or mtime > best[0]:
                        best = (mtime, item.name)
    except OSError:
        return None
    return f"logs/{best[1]}" if best else None
