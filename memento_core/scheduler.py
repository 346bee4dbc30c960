"""Which task runs next, and how far along the plan is (SPEC §4 step 6). Pure functions.

In a parallel phase (SPEC §12, §20) a task is picked only when its ``context_files`` overlap no
running task's (:func:`overlap`): two workers never change the same file at once, so their
merges never conflict.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .errors import PlanError
from .plan.model import FINISHED, Phase, Plan, Task
from .task_deps import satisfied

# Verdict kinds
TASK = "task"
COMPLETE = "complete"
BLOCKED = "blocked"
WAITING = "waiting"
INPUT = "input"  # nothing to pick but tasks waiting [?] for a person's answer (SPEC §18)
NOTHING_VALID = "nothing_valid"
EMPTY = "empty"


@dataclass(frozen=True)
class Verdict:
    """The scheduler's answer: a task to run, or why there is none."""

    kind: str
    task: Task | None = None
    phase: str | None = None
    message: str = ""
    tasks: tuple[str, ...] = ()  # the tasks the verdict is about (blocked, waiting, invalid)
    # WAITING on a person rather than on a tick: a phase's pull request to merge (SPEC §19), a
    # verify the architect changed to acknowledge (SPEC §16). The pipeline's word is then WAITING.
    on_person: bool = False


def finished_phases(plan: Plan) -> set[str]:
    """Phases whose tasks are all done or skipped (one pass over the tasks)."""
    unfinished = {t.phase for t in plan.tasks if t.status not in FINISHED}
    return {p.id for p in plan.phases if p.id not in unfinished}


def open_phases(plan: Plan) -> list[Phase]:
    """Phases whose dependencies are all finished, in file order."""
    finished = finished_phases(plan)
    return [p for p in plan.phases if all(d in finished for d in p.depends)]


def pickable(task: Task, max_retries: int, plan: Plan | None = None) -> bool:
    """Pending, valid, retries left; with ``plan``, also every ``depends:`` task done or skipped."""
    if not (task.status == " " and task.valid and task.retries < max_retries):
        return False
    if plan is None or not task.depends:
        return True
    return task.id not in plan.unsatisfiable and satisfied(plan, task)


def pick(plan: Plan, *, exclude: Iterable[str] = (), beside: Iterable[Task] = ()) -> Verdict:
    """The first pending, valid task with retries left in an open phase, or a verdict. ``beside``
    are the tasks running now: a task whose ``context_files`` overlap one of theirs waits."""
    excluded = set(exclude)
    running = [t.context_files for t in beside]
    max_retries = plan.meta.max_retries
    opened = {p.id for p in open_phases(plan)}
    # Tasks are in file order, and a task belongs to the phase heading above it,
    # so this walks phases in file order too.
    for task in plan.tasks:
        if task.phase in opened and task.id not in excluded and pickable(task, max_retries, plan) \
                and not any(overlap(task.context_files, files) for files in running):
            return Verdict(TASK, task=task, phase=task.phase, message=f"next: {task.label}")
    return explain_nothing(plan)


_WILD = "*?["


def overlap(a: Sequence[str], b: Sequence[str]) -> bool:
    """Could two tasks with these ``context_files`` change the same path? An equal path, a folder
    that holds the other's path, or a pattern (as git.patterns.matches_any reads them: a glob without
    ``/`` matches a name at any depth, a folder covers what is inside) that can match a path the
    other covers. When two patterns might meet, they overlap: a task held back is slower, two
    tasks on one file are a conflict."""
    return any(_meet(_segments(x), _segments(y)) for x in a for y in b)


@lru_cache(maxsize=4096)
def _segments(raw: str) -> tuple[str, ...]:
    """A context_files entry as path segments, ``**`` for any number of folders, ``$`` after a
    file's name (``x.py``, ``*.md``: a name with an extension holds nothing below it)."""
    path = raw.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    anchored, folder = path.startswith("/"), path.endswith("/")
    path = path.strip("/")
    if not path:
        return ("**",)  # "/" or "./": the whole tree
    parts = tuple("**" if "**" in part else part for part in path.split("/") if part not in ("", "."))
    if not parts:
        return ("**",)
    if len(parts) == 1 and not anchored and any(c in parts[0] for c in _WILD):
        parts = ("**", *parts)  # "*.py": a name at any depth
    if not folder and parts[-1] != "**" and "." in parts[-1][1:]:
        parts = (*parts, "$")
    return parts


