"""The real cron daemon runs a tick by itself (marker `cron`: skipped by default, run by .ci/run).

A demo project gets a one-minute entry in the user's crontab; the test waits
(at most 130 s) for cron to run a tick that completes the first task, then
removes the entry. The user's crontab is saved first and restored in
`finally`, whatever happens.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from memento_core import cron
from memento_core.demo import create_demo

# The cron tests share this user's crontab and the daemon: one worker runs them all, in turn
# (.ci/run runs the slow and cron tests with --dist loadgroup).
pytestmark = [pytest.mark.cron, pytest.mark.xdist_group("cron")]

DEADLINE = 130.0


def _cron_daemon_running() -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("cron", "crond"):
                    return True
            except OSError:
                continue
    return False


def _user_crontab() -> str | None:
    run = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else None


def _restore(saved: str | None) -> None:
    if saved is None:
        subprocess.run(["crontab", "-r"], capture_output=True)
    else:
        subprocess.run(["crontab", "-"], input=saved, text=True, check=True)


def _completed(root: Path) -> bool:
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True)
    return "memento: complete T-101" in log.stdout


def _ticks_running(root: Path) -> list[int]:
    """Tick processes cron started for ``root`` that are still alive."""
    found = []
    needle = f"--project\0{root}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"memento_core.tick" in cmdline and needle in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(shutil.which("crontab") is None, reason="no crontab binary (Debian package: cron)")
def test_cron_runs_a_tick_by_itself(tmp_path, monkeypatch):
    if not _cron_daemon_running():
        pytest.skip("the cron daemon is not running (.ci/run starts it)")
    monkeypatch.delenv(cron.CRONTAB_FILE_ENV, raising=False)
    root = create_demo(tmp_path / "demo")
    saved = _user_crontab()
    try:
        result = cron.install(root, "1min")
        assert result.schedule.fields == "* * * * *"
        deadline = time.monotonic() + DEADLINE
        cron_log = root / "logs" / "cron.log"

        def shown() -> str:
            return cron_log.read_text(errors="replace") if cron_log.exists() else "(no logs/cron.log)"

        # The task's commit comes before the tick's own last line (the tick goes on to its next
        # task, the housekeeping, the notifications): wait for both.
        while not (_completed(root) and "[ok] tick #1" in shown()) and time.monotonic() < deadline:
            time.sleep(2)
        assert _completed(root), f"no tick ran within {DEADLINE:g}s; logs/cron.log:\n{shown()}"
        assert "[ok] tick #1" in shown()
    finally:
        cron.remove(root)
        _restore(saved)
        # A tick cron started just before the removal may still be running: let it finish
        # before the temporary folder goes away.
        settle = time.monotonic() + 60
        while _ticks_running(root) and time.monotonic() < settle:
            time.sleep(0.5)
    assert _user_crontab() == saved
    assert not cron.installed(root)
