"""The tick and memory together: a lesson learned in a failed tick reaches the next tick's prompt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memento_core.memory.store import unattributed_writes
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.memory.memhelp import mem_git

AGENT = Path(__file__).resolve().parents[2] / "agents" / "learns_from_failure.py"
LESSON = "knowledge/lessons/hello-file.md"

PLAN = """# MASTER_PLAN: memory test

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: 1
- max_diff_lines: 50
- total_ticks: 0

## Phase 1: Only
<!-- depends: none -->

- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""


def make_ws(tmp_path: Path, *agent_args: str) -> Workspace:
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    command = " ".join([sys.executable, str(AGENT), "{prompt_file}", *agent_args])
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "60s"\n[verify]\ntimeout = "20s"\n'
        '[sandbox]\nmode = "none"\n')  # unconfined: raw writes into memory/ are possible (test_sandbox.py: queued)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "setup"], check=True)
    return Workspace(root)


def test_lesson_from_a_failed_tick_reaches_the_next_prompt_and_survives_rollback(tmp_path, git_identity):
    ws = make_ws(tmp_path)
    first = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in first.results] == [("T-1", False)]
    # The rollback removed the agent's project change, never its memory.
    assert not (ws.root / "hello.txt").exists()
    lesson = ws.memory_dir / LESSON
    assert "The verify greps for `done`" in lesson.read_text()
    assert mem_git(ws, "log", "-1", "--format=%s", "--", LESSON).strip() == "hello.txt must contain the word done"
    assert "sources: T-1" in mem_git(ws, "log", "-1", "--format=%B", "--", LESSON)
    # The engine journaled the failed attempt with a lesson candidate, linked to the status entry.
    journal = next((ws.memory_dir / "journal").glob("*.md")).read_text()
    assert "- T-1 ❌ failed:" in journal and "💡 Lesson candidate" in journal
    assert "[Tick #1](../../docs/TICK_STATUS.md)" in journal
    assert mem_git(ws, "status", "--porcelain") == ""

    second = run_tick(ws.root)
    prompt = (ws.memento_dir / "prompts" / "T-1.md").read_text()
    assert f"- {LESSON} — hello.txt must contain the word done" in prompt
    assert [(r.task_id, r.passed) for r in second.results] == [("T-1", True)]
    assert lesson.exists() and "- T-1 ✅ passed" in next((ws.memory_dir / "journal").glob("*.md")).read_text()
    # memory/ never enters the project's history.
    assert "memory/" not in subprocess.run(["git", "-C", str(ws.root), "log", "--name-only", "--format="],
                                           capture_output=True, text=True, check=True).stdout


def test_raw_writes_by_the_agent_are_committed_unattributed(tmp_path, git_identity):
    ws = make_ws(tmp_path, "--raw")
    run_tick(ws.root)
    subjects = mem_git(ws, "log", "--format=%s").splitlines()
    assert "unattributed write by T-1: knowledge/raw-note.md" in subjects
    body = mem_git(ws, "log", "--format=%B", "--grep", "unattributed write by")
    assert "Memento-Memory: unattributed" in body
    marks = unattributed_writes(ws)
    assert [(m.task, m.paths) for m in marks] == [("T-1", ("knowledge/raw-note.md",))]
    record = json.loads((ws.memento_dir / "memory_unattributed.jsonl").read_text().splitlines()[0])
    assert record["task"] == "T-1" and len(record["commit"]) == 40
    assert mem_git(ws, "status", "--porcelain") == ""
