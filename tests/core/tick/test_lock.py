"""tick/lock.py: who holds the tick lock, as the kernel says; a holder stopped with SIGSTOP is
seen, waited for until stale_lock_timeout, then killed with everything below it. Real processes
holding a real flock; every one of them killed by the test's end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from memento_core.agents.reaper import read_proc
from memento_core.tick.lock import lock_busy, lock_holder, stopped_holder, take_over
from tests.core.scenarios.test_engine import _wait_for, make_ws

HOLDER = """
import fcntl, subprocess, sys, time
fh = open(sys.argv[1], "a")
fcntl.flock(fh, fcntl.LOCK_EX)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
print(child.pid, flush=True)
time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path):
    """A process (leading its own group) holding the flock on a file, with a child of its own in a
    session of its own (found as a descendant, not as a member of the holder's group)."""
    lock = tmp_path / "tick.lock"
    lock.touch()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    child = int(proc.stdout.readline())
    _wait_for(lambda: lock_holder(lock) == proc.pid, 10)
    yield lock, proc, child
    for pid in (proc.pid, child):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)
    proc.stdout.close()


def _gone(pid: int) -> bool:
    p = read_proc(pid)
    return p is None or p.state in ("Z", "X")


def test_the_kernel_names_the_flocks_holder_and_nobody_for_another_kind_of_lock(tmp_path, holder):
    lock, proc, _child = holder
    assert lock_holder(lock) == proc.pid
    other = tmp_path / "other.lock"
    posix = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; fh = open(sys.argv[1], 'a'); "
                              "fcntl.lockf(fh, fcntl.LOCK_EX); print(1, flush=True); time.sleep(60)", str(other)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert posix.stdout.readline() == "1\n"
        assert lock_holder(other) is None and lock_holder(tmp_path / "gone.lock") is None
    finally:
        posix.kill()
        posix.wait(timeout=10)
        posix.stdout.close()


def test_a_running_holder_is_not_stopped_a_stopped_one_is_and_is_taken_over_with_its_child(holder):
    lock, proc, child = holder
    assert stopped_holder(lock) is None
    os.kill(proc.pid, signal.SIGSTOP)
    _wait_for(lambda: read_proc(proc.pid).state in ("T", "t"), 10)
    pid, quiet = stopped_holder(lock)
    assert pid == proc.pid and 0.0 <= quiet < 60
    killed = take_over(pid)
    assert {proc.pid, child} <= set(killed) and os.getpid() not in killed
    proc.wait(timeout=10)
    assert _gone(child) and lock_holder(lock) is None


def test_a_busy_lock_waits_for_stale_lock_timeout_before_a_takeover(tmp_path, holder, git_identity):
    lock, proc, child = holder
    ws = make_ws(tmp_path, "true")
    os.replace(lock, ws.tick_lock_path)  # the same file (the flock is on the inode)
    assert lock_busy(ws, "previous tick still running") == ("previous tick still running", False)
    os.kill(proc.pid, signal.SIGSTOP)
    _wait_for(lambda: read_proc(proc.pid).state in ("T", "t"), 10)
    said, taken = lock_busy(ws, "previous tick still running")
    assert not taken and f"pid {proc.pid} is stopped" in said and "stale_lock_timeout 900s" in said
    ws.plan_path.write_text(ws.plan_path.read_text().replace("stale_lock_timeout: 15min", "stale_lock_timeout: 0s"))
    said, taken = lock_busy(ws, "previous tick still running")
    assert taken and said.startswith(f"the previous tick (pid {proc.pid}) was stopped (SIGSTOP)")
    proc.wait(timeout=10)
    assert _gone(child)
