"""What Memento knows of each phase's pull request (SPEC §19 "Pull requests out", ``land = "pr"``):
``.memento/forge_pulls.json``.

One record per phase: its branch, the pull request once opened, and what the last look at GitHub
found (merged or not, the required checks, the review). The tick's land step writes it (the branch
pushed, the pull request opened); the follow step refreshes it from GitHub each tick; the
scheduler, `memento status --json`, the needs-you list and the dashboard only read it. Read and
written through owned.py: an unconfined agent that marked its phase's pull request merged would
start the next phase on unreviewed work.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from .. import owned
from ..workspace import Workspace

STATES = ("unpushed", "open", "merged", "closed")  # closed: without a merge
CHECKS = ("none", "pending", "passing", "failing")
REVIEWS = ("none", "approved", "changes_requested", "commented")
FILE = "forge_pulls.json"


@dataclass(frozen=True)
class Check:
    """A check a pull request must pass: its name and, when the forge gave one, its page."""

    name: str
    url: str = ""


@dataclass(frozen=True)
class PullRecord:
    """A phase's branch and pull request. ``number`` 0: not opened yet. ``checks``: the required
    checks on ``head`` taken together (none, pending, passing, failing); ``failing``/``pending`` name
    them. ``reviews_seen``: the ids of reviews already turned into notes (never twice). ``error``:
    why the last push or pull request did not happen, in GitHub's or the remote's words ("" when
    it did)."""

    phase: str
    branch: str
    base: str
    number: int = 0
    url: str = ""
    head: str = ""
    state: str = "unpushed"
    checks: str = "none"
    failing: tuple[Check, ...] = ()
    pending: tuple[str, ...] = ()
    review: str = "none"
    reviews_seen: tuple[int, ...] = ()
    error: str = ""
    updated: str = ""

    @property
    def landed(self) -> bool:
        """The phase is done (SPEC §19): merged, and its required checks passed (or there are none)."""
        return self.state == "merged" and self.checks in ("passing", "none")

    def to_json(self) -> dict:
        return asdict(self)


def path_of(ws: Workspace) -> Path:
    main = getattr(ws, "main", None)  # a parallel worker's workspace: the record is the project's
    return (Workspace(main) if main else ws).memento_dir / FILE


def load(ws: Workspace) -> dict[str, PullRecord]:
    """``{phase id: PullRecord}``; records that are not what Memento writes are left out, and a file
    that is not (a link, a FIFO, bad JSON) reads as empty."""
    raw = owned.read(path_of(ws))
    try:
        data = json.loads(raw.decode("utf-8")) if raw and raw != owned.NOT_A_FILE else {}
    except (UnicodeDecodeError, ValueError):
        data = {}
    phases = data.get("phases") if isinstance(data, dict) else None
    out: dict[str, PullRecord] = {}
    for phase, rec in (phases.items() if isinstance(phases, dict) else ()):
        record = _record(phase, rec)
        if record is not None:
            out[phase] = record
    return out


def save(ws: Workspace, records: dict[str, PullRecord]) -> None:
    p = path_of(ws)
    p.parent.mkdir(exist_ok=True)
    doc = {"phases": {k: records[k].to_json() for k in sorted(records)}}
    owned.write(p, (json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode())


def update(ws: Workspace, phase: str, **changes) -> PullRecord:
    """Change one phase's record (it must exist) and save; the new record."""
    records = load(ws)
    records[phase] = replace(records[phase], **changes)
    save(ws, records)
    return records[phase]


def _record(phase: str, rec) -> PullRecord | None:
    if not isinstance(phase, str) or not isinstance(rec, dict):
        return None
    known = {f.name: f for f in fields(PullRecord)}
    values = {k: v for k, v in rec.items() if k in known}
    try:
        values["failing"] = tuple(Check(str(c["name"]), str(c.get("url", ""))) for c in values.get("failing", ()))
        values["pending"] = tuple(str(n) for n in values.get("pending", ()))
        values["reviews_seen"] = tuple(int(n) for n in values.get("reviews_seen", ()))
        record = PullRecord(**{**values, "phase": phase})
    except (TypeError, KeyError, ValueError):
        return None
    ok = (isinstance(record.branch, str) and isinstance(record.base, str) and isinstance(record.number, int)
          and record.state in STATES and record.checks in CHECKS and record.review in REVIEWS
          and all(isinstance(getattr(record, f), str) for f in ("url", "head", "error", "updated")))
    return record if ok else None


