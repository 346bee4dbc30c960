"""The git commands memento_core starts, seen where every one of them starts: git/run.py's call
of subprocess.run (every module of the git package, and every caller, runs git through run_git),
so a test counts them whichever module imported run_git by name."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from memento_core.git import run

# What run_git puts before a command's own arguments: the git binary, the hardening, -C root.
_ROOT_AT = 1 + len(run.HARDENING) + 1


class _Watched:
    """subprocess as git/run.py sees it while a test watches: its run records, then runs."""

    def __init__(self, seen: list, full: bool, where: Path | None, change: Callable | None):
        self.seen, self.full, self.where, self.change = seen, full, where, change

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    def run(self, argv, **kw):
        root, args = Path(argv[_ROOT_AT]), list(argv[_ROOT_AT + 1:])
        if self.where is None or root == self.where:
            self.seen.append(args if self.full else args[0])
        if self.change is not None:
            self.change(args, kw)
        return subprocess.run(argv, **kw)


def watch_git(monkeypatch, seen: list, *, full: bool = False, where: Path | None = None,
              change: Callable[[list[str], dict], None] | None = None) -> list:
    """From now on each git command memento_core runs is appended to ``seen``: its subcommand
    (``full``: all its arguments after git's own options), only those run in ``where`` when
    given. ``change(args, kwargs)`` may alter subprocess.run's keyword arguments (its
    ``input``) before the command runs. Returns ``seen``."""
    monkeypatch.setattr(run, "subprocess", _Watched(seen, full, where, change))
    return seen


def stop_watching_git(monkeypatch) -> None:
    """git/run.py runs git unwatched again."""
    monkeypatch.setattr(run, "subprocess", subprocess)
