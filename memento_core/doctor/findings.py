"""What the doctor reports: a :class:`Finding` per thing it found, and the exit code they make."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from ..errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK

CRITICAL, WARNING, INFO, OK = "CRITICAL", "WARNING", "INFO", "OK"
EXIT_CODES = {CRITICAL: EXIT_ERROR, WARNING: EXIT_ATTENTION, INFO: EXIT_OK, OK: EXIT_OK}


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found; ``path``/``line`` locate it when a file and line are known."""

    severity: str  # "CRITICAL" | "WARNING" | "INFO" | "OK"
    check: str
    message: str
    path: str | None = None
    line: int | None = None

    @property
    def text(self) -> str:
        """The message, prefixed with ``path:line:`` when a line is known."""
        if self.path and self.line:
            return f"{self.path}:{self.line}: {self.message}"
        if self.path and self.path not in self.message:
            return f"{self.path}: {self.message}"
        return self.message

    def __str__(self) -> str:
        return f"[{self.severity}] {self.text}"

    def to_dict(self) -> dict:
        return asdict(self)


def exit_code(findings: Iterable[Finding]) -> int:
    """0 healthy (OK and INFO only), 1 warnings, 2 critical."""
    return max((EXIT_CODES.get(f.severity, EXIT_OK) for f in findings), default=EXIT_OK)


# Each check returns a list of findings (problems), a string (all is well: one OK line with
# that text) or None (nothing to say, e.g. the checkpoint is missing and another check said so).
CheckResult = list[Finding] | str | None
