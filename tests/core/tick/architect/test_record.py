"""An architect run that does not end by itself (SPEC §16): SIGKILL, SIGTERM, an exception.
Nothing it did stays: not in the plan, not in the code, not in git (no `memento: sync docs`
commit of its edits), and its agent does not outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core.agents.reaper import start_time
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect import run as arch_run
from memento_core.tick.architect.record import has_record
from tests.core.tick.architect.test_run import agent, git, history, make_ws

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def _wait_for(path: Path, proc: subprocess.Popen, deadline: float = 60.0) -> int:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        assert proc.poll() is None, "memento architect ended before its agent wrote"
        time.sleep(0.05)
    raise AssertionError("the fake architect never started")


def _alive(pid: int, started: int | None) -> bool:
    return started is not None and start_time(pid) == started


def _no_commit_marks_done(root: Path) -> None:
    for sha, subject in (line.split(" ", 1) for line in history(root)):
        shown = git(root, "show", sha, "--", "docs/MASTER_PLAN.md")
        assert "+- [x] `T-1`" not in shown, subject


@pytest.mark.parametrize("sig,commit", [(signal.SIGKILL, ()), (signal.SIGTERM, ()), (signal.SIGKILL, ("commit",))])
def test_a_killed_architect_run_leaves_nothing_for_the_next_tick(tmp_path, sig, commit):
    pidfile = tmp_path / "agent.pid"
    ws = make_ws(tmp_path, agent("architect.py", "hang", str(pidfile), *commit))
    root = ws.root
    plan_before, code_before = ws.plan_path.read_bytes(), (root / "code.py").read_bytes()
    head_before = git(root, "rev-parse", "HEAD").strip()
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "memento_core.cli", "architect", str(root)], env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pid = _wait_for(pidfile, proc)
        started = start_time(pid)
        assert parse_plan(ws.plan_path).task("T-1").status == "x"  # the agent's edit is on disk
        os.killpg(proc.pid, sig)
        proc.wait(timeout=60)
        if sig == signal.SIGTERM:  # put back by the run itself, on its way out
            assert ws.plan_path.read_bytes() == plan_before and not has_record(ws)
        outcome = run_tick(root)
        agent_survived = _alive(pid, started) and (Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if pidfile.exists() and _alive(int(pidfile.read_text()), start_time(int(pidfile.read_text()))):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert not agent_survived, "the architect's agent outlived its run"
    assert parse_plan(ws.plan_path).task("T-1").status == "!", outcome.message
    assert (root / "code.py").read_bytes() == code_before
    assert not has_record(ws)
    _no_commit_marks_done(root)
    assert git(root, "show", f"{head_before}:docs/MASTER_PLAN.md").encode() == plan_before
    assert "ARCHITECT — interrupted, rolled back" in ws.status_path.read_text() or sig == signal.SIGTERM
    assert not any("forged" in line for line in history(root))


def test_an_exception_in_the_run_puts_everything_back(tmp_path, monkeypatch):
    ws = make_ws(tmp_path, agent("architect.py", "edit_code", "code.py"))
    plan_before, code_before = ws.plan_path.read_bytes(), (ws.root / "code.py").read_bytes()

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(arch_run, "judge", boom)
    with pytest.raises(KeyboardInterrupt):
        arch_run.run_architect(ws)
    assert ws.plan_path.read_bytes() == plan_before
    assert (ws.root / "code.py").read_bytes() == code_before
    assert not has_record(ws)


def test_the_next_memento_architect_recovers_a_killed_run_keeping_a_persons_skip(tmp_path):
    from memento_core import control

    pidfile = tmp_path / "agent.pid"
    ws = make_ws(tmp_path, agent("architect.py", "hang", str(pidfile)))
    root = ws.root
    code_before = (root / "code.py").read_bytes()
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "memento_core.cli", "architect", str(root)], env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pid = _wait_for(pidfile, proc)
        started = start_time(pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        control.skip_task(ws, "T-4", "a person's decision")  # after the kill, before any recovery
        ws.config_path.write_text(ws.config_path.read_text().replace(f"hang {pidfile}", "nothing")
                                  .replace(f"hang '{pidfile}'", "nothing"))
        result = arch_run.run_architect(ws)
    finally:
        if _alive(pid, started):
            os.kill(pid, signal.SIGKILL)
    assert result.outcome == "unchanged", result.message
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "!" and plan.task("T-4").status == "-"
    assert (root / "code.py").read_bytes() == code_before and not has_record(ws)
    assert "ARCHITECT — interrupted, rolled back" in ws.status_path.read_text()
    _no_commit_marks_done(root)
