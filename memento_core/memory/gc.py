"""`memento memory gc`, the weekly job (SPEC §9): archive old journal days, mark unverified entries stale."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from ..locks import atomic_write_text
from ..workspace import Workspace
from .entries import load_entry, parse_date, set_fields
from .layout import ARCHIVE, GENERATED
from .store import commit, commit_leftovers, locked, write_index
from .tree import entry_paths

RETENTION_DAYS = 30
STALE_DAYS = 30
_DAY_RE = re.compile(r"^journal/(\d{4}-\d{2}-\d{2})\.md$")


@dataclass
class GcReport:
    archived: list[str] = field(default_factory=list)  # journal pages moved to .archive/
    kept_core: list[str] = field(default_factory=list)  # old pages kept because they are core
    stale: list[str] = field(default_factory=list)  # entries newly marked status: stale
    unreadable: list[str] = field(default_factory=list)  # entries without valid front matter: untouched
    commit: str | None = None


def gc(ws: Workspace, *, retention_days: int = RETENTION_DAYS, stale_days: int = STALE_DAYS,
       today: date | None = None) -> GcReport:
    """Archive journal days older than ``retention_days`` and mark stale entries; one commit."""
    today = today or datetime.now(UTC).date()
    report = GcReport()
    with locked(ws) as root:
        commit_leftovers(ws, root)
        changed: list[str] = []
        for rel in entry_paths(root, sessions=False):
            m = _DAY_RE.match(rel)
            if m:
                day = parse_date(m.group(1))
                if day is None or (today - day).days <= retention_days:
                    continue
                if load_entry(root, rel).priority == "core":
                    report.kept_core.append(rel)
                    continue
                dest = f"{ARCHIVE}/{rel}"
                (root / dest).parent.mkdir(parents=True, exist_ok=True)
                if (root / dest).exists():
                    # Two pages of one day (a page restored by hand): keep both.
                    dest = f"{ARCHIVE}/journal/{m.group(1)}-{datetime.now(UTC).strftime('%H%M%S')}.md"
                os.replace(root / rel, root / dest)
                report.archived.append(rel)
                changed += [rel, dest]
                continue
            if rel.startswith("journal/"):
                continue
            entry = load_entry(root, rel)
            if not entry.front_matter_ok:
                report.unreadable.append(rel)
                continue
            if entry.status == "stale":
                continue
            verified = parse_date(entry.last_verified) or parse_date(entry.updated_at)
            if verified is None or today - verified <= timedelta(days=stale_days):
                continue
            target = root / rel
            text = target.read_text(encoding="utf-8")
            atomic_write_text(target, set_fields(text, {"status": "stale"}))
            report.stale.append(rel)
            changed.append(rel)
        if not changed:
            return report
        write_index(root)
        subject = (f"memory gc: {len(report.archived)} journal day(s) archived, "
                   f"{len(report.stale)} entr{'y' if len(report.stale) == 1 else 'ies'} marked stale")
        report.commit = commit(root, [*changed, GENERATED], subject, source="gc", kind="gc",
                               body=f"retention {retention_days} days, stale after {stale_days} days, "
                                    f"as of {today.isoformat()}")
    return report
