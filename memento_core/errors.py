"""Error values shared by the parsers and the command line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Exit codes of the tick and of every command (SPEC §4): 0 ran, 1 needs attention, 2 could not run.
EXIT_OK, EXIT_ATTENTION, EXIT_ERROR = 0, 1, 2


@dataclass(frozen=True)
class PlanError:
    """A problem in a workspace file, located by path and line (1-based; 0 = whole file)."""

    path: str
    line: int
    task_id: str | None
    message: str
    severity: str = "error"  # "error" | "warning"
    # "plan": the whole plan cannot run (PLAN INVALID); "task": only that task is never picked.
    scope: str = "plan"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        who = f"{self.task_id} " if self.task_id else ""
        return f"{where}: {who}{self.message}"


class MementoError(Exception):
    """A user-facing failure: the message is a sentence, printed without a traceback."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int = 0):
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(message)

    def __str__(self) -> str:
        msg = super().__str__()
        if self.path and self.line:
            return f"{self.path}:{self.line}: {msg}"
        if self.path and not msg.startswith(self.path):
            return f"{self.path}: {msg}"
        return msg


class EditConflict(MementoError):
    """A line edit could not be applied because the line changed meaningfully underneath it."""
