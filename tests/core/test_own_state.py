"""Memento's own state against a hostile agent (SPEC §13 "Without a sandbox, these still hold"):
the usage ledger, the notification state and the claims snapshotted and restored, the agent's
output through a pipe Memento copies into the tick log, and the real commit in the status entry
whatever the worker's report says.

Each test runs a hostile agent from tests/agents/ through the real `command` preset, in both
modes (tests/core/modes.py), and judges on disk, in git, at the ledger and at a loopback receiver.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memento_core import gitops
from memento_core.plan import parse_plan
from memento_core.tick.__main__ import run_tick

from .modes import MODES
from .test_engine import agent, entries, git, make_ws

PY = sys.executable


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def cron_tick(root, **env):
    full = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"} | env
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], env=full,
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- the real commit, whatever the report says


def _success_sha(ws) -> str:
    (entry,) = [e for e in gitops.entries_with_commits(ws.root, entries(ws))
                if e.task_id == "T-1" and e.status == "SUCCESS"]
    assert entry.commit_sha, entry.field("Git Commit")
    return entry.commit_sha


def _complete_commit(ws) -> str:
    """The full sha of the commit `memento: complete T-1 …`, which holds the task's file."""
    (sha,) = [line.split()[0] for line in git(ws.root, "log", "--format=%H %s").splitlines()
              if " memento: complete T-1 " in f" {line.split(' ', 1)[1]} "]
    assert git(ws.root, "show", f"{sha}:hello.txt") == "done\n"
    return sha


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_git_commit_line_in_the_report_does_not_replace_the_real_commit(tmp_path, mode):
    ws = make_ws(tmp_path, agent("forges_commit_line.py", "hello.txt"), sandbox=mode)
    assert run_tick(ws.root).exit_code == 0
    head = git(ws.root, "rev-parse", "HEAD").strip()
    assert _complete_commit(ws) == head
    assert head.startswith(_success_sha(ws))
    # The entry's own Git Commit field is Memento's (the first one); the forgery is only text.
    raw = ws.status_path.read_text()
    success = raw[raw.index("✅ SUCCESS"):]
    assert success.split("- **Git Commit**: ", 1)[1].startswith("(the commit that adds this entry)")
    assert "deadbee" not in git(ws.root, "log", "--format=%H%n%B")


@pytest.mark.parametrize("point", ["tick:before-commit", "tick:after-commit"])
def test_a_forged_commit_line_does_not_fool_the_recovery_of_an_interrupted_commit(tmp_path, point):
    ws = make_ws(tmp_path, agent("forges_commit_line.py", "hello.txt"))
    assert cron_tick(ws.root, MEMENTO_CRASH_AT=point).returncode == -9
    assert run_tick(ws.root).exit_code in (0, 1)
    sha = _complete_commit(ws)
    assert sha.startswith(_success_sha(ws))
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert "deadbee" not in git(ws.root, "log", "--format=%H%n%B")


def test_fill_commit_writes_into_the_field_line_not_into_a_worker_text_after_it(tmp_path):
    from memento_core.tick.entries import PENDING_COMMIT, fill_commit

    status = tmp_path / "TICK_STATUS.md"
    status.write_text(f"## [2026-12-01T00:00:00Z] Tick #1\n- **Git Commit**: {PENDING_COMMIT}\n"
                      f"- **Outputs**: see - **Git Commit**: {PENDING_COMMIT}\n")
    fill_commit(status, "abc1234")
    assert status.read_text().splitlines()[1:] == [
        "- **Git Commit**: `abc1234`", f"- **Outputs**: see - **Git Commit**: {PENDING_COMMIT}"]
