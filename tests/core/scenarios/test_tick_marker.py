"""Nothing leads the agent back to its tick or to the person (SPEC §13 "Without a sandbox"), and a
tick its agent stopped is stale like a dead one.

Real ticks as cron runs them (`python -m memento_core.tick`), hostile agents from tests/agents/
through the `command` preset, a real tmux server on a private socket; judged in the agent's own
environment, in /proc, on disk and in git.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from tests.core.modes import MODES

from .test_engine import _wait_for, agent, git, make_ws

PY = sys.executable
SRC = str(Path(__file__).resolve().parents[3])


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def cron_tick(root: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    return subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(root)], env={**base, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def writable(ws, path: Path) -> None:
    """The agent's scratch folder outside the project, writable in the sandbox too (its /tmp is private)."""
    ws.config_path.write_text(ws.config_path.read_text() + f'writable = ["{path}"]\n')
    git(ws.root, "commit", "-qam", "scratch folder")


@pytest.fixture
def tmux_server(tmp_path):
    """A person's tmux server on a private socket: (socket path, the $TMUX value pointing at it)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    sock = tmp_path / "tmux.sock"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "-s", "person", "-n", "person", "sleep 600"], check=True)
    pid = subprocess.run(["tmux", "-S", str(sock), "display-message", "-p", "#{pid}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        yield sock, f"{sock},{pid},0"
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)


def windows(sock: Path) -> list[str]:
    out = subprocess.run(["tmux", "-S", str(sock), "list-windows", "-a", "-F", "#{window_name}"],
                         capture_output=True, text=True).stdout
    return out.split()


# ---------------------------------------------------------------- no tick pid, no TMUX


@pytest.mark.parametrize("sandbox", MODES)
def test_the_agent_learns_no_tick_pid_and_no_tmux_from_its_environment(tmp_path, sandbox, tmux_server):
    sock, tmux = tmux_server
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ws = make_ws(tmp_path, agent("reaches_for_tmux.py", str(scratch / "seen.json")), sandbox=sandbox)
    writable(ws, scratch)
    person = {"TMUX": tmux, "TMUX_PANE": "%0", "SSH_AUTH_SOCK": str(tmp_path / "agent.sock"),
              "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent", "DISPLAY": ":0", "STY": "1.pts-0",
              "GITHUB_TOKEN": "ghp_secret"}
    # Given $TMUX, this agent does open a window in the person's server (outside any tick).
    control = tmp_path / "control"
    control.mkdir()
    subprocess.run([PY, str(Path(SRC) / "tests" / "agents" / "reaches_for_tmux.py"), str(control / "seen.json")],
                   cwd=control, env={**os.environ, **person, "MEMENTO_TASK_ID": "T-0"}, check=True, timeout=60)
    assert json.loads((control / "seen.json").read_text())["tmux_opened"] is True
    assert sorted(windows(sock)) == ["agent", "person"]
    subprocess.run(["tmux", "-S", str(sock), "kill-window", "-t", "agent"], check=True)
    markers = []
    for _ in range(2):
        tick = cron_tick(ws.root, person)
        out, err = tick.communicate(timeout=120)
        assert tick.returncode == 0, (out, err)
        seen = json.loads((scratch / "seen.json").read_text())
        env = seen["env"]
        assert not {"TMUX", "TMUX_PANE", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "STY",
                    "GITHUB_TOKEN"} & env.keys()
        assert seen["tmux_opened"] is None and windows(sock) == ["person"]  # the person's window, alone
        marker = env["MEMENTO_TICK"]
        # A token, no pid: neither the tick's pid nor its start time is in it.
        assert marker.startswith("tick-") and len(marker) >= 37 and str(tick.pid) not in marker
        if sandbox == "none":  # unconfined the agent can read the tick's record: it keeps the same token
            assert seen["recorded"] == marker
            assert tick.pid in [pid for pid, _ in seen["chain"]]
            assert not any(str(start) in marker for _, start in seen["chain"] if start > 99)
        markers.append(marker)
        ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-1`", "- [ ] `T-1`"))
        git(ws.root, "commit", "-qam", "again")
    assert markers[0] != markers[1]  # one per tick


# ---------------------------------------------------------------- a stopped tick


def state_of(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()[0].decode()


def gone(pid: int) -> bool:
    return state_of(pid) in (None, "Z", "X")


def of_project(root: Path) -> list[int]:
    """Living processes whose environment names the project (what a tick started there)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or gone(int(name)):
            continue
        try:
            env = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if f"MEMENTO_PROJECT={root}".encode() in env.split(b"\0"):
            found.append(int(name))
    return found


def ran(root: Path) -> subprocess.CompletedProcess:
    tick = cron_tick(root)
    out, err = tick.communicate(timeout=120)
    return subprocess.CompletedProcess(tick.args, tick.returncode, out, err)


