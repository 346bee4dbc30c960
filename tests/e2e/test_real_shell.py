"""Each real CLI runs a program through its OWN shell tool, confined, and the tick passes.

Confined (SPEC §13) a preset gives its CLI full tool permissions: the worker
must run the project's tests without a person to approve them. The project
holds ``make_hello.py``, which computes a digest and writes it to hello.txt;
the mock model answers the CLI's first turn with a call of the CLI's shell
tool (claude's Bash, codex's shell, gemini's run_shell_command, aider's
```` ```bash ```` suggestion, openclaw's exec) that runs it. Only that program
can have written the line verify checks; the tick must mark the task ``[x]``
with one commit holding the program's output. Unconfined, claude keeps its
safe mode: the same Bash call is refused and nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from memento_core import agents
from memento_core.tick.__main__ import run_tick

from .conftest import SANDBOX, WHY_UNCONFINED, configure, make_workspace
from .mock_model import Script

pytestmark = pytest.mark.e2e

PRESETS = ("claude", "codex", "gemini", "aider", "openclaw")
DIGEST = hashlib.sha256(b"memento e2e").hexdigest()[:16]
LINE = f"make_hello.py computed {DIGEST}"
SAID = "make_hello.py: hello.txt written"  # what the program prints: the CLI's tool result

PROGRAM = """import hashlib, pathlib, sys
here = pathlib.Path(__file__).resolve().parent
digest = hashlib.sha256(b"memento e2e").hexdigest()[:16]
(here / "hello.txt").write_text(f"make_hello.py computed {digest}\\n", encoding="utf-8")
print("make_hello.py: hello.txt written")
"""

PLAN = f"""# MASTER_PLAN: e2e shell

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: 1

---

## Phase 1: One
<!-- depends: none -->

- [ ] `T-101` [MODULE:hello] Run make_hello.py, which writes hello.txt
  - verify: `grep -qx '{LINE}' hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""


def git(root, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def shell_workspace(run, monkeypatch, preset: str, sandbox: str = SANDBOX):
    """The e2e workspace with make_hello.py committed and the plan's task to run it."""
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent, sandbox=sandbox)
    (root / "make_hello.py").write_text(PROGRAM, encoding="utf-8")
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN, encoding="utf-8")
    if preset == "aider":  # its shell-command suggestions come with the diff (editblock) format
        toml = root / "memento.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace(
            "[agent]\n", '[agent]\nextra_args = ["--edit-format", "diff"]\n', 1), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "e2e: make_hello.py and its task")
    run.mock.script = Script(command=f"python3 {root / 'make_hello.py'}")
    return root


def tool_result_came_back(run) -> bool:
    """Whether a request after the first carried the program's output (the tool's result)."""
    return any(SAID in json.dumps(r.body) for r in run.mock.model_requests()[1:])


@pytest.mark.parametrize("preset", PRESETS)
def test_the_cli_runs_a_program_through_its_own_shell_tool(run, monkeypatch, preset):
    root = shell_workspace(run, monkeypatch, preset)
    base = git(root, "rev-parse", "HEAD").strip()

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], (
        outcome.message + "\n" + log[-4000:])
    assert (root / "hello.txt").read_text(encoding="utf-8") == LINE + "\n"
    commits = git(root, "log", "--format=%s", f"{base}..HEAD").splitlines()
    assert len(commits) == 1 and commits[0].startswith("memento: complete T-101"), commits
    assert git(root, "show", "HEAD:hello.txt") == LINE + "\n"
    assert "hello.txt" in git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert "- [x] `T-101`" in (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    if preset == "aider":  # aider keeps a command's output for its next turn: none comes
        assert f"Running python3 {root / 'make_hello.py'}" in log, log[-4000:]
    else:
        assert tool_result_came_back(run), log[-4000:]
    assert agents.process._RUNNING == {}
    if SANDBOX == "bwrap":
        assert "[memento] sandbox: bwrap (" in log
    else:
        pytest.skip(f"passed unconfined; the sandbox cannot run here: {WHY_UNCONFINED}")


def test_unconfined_claude_keeps_its_safe_mode_and_its_bash_is_refused(run, monkeypatch):
    """mode = "none": no bypassPermissions, no IS_SANDBOX; the same Bash call needs a person,
    so print mode refuses it and the task fails verify with nothing written."""
    root = shell_workspace(run, monkeypatch, "claude", sandbox="none")

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", False)], log[-4000:]
    assert not (root / "hello.txt").exists()
    assert "--permission-mode acceptEdits" in log and "bypassPermissions" not in log, log[-4000:]
    assert "[memento] sandbox: none" in log
    assert "\n[denied] Bash: python3 " in log, log[-4000:]  # asked, and refused (the result's permission_denials)
    assert not tool_result_came_back(run)
    assert "- [ ] `T-101`" in (root / "docs" / "MASTER_PLAN.md").read_text(encoding="utf-8")
    assert agents.process._RUNNING == {}


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini"])
def test_with_every_permission_the_sandbox_is_still_the_boundary(run, monkeypatch, preset):
    """The CLI's full permissions reach no further than the sandbox: the same shell call also
    writes memento.toml, a file beside the project and ~/.bashrc; only the program's output lands."""
    if SANDBOX != "bwrap":
        pytest.skip(f"the sandbox cannot run here: {WHY_UNCONFINED}")
    root = shell_workspace(run, monkeypatch, preset)
    outside, bashrc = run.base / "outside.txt", run.home / ".bashrc"
    toml = (root / "memento.toml").read_bytes()
    run.mock.script.command = (f"python3 {root / 'make_hello.py'}; echo pwned >> {root / 'memento.toml'}; "
                               f"echo pwned > {outside}; echo pwned >> {bashrc}; true")

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], log[-4000:]
    assert git(root, "show", "HEAD:hello.txt") == LINE + "\n"
    assert (root / "memento.toml").read_bytes() == toml
    assert not outside.exists() and not bashrc.exists()
    assert tool_result_came_back(run)
    # the writes were tried, and refused by the sandbox (the CLI's tool result says so)
    assert "Read-only file system" in json.dumps([r.body for r in run.mock.model_requests()])
    assert agents.process._RUNNING == {}
