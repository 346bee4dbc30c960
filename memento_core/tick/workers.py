"""Several workers on one machine (SPEC §12): a `parallel: true` phase run `[workers] max` tasks at once.

:func:`run_parallel` is steps 6–15 for such a phase: it starts a worker for
each task it can claim (:func:`start_next`) and waits for them to end
(:func:`wait`), passing the tick's SIGTERM on to all. Each task gets its own
git worktree (git/worktrees.py) at the main branch's HEAD, and a thread
(:func:`run_worker`) that runs the serial attempt's own steps there
(attempt._work: prompt, agent, guards, verify) with the worktree as the agent's
cwd and the sandbox's project. What touches the main work tree happens under
the crew's lock (crew.py), one worker at a time, inside the tick's lock: the
claim (`[~]`, here), the result or the failure (crew_result.py). At each
worker's guards, unconfined, what it wrote outside its worktree is judged too
(crew_judge.py, crew_watch.py). The worktree and its branch are removed when
the task ends; a killed tick's are found by the next one (stale_workers.py).
Each worker has the tick's own record in the main project (record.py), so a
killed tick's committing worker is finished, not rerun.
"""

from __future__ import annotations

import copy
import os
import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from .. import agents
from ..errors import EditConflict, MementoError
from ..git import worktrees
from ..git.status import persons_paths
from ..plan.edits import edit_plan
from ..plan.model import Plan, Task
from ..runlog import utc_stamp
from ..scheduler import TASK
from ..state import Claim, Heartbeat, remove_claim, this_host, write_claim
from ..workspace import Workspace
from . import attempt, crew_judge, crew_result, limits, own
from .attempt import attempt_safely
from .claim import take_snapshot
from .context import Attempt, TaskResult, TickContext, _unique
from .crew import Crew, Worker, WorktreeSpace
from .crew_watch import Window
from .observe import check_guards
from .pick import pick_unheld, runs_in_parallel
from .record import remove_record, save_git, save_objects, write_record

POLL_SECONDS = 0.2  # how often the waiting tick looks for a finished worker or a SIGTERM


def run_parallel(ctx: TickContext, budget: int) -> tuple[int, bool]:
    """The parallel phase's tasks, up to `[workers] max` at once and ``budget`` in all:
    (how many passed, whether to stop the tick: a failure, SIGTERM or the day's budget)."""
    crew = Crew(ctx)
    started = passed = 0
    stop = False
    try:
        while True:
            while not (stop or ctx.interrupted) and len(crew.running) < crew.size and started < budget:
                got = start_next(crew)
                if got is None:
                    break
                started += 1
                if isinstance(got, TaskResult):  # could not claim or make its worktree
                    ctx.results.append(got)
                    stop = True
            if not crew.running:
                break
            for result in wait(crew):
                ctx.results.append(result)
                passed += result.passed
                stop = stop or not result.passed
            stop = stop or limits.daily_budget_spent(ctx)
    finally:
        stop_all(crew)
        with crew.lock:  # what the last agent did to the main branch after the last look: never kept
            crew.reclaim_main()
    return passed, stop or ctx.interrupted


# ---------------------------------------------------------------- starting


def start_next(crew: Crew) -> Worker | TaskResult | None:
    """Claim the next task of a parallel phase and start its worker; None when there is none."""
    with crew.lock:
        crew_judge.sweep(crew)  # before the pick: never from a plan a worker's agent forged
        plan = crew.ctx.plan()
        # A task whose verify the architect changed waits (memento_core/held.py); so does one whose context_files
        # overlap a running worker's: it runs when that one ends, never beside it (SPEC §20).
        verdict = pick_unheld(crew.ctx, plan, beside=[w.task for w in crew.running])
        if verdict.kind != TASK or not runs_in_parallel(crew.ctx, plan, verdict.task):
            return None
        got = claim(crew, plan, verdict.task)
    if isinstance(got, Worker):
        crew.running.append(got)
        crew.started.append(got)
        got.thread = threading.Thread(target=run_worker, args=(crew, got), name=f"worker-{got.task.id}",
                                      daemon=True)
        got.thread.start()
    return got


