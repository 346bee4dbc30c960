"""The tick's small file operations: read what may be gone, remove what may be gone, the log."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..locks import open_append


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes, or None when it cannot be read (gone, a folder, no permission) or is not
    a regular file: a FIFO, socket or device the agent put there is never opened to block on
    (SPEC §13), a symbolic link never followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return fh.read()
        except OSError:
            return None


def unlink(path: Path) -> None:
    """Remove ``path`` if it is there."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def append_log(path: Path, text: str) -> None:
    """Append Memento's own lines (``[memento] …``) to the tick log: never through a symbolic link
    the agent put there, nor through a hard link (the log is made a file of its own first, SPEC §13)."""
    with open_append(path, split=True) as fh:
        fh.write(text)


def tail(path: Path, start: int, limit: int = 64 * 1024) -> str:
    """What was written to ``path`` after byte ``start`` (at most the last ``limit`` bytes)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            fh.seek(max(start, size - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
