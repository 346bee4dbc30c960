"""Red team, processes, recovery and limits (SPEC §13): hostile agents judged on disk and in git.

Each test runs a hostile fake agent from tests/agents/ through the real `command`
preset and a real tick (in-process like the dashboard, or `python -m memento_core.tick`
like cron), then looks at the processes, the files and the commits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core.plan import parse_plan
from memento_core.tick.__main__ import run_tick

from .test_engine import agent, entries, git, make_ws

PY = sys.executable


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


def cron_tick(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], env=env,
                          capture_output=True, text=True, timeout=120)


def _kill_if_alive(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- 1. no process survives


@pytest.mark.parametrize("how", ["in-process", "cron"])
def test_a_setsid_daemon_is_killed_before_verify_and_changes_nothing(tmp_path, how):
    pidfile = tmp_path / "daemon.pid"
    ws = make_ws(tmp_path, agent("leaves_daemon.py", "hello.txt", "done", str(pidfile)))
    try:
        if how == "cron":
            ran = cron_tick(ws.root)
            assert ran.returncode == 0, ran.stderr
        else:
            assert run_tick(ws.root).exit_code == 0
        daemon = int(pidfile.read_text())
        assert not alive(daemon)
        # What was committed is what verify checked, and it is still on disk.
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
        assert (ws.root / "hello.txt").read_text() == "done\n"
        assert parse_plan(ws.plan_path).task("T-1").status == "x"
        assert "had left group" in (ws.root / entries(ws)[-1].log_path).read_text()
        # The daemon would mark every task done now: it is gone, so nothing happens,
        # and the lock it was waiting for is free for the next tick.
        plan = ws.plan_path.read_bytes()
        Path(str(pidfile) + ".go").write_text("go")
        nxt = run_tick(ws.root)
        assert "previous tick still running" not in nxt.message and nxt.exit_code == 0
        assert ws.plan_path.read_bytes().count(b"- [x]") == plan.count(b"- [x]") == 1
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    finally:
        if pidfile.exists():
            _kill_if_alive(int(pidfile.read_text()))


def test_the_subreaper_flag_is_only_set_while_a_tick_runs(tmp_path):
    from memento_core.agents import reaper

    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    before = reaper.is_subreaper()
    assert run_tick(ws.root).exit_code == 0
    assert reaper.is_subreaper() == before


def test_a_process_group_the_tick_did_not_start_is_left_alone(tmp_path):
    """A process group of the caller's (the dashboard's, a test's) is not the agent's."""
    dummy = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"], start_new_session=True)
    pidfile = tmp_path / "daemon.pid"
    try:
        ws = make_ws(tmp_path, agent("leaves_daemon.py", "hello.txt", "done", str(pidfile)))
        assert run_tick(ws.root).exit_code == 0
        assert alive(dummy.pid)
        assert not alive(int(pidfile.read_text()))
    finally:
        dummy.kill()
        dummy.wait()
        if pidfile.exists():
            _kill_if_alive(int(pidfile.read_text()))
