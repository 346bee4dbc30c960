"""The checks of a drafted plan (SPEC §17): pure values in, reasons out, each naming its line.

A draft extends a plan, it never rewrites it. :func:`check_draft` takes the plan
before the drafter ran (with a person's skip/reset made meanwhile) and the plan it
left, and says why it may not be kept:

* the draft does not lint (the errors of `memento lint` it adds, each with its line:
  a task without ``verify`` or ``context_files``, a repeated id, a task outside a
  phase, a phase that depends on an unknown one, a cycle in ``depends``);
* a task that existed is gone, moved to another phase, or its definition or its state changed;
* a new task is born other than ``[ ]`` (``[x]`` above all: only a passing verify
  marks a task done) or with retries other than 0;
* an existing phase's heading, ``parallel`` or ``depends`` changed, or a Meta value
  (a person sets them, ``status_archive_dir`` among them; Memento's counters and
  ``tick_mode`` are Memento's: a kept draft is left paused);
* the draft adds no task.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import PlanError
from ...plan.model import Plan
from ...plan_lint import lint_problems
from ..guards import LIMIT_KEYS
from .changes import COUNTERS, _meta_values, _phase_shape, definition

MAX_LINT_REASONS = 20


@dataclass(frozen=True)
class DraftCheck:
    """What the draft adds (new task ids, in plan order) and why it may not be kept."""

    new_ids: tuple[str, ...]
    reasons: tuple[str, ...]


def _key(e: PlanError) -> tuple:
    return e.task_id, e.message


def lint_reasons(old: Plan, old_text: str, new: Plan, new_text: str, root, preset: str | None) -> list[str]:
    """The lint errors of the draft that the plan before it did not have (a person's own broken
    line is not the drafter's), each as ``docs/MASTER_PLAN.md:LINE: T-3 message``."""
    before = {_key(e) for e in lint_problems(old, old_text, old.path, root, preset) if e.severity == "error"}
    errors = [e for e in lint_problems(new, new_text, new.path, root, preset)
              if e.severity == "error" and _key(e) not in before]
    out = [f"{e} (memento lint)" for e in errors[:MAX_LINT_REASONS]]
    if len(errors) > MAX_LINT_REASONS:
        out.append(f"… and {len(errors) - MAX_LINT_REASONS} more lint errors (memento lint lists them all)")
    return out


def check_draft(old: Plan, old_text: str, new: Plan, new_text: str, *, root, preset: str | None = None) -> DraftCheck:
    """The new task ids and every reason the draft ``new`` of ``old`` may not be kept."""
    path = new.path
    reasons = lint_reasons(old, old_text, new, new_text, root, preset)
    before, after = old.by_id, new.by_id
    for tid, was in before.items():
        now = after.get(tid)
        if now is None:
            reasons.append(f"{old.path}:{was.line}: {tid} was deleted (a draft extends the plan; existing "
                           "tasks stay as they are)")
            continue
        if now.phase != was.phase:
            reasons.append(f"{path}:{now.line}: {tid} moved from {was.phase} to {now.phase} (a draft never "
                           "changes an existing task)")
        elif now.status != was.status:
            reasons.append(f"{path}:{now.line}: {tid}'s state changed from [{was.status}] to [{now.status}] "
                           "(a draft never changes an existing task)")
        elif definition(now, ()) != definition(was, ()):
            what = "it is done: done work is never rewritten" if was.status == "x" else \
                "a draft extends the plan, existing tasks stay as they are"
            reasons.append(f"{path}:{now.line}: {tid}'s definition changed ({what})")
    new_ids = tuple(dict.fromkeys(t.id for t in new.tasks if t.id not in before))
    for tid in new_ids:
        task = after[tid]
        if task.status != " ":
            born = "only a passing verify marks a task done" if task.status == "x" else "a new task starts [ ]"
            reasons.append(f"{path}:{task.line}: {tid} is born [{task.status}] ({born})")
        retries = str(task.fields.get("retries", "0")).strip()
        if retries not in ("", "0"):
            reasons.append(f"{path}:{task.field_lines.get('retries', task.line)}: {tid} is born with retries: "
                           f"{retries} (a new task starts at 0)")
    shapes = _phase_shape(new)
    for phase in old.phases:
        now_phase = new.phase(phase.id)
        if now_phase is None:
            reasons.append(f"{old.path}:{phase.line}: {phase.id} was deleted (a draft adds phases, it keeps "
                           "the ones there are)")
        elif shapes.get(phase.id) != _phase_shape(old)[phase.id]:
            reasons.append(f"{path}:{now_phase.line}: {phase.id}'s heading, parallel or depends changed (a draft "
                           "adds phases, it keeps the ones there are)")
    was_meta, now_meta = _meta_values(old), _meta_values(new)
    for key in sorted({*was_meta, *now_meta} - COUNTERS - {"tick_mode"}, key=lambda k: (k not in LIMIT_KEYS, k)):
        if was_meta.get(key) != now_meta.get(key):
            line = new.meta.lines.get(key, new.meta.line)
            what = "limit" if key in LIMIT_KEYS else "key"
            reasons.append(f"{path}:{line}: the Meta {what} {key} changed (a person sets Meta: a draft keeps "
                           "the ## Meta section as it is)")
    if not new_ids and not reasons:
        reasons.append("the draft adds no task")
    return DraftCheck(new_ids, tuple(reasons))
