"""The tick's own record of an attempt (SPEC §13): what recovery believes instead of the claim.

The claim (``.memento/claims/ID.json``) is rewritten by the heartbeat all along
the run and lies where any agent finds it; an agent that kills its tick could
also have rewritten it. So before the claim is written, the tick writes its
own record of the attempt, ``.memento/records/ID.json``, with a digest over its
content, and next to it the plan as it was (``ID.plan``):

* who ran it: the tick's pid, the pid's start time (from /proc: no later
  process has both), the tick number, the host, the ``MEMENTO_TICK`` marker
  every process the tick starts carries in its environment (a random token,
  agents/reaper.tick_identity: it tells the agent nothing about the tick);
* what it started from: HEAD (the base), the untracked files, the
  ``.memento_cleanignore`` patterns, the plan, `max_retries` and the task's
  retries;
* git's own state at the snapshot (``ID.git``: config, info/, hooks, every ref,
  the index and the stash's reflog, git.state.to_bytes), which the recovery
  restores over whatever the agent left in `.git/`;
* once verify passed and every process of the agent is dead, the commit it is
  making (stage ``committing``: paths, message, the verified blobs, the entry).

Recovery (recovery.py) takes its facts from here, and a claim that disagrees
with the record is the agent's, not the tick's. Without a sandbox the agent
runs as the same user and could in principle rewrite this record too, digest
and all (it has the code); in the sandbox `.memento/` is read-only to it. What
never depends on the record: a process group is only killed when its leader
carries this tick's marker in its environment (:func:`leader_is_ours`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..agents.reaper import environ_of, start_time, tick_identity
from ..errors import MementoError
from ..git.patterns import read_pattern_file
from ..git.state import from_bytes, to_bytes
from ..lines import read_text_file
from ..locks import atomic_write_bytes, atomic_write_text
from ..plan.model import Task
from ..plan.scan import decode_text, scan_plan
from ..state import Claim, this_host
from ..workspace import Workspace


@dataclass(frozen=True)
class Record:
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


def _paths(ws: Workspace, task_id: str) -> tuple[Path, Path, Path, Path]:
    folder = records_dir(ws)
    return (folder / f"{task_id}.json", folder / f"{task_id}.plan", folder / f"{task_id}.status",
            folder / f"{task_id}.git")


def _digest(data: dict) -> str:
    body = json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogateescape")
    return hashlib.sha256(body).hexdigest()


def _write(ws: Workspace, rec: Record) -> None:
    data = asdict(rec)
    data["digest"] = _digest(asdict(rec))
    atomic_write_text(_paths(ws, rec.task)[0], json.dumps(data, ensure_ascii=False))


def write_record(ws: Workspace, task: Task, number: int, base: str | None, untracked: set[str],
                 max_retries: int, log: str = "", worktree: str = "", branch: str = "") -> Record:
    """The record of an attempt about to be claimed (call before the claim is written)."""
    plan = ws.plan_path.read_bytes()
    try:
        status = ws.status_path.read_bytes()
    except OSError:
        status = b""
    json_path, plan_path, status_path, _ = _paths(ws, task.id)
    atomic_write_bytes(plan_path, plan)
    atomic_write_bytes(status_path, status)
    rec = Record(task=task.id, pid=os.getpid(), pid_start=start_time(os.getpid()), identity=tick_identity(),
                 host=this_host(), tick=number, base=base, written=time.time(),
                 untracked=tuple(sorted(untracked)),
                 cleanignore=tuple(read_pattern_file(ws.cleanignore_path)),
                 max_retries=max_retries, retries=task.retries, plan_sha256=hashlib.sha256(plan).hexdigest(),
                 status_sha256=hashlib.sha256(status).hexdigest(), heartbeat_every=BEACON_SECONDS, log=log,
                 worktree=worktree, branch=branch)
    _write(ws, rec)
    _beacon(json_path)
    return rec


# The tick touches its current record every BEACON_SECONDS (its ctime moves; nothing can
# set a ctime back), so recovery knows within that when a killed tick was last alive.
BEACON_SECONDS = 1.0
_BEACON: dict[str, object] = {"path": None, "thread": None}


def _beacon(path: Path) -> None:
    _BEACON["path"] = path
    if _BEACON["thread"] is None:
        thread = threading.Thread(target=_touch_forever, name="memento-record-beacon", daemon=True)
        _BEACON["thread"] = thread
        thread.start()


def _touch_forever() -> None:
    while True:
        time.sleep(BEACON_SECONDS)
        path = _BEACON["path"]
        if path is not None:
            try:
                os.utime(path)
            except OSError:
                pass


def save_git(ws: Workspace, task_id: str, snap) -> None:
    """Keep git's state at the snapshot (a git.state.GitState) next to the record, its digest
    in the record: written by rename, never through a link (atomic_write_bytes)."""
    rec = read_record(ws, task_id)
    if rec is None or rec.pid != os.getpid():
        return
    data, path = to_bytes(snap), _paths(ws, task_id)[3]
    try:
        if path.is_symlink():  # an earlier agent's link: removed, never written through
            path.unlink()
        atomic_write_bytes(path, data)
    except OSError:
        return  # no copy: the recovery then restores nothing of .git (it never trusts a partial one)
    _write(ws, replace(rec, git_sha256=hashlib.sha256(data).hexdigest()))


def _unseen_path(ws: Workspace, task_id: str) -> Path:
    return records_dir(ws) / f"{task_id}.unseen"


def save_unseen(ws: Workspace, task_id: str, seen) -> None:
    """Keep what was below the work tree at the snapshot (an unseen.Seen: nested repositories,
    too-long paths, folders) next to the record, its digest in the record (SPEC §13)."""
    from .unseen import to_bytes

    rec = read_record(ws, task_id)
    if rec is None or rec.pid != os.getpid() or seen is None:
        return
    data, path = to_bytes(seen), _unseen_path(ws, task_id)
    try:
        if path.is_symlink():
            path.unlink()
        atomic_write_bytes(path, data)
    except OSError:
        return  # no copy: the recovery removes nothing it cannot tell from a person's
    _write(ws, replace(rec, unseen_sha256=hashlib.sha256(data).hexdigest()))


def recorded_unseen(ws: Workspace, rec: Record):
    """What was below the work tree at the snapshot (unseen.Seen) if its copy is intact, else None."""
    from .unseen import from_bytes

    if not rec.unseen_sha256:
        return None
    try:
        data = _unseen_path(ws, rec.task).read_bytes()
    except OSError:
        return None
    return from_bytes(data) if hashlib.sha256(data).hexdigest() == rec.unseen_sha256 else None


def recorded_git(ws: Workspace, rec: Record):
    """git's state at the snapshot (git.state.GitState) if its copy is intact, else None."""
    if not rec.git_sha256:
        return None
    try:
        data = _paths(ws, rec.task)[3].read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != rec.git_sha256:
        return None
    return from_bytes(data, ws.root)


