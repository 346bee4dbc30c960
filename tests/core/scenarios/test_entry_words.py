"""A failed attempt's entry says what happened: verify's output and exit code only when verify
ran. A guard failure (or an agent error) never shows `Verify Output: … (exit code 0)`, and
`memento tasks` shows the reason instead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memento_core.status_log import VERIFY_NOT_RUN, parse_status

PLAN = """# MASTER_PLAN: words

## Meta
- tick_mode: auto
- max_retries: 3

## Phase 1: Only
<!-- depends: none -->

- [ ] `T-1` [MODULE:x] Write a file it may not write
  - do: `echo sneaky > outside.txt; echo ok > inside.txt`
  - verify: `test -f inside.txt`
  - context_files: [inside.txt]
  - retries: 0
"""


def memento(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_a_guard_failure_does_not_claim_verify_ran(tmp_path, git_identity):
    root = tmp_path / "proj"
    assert memento("init", str(root), cwd=tmp_path).returncode == 0
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    subprocess.run(["git", "commit", "-qam", "plan"], cwd=root, check=True)
    r = memento("tick", cwd=root)
    assert "T-1 failed: changed files outside context_files: outside.txt" in r.stdout, r.stdout + r.stderr
    entry = [e for e in parse_status(root / "docs" / "TICK_STATUS.md") if e.task_id == "T-1"][-1]
    assert entry.field("Verify Output") == VERIFY_NOT_RUN
    assert "exit code" not in entry.field("Verify Output")
    tasks = json.loads(memento("tasks", "--json", cwd=root).stdout)
    error = next(t for t in tasks["tasks"] if t["id"] == "T-1")["last_result"]["error"]
    assert error.startswith("changed files outside context_files: outside.txt") and "exit code 0" not in error
    assert "exit code 0" not in memento("tasks", cwd=root).stdout
