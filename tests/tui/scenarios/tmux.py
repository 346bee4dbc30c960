"""The dashboard in a real tmux, driven as a person drives it: send-keys in, capture-pane out.

Each session runs on a tmux server of its own (a private socket, `-f /dev/null`:
tmux's defaults, no one's ~/.tmux.conf), so the keys arrive as tmux delivers them
(ctrl+enter as a plain enter) and nothing is shared with another test. The
dashboard is the pane's own process (`exec`), so the pane's pid is the
dashboard's pid; :meth:`Tmux.close` kills the server and checks /proc.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (read from /proc, as a person's `ps` would)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def dashboards(root: Path) -> list[int]:
    """Pids of every dashboard process whose command line names ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"memento_tui.app" in argv and str(root).encode() in argv and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


class Tmux:
    """One tmux server with one session running ``argv`` in a window of ``width`` x ``height``."""

    def __init__(self, argv: list[str], width: int, height: int, env: dict[str, str] | None = None):
        self.folder = tempfile.mkdtemp(prefix="mt-")  # short: a socket path has a length limit
        self.socket = os.path.join(self.folder, "s")
        self.width, self.height = width, height
        extra = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "TERM": "tmux-256color", **(env or {})}
        command = "exec env " + " ".join(shlex.quote(f"{k}={v}") for k, v in extra.items()) + " " + \
            " ".join(shlex.quote(a) for a in argv)
        self.run("new-session", "-d", "-s", "main", "-x", str(width), "-y", str(height), command)
        self.pid = int(self.run("display-message", "-p", "-t", "main", "#{pane_pid}").strip())

    def run(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([TMUX, "-f", "/dev/null", "-S", self.socket, *args], capture_output=True,
                              text=True, timeout=30)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Keys by tmux's names (``Enter``, ``Escape``, ``F2``, ``C-Enter``, ``n``)."""
        for key in keys:
            self.run("send-keys", "-t", "main", key)

    def type(self, text: str) -> None:
        """Text typed literally, character by character as a terminal delivers it."""
        self.run("send-keys", "-t", "main", "-l", text)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "main", check=False)

    def wait_for(self, condition: Callable[[str], bool], timeout: float = 30.0, what: str = "") -> str:
        """Poll the screen until ``condition(screen)`` holds; the screen, or fail showing it."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"not on screen after {timeout} s: {what}\n{shown}")
            time.sleep(0.1)

    def wait_text(self, text: str, timeout: float = 30.0) -> str:
        return self.wait_for(lambda s: text in " ".join(s.split()), timeout, repr(text))

    def kill_window(self) -> None:
        """The terminal goes away: tmux closes the pane's pty (SIGHUP to its process)."""
        self.run("kill-window", "-t", "main", check=False)

    def close(self) -> None:
        self.run("kill-server", check=False)
        deadline = time.monotonic() + 10
        while alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive(self.pid):  # never leave a dashboard behind, whatever the test found
            os.kill(self.pid, 9)
        shutil.rmtree(self.folder, ignore_errors=True)


def dashboard_argv(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "memento_tui.app", *extra, str(root)]
