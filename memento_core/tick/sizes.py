"""The size limits of SPEC §13 that hold with or without a sandbox.

* ``max_diff_bytes`` (Meta, default 5 MB): the bytes a task's change adds,
  binary files included. ``max_diff_lines`` alone let a 100 MB binary through
  as ``+0 -0``.
* A rollback copies at most git/rollback.py's ``ROLLBACK_COPY_LIMIT`` of created files
  (the patch of tracked files is always written); save_rollback lists what it
  did not copy in ``NOT_COPIED.txt``.
* A tick log keeps its first and last :data:`~memento_core.agents.logcap.KEEP`
  bytes (agents/logcap.py).
"""

from __future__ import annotations

from pathlib import Path

from ..git.changes import added_bytes


def diff_bytes_reason(root: Path, base: str | None, touched, limit: int, *, after_verify: bool = False) -> str:
    """'' unless the task's change adds more than ``limit`` bytes."""
    size = added_bytes(root, base, touched)
    if size <= limit:
        return ""
    who = "verify's change" if after_verify else "diff"
    return f"{who} too large: {_mb(size)} added > max_diff_bytes {_mb(limit)} (binary files count)"


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n} bytes"
