"""One task's attempt (SPEC §4 steps 7–14), the steps in order: :func:`attempt_task`.

Each step is a module named after it: claim.py (7 claim, 8 snapshot), agent.py (9 the worker
prompt, 10 the agent), observe.py (11 the guards run; guards.py judges, pure), verify.py (12),
outcome.py (13 pass, 14 fail; rollback.py undoes). A pass commits exactly the task's paths plus
Memento's documents; a failure rolls back to the snapshot and counts a retry.

An exception inside an attempt is that attempt's failure, never a crash loop (SPEC §13):
:func:`attempt_safely`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from ..crashpoints import crash_point
from ..git.changes import FileChange
from ..git.objects import hash_blobs
from ..git.repo import head
from ..git.state import RepositoryGone
from ..git.status import persons_paths
from ..lines import safe_text
from ..plan.model import Plan, Task
from ..runlog import cron_log
from ..state import Heartbeat
from ..workspace import mend_own_folders
from . import asking, confine, limits, own, review
from .agent import (
    SIGTERM_REASON,
    build_worker_prompt,
    commit_memory_writes,
    run_agent,
    run_confined_agent,
)
from .claim import claim_task, take_snapshot
from .context import Attempt, Interrupted, TaskResult, TickContext, append_log, unlink
from .guards import changed_during_verify
from .observe import check_guards
from .outcome import record_failure, record_pass
from .record import read_tick_result, save_git, save_objects, save_unseen, write_record
from .verify import run_verify


def attempt_task(ctx: TickContext, plan: Plan, task: Task, continued: tuple[int, int] | None) -> TaskResult:
    """Steps 7–14 for ``task``: its result, passed or failed, with everything written down."""
    ctx.attempted = True
    began = time.monotonic()
    base = head(ctx.root)
    at_start, ctx.untracked_at_start = ctx.untracked_at_start, None  # the first attempt's only
    untracked = persons_paths(ctx.root, at_start[1] if at_start is not None and at_start[0] == base else None)
    write_record(ctx.ws, task, ctx.number or 0, base, untracked, plan.meta.max_retries, ctx.ws.rel(ctx.log_path))
    claim = claim_task(ctx, task, base, untracked)
    if isinstance(claim, TaskResult):
        return claim
    crash_point("tick:after-claim")
    at = Attempt(task, take_snapshot(ctx, base, untracked), continued, began)
    own.take_state(ctx.ws, task.id)  # the ledger, notify state and claims as they are now
    save_git(ctx.ws, task.id, at.snap.git)  # what the stale recovery restores .git from (SPEC §13)
    save_unseen(ctx.ws, task.id, at.snap.unseen)  # and what was below the work tree, a person's
    save_objects(ctx.ws, task.id, at.snap.objects)  # and the object store's print: packs are judged too
    with Heartbeat(ctx.ws, claim) as beat:
        at.beat = beat
        return attempt_safely(ctx, at, lambda: _work(ctx, plan, at), record_failure)

def _work(ctx: TickContext, plan: Plan, at: Attempt) -> TaskResult:
    """Steps 9–14 under a live heartbeat."""
    task, beat = at.task, at.beat
    prompt_file, at.given_notes = build_worker_prompt(ctx, task)
    unlink(ctx.ws.tick_result_path)
    asking.clear_question_file(ctx)
    beat.update(stage="running")
    # Rate limits, fallback presets, usage and the task budget (limits.py) around step 10,
    # each preset it runs inside the sandbox (confine.py, SPEC §13).
    run_one = partial(run_confined_agent, at=at)
    reason, _ = limits.run_agent(ctx, at, prompt_file, run_one, build_worker_prompt)  # its exit code: in the reason
    # Memory lives in its own repository: whatever the agent wrote there bypassing
    # `memento memory write` is committed now, before any rollback of the project.
    commit_memory_writes(ctx, task)
    refused = confine.after_agent(ctx, task)  # a FIFO where Memento reads: a failure
    reason = reason or refused
    reason = asking.take_question(ctx, at, reason)
    if at.question is not None:  # rolled back and saved like a failure, no retry counted (SPEC §18)
        report = read_tick_result(ctx.ws.tick_result_path)
        return (at.on_fail or record_failure)(ctx, at, reason, time.monotonic() - at.began, None, "", report,
                                              count_retry=False)
    touched: tuple[FileChange, ...] = ()
    if not reason and ctx.interrupted:
        reason = SIGTERM_REASON
    if not reason:
        verdict = (at.guards or check_guards)(ctx, plan, at)
        reason, touched = verdict.reason, verdict.touched
        crash_point("tick:after-guards")
    verify_exit, verify_tail = None, ""
    if not reason and not ctx.interrupted:
        beat.update(stage="verifying")
        before = hash_blobs(ctx.root, [c.path for c in touched], write=False)  # only compared
        verify_exit, verify_tail, reason = run_verify(ctx, task, at.wrap)
    if not reason and not ctx.interrupted:
        # What verify itself changed (a refreshed lock file, a snapshot) is checked too.
        verdict = (at.guards or check_guards)(ctx, plan, at, after_verify=True)
        reason, touched = verdict.reason, verdict.touched
        at.blobs = hash_blobs(ctx.root, [c.path for c in touched])
        reason = reason or changed_during_verify(before, at.blobs)
    # An agent that exited 0 with a rate limit in its last words: its guards and verify said whether it was one.
    reason = limits.judge_suspect(ctx, at.agent, reason)
    if at.agent is not None and at.agent.fall_back and not ctx.interrupted:
        limits.roll_back_for_fallback(ctx, at)  # the refused preset's work, then the next one's turn
        return _work(ctx, plan, at)
    report = read_tick_result(ctx.ws.tick_result_path)  # the worker's, before a reviewer could write one
    if not reason and not ctx.interrupted:  # the acceptance gate, with [review] (review.py)
        reason = review.review_attempt(ctx, at, touched, verify_tail, run=run_agent, guards=at.guards or check_guards)
    if ctx.interrupted and not reason:
        reason = SIGTERM_REASON
    duration = time.monotonic() - at.began
    crash_point("tick:after-verify")
    limited = at.agent.status() if at.agent is not None and not ctx.interrupted else ""
    limited, reason = limits.task_streak(ctx, at.task.id, limited, reason)  # past 6 in a row: a retry
    if not reason:
        return (at.on_pass or record_pass)(ctx, at, touched, duration, verify_tail, report)
    exit_code = verify_exit  # verify's own (None: it did not run); the agent's code is in the reason
    limited = limited or (at.review.set_aside if at.review is not None else "")  # the reviewer failed
    return (at.on_fail or record_failure)(ctx, at, reason, duration, exit_code, verify_tail, report,
                                          count_retry=not limited, status=limited)


# ---------------------------------------------------------------- an exception is the attempt's failure
# An exception inside an attempt is that attempt's failure, never a crash loop (SPEC §13).
#
# Without this, anything unforeseen after the claim (an odd file name, a folder
# replaced by a link, a full disk in the middle of a step) escaped the tick,
# which exited 2 with the task left `[~]`, no retry counted: the next tick found
# the claim stale, reset it, tried again and crashed the same way, forever.
# :func:`attempt_safely` turns the exception into a recorded failure (the entry,
# the rollback, a retry, the breaker's count) through the tick's own
# ``record_failure``; if even that fails, the claim is left for the next tick's
# recovery, which counts the retry.


def attempt_safely(ctx: TickContext, at, work: Callable[[], TaskResult],
                   record_failure: Callable[..., TaskResult]) -> TaskResult:
    """``work()``; on an exception, ``record_failure`` of the attempt ``at`` with its reason."""
    try:
        return work()
    except (Interrupted, KeyboardInterrupt, SystemExit):
        raise
    except RepositoryGone as exc:  # no repository to record anything in: the tick ends here, exit 2
        _log_exception(ctx)
        cron_log(ctx.ws, f"{at.task.id}: {safe_text(str(exc))}; the tick stopped, the next one's recovery "
                         "counts the attempt once .git is back")
        raise
    except Exception as exc:  # noqa: BLE001 - the point: whatever it is, it is this attempt's failure
        reason = f"Memento failed during the attempt ({type(exc).__name__}: {safe_text(str(exc))[:300]})"
        mend_own_folders(ctx.root)  # so that the failure can be written down
        _log_exception(ctx)
        try:
            return record_failure(ctx, at, reason, time.monotonic() - at.began, None, "", {})
        except Exception as again:  # noqa: BLE001
            _log_exception(ctx)
            cron_log(ctx.ws, f"{at.task.id}: could not record the failure ({type(again).__name__}: "
                             f"{safe_text(str(again))[:200]}); the next tick's recovery counts it")
            return TaskResult(at.task.id, False, reason)


def _log_exception(ctx: TickContext) -> None:
    """The exception being handled, its traceback, in the tick's log (traceback imported here: a
    tick whose attempt raises nothing never loads it)."""
    import traceback

    try:
        append_log(ctx.log_path, "\n[memento] " + traceback.format_exc())
    except OSError:
        pass
