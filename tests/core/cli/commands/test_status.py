"""`memento status` (cli/commands/status.py), a real subprocess: its --json document, its prefix and
exit code following the state, one reading of the plan. It never says `[ok] … RUNNING`, exit 0, when the pipeline cannot or will not
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

from tests.core.cli.runs import FIXTURES, PLAN, WORDS_PLAN, memento


def memento_in(root: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path, git_identity) -> tuple[Path, dict]:
    proc = tmp_path / "proc"
    proc.mkdir()
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab"), "MEMENTO_PROC_DIR": str(proc)}
    root = tmp_path / "calc"
    assert memento_in(tmp_path, "demo", str(root), env=env).returncode == 0
    assert memento_in(root, "resume", env=env).returncode == 0
    subprocess.run(["git", "commit", "-qam", "resume"], cwd=root, check=True)
    return root, env


def status(root: Path, env: dict) -> tuple[int, str, dict]:
    human = memento_in(root, "status", env=env)
    doc = json.loads(memento_in(root, "status", "--json", env=env).stdout)
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
    assert memento_in(root, "cron", "install", env=env).returncode in (0, 1)
    rc, out, doc = status(root, env)  # an entry, but no cron daemon runs it
    assert (rc, doc["pipeline"]["state"]) == (1, "IDLE") and "no cron daemon" in out
    assert doc["schedule"] == {"cron_installed": True, "cron_daemon": False}
    fake_cron_daemon(env)
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"]) == (0, "RUNNING") and out.startswith("[ok] ")


def test_a_refused_dirty_tick_is_refused_until_a_tick_runs_again(project):
    root, env = project
    memento_in(root, "cron", "install", env=env)
    fake_cron_daemon(env)
    (root / "README.md").write_text("a person's unfinished edit\n")
    tick = memento_in(root, "tick", env=env)
    assert tick.returncode == 1
    rc, out, doc = status(root, env)
    assert (rc, doc["pipeline"]["state"], doc["refused"]) == (1, "REFUSED", ["README.md"])
    assert out.startswith("[warn] calc (Memento demo): REFUSED")
    assert "refused to run over uncommitted changes: README.md" in out
    subprocess.run(["git", "commit", "-qam", "my edit"], cwd=root, check=True)
    assert memento_in(root, "tick", env=env).returncode == 0
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
    assert memento_in(root, "tick", env=env).returncode == 2
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


def test_status_json_document(ws: Path):
    (ws / PLAN).write_text((FIXTURES / "skill_template_plan.md").read_text().replace("- [ ] `T-101`", "- [x] `T-101`")
                           .replace("- [ ] `T-102`", "- [!] `T-102`"))
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["state"] == "BLOCKED" and doc["tick_mode"] == "auto"
    assert doc["counts"] == {"total": 4, "done": 1, "pending": 2, "blocked": 1, "in_progress": 0, "skipped": 0,
                             "questions": 0}
    assert [(p["id"], p["done"], p["total"], p["open"]) for p in doc["phases"]] == [
        ("Phase 1", 1, 2, True), ("Phase 2", 0, 1, False), ("Phase 3", 0, 1, False)]
    assert doc["blocked"][0]["id"] == "T-102"
    assert doc["next"]["kind"] == "blocked" and "Phase 1 has unresolved [!] tasks" in doc["next"]["message"]
    r = memento("status", str(ws))
    assert r.returncode == 1 and "[warn] T-102 blocked after 0 retries" in r.stdout


def test_status_reads_the_plan_once(ws: Path, monkeypatch):
    # 10,000 tasks take tens of milliseconds to read: the summary and "needs you" share one reading.
    import memento_core.plan.scan
    from memento_core.cli.commands.status import status_document
    from memento_core.workspace import Workspace

    read, real = [], memento_core.plan.scan.parse_plan
    monkeypatch.setattr(memento_core.plan.scan, "parse_plan", lambda *a, **k: read.append(a) or real(*a, **k))
    (ws / PLAN).write_text((FIXTURES / "skill_template_plan.md").read_text().replace("- [ ] `T-102`", "- [!] `T-102`"))
    doc = status_document(Workspace.find(ws))
    assert len(read) == 1 and [n["task"] for n in doc["needs_you"] if n.get("task")] == ["T-102"]


def test_status_names_a_broken_config_the_breaker_and_no_task_for_an_invalid_plan(ws: Path):
    (ws / "memento.toml").write_text("[agent\n")
    r = memento("status", str(ws))
    assert r.returncode == 1 and "[error] " in r.stdout and "memento.toml:1:" in r.stdout
    (ws / "memento.toml").write_text("")
    from memento_core.state import TickState
    from memento_core.workspace import Workspace

    state = TickState(breaker_reason="5 consecutive ticks attempted work and passed nothing", breaker_at="now")
    state.save(Workspace(ws))
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["breaker"] == {"tripped": True, "reason": "5 consecutive ticks attempted work and passed nothing",
                              "at": "now"}
    assert "[warn] circuit breaker tripped at now: 5 consecutive" in memento("status", str(ws)).stdout
    (ws / PLAN).write_text((ws / PLAN).read_text() + "\n- [ ] T-101 again\n  - verify: true\n  - context_files: []\n")
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["state"] == "INVALID" and doc["next"]["kind"] == "invalid" and doc["next"]["task"] is None


def test_status_prefix_follows_the_state(words_ws: Path):
    r = memento("status", str(words_ws))  # no cron entry, no auto-tick: nothing will tick
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: IDLE")
    (words_ws / PLAN).write_text(WORDS_PLAN.replace("- [ ] `T-2`", "- [!] `T-2`").replace("- [ ] `T-1`", "- [x] `T-1`"))
    r = memento("status", str(words_ws))
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: BLOCKED")
    (words_ws / PLAN).write_text(WORDS_PLAN.replace("max_retries: 2", "max_retries: lots"))
    r = memento("status", str(words_ws))
    assert r.returncode == 1 and r.stdout.startswith("[error] words: INVALID")
