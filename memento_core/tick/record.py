"""What the tick writes down of an attempt (SPEC §13): its own record, which recovery believes instead
of the claim, and the parts of the attempt's status entry besides its fields.

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
  restores over whatever the agent left in `.git/`; what lay below the work tree (``ID.unseen``)
  and the object store's print (``ID.objects``: tick/objects.to_bytes), which it judges by;
* once verify passed and every process of the agent is dead, the commit it is
  making (stage ``committing``: paths, message, the verified blobs, the entry).

Recovery (recovery.py) takes its facts from here, and a claim that disagrees
with the record is the agent's, not the tick's. Without a sandbox the agent
runs as the same user and could in principle rewrite this record too, digest
and all (it has the code); in the sandbox `.memento/` is read-only to it. What
never depends on the record: a process group is only killed when its leader
carries this tick's marker in its environment (:func:`leader_is_ours`). The file
itself (its digest, the copies next to it) is memento_core/attempt_record.py's, below the tick:
the fleet reads it too.

The status entry (SPEC §5): the worker's report (:func:`read_tick_result`), the error tail and
the one-line Verify Output (:func:`tail_lines`, :func:`failure_output`), and the commit's sha put
into a SUCCESS entry written before its commit existed (:func:`fill_commit`).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

from ..agents.reaper import environ_of, start_time, tick_identity
from ..attempt_record import Record, read_record, record_paths, records_dir, save_record
from ..git.patterns import read_pattern_file
from ..git.state import from_bytes, to_bytes
from ..lines import read_regular_or_none
from ..locks import atomic_write_bytes, locked_edit
from ..plan.model import Task
from ..state import Claim, this_host
from ..status_log import VERIFY_NOT_RUN
from ..workspace import Workspace


def write_record(ws: Workspace, task: Task, number: int, base: str | None, untracked: set[str],
                 max_retries: int, log: str = "", worktree: str = "", branch: str = "") -> Record:
    """The record of an attempt about to be claimed (call before the claim is written)."""
    plan = ws.plan_path.read_bytes()
    try:
        status = ws.status_path.read_bytes()
    except OSError:
        status = b""
    json_path, plan_path, status_path, _ = record_paths(ws, task.id)
    atomic_write_bytes(plan_path, plan)
    atomic_write_bytes(status_path, status)
    rec = Record(task=task.id, pid=os.getpid(), pid_start=start_time(os.getpid()), identity=tick_identity(),
                 host=this_host(), tick=number, base=base, written=time.time(),
                 untracked=tuple(sorted(untracked)),
                 cleanignore=tuple(read_pattern_file(ws.cleanignore_path)),
                 max_retries=max_retries, retries=task.retries, plan_sha256=hashlib.sha256(plan).hexdigest(),
                 status_sha256=hashlib.sha256(status).hexdigest(), heartbeat_every=BEACON_SECONDS, log=log,
                 worktree=worktree, branch=branch)
    save_record(ws, rec)
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
    in the record. No copy: the recovery then restores nothing of .git (it never trusts a partial one)."""
    _save_beside(ws, task_id, "git", lambda: to_bytes(snap), "git_sha256")


def save_unseen(ws: Workspace, task_id: str, seen) -> None:
    """Keep what was below the work tree at the snapshot (an unseen.Seen: nested repositories,
    too-long paths, folders) next to the record, its digest in the record (SPEC §13). No copy:
    the recovery removes nothing it cannot tell from a person's."""
    from . import unseen

    if seen is not None:
        _save_beside(ws, task_id, "unseen", lambda: unseen.to_bytes(seen), "unseen_sha256")


def save_objects(ws: Workspace, task_id: str, snap) -> None:
    """Keep the object store's print at the snapshot (an objects.Objects: every loose object's and
    pack's, the packs' trailers) next to the record, its digest in the record. No copy: the
    recovery re-hashes the loose objects only (objects.check_loose)."""
    from . import objects

    if snap is not None:
        _save_beside(ws, task_id, "objects", lambda: objects.to_bytes(snap), "objects_sha256")


def _save_beside(ws: Workspace, task_id: str, suffix: str, data, digest_field: str) -> None:
    """``data()`` written to ``ID.<suffix>`` beside this tick's own record of the task, by rename and
    never through a link (atomic_write_bytes), and its digest into the record's ``digest_field``."""
    rec = read_record(ws, task_id)
    if rec is None or rec.pid != os.getpid():
        return
    body, path = data(), records_dir(ws) / f"{task_id}.{suffix}"
    try:
        if path.is_symlink():  # an earlier agent's link: removed, never written through
            path.unlink()
        atomic_write_bytes(path, body)
    except OSError:
        return
    save_record(ws, replace(rec, **{digest_field: hashlib.sha256(body).hexdigest()}))


def _recorded_beside(ws: Workspace, rec: Record, suffix: str, digest: str) -> bytes | None:
    """The bytes of ``ID.<suffix>`` when they match ``digest`` (the record's), else None."""
    if not digest:
        return None
    try:
        data = (records_dir(ws) / f"{rec.task}.{suffix}").read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None


