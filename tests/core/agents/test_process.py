"""agents/process.py: an agent's process group run, timed out, killed and waited for, nothing of it left
running; judged in /proc. run_agent above it is test_run's, the presets' argv tests/core/agents/presets/'s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from memento_core import agents
from memento_core.agents import (
    ProcResult,
    kill_group,
    run_in_group,
    terminate_running,
)
from memento_core.locks import file_lock

AGENTS = Path(__file__).resolve().parents[2] / "agents"
GRACE = 0.3


def pid_alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie waiting to be reaped is not running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _processes() -> list[tuple[int, bytes, int, int]]:
    """(pid, state, ppid, pgrp) of every process, from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        found.append((int(entry.name), fields[0], int(fields[1]), int(fields[2])))
    return found


def group_members(pgid: int) -> list[int]:
    """Living (not zombie) processes of group ``pgid``; a zombie waits for PID 1 to reap it."""
    return [
        pid for pid, state, _, pgrp in _processes() if pgrp == pgid and state not in (b"Z", b"X")
    ]


def our_children() -> list[int]:
    """Living processes whose parent is this test process."""
    me = os.getpid()
    return [pid for pid, state, ppid, _ in _processes() if ppid == me and state not in (b"Z", b"X")]


def marked_processes(mark: bytes) -> list[int]:
    """Living processes (other than us) whose environment carries ``mark``."""
    found = []
    for pid, state, _, _ in _processes():
        if pid == os.getpid() or state in (b"Z", b"X"):
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if mark in environ.split(b"\0"):
            found.append(pid)
    return found


@pytest.fixture(autouse=True)
def no_process_left_behind(monkeypatch):
    """Every process a test starts inherits a marker; none may outlive the test."""
    value = f"{os.getpid()}-{uuid.uuid4().hex}"
    monkeypatch.setenv("LEFTOVER_CHECK_MARK", value)
    before = set(our_children())
    yield
    assert agents.process._RUNNING == {}
    assert set(our_children()) <= before
    assert marked_processes(f"LEFTOVER_CHECK_MARK={value}".encode()) == []


# ------------------------------------------------------------------ running


