"""What the tick writes into a status entry besides its fields: the worker's report, tails, the sha."""

from __future__ import annotations

import re
from pathlib import Path

from ..lines import read_regular_or_none
from ..locks import locked_edit
from ..status_log import VERIFY_NOT_RUN

ERROR_TAIL_LINES = 20
# A SUCCESS entry is written before its commit exists; the sha replaces this afterwards.
PENDING_COMMIT = "(recorded after the commit)"


def fill_commit(status_path: Path, sha: str) -> None:
    """Put the commit's sha into the entry that was written before the commit existed."""

    def transform(data: bytes) -> bytes | None:
        text = data.decode("utf-8")
        field = f"- **Git Commit**: {PENDING_COMMIT}"
        # The field's own line, not the same words inside a field after it (a worker's Outputs).
        idx = 0 if text.startswith(field) else text.rfind("\n" + field) + 1
        if idx == 0 and not text.startswith(field):
            return None
        start = idx + len("- **Git Commit**: ")
        return (text[:start] + f"`{sha}`" + text[start + len(PENDING_COMMIT):]).encode("utf-8")

    locked_edit(status_path, transform)


def read_tick_result(path: Path) -> dict[str, str]:
    """The worker's Outputs and Error Analysis sections from .memento/tick_result.md."""
    # Never through a link (it could point at any file of a person's), never a FIFO (SPEC §13).
    data = read_regular_or_none(path, limit=80_000)
    if data is None:
        return {}
    text = data.decode("utf-8", errors="replace")[:20_000]
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = line.strip().lstrip("#").strip().lower()
        if line.lstrip().startswith("#") and heading in ("outputs", "error analysis"):
            current = heading.replace(" ", "_")
            sections[current] = []
        elif current:
            sections[current].append(line.strip().lstrip("-* ").strip())
    return {k: "; ".join(x for x in v if x)[:1000] for k, v in sections.items() if any(v)}


def tail_lines(text: str, n: int = ERROR_TAIL_LINES) -> str:
    """The last ``n`` non-blank lines of the command's own output (the error tail of a failed attempt)."""
    return "\n".join(_output_lines(text)[-n:])


def last_line(text: str) -> str:
    """The last non-blank line, without backticks, for the one-line Verify Output field."""
    lines = _output_lines(text)
    return lines[-1].strip().replace("`", "'")[:200] if lines else ""


def _output_lines(text: str) -> list[str]:
    """What the command printed: Memento's own ``[memento] …`` lines in the log (a process it
    stopped, say) are not the command's output."""
    return [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("[memento] ")]


def failure_output(output: str, reason: str, exit_code: int | None) -> str:
    """The Verify Output field of a failed attempt: the output's last line with the exit code;
    without output, the reason, and the exit code only where the reason does not say it already;
    VERIFY_NOT_RUN when verify never ran (the agent or a guard failed first)."""
    line = last_line(output)
    code = "none" if exit_code is None else str(exit_code)
    if line:
        return f"`{line}` (exit code {code})"
    if exit_code is None and not reason.startswith("verify"):
        return VERIFY_NOT_RUN  # never "(exit code 0)" of an agent when verify did not run
    said = exit_code is None or re.search(rf"\bcode {exit_code}\b", reason) is not None
    shown = reason.strip().replace("`", "'")[:200]
    return f"`{shown}`" if said else f"`{shown}` (exit code {code})"
