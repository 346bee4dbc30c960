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
import subprocess
import sys
from pathlib import Path

import pytest

from .modes import MODES
from .test_engine import agent, git, make_ws

PY = sys.executable
SRC = str(Path(__file__).resolve().parents[2])


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
