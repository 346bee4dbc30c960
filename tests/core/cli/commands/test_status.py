"""`memento status` never says `[ok] … RUNNING`, exit 0, when the pipeline cannot or will not
run: a tick refused a dirty tree, the folder is not a git repository, memento.toml is broken,
or nothing will tick (no cron entry, or no cron daemon). Its word is the dashboard header's
(overview.pipeline_word over the same summary)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def memento(root: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path, git_identity) -> tuple[Path, dict]:
    proc = tmp_path / "proc"
    proc.mkdir()
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab"), "MEMENTO_PROC_DIR": str(proc)}
    root = tmp_path / "calc"
    assert memento(tmp_path, "demo", str(root), env=env).returncode == 0
    assert memento(root, "resume", env=env).returncode == 0
    subprocess.run(["git", "commit", "-qam", "resume"], cwd=root, check=True)
    return root, env


def status(root: Path, env: dict) -> tuple[int, str, dict]:
    human = memento(root, "status", env=env)
    doc = json.loads(memento(root, "status", "--json", env=env).stdout)
    return human.returncode, human.stdout, doc


def fake_cron_daemon(env: dict) -> None:
    pid = Path(env["MEMENTO_PROC_DIR"]) / "4242"
    pid.mkdir()
    (pid / "comm").write_text("cron\n")


def test_running_only_when_cron_will_tick(project):
    root, env = project
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"]) == (1, "IDLE")
    assert out.startswith("[warn] calc (Memento demo): IDLE")
    assert "[warn] nothing will tick (no cron entry, auto-tick off)" in out
    assert memento(root, "cron", "install", env=env).returncode in (0, 1)
    rc, out, doc = status(root, env)  # an entry, but no cron daemon runs it
    assert (rc, doc["pipeline"]["state"]) == (1, "IDLE") and "no cron daemon" in out
    assert doc["schedule"] == {"cron_installed": True, "cron_daemon": False}
    fake_cron_daemon(env)
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"]) == (0, "RUNNING") and out.startswith("[ok] ")


def test_a_refused_dirty_tick_is_refused_until_a_tick_runs_again(project):
    root, env = project
    memento(root, "cron", "install", env=env)
    fake_cron_daemon(env)
    (root / "README.md").write_text("a person's unfinished edit\n")
    tick = memento(root, "tick", env=env)
    assert tick.returncode == 1
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"], doc["refused"]) == (1, "REFUSED", ["README.md"])
    assert out.startswith("[warn] calc (Memento demo): REFUSED")
    assert "refused to run over uncommitted changes: README.md" in out
    subprocess.run(["git", "commit", "-qam", "my edit"], cwd=root, check=True)
    assert memento(root, "tick", env=env).returncode == 0
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"], doc["refused"]) == (0, "RUNNING", [])


def test_a_broken_memento_toml_is_invalid(project):
    root, env = project
    (root / "memento.toml").write_text("[agent\n")
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"]) == (1, "INVALID")
    assert out.startswith("[error] calc (Memento demo): INVALID") and "RUNNING" not in out
    assert "memento.toml:1:" in out and "[ok] next" not in out


def test_not_a_git_repository_is_invalid_and_the_dashboard_says_the_same(project):
    root, env = project
    shutil.rmtree(root / ".git")
    assert memento(root, "tick", env=env).returncode == 2
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"]) == (1, "INVALID") and "not a git repository" in doc["git_error"]
    assert out.startswith("[error] ") and "[error] " + str(root) + " is not a git repository" in out
    # The dashboard's header and "Needs you" read the same summary through the same rules.
    from memento_core import overview
    from memento_core.plan.scan import parse_plan
    from memento_core.state import TickState
    from memento_core.workspace import Workspace

    ws = Workspace(root)
    summary = overview.summarize(ws, parse_plan(ws.plan_path), [])
    state = TickState.load(ws)
    word = overview.pipeline_word(summary, state, cron_installed=False, cron_daemon=False, auto_tick=True)
    assert word == ("INVALID", doc["git_error"])
    assert [n.kind for n in overview.needs_you(summary, state, None)][:1] == ["git"]