def test_a_tick_its_agent_stopped_is_taken_over_after_stale_lock_timeout_and_alerted(tmp_path):
    from memento_core.notify import current_events
    from memento_core.state import TickState
    from memento_core.status_log import parse_status
    from tests.core.notifyhelp import Receiver, with_notify

    once, pidfile = tmp_path / "once", tmp_path / "pids"
    ws = make_ws(tmp_path, agent("stops_its_tick.py", str(once), str(pidfile)))
    ws.plan_path.write_text(ws.plan_path.read_text().replace("stale_lock_timeout: 15min", "stale_lock_timeout: 3s"))
    git(ws.root, "commit", "-qam", "a short stale_lock_timeout")
    receiver = Receiver()
    receiver.start()
    with_notify(ws, receiver.url(), events='["stale_tick"]')
    try:
        _stopped_then_taken_over(ws, once, pidfile, receiver, current_events, TickState, parse_status)
    finally:
        receiver.close()


def _stopped_then_taken_over(ws, once, pidfile, receiver, current_events, TickState, parse_status):
    first = cron_tick(ws.root)
    try:
        _wait_for(lambda: pidfile.exists() and state_of(first.pid) == "T", 60)
        agent_pid, tick_pid = map(int, pidfile.read_text().split())
        assert tick_pid == first.pid
        # Within stale_lock_timeout: skipped, and cron.log says the holder is stopped.
        early = ran(ws.root)
        assert early.returncode == 0 and "previous tick still running" in early.stdout, early
        assert state_of(first.pid) == "T"
        # Past it, a tick takes over (polled: each tick looks again; none waits for the clock).
        later = early
        for _ in range(200):
            if "previous tick still running" not in later.stdout:
                break
            later = ran(ws.root)
        assert later.returncode == 0, (later.stdout, later.stderr)
        assert "Traceback" not in later.stderr
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    # Nothing of the stopped tick is left, stopped or not: its agent is gone too.
    assert gone(agent_pid) and gone(tick_pid) and of_project(ws.root) == []
    # Recovered as after a kill -9: the broken attempt rolled back and counted, then done honestly.
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == ("x", 1)
    assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    assert "broken\n" not in {git(ws.root, "show", f"{sha}:hello.txt") for sha in
                              git(ws.root, "rev-list", "HEAD", "--", "hello.txt").split()}
    found = parse_status(ws.status_path)
    taken = [e for e in found if "STALE TICK" in (e.field("Event") or "")]
    assert len(taken) == 1 and f"pid {tick_pid}" in taken[0].field("Reason")
    assert "stopped (SIGSTOP)" in taken[0].field("Reason")
    assert any(e.status == "STALE" and "T-1" in (e.field("Event") or "") for e in found)
    # The person is told: `.memento_alert`, state.json, the notification's event; until `memento ack`.
    alert = ws.alert_path.read_text()
    assert f"problem: the previous tick (pid {tick_pid}) was stopped (SIGSTOP)" in alert
    events = current_events(ws, parse_plan(ws.plan_path), TickState.load(ws), found)
    assert [e.kind for e in events if e.kind == "stale_tick"] == ["stale_tick"]
    shown = subprocess.run([PY, "-m", "memento_core.cli", "report", str(ws.root)], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": SRC})
    assert f"the previous tick (pid {tick_pid}) was stopped" in shown.stdout, shown  # under "needs you"
    (sent,) = receiver.received  # at the loopback receiver, once
    assert "a stopped tick was taken over" in sent["title"] and f"pid {tick_pid}" in sent["message"]
    # The lock works afterwards: the next tick runs (nothing to do) and the alert stays.
    after = ran(ws.root)
    assert after.returncode == 0 and "still running" not in after.stdout, after
    assert "problem: the previous tick" in ws.alert_path.read_text() and len(receiver.received) == 1
    acked = subprocess.run([PY, "-m", "memento_core.cli", "ack", str(ws.root)], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": SRC})
    assert acked.returncode == 0, acked
    assert not TickState.load(ws).stale_tick
    assert ran(ws.root).returncode == 0
    assert not ws.alert_path.exists()


@pytest.mark.parametrize("sandbox", [m for m in MODES if m.values[0] == "bwrap"])
def test_in_the_sandbox_the_agent_finds_no_tick_to_stop(tmp_path, sandbox):
    once, pidfile = tmp_path / "once", tmp_path / "pids"
    ws = make_ws(tmp_path, agent("stops_its_tick.py", str(once), str(pidfile)), sandbox=sandbox)
    done = ran(ws.root)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1)  # an honest failure: its parent chain ends in the sandbox
    assert not pidfile.exists() and of_project(ws.root) == []