def recorded_unseen(ws: Workspace, rec: Record):
    """What was below the work tree at the snapshot (unseen.Seen) if its copy is intact, else None."""
    from .unseen import from_bytes as unseen_from_bytes

    data = _recorded_beside(ws, rec, "unseen", rec.unseen_sha256)
    return None if data is None else unseen_from_bytes(data)


def recorded_git(ws: Workspace, rec: Record):
    """git's state at the snapshot (git.state.GitState) if its copy is intact, else None."""
    data = _recorded_beside(ws, rec, "git", rec.git_sha256)
    return None if data is None else from_bytes(data, ws.root)


def recorded_objects(ws: Workspace, rec: Record, root: Path, mirror: Path):
    """The object store's print at the snapshot (objects.Objects, of ``root``'s repository, its
    copies in ``mirror``) if its copy is intact, else None."""
    from . import objects

    data = _recorded_beside(ws, rec, "objects", rec.objects_sha256)
    return None if data is None else objects.from_bytes(data, root, mirror)


def mark_committing(ws: Workspace, task_id: str, paths, message: str, hashes: dict[str, str], entry: str) -> None:
    """The commit a passed attempt is making (after the agent and every process of it are gone)."""
    rec = read_record(ws, task_id)
    if rec is None or rec.pid != os.getpid():
        return  # no record of ours: recovery will not honour this commit, which is the safe side
    save_record(ws, replace(rec, stage="committing", commit_paths=tuple(paths), commit_message=message,
                       commit_hashes=dict(hashes), entry=entry))


def remove_record(ws: Workspace, task_id: str) -> None:
    if _BEACON["path"] == record_paths(ws, task_id)[0]:
        _BEACON["path"] = None
    folder = records_dir(ws)
    for path in (*record_paths(ws, task_id), folder / f"{task_id}.unseen", folder / f"{task_id}.objects"):
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
    paths = [record_paths(ws, rec.task)[0], claim_path(ws, rec.task)] + ([ws.root / rec.log] if rec.log else [])
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


# ---------------------------------------------------------------- the status entry's parts
# What the tick writes into a status entry besides its fields: the worker's report, tails, the sha.

ERROR_TAIL_LINES = 20
# A SUCCESS entry is written before its commit exists; the sha replaces this afterwards.
PENDING_COMMIT = "(recorded after the commit)"


def fill_commit(status_path: Path, sha: str) -> None:
    """Put the commit's sha into the entry that was written before the commit existed."""

    def transform(data: bytes) -> bytes | None:
        text = data.decode("utf-8")
        field = f"- **Git Commit**: {PENDING_COMMIT}"
        # The field's own line, not the same words inside a field after it (a worker's Outputs).
        idx = 0 if text.startswith(field) else text.rfind("\n" + field) + 1
        if idx == 0 and not text.startswith(field):
            return None
        start = idx + len("- **Git Commit**: ")
        return (text[:start] + f"`{sha}`" + text[start + len(PENDING_COMMIT):]).encode("utf-8")

    locked_edit(status_path, transform)


def read_tick_result(path: Path) -> dict[str, str]:
    """The worker's Outputs and Error Analysis sections from .memento/tick_result.md."""
    # Never through a link (it could point at any file of a person's), never a FIFO (SPEC §13).
    data = read_regular_or_none(path, limit=80_000)
    if data is None:
        return {}
    text = data.decode("utf-8", errors="replace")[:20_000]
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = line.strip().lstrip("#").strip().lower()
        if line.lstrip().startswith("#") and heading in ("outputs", "error analysis"):
            current = heading.replace(" ", "_")
            sections[current] = []
        elif current:
            sections[current].append(line.strip().lstrip("-* ").strip())
    return {k: "; ".join(x for x in v if x)[:1000] for k, v in sections.items() if any(v)}


def tail_lines(text: str, n: int = ERROR_TAIL_LINES) -> str:
    """The last ``n`` non-blank lines of the command's own output (the error tail of a failed attempt)."""
    return "\n".join(_output_lines(text)[-n:])


def last_line(text: str) -> str:
    """The last non-blank line, without backticks, for the one-line Verify Output field."""
    lines = _output_lines(text)
    return lines[-1].strip().replace("`", "'")[:200] if lines else ""


def _output_lines(text: str) -> list[str]:
    """What the command printed: Memento's own ``[memento] …`` lines in the log (a process it
    stopped, say) are not the command's output."""
    return [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("[memento] ")]


def failure_output(output: str, reason: str, exit_code: int | None) -> str:
    """The Verify Output field of a failed attempt: the output's last line with the exit code;
    without output, the reason, and the exit code only where the reason does not say it already;
    VERIFY_NOT_RUN when verify never ran (the agent or a guard failed first)."""
    line = last_line(output)
    code = "none" if exit_code is None else str(exit_code)
    if line:
        return f"`{line}` (exit code {code})"
    if exit_code is None and not reason.startswith("verify"):
        return VERIFY_NOT_RUN  # never "(exit code 0)" of an agent when verify did not run
    said = exit_code is None or re.search(rf"\bcode {exit_code}\b", reason) is not None
    shown = reason.strip().replace("`", "'")[:200]
    return f"`{shown}`" if said else f"`{shown}` (exit code {code})"
