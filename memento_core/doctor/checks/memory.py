"""The memory check: every write into memory/ went through `memento memory write`."""

from __future__ import annotations

from ...memory import unattributed_writes
from ..context import Context
from ..findings import WARNING, CheckResult, Finding


def check_memory_writes(c: Context) -> CheckResult:
    """Raw writes into memory/ by a worker that bypassed `memento memory write` (last 7 days)."""
    found = unattributed_writes(c.ws, now=c.now)
    if not found:
        return "memory: every write of the last 7 days went through `memento memory write`"
    return [Finding(WARNING, "memory-writes",
                    f"memory: unattributed write by {w.task} (commit {w.commit[:7]}): {', '.join(w.paths)} "
                    "— the worker should use `memento memory write`", "memory/")
            for w in found]
