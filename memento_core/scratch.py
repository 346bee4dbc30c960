"""What a project's own tools regenerate by themselves: scratch, not a person's file (SPEC §13).

A real project's test command writes as it runs: Python's bytecode (and
pytest's rewritten test modules) with their atomic-write temporaries
(``x.pyc.12345``), pytest's, mypy's, ruff's and hypothesis's caches,
coverage's data files and HTML report, nyc's ``.nyc_output/``, a JavaScript
runner's ``node_modules/.cache/`` and Vitest's ``node_modules/.vite/``,
eslint's ``.eslintcache``, tsc's ``*.tsbuildinfo``. None of it is a person's
work, whatever the ``.gitignore`` says about it (``*.pyc`` only, or nothing),
and none of it is ever a task's change. This module is the one rule that says
what is scratch; three places apply it:

* the sandbox's layout (sandbox/__init__.py): scratch is never bound
  read-only, so verify may create, rewrite and delete it as it would
  unconfined (a read-only ``X.pyc`` made pytest leave ``X.pyc.<pid>`` behind
  and Memento blame the task); ``node_modules/.cache/`` inside a person's
  read-only ``node_modules/`` is bound writable, ``.vite/`` likewise
  (:func:`nested_folders`);
* tick/kept.py: scratch is printed at the snapshot (a stat, both modes), and
  whatever of it the agent made or changed is removed before verify (a forged
  ``.pyc`` that Python would import instead of the source), never restored,
  never a person's file changed;
* the guards (git.changes.FileChange.scratch, tick/guards.task_change): a new
  scratch file is never in a task's change, so never "outside context_files"
  and never committed.

Only what git does not track can be scratch (a committed ``.pyc`` fixture is
the project's), and only a regular file or a real folder: a symbolic link or a
FIFO named like a cache is whoever made it, never followed (:func:`is_scratch`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

# Folders a tool fills and rebuilds on its own: everything below one is scratch (coverage.py's
# HTML report and nyc's raw data included: a test command that writes them runs twice).
CACHE_FOLDERS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
                           "htmlcov", ".nyc_output"})
# A cache folder that is scratch only inside another folder: a JavaScript runner's in node_modules/
# (find-cache-dir's .cache: ava, babel-loader, nyc; Vite's and Vitest's .vite).
NESTED_CACHES = (("node_modules", ".cache"), ("node_modules", ".vite"))
# Aider's repository map, rebuilt by aider at every start (its ``.aider*`` is in init's .gitignore).
_TOOL_FOLDER_PREFIXES = (".aider.tags.cache",)
# Files: bytecode and its atomic-write temporaries (importlib: ``x.pyc.<id>``, pytest: ``x.pyc.<pid>``),
# coverage's data files (``.coverage``, ``.coverage.<host>.<pid>.<n>`` of parallel runs, its sqlite
# journal ``.coverage-journal``; never ``.coveragerc``), eslint's cache, tsc's incremental build info.
_FILE = re.compile(r"(?s:.*\.py[co](\.\d+)?|\.coverage|\.coverage[.-].*|\.eslintcache|.*\.tsbuildinfo)")
_BYTECODE = re.compile(r"(?s:.*\.py[co](\.\d+)?)")


def is_bytecode(rel: str) -> bool:
    """Whether ``rel`` names Python bytecode (or its atomic-write temporary): scratch that Python
    imports in place of its source when the stamp in its header says so (tick/kept.remove_bytecode)."""
    return bool(_BYTECODE.fullmatch(rel.rstrip("/").rpartition("/")[2])) and not rel.endswith("/")


def is_scratch_name(rel: str) -> bool:
    """Whether the path ``rel`` (relative to the work tree, / separated, a folder may end in /)
    names scratch by its name alone: below or at a cache folder, or a cache file."""
    parts = [p for p in rel.strip("/").split("/") if p not in ("", ".")]
    if not parts:
        return False
    for i, part in enumerate(parts):
        if part in CACHE_FOLDERS or part.startswith(_TOOL_FOLDER_PREFIXES):
            return True
        if any(part == outer and i + 1 < len(parts) and parts[i + 1] == inner for outer, inner in NESTED_CACHES):
            return True
    return bool(_FILE.fullmatch(parts[-1])) and not rel.endswith("/")


def is_scratch(root: Path | str, rel: str) -> bool:
    """Whether ``rel`` is scratch here: its name says so (:func:`is_scratch_name`) and what stands
    there is a regular file or a real folder (never a link, a FIFO, a socket or a device: those
    are not a tool's cache, whoever made them). A path that is gone is judged by its name."""
    if not is_scratch_name(rel):
        return False
    try:
        mode = os.lstat(os.path.join(os.fspath(root), rel.strip("/"))).st_mode
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def nested_folders(root: Path | str, entries) -> list[str]:
    """The nested cache folders (``node_modules/.cache/``, ``node_modules/.vite/``) below the
    person's folders ``entries`` (relative paths, a trailing / or not, as git lists them): each
    ``<entry>/<cache>/`` whose entry is a real folder named ``node_modules`` and whose cache
    folder is a real folder or nothing yet (never a link, never a file: not a tool's cache)."""
    found = []
    top = os.fspath(root)
    for entry in sorted({e.strip("/") for e in entries}):
        parts = entry.split("/")
        for outer, inner in NESTED_CACHES:
            if parts[-1] != outer or is_scratch_name(entry):
                continue
            folder = os.path.join(top, *parts)
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    continue
                if not stat.S_ISDIR(os.lstat(os.path.join(folder, inner)).st_mode):
                    continue
            except FileNotFoundError:
                pass  # none yet: a tool makes it on its first run
            except OSError:
                continue
            found.append(f"{entry}/{inner}/")
    return found
