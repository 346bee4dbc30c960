"""Helpers for the memory tests: git in memory/ and the real CLI as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memento_core.workspace import Workspace

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "memory_journal_2026-05-01.md"  # a day's journal


def mem_git(ws: Workspace, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws.memory_dir), *args], capture_output=True, text=True,
                          check=True).stdout


def memento(ws: Workspace, *args: str, stdin: str | None = None, env: dict | None = None):
    """`python -m memento_core.cli …` in the workspace, as a worker would run it."""
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=ws.root, input=stdin,
                          capture_output=True, text=True, env=env)


def commit_count(ws: Workspace) -> int:
    return int(mem_git(ws, "rev-list", "--count", "HEAD").strip())


def put(ws, rel: str, text: str) -> None:
    """Write ``text`` at ``rel`` in memory/ by hand (uncommitted), its folders made."""
    path = ws.memory_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
