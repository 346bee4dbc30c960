"""checks/workers.py (SPEC §12), called on a real repository: a parallel worker's worktree whose claim is
gone is a stale one named with what the next tick does, a live claim's is not, and a folder that is no
repository is "not checked" instead of an error."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime

from memento_core.doctor.checks.workers import check_worktrees, stale
from memento_core.doctor.context import Context
from memento_core.doctor.findings import WARNING
from memento_core.git.worktrees import WORKTREES_REL
from memento_core.scaffold import init_workspace
from memento_core.state import Claim, this_host, write_claim
from memento_core.workspace import Workspace


def worktrees(ws: Workspace):
    return check_worktrees(Context(ws, datetime.now(UTC)))


def add_worker(ws: Workspace, task_id: str) -> None:
    """A worker's worktree and its memento/<ID> branch, as the crew makes them."""
    subprocess.run(["git", "-C", str(ws.root), "worktree", "add", "-q", "-b", f"memento/{task_id}",
                    str(ws.root / WORKTREES_REL / task_id)], check=True)


def claim(ws: Workspace, task_id: str, pid: int) -> None:
    write_claim(ws, Claim(task=task_id, pid=pid, host=this_host(), started="2026-01-01T00:00:00Z",
                          heartbeat=time.time(), tick=1, base=None, worktree=f"{WORKTREES_REL}/{task_id}"))


def test_a_worktree_without_a_live_claim_is_stale_and_one_with_it_is_not(tmp_path, git_identity):
    init_workspace(tmp_path / "proj", project="proj")
    ws = Workspace(tmp_path / "proj")
    assert worktrees(ws) == "no stale worktrees"
    add_worker(ws, "T-1")
    add_worker(ws, "T-2")
    add_worker(ws, "T-3")
    claim(ws, "T-2", os.getpid())  # alive: its worker runs
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    claim(ws, "T-3", gone.pid)  # its worker is gone
    assert stale(ws) == ["T-1", "T-3"]
    [finding] = worktrees(ws)
    assert (finding.severity, finding.path) == (WARNING, WORKTREES_REL)
    assert finding.message == ("stale worktree(s) of T-1, T-3 (their tick is gone); the next tick removes them and "
                               "their memento/<ID> branches")


def test_a_folder_that_is_no_repository_is_not_checked(tmp_path):
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    subprocess.run(["rm", "-rf", str(ws.root / ".git")], check=True)
    assert worktrees(ws).startswith("worktrees: not checked (")
