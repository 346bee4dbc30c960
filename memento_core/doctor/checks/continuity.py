"""The eight checks of the continuity doctor (SPEC §8): is docs/CURRENT_STATE.md present,
fresh, in its template, usable for the active work, free of unsurfaced results, consistent
with its archive, given to the worker first, and aligned with the plan?"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ... import checkpoint as cp
from ...checkpoint import current_phase
from ...durations import format_duration
from ...lines import read_text_file
from ...plan.model import FINISHED, Plan
from ...scheduler import COMPLETE, TASK, pick
from ..context import Context, mtime, parse_stamp, stamp
from ..findings import CRITICAL, INFO, WARNING, CheckResult, Finding

FRESH_SLACK = 1.0  # seconds: stamps are whole seconds and the checkpoint is written last
PLACEHOLDER_RE = re.compile(r"^\[[^\]]+\]$|\{(?:project|now|date)\}|^(?:TODO|TBD|FIXME|XXX)\b|^\.\.\.$|^…$", re.I)
_GREETING_RE = re.compile(r"^\W*(?:hi|hello|hey|greetings|good (?:morning|afternoon|evening)|how can i help)\b", re.I)
_TASK_ID_RE = re.compile(r"\b[A-Z][A-Z0-9]*-\d+\b")


def check_exists(c: Context) -> CheckResult:
    rel = c.rel(c.ws.checkpoint_path)
    if not c.ws.checkpoint_path.exists():
        return [Finding(CRITICAL, "checkpoint-exists",
                        f"{rel} does not exist: no deterministic recovery point (the next tick writes it)", rel)]
    if c.checkpoint_text is None:
        return [Finding(CRITICAL, "checkpoint-exists", f"{rel} cannot be read as UTF-8 text", rel)]
    return f"{rel} exists"


def check_fresh(c: Context) -> CheckResult:
    written = mtime(c.ws.checkpoint_path)
    if written is None or c.checkpoint is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    references = []
    finished = parse_stamp(c.state.last_tick_finished)
    if finished is not None:
        references.append((finished, f"the last tick (#{c.state.last_tick}) finished"))
    if c.newest_log is not None:
        log, when = c.newest_log
        references.append((when, f"the newest tick log {c.rel(log)} was written"))
    if not references:
        return f"{rel}: no tick has run yet, nothing to be stale against"
    when, what = max(references)
    if written + FRESH_SLACK < when:
        return [Finding(WARNING, "checkpoint-fresh",
                        f"{rel} is stale: written {stamp(written)}, {format_duration(when - written)} before "
                        f"{what} ({stamp(when)})", rel)]
    return f"{rel} is fresh: written after the last tick"


def check_template(c: Context) -> CheckResult:
    doc, text = c.checkpoint, c.checkpoint_text
    if doc is None or text is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    path = c.ws.checkpoint_path
    found = []
    if doc.title != cp.TITLE:
        found.append(Finding(WARNING, "checkpoint-template", f"the title is not `# {cp.TITLE}`", rel, 1 if text else None))
    if doc.updated is None:
        found.append(Finding(WARNING, "checkpoint-template", f"no `{cp.STAMP_PREFIX} …` line", rel))
    for name in cp.SECTIONS:
        lines = doc.section(name)
        if lines is None:
            found.append(Finding(WARNING, "checkpoint-template",
                                 f"the `## {name}` section is missing (every section is mandatory; write None)", rel))
        elif not lines:
            found.append(Finding(WARNING, "checkpoint-template",
                                 f"the `## {name}` section is empty (write None rather than leave it blank)", rel,
                                 c.line_of(path, f"## {name}")))
        else:
            for line in lines:
                item = line.strip()
                if PLACEHOLDER_RE.search(item):
                    severity = WARNING if name in ("Objective", "Next Action") else INFO
                    found.append(Finding(severity, "checkpoint-template",
                                         f"the `## {name}` section still shows placeholder text: {item[:80]}", rel,
                                         c.line_of(path, item[:40])))
    if doc.line_count > cp.MAX_LINES:
        found.append(Finding(WARNING, "checkpoint-template",
                             f"{rel} has {doc.line_count} lines (more than {cp.MAX_LINES}): a checkpoint, not a journal",
                             rel))
    return found or "template compliance: all sections present, no placeholder text"


def _open_tasks(plan: Plan | None) -> int:
    return sum(1 for t in plan.tasks if t.status not in FINISHED) if plan is not None else 0


def _unusable(lines: list[str] | None) -> bool:
    return cp.is_none(lines) or any(PLACEHOLDER_RE.search(ln.strip()) for ln in lines or ())


def check_active_work(c: Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None or c.plan is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    open_tasks = _open_tasks(c.plan)
    objective = doc.section("Objective")
    found = []
    if not open_tasks:
        return "no active work: every task is done or skipped, nothing to recover"
    if _unusable(objective):
        found.append(Finding(WARNING, "active-work",
                             f"{open_tasks} task(s) are open but the Objective is empty or placeholder text", rel,
                             c.line_of(c.ws.checkpoint_path, "## Objective")))
    elif cp.is_idle_objective(doc.objective) and c.plan.meta.tick_mode != "auto" and not c.plan.meta.total_ticks:
        return [Finding(INFO, "active-work", f"{open_tasks} task(s) wait for `memento resume`: "
                        "the pipeline has not started, there is nothing to recover yet", rel)]
    elif cp.is_idle_objective(doc.objective):
        found.append(Finding(WARNING, "active-work",
                             f"{open_tasks} task(s) are open but the Objective says there is no work in flight: "
                             f"{doc.objective[:80]}", rel, c.line_of(c.ws.checkpoint_path, doc.objective[:40])))
    if _unusable(doc.section("Next Action")):
        found.append(Finding(WARNING, "active-work",
                             "recovery state exists but Next Action is empty, None or placeholder text", rel,
                             c.line_of(c.ws.checkpoint_path, "## Next Action")))
    return found or "active work: the Objective and Next Action give a usable recovery point"


def check_unsurfaced(c: Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None:
        return None
    lines = doc.section("Unsurfaced Results")
    if lines is None or cp.is_none(lines):
        return "no unsurfaced results"
    ids = [m.group(0) for ln in lines for m in [_TASK_ID_RE.search(ln)] if m]
    shown = f" ({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''})" if ids else ""
    rel = c.rel(c.ws.checkpoint_path)
    return [Finding(WARNING, "unsurfaced-results",
                    f"Unsurfaced Results lists {len(lines)} result(s) nobody acknowledged{shown}: "
                    "review them, then `memento ack`", rel, c.line_of(c.ws.checkpoint_path, "## Unsurfaced Results"))]


def _archive_stamp(path: Path) -> float | None:
    m = re.match(r"^(\d{4}-\d{2}-\d{2}T\d{6}Z)", path.name)
    if not m:
        return None
    try:
        return datetime.strptime(m.group(1), "%Y-%m-%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _phase_index(plan: Plan, objective: str) -> int | None:
    """The position of the phase an objective names (its title, else its id), or None."""
    best = None
    for i, phase in enumerate(plan.phases):
        if phase.title and phase.title in objective:
            return i
        if best is None and re.search(rf"\b{re.escape(phase.id)}\b", objective):
            best = i
    return best


def check_archive(c: Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None:
        return None
    folder = c.ws.memory_dir / cp.ARCHIVE_DIR
    try:
        archives = sorted(p for p in folder.glob("*.md") if p.is_file())
    except OSError:
        archives = []
    if not archives:
        return f"no session archives yet in {c.rel(folder)}/"
    newest = archives[-1]
    rel = c.rel(newest)
    try:
        old = cp.parse_checkpoint(read_text_file(newest))
    except (OSError, UnicodeDecodeError):
        return [Finding(INFO, "archive-consistency", f"the newest archive {rel} cannot be read", rel)]
    if old.section("Objective") is None:
        return [Finding(INFO, "archive-consistency", f"the newest archive {rel} has no Objective section", rel)]
    found = []
    archived_at = _archive_stamp(newest)
    updated = parse_stamp(doc.updated)
    if archived_at is not None and updated is not None and archived_at > updated + FRESH_SLACK:
        found.append(Finding(INFO, "archive-consistency",
                             f"the newest archive {rel} is newer than the checkpoint (last updated {doc.updated}): "
                             "was an old checkpoint restored?", rel))
    old_key, new_key = cp.objective_key(old.objective), cp.objective_key(doc.objective)
    if old_key != new_key and not cp.is_idle_objective(old.objective):
        plan = c.plan
        explained = False
        if plan is not None:
            before, now_at = _phase_index(plan, old.objective), _phase_index(plan, doc.objective)
            same_plan = bool(plan.title) and old.objective.startswith(plan.title)
            complete = cp.is_idle_objective(doc.objective)
            explained = same_plan and before is not None and (complete or (now_at is not None and before <= now_at))
        if not explained:
            found.append(Finding(INFO, "archive-consistency",
                                 f"archive objective differs from current objective (task switch?): {rel} says "
                                 f"\"{old.objective[:70]}\", the checkpoint says \"{doc.objective[:70]}\"", rel))
    return found or f"archive consistency: {rel} is the objective before the current one"


def _system_prompt_has_rule(text: str) -> bool:
    low = text.lower()
    return "current_state" in low and "recover" in low


def check_recovery_priority(c: Context) -> CheckResult:
    found = []
    sp = c.ws.system_prompt_path
    sp_rel = c.rel(sp)
    try:
        system = read_text_file(sp, "replace")
    except OSError:
        system = None
    if system is None:
        found.append(Finding(WARNING, "recovery-priority",
                             f"{sp_rel} does not exist: the worker gets no rule to surface recovered state first",
                             sp_rel))
    elif not _system_prompt_has_rule(system):
        found.append(Finding(WARNING, "recovery-priority",
                             f"{sp_rel} does not tell the worker to surface the recovered state of "
                             "CURRENT_STATE.md first", sp_rel))
    entry = c.last_task_entry
    if entry is None:
        return found or "recovery priority: the system prompt carries the rule; no worker has run yet"
    task = entry.task_id
    prompt = c.ws.memento_dir / "prompts" / f"{task}.md"
    prompt_rel = c.rel(prompt)
    try:
        text = read_text_file(prompt, "replace")
    except OSError:
        return found + [Finding(INFO, "recovery-priority",
                                f"cannot tell whether the worker of {task} (tick #{entry.tick}) was given the "
                                f"checkpoint: {prompt_rel} is gone", prompt_rel)]
    section = text.split("## docs/CURRENT_STATE.md", 1)
    if len(section) < 2:
        found.append(Finding(WARNING, "recovery-priority",
                             f"the worker of {task} (tick #{entry.tick}) was not given the checkpoint: "
                             f"{prompt_rel} has no docs/CURRENT_STATE.md section", prompt_rel))
    else:
        body = section[1].split("\n## ", 1)[0]
        lines = [ln for ln in body.splitlines()[1:] if ln.strip()]
        if not lines or lines[0].strip() == "(missing)":
            found.append(Finding(WARNING, "recovery-priority",
                                 f"the worker of {task} (tick #{entry.tick}) was given no checkpoint: "
                                 "docs/CURRENT_STATE.md was missing when its prompt was built", prompt_rel,
                                 c.line_of(prompt, "## docs/CURRENT_STATE.md")))
    found += _greeting(c, entry)
    return found or (f"recovery priority: the last worker ({task}, tick #{entry.tick}) was given the checkpoint "
                     "and the rule to surface recovered state first")


def _greeting(c: Context, entry) -> list[Finding]:
    """The worker's first words in its log: a greeting instead of the work is a continuity failure."""
    log = entry.log_path
    if not log:
        return []
    path = c.ws.root / log
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if number > 200:
                    break
                if not line.strip() or line.startswith("[memento]"):
                    continue
                if _GREETING_RE.match(line):
                    return [Finding(WARNING, "recovery-priority",
                                    f"the worker of {entry.task_id} opened with a greeting instead of the "
                                    f"recovered state: {line.strip()[:60]}", c.rel(path), number)]
                return []
    except OSError:
        return []
    return []


