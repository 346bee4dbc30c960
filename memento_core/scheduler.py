"""Which task runs next, and how far along the plan is (SPEC §4 step 6). Pure functions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import PlanError
from .plan import FINISHED, Phase, Plan, Task
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


def pick(plan: Plan, *, exclude: Iterable[str] = ()) -> Verdict:
    """The first pending, valid task with retries left in an open phase, or a verdict."""
    excluded = set(exclude)
    max_retries = plan.meta.max_retries
    opened = {p.id for p in open_phases(plan)}
    # Tasks are in file order, and a task belongs to the phase heading above it,
    # so this walks phases in file order too.
    for task in plan.tasks:
        if task.phase in opened and task.id not in excluded and pickable(task, max_retries, plan):
            return Verdict(TASK, task=task, phase=task.phase, message=f"next: {task.label}")
    return explain_nothing(plan)


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
    total: int = 0  # tasks that count: everything but skipped
    done: int = 0
    blocked: int = 0
    pending: int = 0
    in_progress: int = 0
    skipped: int = 0
    waiting: int = 0  # [?]: a question waits for a person's answer

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

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
