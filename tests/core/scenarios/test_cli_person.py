"""Small promises of the command line to a person (issue 25, item 10): `memento note … -`
reads standard input, `memento report` in a terminal names commands rather than dashboard
keys, and the .gitignore Memento writes keeps the virtual environment out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def memento(*args: str, cwd: Path, stdin: str | None = None, env: dict | None = None):
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_a_dash_reads_the_note_from_standard_input(tmp_path, git_identity):
    root = tmp_path / "proj"
    assert memento("init", str(root), cwd=tmp_path).returncode == 0
    r = memento("note", "--task", "T-101", "-", str(root), cwd=tmp_path, stdin="first line\nsecond line\n")
    assert r.returncode == 0, r.stderr
    notes = (root / "docs" / "HUMAN_NOTES.md").read_text()
    assert "→ T-101\nfirst line\nsecond line\n" in notes
    assert "→ T-101\n-\n" not in notes


def test_the_report_in_a_terminal_names_commands_not_keys(tmp_path, git_identity):
    root = tmp_path / "calc"
    env = {"MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab")}
    assert memento("demo", str(root), cwd=tmp_path, env=env).returncode == 0
    memento("resume", cwd=root, env=env)
    subprocess.run(["git", "commit", "-qam", "resume"], cwd=root, check=True)
    assert memento("tick", cwd=root, env=env).returncode == 0  # a passed task nobody acknowledged
    r = memento("report", cwd=root, env=env)
    assert r.returncode == 1
    assert "then `memento ack`" in r.stdout and "acknowledge (a)" not in r.stdout
    assert "`memento cron install`" in r.stdout and "o auto-tick" not in r.stdout


def test_the_gitignore_keeps_the_virtual_environment_out(tmp_path, git_identity):
    root = tmp_path / "proj"
    assert memento("init", str(root), cwd=tmp_path).returncode == 0
    assert ".venv/" in (root / ".gitignore").read_text().splitlines()
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()  # the README makes one here
