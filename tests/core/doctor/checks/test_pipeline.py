"""checks/pipeline.py: the circuit breaker, the alert file, a dirty work tree and the tick lock,
each case its exact lines and exit code (SPEC §8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.locks import file_lock
from memento_core.state import TickState
from tests.core.doctor.doctorhelp import judge, problems


def _breaker(ws):
    state = TickState.load(ws)
    state.breaker_reason = "5 consecutive ticks attempted work and passed nothing"
    state.breaker_at = "2026-01-01T00:00:00Z"
    state.save(ws)
    return ["[CRITICAL] .memento/state.json: circuit breaker tripped at 2026-01-01T00:00:00Z: 5 consecutive ticks "
            "attempted work and passed nothing; the pipeline is paused — fix the cause, then `memento resume`"], 2


def _alert(ws):
    ws.alert_path.write_text("timestamp: 2026-01-01T00:00:00Z\nblocked_tasks: 1\nblocked: T-304\n"
                             "circuit_breaker: OK\n")
    return ["[WARNING] .memento_alert is present: the pipeline needs attention (blocked: T-304)"], 1


def _dirty(ws):
    (ws.root / "calc" / "__init__.py").write_text("# a person's work in progress\n")
    (ws.root / "scratch.txt").write_text("untracked files do not stop a tick\n")
    return ["[WARNING] uncommitted changes to tracked files: calc/__init__.py; the next tick refuses to run "
            "(commit, stash or remove them)"], 1


CASES = {
    "breaker tripped": _breaker,
    "alert present": _alert,
    "dirty tree": _dirty,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)


def test_a_lock_held_by_a_dead_process_is_critical(ws):
    if not Path("/proc/locks").exists():
        pytest.skip("no /proc/locks on this system")
    code = (
        "import os, fcntl, sys\n"
        f"fd = os.open({str(ws.tick_lock_path)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    null = os.open(os.devnull, os.O_RDWR)\n"
        "    [os.dup2(null, f) for f in (0, 1, 2)]\n"
        "    import time; time.sleep(60); os._exit(0)\n"
        "print(os.getpid(), pid, flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    parent, child = (int(x) for x in out.split())
    try:
        lines, worst = problems(ws)
        assert lines == [f"[CRITICAL] .memento/tick.lock is held by process {parent}, which is gone: a surviving "
                         "child inherited the lock and every tick is skipped until it exits "
                         "(find it with `fuser .memento/tick.lock`)"]
        assert worst == 2
    finally:
        os.kill(child, 9)


def test_a_running_tick_is_info(ws):
    if not Path("/proc/locks").exists():
        pytest.skip("no /proc/locks on this system")
    with file_lock(ws.tick_lock_path, blocking=False):
        lines, worst = problems(ws)
    assert lines == [f"[INFO] a tick is running now (pid {os.getpid()} holds .memento/tick.lock)"]
    assert worst == 0
