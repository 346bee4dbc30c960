"""No orphan after kill -9 with the real Claude Code (SPEC §13), unconfined and confined.

The mock model's first turn runs, through Claude Code's own Bash tool, a writer
that appends to ``fg.txt`` every 70 ms and, before it, a second one in a
subshell, ``setsid`` and ``env -i`` (a double fork: no group, session or marker
of the run's) appending to ``escaped.txt``. Unconfined, a person lets the CLI run
Bash (``--allowedTools Bash``); confined, the preset gives it every tool. While
both write, the tick is killed with SIGKILL. The next tick, killed the instant
its recovery starts, finds neither writer alive; the tick after it recovers and
reruns the task (the model now writes hello.txt): it passes, and neither file
comes back. Before the guard (agents/guard.py), unconfined, the escaped writer
went on writing, and the rerun was failed for "a person's untracked file" it
had written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import SANDBOX, WHY_UNCONFINED, configure, make_workspace, script_edit
from .mock_model import Script

pytestmark = pytest.mark.e2e

WRITER = """import os, sys, time
while True:
    with open(sys.argv[1], "a") as fh:
        fh.write(f"{os.getpid()} {time.time():.3f}\\n")
    time.sleep(0.07)
"""


def tick(root, crash_at: str = "", wait: bool = True):
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    if crash_at:
        env["MEMENTO_CRASH_AT"] = crash_at
    argv = [sys.executable, "-m", "memento_core.tick", "--project", str(root)]
    if not wait:
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


def writers(root) -> list[int]:
    """Live processes running the project's writer.py (as the host sees them, sandbox or not)."""
    needle = str(root / "writer.py").encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in argv and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_killed_tick_leaves_no_writer_of_the_real_cli(run, monkeypatch, sandbox):
    if sandbox == "bwrap" and SANDBOX != "bwrap":
        pytest.skip(f"the sandbox cannot run here: {WHY_UNCONFINED}")
    root = make_workspace(run, "claude", configure(run, "claude", monkeypatch), sandbox=sandbox)
    if sandbox == "none":  # a person who lets the CLI run its shell without asking
        toml = root / "memento.toml"
        toml.write_text(toml.read_text().replace("[agent]\n", '[agent]\nextra_args = ["--allowedTools", "Bash"]\n', 1))
    (root / "writer.py").write_text(WRITER)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "the writer"], cwd=root, check=True)
    run.mock.script = Script(command=f"( setsid env -i python3 {root / 'writer.py'} {root / 'escaped.txt'} "
                                     f"</dev/null >/dev/null 2>&1 & ) ; python3 {root / 'writer.py'} {root / 'fg.txt'}")
    killed = tick(root, wait=False)
    try:
        deadline = time.monotonic() + 120
        while not ((root / "fg.txt").exists() and (root / "escaped.txt").exists()):
            assert killed.poll() is None and time.monotonic() < deadline, "the writers never started"
            time.sleep(0.1)
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        script_edit(run, "hello from the mock")

        crashed = tick(root, crash_at="tick:recovering")
        assert crashed.returncode == -signal.SIGKILL, (crashed.stdout, crashed.stderr)
        assert writers(root) == []  # none alive when the recovery starts
        sizes = [(root / name).stat().st_size for name in ("fg.txt", "escaped.txt")]
        time.sleep(0.5)
        assert [(root / name).stat().st_size for name in ("fg.txt", "escaped.txt")] == sizes

        recovered = tick(root)
        assert "T-101 passed" in recovered.stdout, recovered.stdout + recovered.stderr
        time.sleep(0.5)
        assert not (root / "fg.txt").exists() and not (root / "escaped.txt").exists()
        assert writers(root) == []
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
        for pid in writers(root):
            os.kill(pid, signal.SIGKILL)
