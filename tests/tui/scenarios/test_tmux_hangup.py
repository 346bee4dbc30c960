"""The dashboard never outlives its terminal (issue 38, item 4): a real tmux, its window killed.

A person runs `memento-tui` from the shell in a tmux window, presses `q` (or not),
and the window is killed (the SSH connection drops, `tmux kill-window`) right
after. Before, the dashboard was left running with PPID 1 on a deleted pty, often
burning a fifth of a core, forever. Judged in /proc: no process of it is left.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.tui.scenarios.tmux import Tmux, alive, dashboards, needs_tmux

pytestmark = needs_tmux


@pytest.fixture
def demo_project(tmp_path, git_env):
    root = tmp_path / "calc"
    subprocess.run([sys.executable, "-m", "memento_core.cli", "demo", str(root)], check=True, capture_output=True)
    return root


def gone_within(pids: list[int], seconds: float) -> list[int]:
    """The pids still alive after ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("after_q", [None, 0.0, 0.05, 0.1, 0.3, 1.0])
def test_killing_the_window_ends_the_dashboard_at_any_moment(demo_project, size, after_q):
    root = demo_project
    tmux = Tmux(["bash", "--norc", "--noprofile", "-i"], *size, env={"PS1": "$ "})
    left: list[int] = []
    try:
        tmux.wait_text("$")
        tmux.type(f"{sys.executable} -m memento_tui.app {root}")
        tmux.keys("Enter")
        tmux.wait_text("Tasks (8)")
        pids = dashboards(root)
        assert len(pids) == 1
        if after_q is not None:
            tmux.keys("q")
            time.sleep(after_q)  # the moment the terminal goes: while the dashboard shuts down
        tmux.kill_window()
        left = gone_within(pids, 15.0)
        assert not left, f"left running after its terminal went: {left} (q then {after_q} s)"
        assert dashboards(root) == []
    finally:
        for pid in left:  # never leave one behind for the next test
            subprocess.run(["kill", "-9", str(pid)], check=False)
        tmux.close()


def test_the_demo_leaves_no_folder_behind(tmp_path, git_env):
    """Issue 38 item 18: each `memento-tui --demo` left a memento-demo-* folder in /tmp. It goes
    with the dashboard (after the tick it may be running has finished)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    tmux = Tmux([sys.executable, "-m", "memento_tui.app", "--demo"], 120, 40, env={"TMPDIR": str(scratch)})
    try:
        tmux.wait_text("Tasks (8)")
        made = [p for p in scratch.iterdir() if p.name.startswith("memento-demo-")]
        assert len(made) == 1 and (made[0] / "calc" / "docs" / "MASTER_PLAN.md").exists()
        tmux.keys("q")
        deadline = time.monotonic() + 30
        while alive(tmux.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
            if alive(tmux.pid):  # a tick was running: q again closes (the tick finishes first); the
                # dashboard may close between the check and the keys, so tmux's server may be gone
                tmux.run("send-keys", "-t", "main", "q", check=False)
        assert not alive(tmux.pid)
        assert not made[0].exists(), sorted(p.name for p in made[0].rglob("*"))[:10]
    finally:
        tmux.close()
