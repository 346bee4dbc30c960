"""agents/run.py: one agent run through the real `command` and `script` presets (what run_agent hands the
agent and reads back, a missing binary, an agent that commits) and the environment it gets. The process
group beneath it is test_process's."""

from __future__ import annotations

import json
import os
import subprocess

from memento_core.agents import (
    agent_env,
    build_invocation,
    run_agent,
)
from memento_core.config.model import Config
from memento_core.git.changes import changes_since
from memento_core.git.commit import fold_commits
from memento_core.git.repo import head
from memento_core.git.status import untracked
from memento_core.workspace import Workspace
from tests.core.agents.presets.requests_of import command_config
from tests.core.agents.presets.requests_of import spaced_request as request
from tests.core.agents.test_process import (
    AGENTS,
    no_process_left_behind,  # noqa: F401 (autouse: nothing outlives a test here either)
)


def test_command_preset_runs_with_exact_argv_and_prompt_on_stdin(tmp_path):
    req = request(tmp_path)
    out = tmp_path / "argv.json"
    inv = build_invocation(
        command_config(f"{AGENTS / 'dumps_argv.py'} {{prompt_file}} {{task_id}}"), **req
    )
    env = {**os.environ, "FAKE_AGENT_OUT": str(out)}
    result = run_agent(
        inv, cwd=tmp_path, log_path=tmp_path / "logs" / "tick.log", timeout=60, env=env
    )
    assert result.ok, (tmp_path / "logs" / "tick.log").read_text()
    assert json.loads(out.read_text()) == [str(req["prompt_file"]), "T-1"]

    copy = tmp_path / "stdin copy.txt"
    inv = build_invocation(command_config(f"{AGENTS / 'reads_stdin.py'} '{copy}'"), **req)
    result = run_agent(inv, cwd=tmp_path, log_path=tmp_path / "logs" / "tick.log", timeout=60)
    assert result.ok
    assert copy.read_bytes() == req["prompt_file"].read_bytes()


def test_script_preset_runs_do_in_the_workdir(tmp_path):
    req = request(
        tmp_path,
        do_command=f"{AGENTS / 'does_task.py'} 'out dir/result.txt' hello && echo shell-ok",
    )
    inv = build_invocation(Config(agent_preset="script"), **req)
    assert inv.shell and inv.stdin_path is None and inv.preset == "script"
    log = tmp_path / "tick.log"
    result = run_agent(inv, cwd=tmp_path, log_path=log, timeout=60)
    assert result.ok
    assert (tmp_path / "out dir" / "result.txt").read_text() == "hello\n"
    text = log.read_text()
    assert text.startswith("[memento] ") and "agent (script)" in text
    assert "shell-ok" in text
    assert "agent exited with code 0" in text


def test_missing_binary_is_a_result_not_an_exception(tmp_path):
    inv = build_invocation(command_config("no-such-agent-xyz {prompt_file}"), **request(tmp_path))
    log = tmp_path / "tick.log"
    result = run_agent(inv, cwd=tmp_path, log_path=log, timeout=5)
    assert result.error == "agent binary 'no-such-agent-xyz' not found on PATH (preset command)"
    assert result.exit_code is None and result.pgid is None and not result.ok
    assert result.error in log.read_text()


def test_agent_that_commits_is_folded_back(repo, git_identity, tmp_path):
    (repo / "README.md").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "seed"], check=True)
    base, before = head(repo), untracked(repo)
    inv = build_invocation(
        command_config(f"{AGENTS / 'commits_itself.py'} src/feature.py"),
        **request(tmp_path, workdir=repo),
    )
    result = run_agent(inv, cwd=repo, log_path=tmp_path / "tick.log", timeout=60)
    assert result.ok, (tmp_path / "tick.log").read_text()
    assert head(repo) != base
    assert fold_commits(repo, base) == 2
    changes = changes_since(repo, base, before)
    assert [(c.path, c.added, c.kind) for c in changes] == [("src/feature.py", 2, "created")]


def test_agent_env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMENTO_TASK_ID", "stale")
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.delenv("PATH")
    ws = Workspace(tmp_path)
    env = agent_env(ws, task_id="T-7", prompt_file=tmp_path / "p.md", extra={"X": "1"})
    assert env["MEMENTO_PROJECT"] == str(tmp_path)
    assert env["MEMENTO_TASK_ID"] == "T-7"
    assert env["MEMENTO_PROMPT_FILE"] == str(tmp_path / "p.md")
    assert env["MEMENTO_TICK_RESULT"] == str(ws.tick_result_path)
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["PATH"] == os.defpath
    assert env["X"] == "1"
    assert "GIT_DIR" not in env
    assert "MEMENTO_SYSTEM_PROMPT_FILE" not in agent_env(ws)
    assert "MEMENTO_TASK_ID" not in agent_env(ws)
