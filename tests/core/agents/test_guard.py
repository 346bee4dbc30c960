"""agents/guard.py, run as process.py runs it (``python -I -S guard.py FD EXECUTABLE ARGV...``) with
the tick's end of a real socket pair in this test: it says whether its command started, exits as
the command did, and once the tick's end is closed kills every process below it; judged in /proc."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from memento_core.agents import guard
from memento_core.agents.process import GUARD


def start(*command: str, marker: str = "") -> tuple[subprocess.Popen, socket.socket]:
    """The guard running ``command``, a session of its own as process.py starts it; our end of its lifeline."""
    ours, theirs = socket.socketpair()
    env = {**os.environ, "GUARD_TEST": marker}
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(GUARD), str(theirs.fileno()), *command],
                            pass_fds=(theirs.fileno(),), start_new_session=True, env=env)
    theirs.close()
    ours.settimeout(30)
    return proc, ours


def marked(marker: str) -> list[int]:
    """The live processes whose environment carries ``marker`` (a zombie is not alive)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if f"GUARD_TEST={marker}".encode() in environ.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_the_guard_says_started_and_exits_with_its_commands_code():
    proc, ours = start("/bin/sh", "sh", "-c", "exit 3")
    try:
        assert ours.recv(64) == guard.STARTED
        assert proc.wait(timeout=30) == 3
    finally:
        ours.close()


def test_a_command_killed_by_a_signal_kills_its_guard_by_the_same_signal():
    proc, ours = start("/bin/sh", "sh", "-c", "kill -TERM $$")
    try:
        assert ours.recv(64) == guard.STARTED
        assert proc.wait(timeout=30) == -signal.SIGTERM
    finally:
        ours.close()


def test_a_command_that_cannot_start_is_said_with_its_errno_and_exit_127(tmp_path):
    proc, ours = start(str(tmp_path / "no-such-agent"), "no-such-agent")
    try:
        said = ours.recv(256)
        assert said.startswith(b"E2 ") and b"No such file" in said
        assert proc.wait(timeout=30) == 127
    finally:
        ours.close()


def test_sigterm_does_not_stop_the_guard_it_exits_when_its_command_does(tmp_path):
    go = tmp_path / "go"
    proc, ours = start("/bin/sh", "sh", "-c", f"while [ ! -e '{go}' ]; do sleep 0.05; done; exit 4")
    try:
        assert ours.recv(64) == guard.STARTED
        os.kill(proc.pid, signal.SIGTERM)  # the guard alone, not its group
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        assert proc.returncode is None  # still there, waiting on its command
        go.touch()
        assert proc.wait(timeout=30) == 4
    finally:
        ours.close()


def test_when_the_tick_is_gone_every_process_below_the_guard_is_killed(tmp_path):
    """The command double-forks a child into a session of its own (its parent, a subshell, exits at
    once): re-parented to the guard, a subreaper, it dies with the rest once our end of the socket
    closes, as at the tick's SIGKILL."""
    marker = uuid.uuid4().hex
    ready = tmp_path / "ready"
    script = f"(setsid sleep 300 &); sleep 300 & touch '{ready}'; wait"
    proc, ours = start("/bin/sh", "sh", "-c", script, marker=marker)
    try:
        assert ours.recv(64) == guard.STARTED
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(marked(marker)) == 4  # the guard, sh and both sleeps (the subshell is gone)
        ours.close()
        assert proc.wait(timeout=30) == 137
        assert wait_until_gone(marker) == []
    finally:
        ours.close()
        for pid in marked(marker):
            os.kill(pid, signal.SIGKILL)


def test_below_finds_grandchildren_through_proc(tmp_path):
    marker = uuid.uuid4().hex
    ready = tmp_path / "ready"
    child = subprocess.Popen(["/bin/sh", "-c", f"sleep 300 & touch '{ready}'; wait"],
                             env={**os.environ, "GUARD_TEST": marker})
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        found = guard.below(os.getpid())
        assert child.pid in found
        assert set(marked(marker)) <= set(found) and len(marked(marker)) == 2  # sh and its sleep
        assert guard.below(child.pid) == [p for p in marked(marker) if p != child.pid]
    finally:
        for pid in marked(marker):
            os.kill(pid, signal.SIGKILL)
        child.wait(timeout=30)
