"""README's "Your first project", read from the README itself: its plan and its command lines.

Tests that walk the first project (or break it the way a person does) take the
plan from here, so the README cannot drift from what the tests prove.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def section(title: str) -> str:
    """The README's text under ``## title`` up to the next level-2 heading."""
    out: list[str] = []
    inside, fenced = False, False
    for line in README.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            inside = line.rstrip("\n") == f"## {title}"
        if inside:
            out.append(line)
    assert out, f"README.md has no section {title!r}"
    return "".join(out)


def blocks(title: str, lang: str) -> list[str]:
    """The fenced blocks of ``lang`` in the README's section ``title``, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", section(title), flags=re.S)


def first_plan() -> str:
    """The plan README's first project tells a person to write (its one markdown block)."""
    (plan,) = blocks("Your first project", "markdown")
    return plan


def commands(title: str = "Your first project") -> list[list[str]]:
    """The `memento …` and `git …` lines of the section's bash blocks, comments cut, as argv."""
    import shlex

    out = []
    for block in blocks(title, "bash"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] in ("memento", "git"):
                out.append(words)
    return out


def write_plan(root: Path, text: str | None = None) -> None:
    """The README's plan (or ``text``) over the one `memento init` wrote, committed as a person would."""
    (root / "docs" / "MASTER_PLAN.md").write_text(first_plan() if text is None else text, encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "my plan"], cwd=root, check=True)


def memento(root: Path, *args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The real command line, run in ``root`` as a person types it."""
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=root, env=env or os.environ.copy(),
                          capture_output=True, text=True, timeout=180, input=stdin)


def tick(root: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """What cron runs: `python -m memento_core.tick`, in ``root``."""
    return subprocess.run([sys.executable, "-m", "memento_core.tick"], cwd=root, env=env or os.environ.copy(),
                          capture_output=True, text=True, timeout=180)
