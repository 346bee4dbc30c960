"""What the command line prints: ``[ok]``/``[warn]``/``[error]`` lines, safe text, the exit codes.

Human output lines start with ``[ok]``, ``[warn]`` or ``[error]``; errors go to
stderr. Text that comes from files or agents goes through :func:`safe_text`
first: ok/warn/error apply it themselves, JSON goes through :func:`safe_json`.
"""

from __future__ import annotations

import sys

from ..errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK
from ..lines import plural, safe_text

__all__ = ["EXIT_ATTENTION", "EXIT_ERROR", "EXIT_OK", "bar", "error", "ok", "plural", "safe_block", "safe_json",
           "safe_text", "warn"]


def ok(message: str) -> None:
    print(f"[ok] {safe_block(message)}")


def warn(message: str) -> None:
    print(f"[warn] {safe_block(message)}")


def error(message: str) -> None:
    print(f"[error] {safe_block(message)}", file=sys.stderr)


def safe_json(doc, **kw) -> str:
    """``json.dumps(doc, ensure_ascii=False)``, with every character a terminal could act on
    (C1 controls such as CSI, DEL, bidi overrides: json escapes only C0) written as ``\\uXXXX``."""
    import json

    text = json.dumps(doc, ensure_ascii=False, **kw)
    return "".join(ch if ch == "\n" or ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)


def safe_doc(doc):
    """``doc`` (a command's JSON-like document) with every string in it :func:`safe_text`: for a
    renderer that prints its fields (titles, reasons, phase names: text from files and agents)."""
    if isinstance(doc, str):
        return safe_text(doc)
    if isinstance(doc, dict):
        return {k: safe_doc(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [safe_doc(v) for v in doc]
    return doc


def safe_block(text: str) -> str:
    """Multi-line text from files, each line made safe and the line breaks kept."""
    return "\n".join(safe_text(line) for line in text.split("\n"))


def bar(done: int, total: int, width: int) -> str:
    """A plain-text progress bar that survives pipes and logs."""
    filled = round(width * done / total) if total else 0
    return "█" * filled + "░" * (width - filled)
