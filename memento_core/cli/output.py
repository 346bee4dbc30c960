"""What the command line prints: ``[ok]``/``[warn]``/``[error]`` lines, safe text, the exit codes.

Human output lines start with ``[ok]``, ``[warn]`` or ``[error]``; errors go to
stderr. Text that comes from files goes through :func:`safe_text` first.
"""

from __future__ import annotations

import sys

from ..errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK
from ..lines import safe_text

__all__ = ["EXIT_ATTENTION", "EXIT_ERROR", "EXIT_OK", "bar", "error", "ok", "plural", "safe_block", "safe_text",
           "warn"]


def ok(message: str) -> None:
    print(f"[ok] {message}")


def warn(message: str) -> None:
    print(f"[warn] {message}")


def error(message: str) -> None:
    print(f"[error] {message}", file=sys.stderr)


def safe_block(text: str) -> str:
    """Multi-line text from files, each line made safe and the line breaks kept."""
    return "\n".join(safe_text(line) for line in text.split("\n"))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def bar(done: int, total: int, width: int) -> str:
    """A plain-text progress bar that survives pipes and logs."""
    filled = round(width * done / total) if total else 0
    return "█" * filled + "░" * (width - filled)
