"""What the architect changed, and which changes break its rules (SPEC §16): pure values in, values out.

:func:`compare_plans` takes the plan before and after the run and says which
tasks were edited, added, skipped and reset, and every violation: a task marked
`[x]`, a done task changed, a task line deleted, a repeated id, a skip without a
``reason:``, a reset of a task it did not change, ``retries:`` changed on a task it
does not reset, a Meta limit changed (guards.LIMIT_KEYS), a plan that does not lint. :func:`compare_notes` says which notes
the architect marked read (it acted on them) and what else it did to the notes
file, which it may not do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ...notes import parse_notes_text
from ...plan.model import Plan, Task
from ..guards import LIMIT_KEYS

# Meta keys Memento maintains itself; the architect's changes to them are not changes.
SKIP_FIELDS = ("- retries:", "- reason:")
COUNTERS = frozenset({"total_ticks", "total_tasks", "completed_tasks", "last_architect_edit"})


@dataclass(frozen=True)
class PlanChanges:
    """The architect's plan change, task by task, and the rules it broke."""

    edited: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # went to [-] (split or dropped), each with a reason
    reset: tuple[str, ...] = ()  # [!] back to [ ]
    meta: tuple[str, ...] = ()  # Meta keys changed (not Memento's counters)
    phases: tuple[str, ...] = ()  # phases added or whose heading/depends changed
    violations: tuple[str, ...] = ()
    # (task, old verify or "" for an added task, new verify): a person must see each (SPEC §13)
    verify: tuple[tuple[str, str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.edited or self.added or self.skipped or self.reset or self.meta or self.phases)

    def parts(self) -> list[str]:
        """``["edited T-2", "added T-5, T-6", …]``: what changed, in the entry's order."""
        named = (("edited", self.edited), ("added", self.added), ("skipped", self.skipped),
                 ("reset", self.reset), ("changed Meta", self.meta), ("changed phase", self.phases))
        return [f"{verb} {', '.join(ids)}" for verb, ids in named if ids]


def definition(task: Task, ignored: tuple[str, ...] = ("- retries:",)) -> tuple[str, str]:
    """A task's line after its status and its block but ``retries:`` (a reset writes it)."""
    block = "\n".join(ln.rstrip() for ln in task.block.splitlines() if not ln.strip().startswith(ignored))
    return task.raw_rest.strip(), block.strip()


def _phase_shape(plan: Plan) -> dict[str, tuple]:
    return {p.id: (p.title, p.parallel, p.depends) for p in plan.phases}


def compare_plans(old: Plan, new: Plan) -> PlanChanges:
    """Every change from ``old`` to ``new``, and the violations of the architect's rules."""
    violations = _lint(new)
    counts = Counter(t.id for t in new.tasks)
    violations += [f"{tid} appears {n} times in the plan (ids must be unique)" for tid, n in sorted(counts.items())
                   if n > 1]
    before, after = old.by_id, new.by_id
    deleted = [tid for tid in before if tid not in after]
    if deleted:
        violations.append(f"deleted the task line of {', '.join(deleted)} (skip a task with `[-]` and a "
                          "`reason:` instead)")
    edited, skipped, reset = [], [], []
    for tid, now in after.items():
        was = before.get(tid)
        violations += _status_rules(tid, was, now)
        if was is None:
            continue
        if was.status == "x" and (now.status != "x" or definition(now) != definition(was)
                                  or now.fields.get("retries") != was.fields.get("retries")):
            violations.append(f"changed {tid}, which is done (a done task stays as it is)")
        skip = now.status == "-" and was.status != "-"
        if skip:
            skipped.append(tid)
        ignored = SKIP_FIELDS if skip else SKIP_FIELDS[:1]  # a skip's `reason:` is the skip, not an edit
        if definition(now, ignored) != definition(was, ignored):
            edited.append(tid)
        if was.status == "!" and now.status == " ":
            reset.append(tid)
            if definition(now) == definition(was):
                violations.append(f"reset {tid} without changing it (repair a task before resetting it; "
                                  "a person retries one as it is with `memento reset`)")
        elif was.status != "x" and now.fields.get("retries") != was.fields.get("retries"):
            violations.append(f"changed {tid}'s retries (Memento counts them; only a reset sets them to 0)")
        if any(now.fields.get(k) != was.fields.get(k) for k in ("question", "questions")):
            violations.append(f"changed {tid}'s question (Memento keeps a worker's question until the task passes)")
    added = [tid for tid in after if tid not in before]
    violations += [f"gave the new task {tid} retries: {after[tid].fields['retries']} (a new task starts at 0)"
                   for tid in added if str(after[tid].fields.get("retries", "0")).strip() not in ("", "0")]
    violations += [f"changed the Meta limit {key} (a person sets the pipeline's limits)" for key in LIMIT_KEYS
                   if _meta_values(old).get(key) != _meta_values(new).get(key)]
    if old.meta.tick_mode != new.meta.tick_mode:
        violations.append(f"changed tick_mode from {old.meta.tick_mode} to {new.meta.tick_mode} "
                          "(a person pauses and resumes the pipeline)")
    meta = sorted(k for k in {*_meta_values(old), *_meta_values(new)}
                  if k not in COUNTERS and _meta_values(old).get(k) != _meta_values(new).get(k))
    phases_before, phases_after = _phase_shape(old), _phase_shape(new)
    phases = [pid for pid, shape in phases_after.items() if phases_before.get(pid) != shape]
    verify = tuple(_verify_changes(before, after))
    return PlanChanges(tuple(edited), tuple(added), tuple(skipped), tuple(reset), tuple(meta), tuple(phases),
                       tuple(violations), verify)


def _verify_changes(before: dict[str, Task], after: dict[str, Task]):
    """``(task, old, new)`` for every verify command changed, and every one of an added task."""
    for tid, now in after.items():
        old = before[tid].verify or "" if tid in before else ""
        if (now.verify or "") != old:
            yield tid, old, now.verify or ""


def _lint(plan: Plan) -> list[str]:
    errors = [e for e in plan.errors if e.severity == "error"]
    if not errors:
        return []
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return [f"the new plan does not lint: {errors[0]}{more}"]


def _status_rules(tid: str, was: Task | None, now: Task) -> list[str]:
    """A task may go to `[ ]` (reset) or `[-]` with a reason; it is never made `[x]`, `[~]` or `[!]`."""
    before = was.status if was is not None else None
    if now.status == before:
        return []
    if now.status == "x":
        return [f"marked {tid} [x] (only a passing verify marks a task done)"]
    if now.status == "~":
        return [f"marked {tid} [~] (only a tick claims a task)"]
    if now.status == "!":
        return [f"marked {tid} [!] (only a tick blocks a task)"]
    if now.status == "?":
        return [f"marked {tid} [?] (only a worker's question makes a task wait)"]
    if before == "?" and now.status == " ":
        return [f"put {tid} back to [ ] (its worker's question waits for a person: `memento answer {tid}`)"]
    if now.status == "-" and not (now.reason or "").strip():
        return [f"skipped {tid} without a `reason:` (say why, e.g. reason: split into T-205, T-206)"]
    return []


def _meta_values(plan: Plan) -> dict[str, object]:
    meta = plan.meta
    values = {k: v for k, v in vars(meta).items() if k not in ("extra", "lines", "line")}
    values.update(meta.extra)
    return values


@dataclass(frozen=True)
class NotesChanges:
    """The notes the architect marked read (it acted on them: Memento archives them), and the rest."""

    acted: tuple[str, ...] = ()  # note keys
    acted_text: tuple[str, ...] = ()  # "T-3: first words…", for the entry
    violations: tuple[str, ...] = ()


def compare_notes(before: bytes, after: bytes, added_through_memento: frozenset[str]) -> NotesChanges:
    """Marking a note read (and moving it under Archive) is allowed; anything else is a violation."""
    if before == after:
        return NotesChanges()
    # parse_notes_text reads any text (guards.notes_damage: a fuzz of 30,000 hostile files raised nothing)
    old = {n.key: n for n in parse_notes_text(before.decode("utf-8", "replace"))}
    new = {n.key: n for n in parse_notes_text(after.decode("utf-8", "replace"))}
    violations = []
    gone = [k for k in old if k not in new]
    if gone:
        violations.append(f"removed or rewrote {len(gone)} note(s) in docs/HUMAN_NOTES.md (notes are the "
                          "people's; mark one read with [NOTE:READ])")
    forged = [k for k in new if k not in old and k not in added_through_memento]
    if forged:
        violations.append(f"wrote {len(forged)} note(s) into docs/HUMAN_NOTES.md (a person adds notes)")
    unread = [k for k in new if k in old and old[k].read and not new[k].read]
    if unread:
        violations.append(f"marked {len(unread)} read note(s) unread in docs/HUMAN_NOTES.md")
    acted = [k for k in new if k in old and new[k].read and not old[k].read]
    texts = tuple(f"{new[k].target}: {_first_words(new[k].text)}" for k in acted)
    return NotesChanges(tuple(acted), texts, tuple(violations))


def _first_words(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
