"""No orphan after kill -9 (SPEC §13, §4 step 4): a dead tick's processes end before anything else.

A tick killed outright leaves its record of each attempt (record.py; the
architect's, architect/record.py) in ``.memento/records/``. Each run's guard
(agents/guard.py) ends the run as the tick dies; this is the backstop for what
it could not end (a guard the agent stopped with SIGSTOP, or killed together
with the tick): :func:`end_dead_attempts` runs as soon as the next tick holds
the lock, before it reads the plan or anything the recovery judges, also when
the plan is paused, and kills (SIGSTOP, then SIGKILL, waited for) every process
that carries a dead tick's marker for this project or one of its worktrees, the
group its claim records when that group's leader is ours, and everything below
them. A tick that still lives (same pid and start time) is never touched, and
neither is this process: a process that carries no marker and descends from
none, a person's editor or shell, is never found.

When there is no record (every tick ended normally) this costs one directory
read: the paused tick's fast path calls it, so the heavy imports wait until a
record is found.
"""

from __future__ import annotations

import os

ARCHITECT = "ARCHITECT"


def _records(ws) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(ws.memento_dir / "records") if e.name.endswith(".json"))
    except OSError:
        return []


def end_dead_attempts(ws) -> list[int]:
    """Kill what every dead tick's attempt (on this host) left running; the pids killed."""
    names = _records(ws)
    if not names:
        return []
    from ..agents.reaper import kill_marked

    killed: list[int] = []
    for name in names:
        found = _dead_run(ws, name[: -len(".json")])
        if found is not None:
            killed += kill_marked(*found)
    return killed


def _dead_run(ws, name: str) -> tuple[str, list[str], list[int]] | None:
    """(the marker, the projects its processes name, the claim's group if ours) of the run whose
    record is ``name``, when its tick is dead; None when it lives, is another host's or unreadable.
    Read without its digest: an agent that forged one can only name a marker, and a marker
    finds nothing but a dead tick's processes for this project."""
    import json

    from ..agents.reaper import start_time
    from ..state import this_host

    try:
        with open(ws.memento_dir / "records" / f"{name}.json", "rb") as fh:
            body = json.loads(fh.read(1 << 20))
        pid, pid_start, identity = int(body["pid"]), body.get("pid_start"), str(body["identity"])
        host, worktree = str(body.get("host", "")), str(body.get("worktree") or "")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host != this_host() or pid == os.getpid() or not identity.startswith("tick-"):
        return None
    if pid_start is not None and start_time(pid) == pid_start:
        return None  # its tick lives (a stopped one was killed before the lock was ours: lock.py)
    projects = [str(ws.root)]
    if worktree and not worktree.startswith("/") and ".." not in worktree.split("/"):
        projects.append(str(ws.root / worktree))
    return identity, projects, [] if name == ARCHITECT else _claimed_group(ws, name, identity, projects)


def _claimed_group(ws, task_id: str, identity: str, projects: list[str]) -> list[int]:
    """The process group the task's claim records, when its leader carries the dead tick's marker."""
    from pathlib import Path

    from ..state import read_claim
    from ..workspace import Workspace
    from .record import leader_is_ours

    claim = read_claim(ws, task_id)
    if claim is None or not claim.pgid:
        return []
    ours = any(leader_is_ours(claim.pgid, Workspace(Path(project)), task_id, identity) for project in projects)
    return [claim.pgid] if ours else []
