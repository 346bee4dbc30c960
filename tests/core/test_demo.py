"""The demo project drafts its plan without a model (SPEC §17): its [architect] is
memento_core/templates/demo_drafter.py through the `command` preset, confined as the demo's sandbox
says; judged on disk, in git, and by running the drafted tasks' own `do:` and `verify:`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memento_core.demo import create_demo
from memento_core.plan.scan import parse_plan


def memento(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=300)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_the_demo_drafts_one_red_task_per_line_of_the_brief(tmp_path, git_identity):
    root = create_demo(tmp_path / "calc")
    before = parse_plan(root / "docs" / "MASTER_PLAN.md")
    commits = git(root, "log", "--format=%H").split()
    brief = "- Add a power function\n- Print the version with `--version`\n\n"
    dry = memento("plan", "draft", "-", str(root), "--dry-run", "--json", cwd=tmp_path, stdin=brief)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    doc = json.loads(dry.stdout)
    assert doc["outcome"] == "proposed" and doc["new_ids"] == ["T-401", "T-402"]
    assert [(r["task_id"], r["passed"]) for r in doc["red"]] == [("T-401", False), ("T-402", False)]
    assert doc["warnings"] == [] and "+- [ ] `T-401` [MODULE:wishes] Add a power function" in doc["diff"]
    assert git(root, "log", "--format=%H").split() == commits and git(root, "status", "--porcelain") == ""

    kept = memento("plan", "draft", "-", str(root), cwd=tmp_path, stdin=brief)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    assert [t.id for t in plan.tasks] == [t.id for t in before.tasks] + ["T-401", "T-402"]
    assert plan.meta.tick_mode == "paused" and not [e for e in plan.errors if e.severity == "error"]
    assert plan.task("T-402").title == "Print the version with '--version'"
    assert git(root, "log", "-1", "--format=%s").startswith("memento: plan drafted from ")
    assert git(root, "log", "--format=%H").split()[1:] == commits
    assert "[MODULE:wishes]" in (root / "docs" / "PROJECT_MAP.md").read_text()
    # Each drafted task is real work for the demo's script agent: red until its do: has run, then green.
    for task in (plan.task("T-401"), plan.task("T-402")):
        assert subprocess.run(task.verify, shell=True, cwd=root).returncode != 0
        assert subprocess.run(task.do, shell=True, cwd=root).returncode == 0
        assert subprocess.run(task.verify, shell=True, cwd=root).returncode == 0
