"""The worker prompt (SPEC §4 step 9): everything a stateless worker needs, from the files."""

from __future__ import annotations

import re
from pathlib import Path

from . import notes, status_log
from .lines import read_bytes, read_regular_or_none
from .markdown.blocks import fenced
from .plan.model import Plan, Task
from .plan.scan import parse_plan_text
from .workspace import Workspace

MAX_DOC_CHARS = 40_000  # a runaway PROJECT_MAP or checkpoint must not drown the task
MAX_ATTEMPTS = 5


def read_capped(path: Path, limit: int = MAX_DOC_CHARS) -> str:
    """A document for a prompt, stripped, cut at ``limit`` characters with a note saying so; "" when unreadable."""
    data = read_regular_or_none(path, follow=True)  # never a FIFO an agent put there (SPEC §13)
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters in {path.name})\n"
    return text.strip()


def review_findings_path(ws: Workspace, task_id: str) -> Path:
    """The acceptance gate's findings on a task's last failed review (tick/review.py writes it)."""
    return ws.reviews_dir / f"{task_id}.md"


_FINDING_START = re.compile(r" (?=\[(?:PASS|FAIL)\] [0-9]{1,4}: )")


def review_findings(ws: Workspace, task_id: str, last) -> str:
    """The findings of the last attempt's failed review: this host's file when it is that attempt's,
    else the entry's ``Findings`` field (another host of a fleet reviewed it; the file does not travel)."""
    if not (last.field("Reason") or "").startswith("review:"):
        return ""
    text = read_capped(review_findings_path(ws, task_id), 16_000)
    if text and text.startswith(f"Review of the attempt at {last.timestamp}:"):
        return text
    field = last.field("Findings")
    if not field:
        return text or ""
    return "\n".join([f"Review of the attempt at {last.timestamp}: FAIL", "",
                      *(f"- {item}" for item in _FINDING_START.split(field))]) + "\n"


def task_block(plan_text: str, task: Task) -> str:
    """The task as written in ``plan_text``: its line and its whole indented block.

    Found again in this text, not at ``task``'s line numbers: the plan ``task`` came from may be
    older than the text (the tick's own edits since, such as a Meta counter line it added above
    the task, move every line), and a window at stale lines would cut the block's last lines."""
    found = [t for t in parse_plan_text(plan_text).tasks if t.id == task.id]
    if found:
        task = min(found, key=lambda t: abs(t.line - task.line))  # a duplicate id: the one nearest
    lines = plan_text.split("\n")
    return "\n".join(ln.rstrip("\r") for ln in lines[task.line - 1 : task.end_line]).strip()


def question_and_answers(ws: Workspace, task: Task, answers: list[notes.Note]) -> list[str]:
    """The question this task's worker asked and the person's answers (SPEC §18), each fenced with
    a fence longer than any inside (both are text an agent or a chat message controls)."""
    if not answers:
        return []
    from .questions import question_of

    question = question_of(ws, task) if task.question else None
    out = [f"## Your question and the answer on {task.id} (a person answered: act on it; do not ask it again)", ""]
    if question is not None:
        asked = f" (asked {question.asked})" if question.asked else ""
        out += [f"### The question{asked}", *fenced(question.text, "markdown"), ""]
    for note in answers:
        origin = f", from {note.source}" if note.source else ""
        out += [f"### The answer ({note.timestamp}{origin})", *fenced(note.text, "text"), ""]
    return out


def memory_tree(ws: Workspace) -> str:
    """Paths and summaries of long-term memory; filled in by memento_core.memory when present."""
    try:
        from .memory import tree_for_prompt
    except ImportError:
        return ""
    return tree_for_prompt(ws)


def build_prompt(ws: Workspace, plan: Plan, task: Task, *, include_system: bool = True) -> tuple[str, list[notes.Note]]:
    """The prompt text and the notes it delivered (marked read when the task passes or blocks).

    ``include_system=False`` for agents that take the system prompt through a flag of their own.
    """
    plan_text = read_bytes(ws.plan_path).decode("utf-8", errors="replace")
    given = notes.notes_for_task(notes.parse_notes(ws.notes_path), task.id)
    attempts = status_log.failed_attempts(status_log.parse_status(ws.status_path), task.id)[-MAX_ATTEMPTS:]
    out: list[str] = []
    system = read_capped(ws.system_prompt_path) if include_system else ""
    if system:
        out += [system, "", "---", ""]
    out += [
        f"# Your task: {task.id}",
        "",
        f"Project: {plan.title}. Phase: {task.phase}. Work in `{ws.root}`.",
        "",
        *fenced(task_block(plan_text, task), "markdown"),
        "",
        f"- verify (must exit 0): `{task.verify}`",
        f"- you may change only: {', '.join(task.context_files) or '(no files)'}",
        f"- never change: {', '.join(task.guard_files) or '(none listed)'}; nor docs/PROJECT_MAP.md,"
        " nor task definitions in docs/MASTER_PLAN.md",
        f"- at most {plan.meta.max_diff_lines} changed lines in total",
        f"- write your report to `{ws.rel(ws.tick_result_path)}` (sections `## Outputs`, `## Error Analysis`)",
        f"- only when a person must decide: write your question to `{ws.rel(ws.question_path)}` "
        "(choices as `- [ ] choice` lines) and exit; your changes are then undone",
        "",
    ]
    answers = [n for n in given if n.is_answer and n.target == task.id]
    out += question_and_answers(ws, task, answers)
    others = [n for n in given if n not in answers]
    if others:
        out += ["## Notes from people (they override the plan where they disagree)", ""]
        for note in others:
            out += [f"### {note.timestamp} → {note.target}", *fenced(note.text, "markdown"), ""]
    if attempts:
        out += [f"## Previous failed attempts of {task.id} ({len(attempts)}) — do not repeat them", ""]
        for entry in attempts:
            out.append(f"### Tick #{entry.tick} at {entry.timestamp}: {entry.field('Status', '')}")
            for name in ("Reason", "Verify Output", "Error Analysis"):
                value = entry.field(name)
                if value:
                    out.append(f"- {name}: {value}")
            if entry.error_tail:
                out += fenced(entry.error_tail, "text")
            out.append("")
    findings = review_findings(ws, task.id, attempts[-1]) if attempts else ""
    if findings:
        out += [f"## The acceptance review of the last attempt of {task.id} failed — fix every [FAIL]",
                "", "A reviewer checks your work against the `accept:` criteria after verify passes.",
                "", *fenced(findings.rstrip("\n"), "text"), ""]
    project_map = read_capped(ws.map_path)
    out += ["## docs/PROJECT_MAP.md", "", *(fenced(project_map, "markdown") if project_map else ["(missing)"]), ""]
    checkpoint = read_capped(ws.checkpoint_path)
    out += ["## docs/CURRENT_STATE.md (the continuity checkpoint: surface recovered state first)", "",
            *(fenced(checkpoint, "markdown") if checkpoint else ["(missing)"]), ""]
    tree = memory_tree(ws)
    if tree:
        out += ["## Long-term memory (memory/): paths and summaries", "", *fenced(tree, "text"), ""]
    return "\n".join(out).rstrip() + "\n", given
