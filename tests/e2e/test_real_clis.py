"""Every real preset through a real tick: the CLI from the install cache, a mock model.

For each of claude, codex, gemini, aider and openclaw: a fresh workspace, the
settings a fresh install needs (docs/agents.md), one tick. The mock answers
the CLI's first turn with the CLI's own file-writing tool; the tick must
verify and commit that file. A wrong edit must fail verify and be rolled
back. Judged on disk and in git; no process may outlive the tick.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from memento_core import agents
from memento_core.tick.__main__ import run_tick

from .conftest import SANDBOX, WHY_UNCONFINED, configure, make_workspace, script_edit
from .mock_model import Script

pytestmark = pytest.mark.e2e

PRESETS = ("claude", "codex", "gemini", "aider", "openclaw")
GOOD = "hello from the mock\n"


def git(root, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def sent_the_prompt(run) -> bool:
    """Whether some model request carried Memento's task prompt (the CLI sent it on)."""
    return any("T-101" in json.dumps(r.body) for r in run.mock.model_requests())


@pytest.mark.parametrize("preset", PRESETS)
def test_a_tick_passes_with_the_clis_own_edit(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    script_edit(run, GOOD)

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], (
        outcome.message + "\n" + log[-4000:])
    assert (root / "hello.txt").read_text(encoding="utf-8") == GOOD
    assert git(root, "log", "-1", "--format=%s").startswith("memento: complete T-101")
    assert "hello.txt" in git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert git(root, "status", "--porcelain", "--", "hello.txt") == ""
    assert "- [x] `T-101`" in (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    assert sent_the_prompt(run)
    assert f"agent ({preset})" in log and "agent exited with code 0" in log
    assert agents.process._RUNNING == {}
    if SANDBOX == "bwrap":  # the CLI ran confined, its state dirs and TMPDIR writable in the sandbox
        assert "[memento] sandbox: bwrap (" in log
    else:
        pytest.skip(f"passed unconfined; the sandbox cannot run here: {WHY_UNCONFINED}")


@pytest.mark.parametrize("preset", PRESETS)
def test_a_wrong_edit_fails_verify_and_is_rolled_back(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    script_edit(run, "a wrong answer\n")
    head = git(root, "rev-parse", "HEAD")

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", False)], (
        outcome.message + "\n" + log[-4000:])
    assert sent_the_prompt(run)
    assert "a wrong answer" in log or "verify" in outcome.results[0].reason.lower(), log[-4000:]
    # rolled back: the wrong file is gone, no task commit, the plan's box unchecked
    assert not (root / "hello.txt").exists()
    assert "memento: complete" not in git(root, "log", "--format=%s", f"{head.strip()}..HEAD")
    assert "- [ ] `T-101`" in (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    assert git(root, "status", "--porcelain", "--untracked-files=all", "--", "hello.txt") == ""
    assert agents.process._RUNNING == {}


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini"])
def test_a_write_outside_the_project_is_refused_without_waiting(run, monkeypatch, preset):
    """The model asks for a file beside the project: refused, by the sandbox when confined (the
    CLI has full permissions there), else by the CLI's own permissions."""
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    outside = run.base / "outside.txt"
    script_edit(run, GOOD)
    run.mock.script.path = str(outside)

    outcome = run_tick(root)

    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", False)]
    assert not outside.exists()
    assert "timed out" not in outcome.results[0].reason  # refused, not left waiting for a person
    assert not (root / "hello.txt").exists()
    assert agents.process._RUNNING == {}


@pytest.mark.parametrize("preset", PRESETS)
def test_a_model_that_claims_success_and_writes_nothing_has_not_done_the_task(run, monkeypatch, preset):
    """The task's verify passes on the unchanged tree (the work looks done already, as a real
    library's whole suite passes before any work); the model says "Done" and calls no tool. Before,
    the task became [x] with an empty commit."""
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    (root / "hello.txt").write_text(GOOD, encoding="utf-8")
    git(root, "add", "hello.txt")
    git(root, "commit", "-qm", "the file is there already")
    head = git(root, "rev-parse", "HEAD").strip()
    run.mock.script = Script(mode="claim")

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    (result,) = outcome.results
    assert not result.passed, log[-4000:]
    assert result.reason.startswith("nothing changed: the attempt left every file as it was"), result.reason
    assert sent_the_prompt(run) and "agent exited with code 0" in log
    assert "memento: complete" not in git(root, "log", "--format=%s", f"{head}..HEAD")
    plan = (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    assert "- [ ] `T-101`" in plan and "  - retries: 1" in plan
    assert agents.process._RUNNING == {}
