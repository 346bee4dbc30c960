"""The architect (SPEC §16) end to end: fake architects under tests/agents/ through the real
`command` preset, real git, judged on disk and in git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.control import acknowledge_verify
from memento_core.notes import add_note, parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import CHANGED, ROLLED_BACK, UNCHANGED, run_architect
from memento_core.workspace import Workspace

AGENTS = Path(__file__).resolve().parents[3] / "agents"
PY = sys.executable

PLAN = """# MASTER_PLAN: architect test

## Meta
- tick_mode: auto
- max_retries: 1
- max_tasks_per_tick: 1
- max_diff_lines: 50
- total_ticks: 0

## Phase 1: Only
<!-- depends: none -->

- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q DONE hello.txt`
  - context_files: [hello.txt]
  - retries: 0

- [x] `T-2` Done already
  - verify: `true`
  - context_files: [old.txt]
  - retries: 0

## Phase 2: Later (so one blocked task is not 30% of the plan: the breaker)
<!-- depends: Phase 1 -->

- [ ] `T-3` Later one
  - verify: `true`
  - context_files: [three.txt]

- [ ] `T-4` Later two
  - verify: `true`
  - context_files: [four.txt]
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def agent(name: str, *args: str) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in [PY, str(AGENTS / name), *args])


def make_ws(tmp_path: Path, architect: str, *, sandbox: str = "none", extra: str = "") -> Workspace:
    """T-1 blocked by a verify that can never pass (the worker writes "done", verify wants "DONE")."""
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{agent("does_task.py", "hello.txt", "done")}"""\n'
        f'timeout = "20s"\n[verify]\ntimeout = "20s"\n[sandbox]\nmode = "{sandbox}"\n'
        'env = ["FAKE_ARCHITECT_PROMPT", "FAKE_ARCHITECT_SEEN"]\n'  # what the fake architect reads
        f'[architect]\ncommand = """{architect}"""\n{extra}')
    (root / "code.py").write_text("print('the code')\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    ws = Workspace(root)
    outcome = run_tick(ws.root)
    assert outcome.results and outcome.results[0].blocked, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    return ws


def tree(root: Path) -> dict[str, bytes]:
    """Every file outside .git and Memento's runtime folders, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", "logs", ".memento", "memory")}


def history(root: Path) -> list[str]:
    return git(root, "log", "--format=%H %s").splitlines()


def entries(ws: Workspace) -> list[status_log.TickEntry]:
    return status_log.parse_status(ws.status_path)


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# --------------------------------------------------------------------------- repair


def test_a_blocked_task_is_repaired_then_passed_by_the_next_tick(tmp_path, monkeypatch):
    prompt_copy = tmp_path / "prompt.md"
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"))
    add_note(ws.notes_path, "the greeting is lower case", target="T-1")
    monkeypatch.setenv("FAKE_ARCHITECT_PROMPT", str(prompt_copy))
    result = run_architect(ws)
    assert result.outcome == CHANGED, result.message
    assert result.changes.edited == ("T-1",) and result.changes.reset == ("T-1",)
    # The prompt: the rules, the blocked task with its failed attempt, the note, the map, the plan.
    prompt = prompt_copy.read_text()
    assert "Memento Architect" in prompt and "Never delete a task line" in prompt
    assert "### T-1 [MODULE:hello] Write hello" in prompt and "verify failed with exit code 1" in prompt
    assert "- Log: logs/tick_" in prompt
    assert "the greeting is lower case" in prompt and "## docs/PROJECT_MAP.md" in prompt
    assert "## docs/MASTER_PLAN.md" in prompt
    task = parse_plan(ws.plan_path).task("T-1")
    assert task.status == " " and task.retries == 0 and task.verify == "grep -q done hello.txt"
    assert parse_plan(ws.plan_path).meta.last_architect_edit
    # One commit holding the plan, the notes and the status log.
    subject = history(ws.root)[0].split(" ", 1)[1]
    assert subject == "memento: architect — edited T-1; reset T-1; archived 1 note(s)"
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert files == {"docs/MASTER_PLAN.md", "docs/HUMAN_NOTES.md", "docs/TICK_STATUS.md"}
    # Only Memento's own documents stay uncommitted (the sha filled in, the checkpoint): as after a pass.
    assert {ln[3:] for ln in git(ws.root, "status", "--porcelain").splitlines()} <= \
        {"docs/TICK_STATUS.md", "docs/CURRENT_STATE.md"}
    entry = entries(ws)[-1]
    assert entry.status == "ARCHITECT" and entry.field("Event") == "🏗 ARCHITECT"
    assert entry.field("Edited") == "T-1" and entry.field("Reset") == "T-1"
    assert entry.field("Notes Archived") == "T-1: the greeting is lower case"
    assert entry.commit_sha == git(ws.root, "rev-parse", "--short=7", "HEAD").strip()
    (note,) = parse_notes(ws.notes_path)
    assert note.read and note.archived
    # The repaired task's verify changed: it waits until a person checked it, then the next tick passes it.
    assert run_tick(ws.root).results == [] and parse_plan(ws.plan_path).task("T-1").status == " "
    acknowledge_verify(ws, ["T-1"])
    outcome = run_tick(ws.root)
    assert outcome.results and outcome.results[0].passed, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"


def test_a_split_skips_with_a_reason_and_adds_the_tasks(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "split", "T-1"))
    result = run_architect(ws)
    assert result.outcome == CHANGED, result.message
    assert result.changes.skipped == ("T-1",) and result.changes.added == ("T-901", "T-902")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "-" and plan.task("T-1").reason == "split into T-901, T-902"
    assert plan.meta.total_tasks == 5  # the counters recomputed: T-1 skipped, T-901 and T-902 added
    entry = entries(ws)[-1]
    assert entry.field("Skipped") == "T-1" and entry.field("Added") == "T-901, T-902"
    assert entry.field("Edited") is None  # the skip's reason is the skip


def test_the_map_may_change_and_is_committed(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "map"))
    result = run_architect(ws)
    assert result.outcome == CHANGED and result.map_changed
    assert "greets (the architect)" in git(ws.root, "show", "HEAD:docs/PROJECT_MAP.md")
    assert entries(ws)[-1].field("Project Map") == "updated"


def test_an_architect_that_changes_nothing_says_so_and_commits_nothing(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "nothing"))
    before, commits = tree(ws.root), history(ws.root)
    result = run_architect(ws)
    assert result.outcome == UNCHANGED and result.exit_code == 1
    assert tree(ws.root) == before and history(ws.root) == commits


# --------------------------------------------------------------------------- dry run


def test_dry_run_prints_the_diff_and_changes_nothing_on_disk_or_in_git(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"))
    add_note(ws.notes_path, "lower case", target="T-1")  # uncommitted, as `memento note` leaves it
    before, commits, status = tree(ws.root), history(ws.root), git(ws.root, "status", "--porcelain")
    proc = subprocess.run([PY, "-m", "memento_core.cli", "architect", "--dry-run", str(ws.root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "-  - verify: `grep -q DONE hello.txt`" in proc.stdout
    assert "+  - verify: `grep -q done hello.txt`" in proc.stdout
    assert "[ok] dry run: the architect would have: edited T-1; reset T-1; archived 1 note(s)" in proc.stdout
    assert tree(ws.root) == before
    assert history(ws.root) == commits and git(ws.root, "status", "--porcelain") == status


# --------------------------------------------------------------------------- rollbacks

def test_a_rule_breaking_dry_run_leaves_no_entry_either(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "edit_code", "code.py"))
    before, commits = tree(ws.root), history(ws.root)
    result = run_architect(ws, dry_run=True)
    assert result.outcome == ROLLED_BACK
    assert tree(ws.root) == before and history(ws.root) == commits


# --------------------------------------------------------------------------- a proposal


def seen(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_dry_runs_proposal_is_applied_as_shown_without_running_the_agent_again(tmp_path, monkeypatch):
    from memento_core.tick.architect.run import apply_proposal

    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"))
    proposal = run_architect(ws, dry_run=True)
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    applied = apply_proposal(ws, proposal)
    assert applied.outcome == CHANGED and applied.commit
    assert seen(ran) == ["fix"]  # one run of the agent: the dry run's
    assert parse_plan(ws.plan_path).task("T-1").verify == "grep -q done hello.txt"
    assert history(ws.root)[0].endswith("memento: architect — edited T-1; reset T-1")
    # A second apply finds the plan changed since: refused, nothing written.
    commits = history(ws.root)
    assert apply_proposal(ws, proposal).outcome == "refused" and history(ws.root) == commits


def test_the_cli_says_why_it_rolled_back(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "delete", "T-1"))
    proc = subprocess.run([PY, "-m", "memento_core.cli", "architect", str(ws.root)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "[warn] the architect's changes were rolled back:\n  - deleted the task line of T-1" in proc.stdout
    assert parse_plan(ws.plan_path).task("T-1").status == "!"


def test_memento_architect_with_the_script_preset_is_refused_with_exit_2(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "true"))
    ws.config_path.write_text('[agent]\npreset = "script"\n[sandbox]\nmode = "none"\n[architect]\nauto = false\n')
    plan_before, head = ws.plan_path.read_bytes(), history(ws.root)[0]
    done = subprocess.run([PY, "-m", "memento_core.cli", "architect", str(ws.root)], capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4])})
    assert done.returncode == 2, done.stderr
    assert 'preset "script"' in done.stderr and "set [architect] preset" in done.stderr
    assert ws.plan_path.read_bytes() == plan_before and history(ws.root)[0] == head


def test_deleting_the_map_is_refused_in_a_run_and_in_a_proposal(tmp_path):
    from dataclasses import replace

    from memento_core.tick.architect.run import REFUSED, apply_proposal

    ws = make_ws(tmp_path, agent("architect.py", "delete_map"))
    map_before = ws.map_path.read_bytes()
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK and "deleted docs/PROJECT_MAP.md" in "; ".join(result.reasons)
    assert ws.map_path.read_bytes() == map_before
    # A proposal saying the map is gone (as a dry run before this check could have): refused, not half applied.
    ws.config_path.write_text(ws.config_path.read_text().replace("delete_map", "fix T-1 true"))
    proposal = run_architect(ws, dry_run=True)
    assert proposal.outcome == CHANGED, proposal.message
    gone = replace(proposal, proposed={**proposal.proposed, "docs/PROJECT_MAP.md": None})
    commits, plan_before = history(ws.root), ws.plan_path.read_bytes()
    applied = apply_proposal(ws, gone)
    assert applied.outcome == REFUSED and "deletes docs/PROJECT_MAP.md" in applied.message
    assert ws.map_path.read_bytes() == map_before and ws.plan_path.read_bytes() == plan_before
    assert history(ws.root) == commits
