"""The tick's own record of an attempt, as a file (SPEC §13): ``.memento/records/ID.json``.

What the record holds and why recovery believes it instead of the claim is tick/record.py's to
say; this module only writes and reads the file, its digest and the copies next to it (the plan
as it was, ``ID.plan``; the status log, ``ID.status``; git's state, ``ID.git``). It sits below
the tick and the fleet: the fleet asks whether this host holds a record of a task
(fleet/stale.py) without importing the tick.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .lines import read_text_file
from .locks import atomic_write_text
from .workspace import Workspace


@dataclass(frozen=True)
class Record:
    """An attempt as the tick recorded it at its snapshot (``ID.json``): who ran it, where, from which HEAD."""

    task: str
    pid: int
    pid_start: int | None
    identity: str
    host: str
    tick: int
    base: str | None
    written: float
    untracked: tuple[str, ...]
    cleanignore: tuple[str, ...]
    max_retries: int
    retries: int
    plan_sha256: str
    status_sha256: str = ""  # of the status log's copy next to the record (ID.status)
    git_sha256: str = ""  # of git's state at the snapshot next to the record (ID.git)
    unseen_sha256: str = ""  # of what was below the work tree at the snapshot (ID.unseen, tick/unseen.py)
    objects_sha256: str = ""  # of git's object store's print at the snapshot (ID.objects, tick/objects.py)
    heartbeat_every: float = 1.0  # the record is touched at least this often while the tick lives
    log: str = ""  # the tick's log, relative to the project
    stage: str = "running"  # running | committing
    commit_paths: tuple[str, ...] = ()
    commit_message: str = ""
    commit_hashes: dict[str, str] = field(default_factory=dict)
    entry: str = ""
    worktree: str = ""  # a parallel worker's (SPEC §12), relative to the project: its changes live there
    branch: str = ""  # that worker's branch (`memento/<ID>`, another name when a person has that one)


def records_dir(ws: Workspace) -> Path:
    return ws.memento_dir / "records"


def record_paths(ws: Workspace, task_id: str) -> tuple[Path, Path, Path, Path]:
    folder = records_dir(ws)
    return (folder / f"{task_id}.json", folder / f"{task_id}.plan", folder / f"{task_id}.status",
            folder / f"{task_id}.git")


def _digest(data: dict) -> str:
    body = json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogateescape")
    return hashlib.sha256(body).hexdigest()


def save_record(ws: Workspace, rec: Record) -> None:
    data = asdict(rec)
    data["digest"] = _digest(asdict(rec))
    atomic_write_text(record_paths(ws, rec.task)[0], json.dumps(data, ensure_ascii=False))


def read_record(ws: Workspace, task_id: str) -> Record | None:
    """The task's record, or None when there is none or it does not match its digest."""
    json_path = record_paths(ws, task_id)[0]
    try:
        data = json.loads(read_text_file(json_path))
        digest = data.pop("digest", None)
        if not isinstance(data, dict) or digest != _digest(data):
            return None
        for key in ("untracked", "cleanignore", "commit_paths"):
            data[key] = tuple(data.get(key) or ())
        rec = Record(**data)
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return rec if rec.task == task_id else None


def recorded_plan(ws: Workspace, rec: Record) -> bytes | None:
    """The plan as it was at the claim, if its copy is intact."""
    try:
        data = record_paths(ws, rec.task)[1].read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == rec.plan_sha256 else None


def recorded_status(ws: Workspace, rec: Record) -> bytes | None:
    """The status log as it was at the claim, if its copy is intact."""
    try:
        data = record_paths(ws, rec.task)[2].read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == rec.status_sha256 else None