def test_missing_binary_respects_the_given_path(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    result = run_in_group(
        ["python3", "-c", "pass"], cwd=tmp_path, log_path=tmp_path / "l", timeout=5, env=env
    )
    assert result.error == "'python3' not found on PATH"


def test_exit_code_and_both_streams_reach_the_log(tmp_path):
    log = tmp_path / "tick.log"
    result = run_in_group(
        [str(AGENTS / "exits_nonzero.py")], cwd=tmp_path, log_path=log, timeout=60
    )
    assert result == ProcResult(3, False, result.duration, result.pgid)
    assert not result.ok
    text = log.read_text()
    assert "working on it" in text and "error: the fake agent gave up" in text


def test_escape_sequences_are_logged_verbatim(tmp_path):
    log = tmp_path / "tick.log"
    log.write_text("earlier line\n")
    result = run_in_group([str(AGENTS / "prints_ansi.py")], cwd=tmp_path, log_path=log, timeout=60)
    assert result.exit_code == 0
    data = log.read_bytes()
    assert data.startswith(b"earlier line\n")  # appended, never truncated
    assert b"\x1b[31mred\x1b[0m [b]not bold[/b] [x] done\n" in data
    assert b"\x1b[2J\x1b]0;title\x07stderr line\n" in data
    assert b"last stdout line\n" in data


def test_timeout_kills_a_grandchild_that_ignores_sigterm(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    log = tmp_path / "tick.log"
    seen = []
    result = run_in_group(
        [str(AGENTS / "hangs_with_grandchild.py"), str(pidfile)],
        cwd=tmp_path,
        log_path=log,
        timeout=3,
        on_start=seen.append,
        grace=GRACE,
    )
    assert result.timed_out and result.exit_code is None and not result.ok
    assert seen == [result.pgid]
    assert pidfile.exists(), log.read_text()
    grandchild = int(pidfile.read_text())
    assert not pid_alive(grandchild)
    assert "timed out after 3s; stopping process group" in log.read_text()
    assert group_members(result.pgid) == []


def test_processes_left_running_after_exit_are_stopped(tmp_path):
    pidfile = tmp_path / "bg.pid"
    log = tmp_path / "tick.log"
    result = run_in_group(
        [str(AGENTS / "leaves_background.py"), str(pidfile)],
        cwd=tmp_path,
        log_path=log,
        timeout=60,
        grace=GRACE,
    )
    assert result.exit_code == 0 and not result.timed_out
    assert not pid_alive(int(pidfile.read_text()))
    assert "stopping processes left running" in log.read_text()


def test_kill_group_from_outside_marks_the_run_interrupted(tmp_path):
    pidfile = tmp_path / "grandchild.pid"

    def interrupt(pgid: int) -> None:
        # Stand-in for the tick's SIGTERM handler: the agent is up, stop it.
        script = f"import os,time\nwhile not os.path.exists({str(pidfile)!r}): time.sleep(0.01)"
        subprocess.run([sys.executable, "-c", script], timeout=60, check=True)
        assert kill_group(pgid, grace=GRACE) is True

    result = run_in_group(
        [str(AGENTS / "hangs_with_grandchild.py"), str(pidfile)],
        cwd=tmp_path,
        log_path=tmp_path / "tick.log",
        timeout=600,
        on_start=interrupt,
        grace=GRACE,
    )
    assert result.interrupted and not result.timed_out and result.exit_code is None
    assert not pid_alive(int(pidfile.read_text()))


def test_on_start_failure_still_leaves_no_process(tmp_path):
    def boom(pgid: int) -> None:
        raise RuntimeError("claim could not be written")

    with pytest.raises(RuntimeError):
        run_in_group(
            ["sleep", "600"],
            cwd=tmp_path,
            log_path=tmp_path / "l",
            timeout=600,
            on_start=boom,
            grace=GRACE,
        )


def test_stdin_is_devnull_without_a_prompt_and_cwd_is_used(tmp_path):
    out = tmp_path / "seen.txt"
    result = run_in_group(
        "cat > seen.txt; pwd >> seen.txt",
        shell=True,
        cwd=tmp_path,
        log_path=tmp_path / "l",
        timeout=60,
    )
    assert result.exit_code == 0
    assert out.read_text() == f"{tmp_path}\n"


def test_kill_group_refuses_our_own_group():
    with pytest.raises(ValueError):
        kill_group(os.getpgrp())


def test_the_tick_lock_descriptor_is_never_inherited(tmp_path):
    """SPEC §4: an agent holding the lock's descriptor would stop every later tick."""
    log = tmp_path / "tick.log"
    probe = ("import os, sys\n"
             "try:\n    os.fstat(int(sys.argv[1]))\n    print('INHERITED')\n"
             "except OSError:\n    print('NOT INHERITED')\n")
    with file_lock(tmp_path / "tick.lock") as fd:
        os.set_inheritable(fd, True)  # even a descriptor marked inheritable stays ours
        result = run_in_group([sys.executable, "-c", probe, str(fd)], cwd=tmp_path,
                              log_path=log, timeout=60)
    assert result.exit_code == 0, log.read_text()
    assert "NOT INHERITED" in log.read_text()


def test_sigterm_during_the_wait_stops_the_group_as_interrupted(tmp_path):
    """The tick's SIGTERM handler calls terminate_running while run_in_group waits."""
    pidfile = tmp_path / "grandchild.pid"
    # Sends us SIGTERM once the agent's grandchild is up (so while we wait on the agent).
    sender = ("import os, signal, sys, time\n"
              "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
              "os.kill(int(sys.argv[2]), signal.SIGTERM)\n")
    senders = []
    stopped = []

    def start_sender(pgid: int) -> None:
        argv = [sys.executable, "-c", sender, str(pidfile), str(os.getpid())]
        senders.append(subprocess.Popen(argv))

    def on_sigterm(signum, frame) -> None:  # what the tick's handler does
        stopped.extend(terminate_running(GRACE))

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        result = run_in_group(
            [str(AGENTS / "hangs_with_grandchild.py"), str(pidfile)],
            cwd=tmp_path,
            log_path=tmp_path / "tick.log",
            timeout=600,
            on_start=start_sender,
            grace=GRACE,
        )
    finally:
        for proc in senders:  # with our handler still in place, in case its signal is late
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        signal.signal(signal.SIGTERM, previous)
    assert stopped == [result.pgid]
    assert result.interrupted and not result.timed_out and result.exit_code is None
    assert not pid_alive(int(pidfile.read_text()))
    assert group_members(result.pgid) == []
    assert "timed out" not in (tmp_path / "tick.log").read_text()


def test_importing_the_agents_package_loads_nothing_of_the_tick():
    """The package's face stays light: the standard library and the small format modules."""
    code = ("import sys, memento_core.agents\n"
            "print(sorted(m for m in sys.modules if m.startswith('memento_core.')"
            " and not m.startswith('memento_core.agents')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.replace("'", '"')))
    assert loaded <= {"memento_core.config", "memento_core.config.model", "memento_core.errors", "memento_core.locks",
                      "memento_core.crashpoints", "memento_core.runlog", "memento_core.workspace",
                      "memento_core.durations", "memento_core.lines",
                      "memento_core.spending",  # Usage: the value the presets' parsers return
                      "memento_core.owned",  # what the ledger's writer remembers it wrote (SPEC §13)
                      # the package's own: its dataclasses' code, its patterns' code, their files
                      "memento_core.dataclass_code", "memento_core.regex_code", "memento_core.compiled_cache"}, loaded
