"""docs/CURRENT_STATE.md: the continuity checkpoint, overwritten after every tick (SPEC §8).

Short (≤ 40 lines), every section present ("None" rather than omission), written
from the plan and the last tick so that a stateless worker, or a person back
after a weekend, knows in fifteen seconds what is going on and what comes next.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from . import status_log
from .locks import atomic_write_text
from .plan import Plan
from .scheduler import BLOCKED, COMPLETE, TASK, WAITING, pick, plan_progress
from .state import TickState
from .workspace import Workspace

SECTIONS = ("Objective", "Current Step", "Key Decisions", "Next Action", "Blockers", "Unsurfaced Results")
MAX_LINES = 40
_SECTION_RE = re.compile(r"^##[ \t]+(?P<name>.+?)[ \t]*$")


def read_sections(text: str) -> dict[str, list[str]]:
    """The checkpoint's sections by name, each a list of non-blank lines."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            current = m.group("name")
            sections[current] = []
        elif current is not None and line.strip():
            sections[current].append(line.rstrip())
    return sections


def _bullets(items: list[str], limit: int) -> list[str]:
    if not items:
        return ["None"]
    shown = [f"- {item}" for item in items[:limit]]
    if len(items) > limit:
        shown.append(f"- … and {len(items) - limit} more")
    return shown


def render(ws: Workspace, plan: Plan, state: TickState, results, now: datetime | None = None,
           decisions: list[str] | None = None) -> str:
    """The checkpoint text for the plan and tick state as they are now."""
    now = now or datetime.now(UTC)
    verdict = pick(plan)
    progress = plan_progress(plan)
    phase = verdict.task.phase if verdict.task else (verdict.phase or "")
    objective = f"{plan.title or ws.root.name}: {progress.done}/{progress.total} tasks done"
    if phase:
        objective += f", working in {phase}"
    if results:
        last = results[-1]
        step = [f"Tick #{state.last_tick or '?'}: {last.task_id} "
                + ("passed" if last.passed else ("blocked: " if last.blocked else "failed: ") + last.reason)]
    elif state.last_tick:
        step = [f"Tick #{state.last_tick} ran last ({state.last_tick_finished or 'time unknown'})"]
    else:
        step = ["None"]
    if state.breaker_reason:
        next_action = [f"A person: the circuit breaker paused the pipeline ({state.breaker_reason}); "
                       "fix the cause, then `memento resume`"]
    elif plan.meta.tick_mode != "auto":
        next_action = [f"A person: the pipeline is {plan.meta.tick_mode}; `memento resume` to continue"]
    elif verdict.kind == TASK:
        next_action = [f"Next tick runs {verdict.task.label}"]
    elif verdict.kind == BLOCKED:
        next_action = [f"A person: {verdict.message}; fix the task(s) and `memento reset ID`"]
    elif verdict.kind == COMPLETE:
        next_action = ["None: all tasks are complete"]
    elif verdict.kind == WAITING:
        next_action = [f"Wait: {verdict.message}"]
    else:
        next_action = [f"A person: {verdict.message}"]
    entries = status_log.parse_status(ws.status_path)
    blockers = []
    for task in plan.tasks:
        if task.status == "!":
            last = status_log.last_entry_for(entries, task.id)
            why = (last.field("Reason") or last.error) if last is not None else None
            blockers.append(f"{task.id} {task.title}" + (f": {why}" if why else ""))
    if state.breaker_reason:
        blockers.insert(0, f"Circuit breaker tripped: {state.breaker_reason}")
    unsurfaced = [f"{u['task']} {u.get('title', '')} passed ({u.get('commit') or 'no commit'}, {u.get('at', '')})"
                  for u in state.unsurfaced]
    body = {
        "Objective": [objective],
        "Current Step": step,
        "Key Decisions": _bullets(decisions or [], 3),
        "Next Action": next_action,
        "Blockers": _bullets(blockers, 5),
        "Unsurfaced Results": _bullets(unsurfaced, 6),
    }
    out = ["# Current State", f"> Last updated: {now.strftime('%Y-%m-%dT%H:%M:%SZ')}", ""]
    for name in SECTIONS:
        out += [f"## {name}", *body[name], ""]
    return "\n".join(out[: MAX_LINES]).rstrip() + "\n"


def person_decisions(text: str) -> list[str]:
    """Key Decisions carried over from the current file (a person's are never erased)."""
    lines = read_sections(text).get("Key Decisions", [])
    items = [ln.lstrip("-* ").strip() for ln in lines if ln.strip() and ln.strip() != "None"]
    return [i for i in items if not i.startswith("…")]


def write_checkpoint(ws: Workspace, plan: Plan, state: TickState, results, *,
                     now: datetime | None = None) -> bool:
    """Overwrite CURRENT_STATE.md; an idle tick that would change only the time writes nothing."""
    try:
        old = ws.checkpoint_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        old = ""
    text = render(ws, plan, state, results, now=now, decisions=person_decisions(old))
    # Only the time would change: an idle tick must not dirty the tree every few minutes.
    if _without_stamp(text) == _without_stamp(old):
        return False
    old_objective = read_sections(old).get("Objective", [""])
    new_objective = read_sections(text).get("Objective", [""])
    if old and _objective_key(old_objective) != _objective_key(new_objective):
        stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H%M%SZ")
        atomic_write_text(ws.memory_dir / "session_archive" / f"{stamp}.md", old)
    atomic_write_text(ws.checkpoint_path, text)
    return True


def _without_stamp(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith("> Last updated:"))


def _objective_key(lines: list[str]) -> str:
    """The objective minus its progress counts: a new phase or plan is a new objective."""
    text = " ".join(lines)
    return re.sub(r"\d+/\d+ tasks done", "", text).strip()
