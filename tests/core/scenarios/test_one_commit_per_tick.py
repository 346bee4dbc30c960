"""One commit per tick, holding everything the tick wrote, and a clean `git status` after it
(issue 25, item 11): a pass, a failure, a block that trips the breaker, an idle tick. The
SUCCESS entry names the commit that adds it (its own sha cannot be in it); the commit's
`Memento-Tick` trailer names the entry, and the readers resolve it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memento_core.status_log import SELF_COMMIT, parse_status

PLAN = """# MASTER_PLAN: once

## Meta
- tick_mode: auto
- max_retries: 2

## Phase 1: Only
<!-- depends: none -->

- [ ] `T-1` [MODULE:x] Passes
  - do: `echo ok > a.txt`
  - verify: `test -f a.txt`
  - context_files: [a.txt]
  - retries: 0

- [ ] `T-2` [MODULE:x] Fails twice, then blocks
  - do: `echo no > b.txt`
  - verify: `false`
  - context_files: [b.txt]
  - retries: 0
"""
MORE = "".join(f"""
- [ ] `T-{n}` [MODULE:x] Passes too
  - do: `echo ok > {n}.txt`
  - verify: `test -f {n}.txt`
  - context_files: [{n}.txt]
""" for n in (3, 4))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def memento(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=root, capture_output=True,
                          text=True, timeout=120)


def commits(root: Path) -> list[str]:
    return git(root, "rev-list", "HEAD").split()


def project(tmp_path: Path, plan: str) -> Path:
    root = tmp_path / "proj"
    assert memento(tmp_path, "init", str(root)).returncode == 0
    (root / "docs" / "MASTER_PLAN.md").write_text(plan)
    git(root, "commit", "-qam", "the plan")
    return root


def one_commit_each(root: Path, expected: list[str]) -> list[str]:
    for expect in expected:
        before = commits(root)
        r = memento(root, "tick")
        assert expect in r.stdout, r.stdout + r.stderr
        after = commits(root)
        assert len(after) == len(before) + 1 and after[1:] == before, expect  # exactly one, on top
        assert git(root, "status", "--porcelain") == "", expect
    return after


def test_a_tick_that_trips_the_breaker_is_one_commit_too(tmp_path, git_identity):
    root = project(tmp_path, PLAN)  # T-2 blocked is half the tasks: the breaker pauses
    one_commit_each(root, ["T-1 passed", "T-2 failed", "T-2 blocked"])
    assert "CIRCUIT BREAKER" in git(root, "show", "HEAD:docs/TICK_STATUS.md")
    assert "tick_mode: paused" in git(root, "show", "HEAD:docs/MASTER_PLAN.md")


def test_every_tick_is_one_commit_and_leaves_git_status_clean(tmp_path, git_identity):
    root = project(tmp_path, PLAN + MORE)
    after = one_commit_each(root, ["T-1 passed", "T-2 failed", "T-2 blocked", "T-3 passed", "T-4 passed",
                                   "PIPELINE BLOCKED"])
    assert memento(root, "tick").returncode == 1  # still blocked: nothing new to say, no commit
    assert len(commits(root)) == len(after) and git(root, "status", "--porcelain") == ""
    shas = {s.split()[3]: s.split()[0] for s in git(root, "log", "--format=%h %s").splitlines()
            if " complete " in s}
    first = shas["T-1"]
    files = git(root, "show", "--name-only", "--format=", first).split()
    assert set(files) >= {"a.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/CURRENT_STATE.md"}
    assert "sync docs" not in git(root, "log", "--format=%s")
    entry = next(e for e in parse_status(root / "docs" / "TICK_STATUS.md") if e.task_id == "T-1")
    assert entry.field("Git Commit").startswith(SELF_COMMIT)
    assert entry.commit_sha is None
    # The readers resolve it through the commit's trailer.
    tasks = {t["id"]: t for t in json.loads(memento(root, "tasks", "--json").stdout)["tasks"]}
    assert tasks["T-1"]["last_result"]["commit"] == first
    report = json.loads(memento(root, "report", "--json").stdout)
    assert [p["commit"] for p in report["passed"]] == [shas["T-1"], shas["T-3"], shas["T-4"]]
    state = json.loads((root / ".memento" / "state.json").read_text())
    assert [u["commit"] for u in state["unsurfaced"]] == [shas["T-1"], shas["T-3"], shas["T-4"]]
