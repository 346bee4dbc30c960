"""Memento's own folders are real folders before the tick writes into them (SPEC §13).

An agent that replaces ``logs/`` or ``.memento/`` (or a folder below them) by a
file or by a symbolic link would otherwise make every later tick fail on its
first write (a crash loop: exit 2, the task left `[~]`) or write through the
link into a person's files. :func:`mend_own_folders` moves such an impostor
aside (renamed, never followed nor deleted) and makes the folder again; it
costs a few ``lstat`` calls when nothing is wrong.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

OWN_FOLDERS = (".memento", ".memento/claims", ".memento/records", "logs", "logs/rollback")


def mend_own_folders(root: Path) -> list[str]:
    """Move aside whatever stands where Memento's folders belong; the names it moved."""
    moved = []
    for rel in OWN_FOLDERS:
        path = Path(root) / rel
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            continue
        aside = path.with_name(f"{path.name}.not-a-folder-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.rename(path, aside)
            path.mkdir()
        except OSError:
            continue
        moved.append(f"{rel} -> {aside.name}")
    return moved