@lru_cache(maxsize=4096)
def _meet(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Some path matches both, one as a folder holding the other (a pattern covers what is below)."""
    if not a or not b:
        return True
    if a[0] == "$" or b[0] == "$":  # a file ends here: the other must be able to end here too
        return all(s in ("**", "$") for s in (b if a[0] == "$" else a))
    if a[0] == "**":
        return _meet(a[1:], b) or _meet(a, b[1:])
    if b[0] == "**":
        return _meet(a, b[1:]) or _meet(a[1:], b)
    return _same_name(a[0], b[0]) and _meet(a[1:], b[1:])


def _same_name(x: str, y: str) -> bool:
    """Can one file name match both segments? Literal against a glob exactly; two globs when their
    fixed beginnings and ends agree (never says no to two names that can meet)."""
    wild_x, wild_y = any(c in x for c in _WILD), any(c in y for c in _WILD)
    if not wild_x and not wild_y:
        return x == y
    if not wild_x or not wild_y:
        name, pattern = (x, y) if not wild_x else (y, x)
        return fnmatch.fnmatchcase(name, pattern)
    head_x, head_y = _fixed(x), _fixed(y)
    tail_x, tail_y = _fixed(x[::-1])[::-1], _fixed(y[::-1])[::-1]
    return (head_x.startswith(head_y) or head_y.startswith(head_x)) \
        and (tail_x.endswith(tail_y) or tail_y.endswith(tail_x))


def _fixed(segment: str) -> str:
    """The literal characters before the first wildcard (or a ``]`` read backwards)."""
    cut = min((segment.find(c) for c in _WILD + "]" if c in segment), default=len(segment))
    return segment[:cut]


def explain_nothing(plan: Plan) -> Verdict:
    """Why no task can be picked: complete, waiting on a claim, blocked, or invalid tasks."""
    tasks = [t for t in plan.tasks if t.phase is not None]
    if not tasks:
        return Verdict(EMPTY, message="the plan has no tasks")
    if all(t.status in FINISHED for t in tasks):
        return Verdict(COMPLETE, message="🎉 ALL TASKS COMPLETE")
    running = tuple(t.id for t in tasks if t.status == "~")
    if running:
        return Verdict(WAITING, message=f"waiting: {', '.join(running)} in progress", tasks=running)
    max_retries = plan.meta.max_retries
    stuck = [t for t in tasks if t.status == "!" or (t.status == " " and t.valid and t.retries >= max_retries)]
    if stuck:
        phase = stuck[0].phase
        return Verdict(
            BLOCKED,
            phase=phase,
            message=f"⚠️ PIPELINE BLOCKED — {phase} has unresolved [!] tasks",
            tasks=tuple(t.id for t in stuck),
        )
    asking = tuple(t.id for t in tasks if t.status == "?")
    if asking:
        return Verdict(INPUT, phase=plan.task(asking[0]).phase, message=f"⏸ WAITING FOR INPUT — {', '.join(asking)}",
                       tasks=asking)
    unsatisfiable = plan.unsatisfiable
    invalid = tuple(t.id for t in tasks if t.status not in FINISHED and (not t.valid or t.id in unsatisfiable))
    if invalid:
        return Verdict(
            NOTHING_VALID,
            message="nothing valid to pick: " + ", ".join(invalid) + " invalid (see `memento lint`)",
            tasks=invalid,
        )
    return Verdict(NOTHING_VALID, message="nothing to pick (phases wait on unfinished dependencies)")


def plan_errors(plan: Plan) -> tuple[PlanError, ...]:
    """Every error of the plan, warnings left out, in line order: a plan-level one stops every
    tick (SPEC §4 step 2), a task's keeps that task from ever being picked (SPEC §3). Both are
    errors to a person wherever the plan is shown: `memento lint`, `status`, `tasks`, the
    dashboard's "Needs you"."""
    return tuple(e for e in plan.errors if e.severity == "error")


def stopping_errors(plan: Plan, verdict: Verdict | None = None) -> tuple[PlanError, ...]:
    """The errors that stop the pipeline now: the plan-level ones, else the errors of the tasks
    that leave nothing else to pick (``verdict`` is :func:`pick`'s, asked when not given).
    Empty while a valid task can still run."""
    if plan.plan_errors:
        return plan.plan_errors
    verdict = verdict or pick(plan)
    if verdict.kind != NOTHING_VALID or not verdict.tasks:
        return ()
    stuck = set(verdict.tasks)
    return tuple(e for e in plan_errors(plan) if e.task_id in stuck) or plan_errors(plan)


@dataclass(frozen=True)
class Progress:
    """How many of the plan's tasks are in each state."""

    total: int = 0  # tasks that count: everything but skipped
    done: int = 0
    blocked: int = 0
    pending: int = 0
    in_progress: int = 0
    skipped: int = 0
    waiting: int = 0  # [?]: a question waits for a person's answer

    @property
    def left(self) -> int:
        return self.total - self.done


def progress_of(tasks: Iterable[Task]) -> Progress:
    counts = {" ": 0, "x": 0, "!": 0, "~": 0, "-": 0, "?": 0}
    for t in tasks:
        if t.status in counts:
            counts[t.status] += 1
        else:
            counts[" "] += 1
    total = counts[" "] + counts["x"] + counts["!"] + counts["~"] + counts["?"]
    return Progress(total, counts["x"], counts["!"], counts[" "], counts["~"], counts["-"], counts["?"])


def plan_progress(plan: Plan) -> Progress:
    return progress_of(plan.tasks)


def phase_progress(plan: Plan) -> list[tuple[Phase, Progress]]:
    by_phase: dict[str, list[Task]] = {p.id: [] for p in plan.phases}
    for t in plan.tasks:
        if t.phase in by_phase:
            by_phase[t.phase].append(t)
    return [(p, progress_of(by_phase[p.id])) for p in plan.phases]


def estimate_left(plan: Plan, passed_durations: Iterable[float]) -> float | None:
    """Mean duration of passed tasks × tasks left; None before any task has passed."""
    durations = [d for d in passed_durations if d is not None and d >= 0]
    if not durations:
        return None
    return sum(durations) / len(durations) * plan_progress(plan).left