def claim(crew: Crew, plan: Plan, task: Task) -> Worker | TaskResult:
    """The claim file (with the worktree), `[~]` in the main plan, then the worktree at HEAD."""
    ctx, ws = crew.ctx, crew.ws
    ctx.attempted = True
    base = crew.main_head  # the crew's own HEAD: never a main branch an agent moved meanwhile
    log = _unique(ws.logs_dir / f"{ctx.log_path.stem}-{task.id}.log")
    claimed = Claim(task=task.id, pid=os.getpid(), host=this_host(), started=utc_stamp(), heartbeat=time.time(),
                    tick=ctx.number or 0, base=base, worktree=f"{worktrees.WORKTREES_REL}/{task.id}",
                    log=ws.rel(log))
    # The tick's own record first (SPEC §13), in main: recovery believes it, not the claim.
    # A fresh worktree at the base has no untracked files; its branch is a name no branch has.
    branch = worktrees.free_branch(ws, task.id)
    write_record(ws, task, ctx.number or 0, base, set(), plan.meta.max_retries, ws.rel(log),
                 worktree=claimed.worktree, branch=branch)
    write_claim(ws, claimed)
    number = ctx.number
    ctx.number_saved = True
    try:
        edit_plan(ws.plan_path, lambda e: (e.set_status(task.id, "~", expect=" "),
                                           e.set_meta("total_ticks", str(number))))
        crew.settle()
    except EditConflict as exc:
        remove_claim(ws, task.id)
        remove_record(ws, task.id)
        return TaskResult(task.id, False, f"could not claim: {exc}")
    docs = _copy(ctx, ws, log)
    worker = Worker(task, plan, claimed, docs, docs, branch)
    try:
        path = worktrees.add(ws, task.id, base, branch)
    except MementoError as exc:
        result = crew_result.fail_in_main(crew, worker, f"could not make its worktree: {exc}", 0.0, None, "", {},
                                          "nothing ran", False, "")
        worktrees.remove(ws, task.id, branch)
        return result
    worker.ctx = _copy(ctx, WorktreeSpace(path, main=ctx.root), log)
    worker.ctx.own_runs = [] if crew.watch is not None else None  # when its agent and verify ran
    return worker


def _copy(ctx: TickContext, ws: Workspace, log: Path) -> TickContext:
    """The tick's context for one worker: same config, state and number; its own workspace and log."""
    sub = copy.copy(ctx)
    sub.ws, sub.log_path = ws, log
    sub.results, sub.git_failed, sub.own_runs = [], "", None
    return sub


# ---------------------------------------------------------------- one worker (its thread)


def run_worker(crew: Crew, w: Worker) -> None:
    """``w``'s thread: its snapshot under the crew's lock, then the attempt's steps in its worktree;
    always ends with a result, its worktree and branch removed."""
    at = w.at = Attempt(w.task, None, None, time.monotonic(), guards=partial(guards, crew, w),
                        on_pass=partial(crew_result.passed, crew, w), on_fail=partial(crew_result.failed, crew, w))
    try:
        with Heartbeat(crew.ws, w.claim) as beat:
            at.beat = beat

            def work() -> TaskResult:
                with crew.lock:
                    crew_judge.clean_fresh(crew, w)
                    w.window = Window(time.time())
                    at.snap = take_snapshot(w.ctx, w.claim.base, persons_paths(w.ctx.root))
                    own.take_state(crew.ws, w.task.id)
                    save_git(crew.ws, w.task.id, at.snap.git)
                    save_objects(crew.ws, w.task.id, at.snap.objects)
                return attempt._work(w.ctx, w.plan, at)

            w.result = attempt_safely(w.ctx, at, work, at.on_fail)
    except BaseException as exc:  # noqa: BLE001 - a worker's thread must always end with a result
        w.result = TaskResult(w.task.id, False, f"the worker stopped: {type(exc).__name__}: {exc}")
    finally:
        with crew.lock:
            worktrees.remove(crew.ws, w.task.id, w.branch)
            if w.window is not None:
                w.window.end = time.time()
            for sub in (w.docs, w.ctx):
                crew.ctx.git_failed = crew.ctx.git_failed or sub.git_failed
                crew.ctx.rate_limited = crew.ctx.rate_limited or sub.rate_limited
                crew.ctx.loose_objects = max(crew.ctx.loose_objects, sub.loose_objects)  # housekeeping packs
        w.finished = True
        crew.changed.set()


def guards(crew: Crew, w: Worker, ctx: TickContext, plan: Plan, at, *, after_verify: bool = False):
    """``w``'s guards (observe.check_guards) under the crew's lock, with what someone else wrote into
    its worktree and what its agent did outside it (crew_judge.py) among the reasons."""
    with crew.lock:
        crew.refresh(w)
        verdict = check_guards(ctx, plan, at, after_verify=after_verify)
        written = crew_judge.judge_worktree(crew, w, [c.path for c in verdict.touched])
        outside = crew_judge.judge_outside(crew, w)
        extra = tuple(written) + tuple(outside)
        return replace(verdict, reasons=extra + verdict.reasons) if extra else verdict


# ---------------------------------------------------------------- waiting, SIGTERM


def wait(crew: Crew) -> list[TaskResult]:
    """Wait for at least one worker to end (passing a SIGTERM on to all); their results."""
    while True:
        if crew.ctx.interrupted:
            interrupt(crew)
        done = [w for w in crew.running if w.finished]
        if done:
            break
        crew.changed.wait(POLL_SECONDS)
        crew.changed.clear()
    for w in done:
        w.thread.join()
        crew.running.remove(w)
    return [w.result or TaskResult(w.task.id, False, "the worker ended without a result") for w in done]


def interrupt(crew: Crew) -> None:
    """Every worker stops at its next safe point; every process group they wait on is stopped."""
    for w in crew.running:
        w.ctx.interrupted = w.docs.interrupted = True
    agents.terminate_running()


def stop_all(crew: Crew) -> None:
    """Nothing outlives the tick: interrupt what still runs and wait for it."""
    if not crew.running:
        return
    crew.ctx.interrupted = crew.ctx.interrupted or any(not w.finished for w in crew.running)
    while crew.running:
        crew.ctx.results.extend(wait(crew))