def mark_committing(ws: Workspace, task_id: str, paths, message: str, hashes: dict[str, str], entry: str) -> None:
    """The commit a passed attempt is making (after the agent and every process of it are gone)."""
    rec = read_record(ws, task_id)
    if rec is None or rec.pid != os.getpid():
        return  # no record of ours: recovery will not honour this commit, which is the safe side
    _write(ws, replace(rec, stage="committing", commit_paths=tuple(paths), commit_message=message,
                       commit_hashes=dict(hashes), entry=entry))


def read_record(ws: Workspace, task_id: str) -> Record | None:
    """The task's record, or None when there is none or it does not match its digest."""
    json_path = _paths(ws, task_id)[0]
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
        data = _paths(ws, rec.task)[1].read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == rec.plan_sha256 else None


def recorded_status(ws: Workspace, rec: Record) -> bytes | None:
    """The status log as it was at the claim, if its copy is intact."""
    try:
        data = _paths(ws, rec.task)[2].read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == rec.status_sha256 else None


def remove_record(ws: Workspace, task_id: str) -> None:
    if _BEACON["path"] == _paths(ws, task_id)[0]:
        _BEACON["path"] = None
    for path in (*_paths(ws, task_id), _unseen_path(ws, task_id)):
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            pass


def last_sign_of_life(ws: Workspace, rec: Record) -> float:
    """The last time anything wrote or touched the record, the claim or the tick's log
    (their ctime, which nothing can set back): the killed tick died within
    ``heartbeat_every`` seconds after it."""
    from ..state import claim_path

    times = [rec.written]
    paths = [_paths(ws, rec.task)[0], claim_path(ws, rec.task)] + ([ws.root / rec.log] if rec.log else [])
    for path in paths:
        try:
            times.append(path.lstat().st_ctime)
        except OSError:
            pass
    return max(times, default=0.0)


def claim_disagrees(claim: Claim | None, rec: Record) -> str:
    """'' when the claim says what the record says; else what differs (the agent wrote it)."""
    if claim is None:
        return "the claim file is gone"
    wrong = [name for name, a, b in (("pid", claim.pid, rec.pid), ("tick", claim.tick, rec.tick),
                                     ("base", claim.base, rec.base), ("host", claim.host, rec.host))
             if a != b]
    if claim.stage == "committing":
        if rec.stage != "committing":
            wrong.append("stage (the tick never reached its commit)")
        else:
            wrong += [name for name, a, b in (
                ("commit paths", list(claim.commit_paths), list(rec.commit_paths)),
                ("commit message", claim.commit_message, rec.commit_message),
                ("verified blobs", dict(claim.commit_hashes), rec.commit_hashes),
                ("SUCCESS entry", claim.entry, rec.entry)) if a != b]
    return ", ".join(wrong) and f"the claim's {', '.join(wrong)} differ from the tick's own record"


def tick_alive(rec: Record) -> bool:
    """Whether the tick that wrote ``rec`` still runs (same pid and same start time, this host)."""
    return rec.host == this_host() and rec.pid_start is not None and start_time(rec.pid) == rec.pid_start


def leader_is_ours(pgid: int | None, ws: Workspace, task_id: str, identity: str | None) -> bool:
    """Whether process ``pgid`` leads its group and was started by a Memento tick for this
    project and task: its environment carries the tick's marker (``identity`` if known)."""
    if not pgid or pgid <= 1 or pgid == os.getpgrp():
        return False
    env = environ_of(pgid)
    if env is None:
        return False
    try:
        if os.getpgid(pgid) != pgid:
            return False
    except OSError:
        return False
    marker = env.get("MEMENTO_TICK")
    if not marker or (identity is not None and marker != identity):
        return False
    return env.get("MEMENTO_PROJECT") == str(ws.root) and env.get("MEMENTO_TASK_ID") == task_id


def recorded_task(ws: Workspace, rec: Record) -> Task | None:
    """The task as the record's plan defines it."""
    plan = recorded_plan(ws, rec)
    if plan is None:
        return None
    try:
        return scan_plan(decode_text(plan, "plan"), "plan").task(rec.task)
    except MementoError:
        return None