def check_alignment(c: Context) -> CheckResult:
    doc, plan = c.checkpoint, c.usable_plan
    if doc is None or plan is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    verdict = pick(plan)
    found = []
    if verdict.kind == COMPLETE:
        if not cp.is_idle_objective(doc.objective):
            found.append(Finding(INFO, "plan-alignment",
                                 "every task is complete but the Objective still describes work in flight", rel))
        return found or "the checkpoint matches the plan: all tasks complete"
    phase = current_phase(plan, verdict)
    if phase is not None and phase.title not in doc.objective and not re.search(
            rf"\b{re.escape(phase.id)}\b", doc.objective):
        found.append(Finding(INFO, "plan-alignment",
                             f"the Objective does not name the active phase ({phase.title})", rel,
                             c.line_of(c.ws.checkpoint_path, "## Objective")))
    running = next((t for t in plan.tasks if t.status == "~"), None)
    expected = running or (verdict.task if verdict.kind == TASK else None)
    can_run = plan.meta.tick_mode == "auto" and not c.state.breaker_reason
    if expected is not None and can_run:
        action = " ".join(doc.section("Next Action") or [])
        named = _TASK_ID_RE.findall(action)
        if expected.id not in named:
            what = f"names {', '.join(named)}" if named else "names no task"
            found.append(Finding(INFO, "plan-alignment",
                                 f"Next Action {what}, but the next task is {expected.id} ({expected.title})", rel,
                                 c.line_of(c.ws.checkpoint_path, "## Next Action")))
    where = f"{phase.title}" if phase else "the plan"
    nxt = f", next {expected.id}" if expected is not None else ""
    return found or f"the checkpoint matches the plan: {where}{nxt}"
