"""A verify that rewrites a file of the change fails "changed while verify ran" (SPEC §13: what is
committed is exactly what verify checked), judged in git and on disk, in both modes.

The hostile agent tests/agents/verify_rewrites.py writes hello.txt and the check.sh its verify
runs; the check passes on hello.txt and then overwrites it. Without the check of
guards.changed_during_verify the tick would commit the overwritten file, which no verify passed.
"""

from __future__ import annotations

import subprocess

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import agent, git, make_ws

TASK = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `sh check.sh`
  - context_files: [hello.txt, check.sh]
  - retries: 0
"""


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.mark.parametrize("mode", MODES)
def test_a_verify_that_rewrites_a_file_of_the_change_fails_and_nothing_is_committed(tmp_path, mode):
    ws = make_ws(tmp_path, agent("verify_rewrites.py", "hello.txt", "check.sh"), TASK, sandbox=mode)
    head = git(ws.root, "rev-parse", "HEAD").strip()
    assert run_tick(ws.root).exit_code == 0
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    assert entry.status == "FAILED", entry.field("Reason")
    assert entry.field("Reason").startswith("changed while verify ran: hello.txt"), entry.field("Reason")
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1)
    for sha in git(ws.root, "rev-list", f"{head}..HEAD").split():
        assert "hello.txt" not in git(ws.root, "show", "--name-only", "--format=", sha).split()
    blobs = subprocess.run(["git", "rev-list", "--all", "--objects"], cwd=ws.root, capture_output=True,
                           text=True).stdout
    assert "hello.txt" not in blobs and "check.sh" not in blobs
    assert not (ws.root / "hello.txt").exists() and not (ws.root / "check.sh").exists()  # rolled back
