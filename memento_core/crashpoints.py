"""Named crash points for the crash-injection tests (SPEC §11, "nothing lost at any kill -9").

Inert unless the environment variable MEMENTO_CRASH_AT names a point when the
process starts; then reaching that point SIGKILLs the process on the spot, as a
power cut or the OOM killer would. Only tests set it.
"""

from __future__ import annotations

import os
import signal

_AT = os.environ.get("MEMENTO_CRASH_AT", "")

POINTS = (
    "tick:recovering",
    "tick:after-claim",
    "tick:agent-running",
    "tick:after-guards",
    "tick:after-verify",
    "tick:before-commit",
    "tick:after-commit",
    "tick:after-rollback",
    "commit:before-ref",
    "commit:before-index",
    "replay:before-ref",
    "replay:before-files",
    "rotate:after-archive",
    "write:MASTER_PLAN.md",
    "write:HUMAN_NOTES.md",
    "write:TICK_STATUS.md",
)


def crash_point(name: str) -> None:
    """Die here, now, if this is the point the test asked for."""
    if _AT and _AT == name:
        os.kill(os.getpid(), signal.SIGKILL)
