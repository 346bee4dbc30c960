"""Checks of the pipeline's own state: the circuit breaker, the alert file, the work tree, the tick lock."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import MementoError
from ...git.repo import is_repo
from ...git.status import status
from ...lines import read_text_file
from ...state import pid_alive
from ...workspace import OWN_DOCS
from ..context import Context
from ..findings import CRITICAL, INFO, WARNING, CheckResult, Finding


def check_breaker(c: Context) -> CheckResult:
    state = c.state
    if state.breaker_reason:
        when = f" at {state.breaker_at}" if state.breaker_at else ""
        return [Finding(CRITICAL, "circuit-breaker",
                        f"circuit breaker tripped{when}: {state.breaker_reason}; the pipeline is paused — "
                        "fix the cause, then `memento resume`", c.rel(c.ws.state_path))]
    return "circuit breaker: not tripped"


def check_alert(c: Context) -> CheckResult:
    path = c.ws.alert_path
    rel = c.rel(path)
    try:
        text = read_text_file(path, "replace")
    except FileNotFoundError:
        return f"no {rel}"
    except OSError:
        text = ""
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            facts[key.strip()] = value.strip()
    parts = []
    if facts.get("blocked"):
        parts.append(f"blocked: {facts['blocked']}")
    if facts.get("circuit_breaker", "OK") != "OK":
        parts.append(f"circuit breaker: {facts['circuit_breaker']}")
    if facts.get("problem"):
        parts.append(facts["problem"])
    detail = f" ({'; '.join(parts)})" if parts else ""
    return [Finding(WARNING, "alert", f"{rel} is present: the pipeline needs attention{detail}", rel)]


def check_work_tree(c: Context) -> CheckResult:
    if not is_repo(c.ws.root):
        return [Finding(CRITICAL, "work-tree", f"{c.ws.root} is not a git repository: ticks cannot run")]
    try:
        entries = status(c.ws.root)
    except MementoError as exc:
        return [Finding(CRITICAL, "work-tree", f"git status failed: {exc}")]
    own = set(OWN_DOCS)
    # The tick's own rule: changes to tracked files are a person's work in progress and
    # stop it; untracked files are safe where they are (no rollback removes them).
    foreign = sorted({e.path for e in entries if e.path not in own and e.xy != "??"})
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        return [Finding(WARNING, "work-tree",
                        f"uncommitted changes to tracked files: {shown}; the next tick refuses to run "
                        "(commit, stash or remove them)")]
    return "work tree: no uncommitted changes outside Memento's own documents"


def _lock_holders(path: Path) -> list[int] | None:
    """Pids holding a lock on ``path`` according to /proc/locks; None where there is no /proc/locks."""
    try:
        st = path.stat()
    except OSError:
        return []
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            table = fh.read()
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = []
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 30602 fe:00:2149448 0 EOF" ("->" marks a waiter)
        if "->" in fields or len(fields) < 6:
            continue
        if fields[5] == wanted:
            try:
                holders.append(int(fields[4]))
            except ValueError:
                continue
    return holders


def check_tick_lock(c: Context) -> CheckResult:
    path = c.ws.tick_lock_path
    rel = c.rel(path)
    holders = _lock_holders(path)
    if holders is None:
        return f"{rel}: this system has no /proc/locks to inspect"
    dead = [pid for pid in holders if not pid_alive(pid)]
    if dead:
        return [Finding(CRITICAL, "tick-lock",
                        f"{rel} is held by process {dead[0]}, which is gone: a surviving child inherited the lock "
                        f"and every tick is skipped until it exits (find it with `fuser {rel}`)", rel)]
    if holders:
        return [Finding(INFO, "tick-lock", f"a tick is running now (pid {holders[0]} holds {rel})", rel)]
    return f"{rel}: not held"
