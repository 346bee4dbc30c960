"""The command line says what it means (issue 14): prefixes that match the outcome, exit codes that
follow the meaning, the dashboard's errors the command line's. Real subprocesses (a command's own
words: commands/test_<name>.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.core.cli.runs import memento


def run(*argv: str, cwd: Path | None = None, env: dict | None = None, stdin=None,
        input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=120, stdin=stdin, input=input)


def tui(*args: str, **kw) -> subprocess.CompletedProcess:
    return run(sys.executable, "-m", "memento_tui.app", *args, **kw)


def test_memory_search_without_a_match_exits_1(words_ws: Path):
    r = memento("memory", "search", "no-such-words", "--project", str(words_ws))
    assert r.returncode == 1 and r.stdout == "[warn] no match for 'no-such-words' in memory/\n"


def test_cron_show_without_crontab_says_so_with_exit_1(words_ws: Path, tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()
    r = memento("cron", "show", str(words_ws), env={"PATH": str(empty), "MEMENTO_CRONTAB_FILE": ""})
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("[warn] no crontab to show: the `crontab` command is not installed")


def test_dashboard_and_status_agree_on_a_missing_directory(tmp_path: Path):
    missing = str(tmp_path / "nonexistent")
    a, b = tui(missing), memento("status", missing)
    assert (a.returncode, a.stderr) == (b.returncode, b.stderr) == (2, f"[error] {missing}: no such directory\n")


def test_dashboard_version():
    from memento_core import __version__

    r = tui("--version")
    assert (r.returncode, r.stdout) == (0, f"memento-tui {__version__}\n")


def _cron_daemon_seen() -> bool:
    """The truth, read here independently: a cron daemon among this machine's processes."""
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() in ("cron", "crond", "cronie", "fcron", "busybox-crond"):
                return True
        except OSError:
            continue
    return False


def test_cron_install_says_when_no_cron_daemon_would_run_the_entry(words_ws: Path, tmp_path: Path):
    tab = tmp_path / "crontab.txt"
    tab.write_text("")
    env = {"MEMENTO_CRONTAB_FILE": str(tab)}
    install, show = memento("cron", "install", str(words_ws), env=env), memento("cron", "show", str(words_ws), env=env)
    assert install.returncode == 0 and show.returncode == 0, install.stderr + show.stderr
    warning = "[warn] no cron daemon is running on this machine, so this entry will never tick"
    daemon = _cron_daemon_seen()
    assert (warning in install.stdout) is not daemon and (warning in show.stdout) is not daemon


def test_cron_daemon_detection_reads_process_names(tmp_path: Path):
    from memento_core.cron import daemon_running

    for pid, name in (("1", "init"), ("42", "bash"), ("self", "cron")):  # "self" is no pid
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "comm").write_text(name + "\n")
    assert daemon_running(tmp_path) is False
    (tmp_path / "77").mkdir()
    (tmp_path / "77" / "comm").write_text("crond\n")
    assert daemon_running(tmp_path) is True
    assert daemon_running(tmp_path / "missing") is True  # cannot tell: no warning
