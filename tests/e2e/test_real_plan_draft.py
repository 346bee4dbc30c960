"""`memento plan draft` (SPEC §17) with the real claude CLI against the mock model: claude reads the
plan and writes a two-task draft through its own Read and Write tools, confined like the worker
where bubblewrap runs; Memento checks it, runs red first and keeps it as one commit, paused."""

from __future__ import annotations

import json
import subprocess

import pytest

from memento_core import agents
from memento_core.plan.scan import parse_plan
from memento_core.tick.architect.draft import KEPT, draft_plan
from memento_core.workspace import Workspace

from .conftest import PLAN, SANDBOX, WHY_UNCONFINED, configure, make_workspace
from .mock_model import Script

pytestmark = pytest.mark.e2e

DRAFT = PLAN + """
## Phase 2: Greetings
<!-- parallel: true -->
<!-- depends: Phase 1 -->

- [ ] `T-201` [MODULE:hello] Write greet.txt
  - verify: `grep -qx 'hi' greet.txt`
  - context_files: [greet.txt]
  - retries: 0

- [ ] `T-202` [MODULE:hello] Write bye.txt
  - verify: `grep -qx 'bye' bye.txt`
  - context_files: [bye.txt]
  - depends: T-201
  - retries: 0
"""
BRIEF = "Greet and say goodbye: greet.txt holds hi, bye.txt holds bye (the brief-marker-7781)."


def git(root, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_claude_drafts_a_two_task_plan_with_its_own_tools(run, monkeypatch):
    agent = configure(run, "claude", monkeypatch)
    root = make_workspace(run, "claude", agent)
    before_t101 = (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    run.mock.script = Script(path=str(root / "docs" / "MASTER_PLAN.md"), content=DRAFT, read_first=True)

    progress: list[str] = []
    result = draft_plan(Workspace(root), BRIEF, brief_name="brief.md", on_progress=progress.append)

    log = (root / result.log).read_text(encoding="utf-8") if result.log else ""
    assert result.outcome == KEPT, f"{result.reasons}\n{log[-4000:]}"
    assert result.new_ids == ("T-201", "T-202")
    assert [(r.task_id, r.passed) for r in result.red] == [("T-201", False), ("T-202", False)]
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    assert plan.meta.tick_mode == "paused" and [t.id for t in plan.tasks] == ["T-101", "T-201", "T-202"]
    assert before_t101.split("## Phase 1: One", 1)[1] in plan_text(root)  # the old task, byte for byte
    assert git(root, "log", "-1", "--format=%s").strip() == "memento: plan drafted from brief.md"
    # claude sent the brief on, used Read then Write on the plan, and nothing of it is left running.
    bodies = [json.dumps(r.body) for r in run.mock.model_requests()]
    assert any("brief-marker-7781" in b for b in bodies)
    assert any('"name": "Read"' in b for b in bodies) and any('"name": "Write"' in b for b in bodies)
    assert agents.process._RUNNING == {}
    assert any("red first" in p for p in progress)
    if SANDBOX == "bwrap":
        assert "[memento] sandbox: bwrap (" in log and "writable: docs/MASTER_PLAN.md, docs/PROJECT_MAP.md" in log
    else:
        pytest.skip(f"passed unconfined; the sandbox cannot run here: {WHY_UNCONFINED}")


def plan_text(root) -> str:
    return (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
