"""The architect's prompt (SPEC §16): the blocked tasks with every failed attempt, the unread
notes, PROJECT_MAP.md and the plan, after the system prompt of scripts/architect_system_prompt.md."""

from __future__ import annotations

from ... import notes, status_log
from ...lines import read_bytes
from ...markdown.blocks import fenced
from ...plan.model import Plan
from ...prompt import read_capped, task_block
from ...workspace import Workspace

MAX_DOC_CHARS = 60_000  # the plan and the map; beyond that the architect reads the file itself
MAX_TAIL_LINES = 30


def system_prompt(ws: Workspace) -> str:
    """scripts/architect_system_prompt.md, or the bundled one when the project has none."""
    text = read_capped(ws.architect_prompt_path, MAX_DOC_CHARS)
    if text:
        return text
    from importlib import resources

    bundled = resources.files("memento_core").joinpath("templates", "architect_system_prompt.md")
    return bundled.read_text(encoding="utf-8").strip()


def all_entries(ws: Workspace, plan: Plan) -> list[status_log.TickEntry]:
    """The archived entries, then those of docs/TICK_STATUS.md: every recorded attempt."""
    archived = status_log.iter_status_archive(ws.root / plan.meta.status_archive_dir)
    return archived + status_log.parse_status(ws.status_path)


def build_architect_prompt(ws: Workspace, plan: Plan, *, include_system: bool = True) -> str:
    """The whole prompt as text (the system prompt first unless the preset takes it by flag)."""
    plan_text = read_bytes(ws.plan_path).decode("utf-8", errors="replace")  # never a FIFO (SPEC §13)
    out: list[str] = []
    if include_system:
        out += [system_prompt(ws), "", "---", ""]
    out += [f"# Architect run: {plan.title}", "", f"Work in `{ws.root}`. You may change only "
            "docs/MASTER_PLAN.md, docs/PROJECT_MAP.md and the read marks of docs/HUMAN_NOTES.md.", ""]
    out += blocked_section(ws, plan, plan_text)
    out += checks_section(ws)
    out += notes_section(ws)
    project_map = read_capped(ws.map_path, MAX_DOC_CHARS)
    out += ["## docs/PROJECT_MAP.md", "", *(fenced(project_map, "markdown") if project_map else ["(missing)"]), ""]
    out += ["## docs/MASTER_PLAN.md (as it is now)", "", *fenced(read_capped(ws.plan_path, MAX_DOC_CHARS), "markdown"),
            ""]
    return "\n".join(out).rstrip() + "\n"


def blocked_section(ws: Workspace, plan: Plan, plan_text: str) -> list[str]:
    blocked = [t for t in plan.tasks if t.status == "!"]
    if not blocked:
        return ["## Blocked tasks", "", "(none: the notes are your work)", ""]
    entries = all_entries(ws, plan)
    out = [f"## Blocked tasks ({len(blocked)})", ""]
    for task in blocked:
        attempts = status_log.failed_attempts(entries, task.id)
        out += [f"### {task.label}", "", *fenced(task_block(plan_text, task), "markdown"), "",
                f"Failed attempts of {task.id} ({len(attempts)}):", ""]
        for n, entry in enumerate(attempts, 1):
            out += attempt_lines(n, entry)
        if not attempts:
            out += ["(no failed attempt recorded: it was blocked by hand or its entries are gone)", ""]
    return out


def checks_section(ws: Workspace) -> list[str]:
    """Failing required checks on the phases' pull requests (SPEC §19): blocked work too."""
    from ...forge import pulls

    failing = [r for r in pulls.load(ws).values() if r.checks == "failing" and r.state in ("open", "merged")]
    if not failing:
        return []
    out = [f"## Failing checks on pull requests ({len(failing)})", "",
           "Each phase's work is on its branch and in one pull request; a required check fails on it. "
           "Add a task to the phase that fixes it, or a note to the task that caused it and set it back "
           "to pending: its next commit updates the same pull request.", ""]
    for r in failing:
        out.append(f"- {r.phase}: pull request #{r.number} ({r.url or 'no address'}), branch {r.branch}, "
                   f"head {r.head[:12] or '?'}")
        out += [f"  - failing: {c.name}" + (f" ({c.url})" if c.url else "") for c in r.failing]
    out.append("")
    return out


def attempt_lines(n: int, entry: status_log.TickEntry) -> list[str]:
    """One failed attempt: its status, reason, verify output, the worker's analysis, log and error tail."""
    out = [f"{n}. Tick #{entry.tick} at {entry.timestamp}: {entry.field('Status', '')}"]
    for name in ("Reason", "Verify Output", "Error Analysis"):
        value = entry.field(name)
        if value:
            out.append(f"   - {name}: {value}")
    out.append(f"   - Log: {entry.log_path or '(none)'}")
    tail = entry.error_tail
    if tail:
        lines = tail.splitlines()[-MAX_TAIL_LINES:]
        out += ["   - Error tail:", "", *fenced("\n".join(lines), "text")]
    out.append("")
    return out


def notes_section(ws: Workspace) -> list[str]:
    unread = [n for n in notes.parse_notes(ws.notes_path) if not n.read and not n.archived]
    if not unread:
        return ["## Unread notes from people", "", "(none)", ""]
    out = [f"## Unread notes from people ({len(unread)}); mark each you act on [NOTE:READ]", ""]
    for note in unread:
        out += [f"### [NOTE] {note.timestamp} → {note.target}", "", *fenced(note.text, "markdown"), ""]
    return out
