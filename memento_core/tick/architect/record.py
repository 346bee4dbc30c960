"""The architect's own record of a run (SPEC §16), what a killed run leaves for the next tick.

Before the agent starts, :func:`write_record` writes ``.memento/records/ARCHITECT.json``:
who runs it (pid, the pid's start time, the ``MEMENTO_TICK`` marker its agent carries),
where it started (HEAD, the untracked files, the cleanignore patterns, the time) and every
document's bytes; next to it ``ARCHITECT.git``, git's own state (git.state.to_bytes). A run
that ends, however it ends, removes it after putting things back or committing. When the
process is killed outright (SIGKILL), the record stays: the next tick (recovery.py) or the
next ``memento architect`` kills the marked agent and restores everything from it
(run.recover_interrupted). In the sandbox `.memento/` is read-only to the agent.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ...agents.reaper import start_time, tick_identity
from ...git.state import GitState, from_bytes, to_bytes
from ...locks import atomic_write_bytes, atomic_write_text
from ...state import this_host
from ...workspace import Workspace
from . import ARCHITECT_ID


@dataclass(frozen=True)
class ArchitectRecord:
    pid: int
    pid_start: int | None
    identity: str
    host: str
    base: str | None
    untracked: tuple[str, ...]
    cleanignore: tuple[str, ...]
    taken_at: str
    docs: dict[str, bytes | None]
    docs_tree: dict[str, str] | None = None


def record_paths(ws: Workspace) -> tuple[Path, Path]:
    folder = ws.memento_dir / "records"
    return folder / f"{ARCHITECT_ID}.json", folder / f"{ARCHITECT_ID}.git"


def write_record(ws: Workspace, *, base: str | None, untracked, cleanignore, taken_at: datetime,
                 docs: dict[str, bytes | None], git: GitState | None, docs_tree: dict[str, str] | None = None) -> None:
    json_path, git_path = record_paths(ws)
    if git is not None:
        atomic_write_bytes(git_path, to_bytes(git))
    body = {"pid": os.getpid(), "pid_start": start_time(os.getpid()), "identity": tick_identity(),
            "host": this_host(), "base": base, "untracked": sorted(untracked), "cleanignore": list(cleanignore),
            "taken_at": taken_at.isoformat(), "docs_tree": docs_tree,
            "docs": {rel: None if data is None else base64.b64encode(data).decode("ascii")
                     for rel, data in docs.items()}}
    atomic_write_text(json_path, json.dumps(body, ensure_ascii=True))


def read_record(ws: Workspace) -> ArchitectRecord | None:
    """The record, or None when there is none or it cannot be read."""
    try:
        body = json.loads(record_paths(ws)[0].read_text(encoding="ascii"))
        docs = {str(rel): None if data is None else base64.b64decode(data, validate=True)
                for rel, data in body["docs"].items()}
        return ArchitectRecord(int(body["pid"]), body.get("pid_start"), str(body["identity"]), str(body["host"]),
                               body.get("base"), tuple(map(str, body["untracked"])),
                               tuple(map(str, body["cleanignore"])), str(body["taken_at"]), docs,
                               body.get("docs_tree"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recorded_git(ws: Workspace) -> GitState | None:
    try:
        return from_bytes(record_paths(ws)[1].read_bytes(), ws.root)
    except OSError:
        return None


def has_record(ws: Workspace) -> bool:
    return record_paths(ws)[0].exists()


def remove_record(ws: Workspace) -> None:
    for path in (*record_paths(ws), record_paths(ws)[0].with_suffix(".person")):
        path.unlink(missing_ok=True)


def run_alive(rec: ArchitectRecord) -> bool:
    """The recorded run's process still lives (same pid, same start time), on this host, and is not us."""
    if rec.host != this_host() or rec.pid == os.getpid():
        return False
    return rec.pid_start is not None and start_time(rec.pid) == rec.pid_start
