"""The tick (SPEC §4), one function per step, in the order the SPEC lists them.

The step → module table is tick/__init__.py's docstring; here each step is a function of
its own (``load_config_and_plan``, ``skip_unless_auto``, ``wait_out_limits``, ``recover``,
``refuse_dirty_tree``, ``pick_task``, then attempt.attempt_task for steps 7–14,
``work_through_tasks``, ``afterwards``, ``follow_pulls`` and ``tell_forge``).

:func:`tick` runs steps 2–16 under the lock and returns an :class:`Outcome`
with the exit code (0 ran, 1 needs attention, 2 could not run).

Every step that changes a shared file goes through the locked line edits of
plan/edits.py, notes.py and status_log.py; every git step through the git package (git/); every
process through agents (own process group, output to the tick log, killed whole).
"""

from __future__ import annotations

import signal
import threading

from .. import agents
from ..config.load import load_config
from ..crashpoints import crash_point
from ..errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, MementoError
from ..fleet import calls as remote  # the fleet's calls for the tick (SPEC §12)
from ..git.repo import head, is_repo
from ..git.status import status
from ..lines import plural
from ..plan.model import Plan, Task
from ..runlog import Outcome, cron_log, utc_stamp
from ..scheduler import BLOCKED, COMPLETE, INPUT, TASK, plan_errors, stopping_errors
from ..workspace import OWN_DOCS, Workspace
from . import confine, land
from .afterwards import (
    check_breaker,
    fold_into_tick_commit,
    keep_house,
    write_alert,
    write_checkpoint,
)
from .attempt import attempt_task
from .context import Interrupted, TickContext, next_number
from .limits import daily_budget_spent
from .pick import HELD, pick_unheld, runs_in_parallel
from .recovery import clean_leftovers, recover_stale_claims
from .stale_workers import prune_worktrees, stop_stale_workers


def tick(ws: Workspace, taken_over: str = "") -> Outcome:
    """Steps 2–16 of one tick in ``ws``; the caller holds the tick lock (step 1). ``taken_over``:
    the lock was a stopped tick's (lock.py), said in the status log after its recovery."""
    ctx = TickContext(ws)
    plan = load_config_and_plan(ctx)
    if isinstance(plan, Outcome):  # numbered only when it wrote its PLAN INVALID entry (not for a bad config)
        return settle(ctx, plan, "plan invalid") if ctx.number is not None else plan
    plan = remote.refresh(ctx, plan)  # [workers] remote: a pause or resume pushed by someone
    skipped = skip_unless_auto(ctx, plan)
    if skipped is not None:
        return skipped  # a skip writes no document (a person's own plan edit stays theirs)
    waiting = wait_out_limits(ctx)
    if waiting is not None:
        return waiting
    ctx.number = next_number(plan.meta.total_ticks, ctx.state)
    previous = _catch_sigterm(ctx)
    try:
        recover(ctx, plan)
        if taken_over:  # after the recovery, which cuts what the stopped tick's attempt appended
            ctx.event("⚠️ STALE TICK — a stopped tick was taken over", [("Reason", taken_over)])
        if ctx.git_failed:  # git objects the recovery could not put back: nothing runs on that history
            return tell_forge(ctx, settle(ctx, afterwards(ctx, EXIT_OK, summary(ctx) + "; nothing picked: "
                                                          + ctx.git_failed)))
        refused = refuse_dirty_tree(ctx)
        if refused is not None:
            return settle(ctx, refused, "refused: uncommitted changes")
        waits = land.before_pick(ctx)  # [forge] land = "pr": off a merged phase's branch
        if waits is not None:
            return tell_forge(ctx, settle(ctx, waits))
        # [workers] remote: push what is left
        outcome = remote.finish(ctx, work_through_tasks(ctx))
        outcome = follow_pulls(ctx, outcome)  # SPEC §19: the checks and reviews of each phase's pull request
        return tell_forge(ctx, settle(ctx, outcome))
    except Interrupted:  # the remote is finished as after a normal end: nothing stays unpushed
        return tell_forge(ctx, settle(ctx, remote.finish(ctx, afterwards(ctx, EXIT_OK, "interrupted by SIGTERM"))))
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def settle(ctx: TickContext, outcome: Outcome, why: str = "status log and checkpoint") -> Outcome:
    """However the tick ended, what it wrote into Memento's documents is committed, so `git status`
    is clean after every tick: the breaker's pause with its entry, a PLAN INVALID or DIRTY TREE
    entry, the checkpoint written after the architect's commit. Usually step 16 folded them into
    the tick's commit already (afterwards.fold_into_tick_commit) and this finds nothing left.
    A person's own uncommitted work is never taken: only Memento's documents are committed."""
    if remote.enabled(ctx):
        try:
            remote.commit_own_docs(ctx)  # committed here; the next tick's sync pushes them
        except MementoError as exc:
            cron_log(ctx.ws, f"the tick's documents were not committed: {exc}")
    elif fold_into_tick_commit(ctx, why):
        ctx.state.save(ctx.ws)  # the results' commits, as the amend renamed them
    return outcome


def tell_forge(ctx: TickContext, outcome: Outcome) -> Outcome:
    """Status back to GitHub issues (SPEC §19), once the tick's commits are final: a comment per
    imported task that passed or blocked, and those earlier ticks could not post. Never changes
    the outcome: a forge that is down is said in cron.log and tried again by the next tick."""
    land.after_tick(ctx)  # [forge] land = "pr": a finished phase's branch pushed, its pull request
    if ctx.config is not None and ctx.ws.memento_dir.joinpath("forge_import.json").exists():
        from ..forge.comments import after_tick

        after_tick(ctx.ws, ctx.config, ctx.results)
        settle(ctx, outcome, "forge: the token refused")  # a ⚠️ FORGE entry it wrote: committed too
    return outcome


def follow_pulls(ctx: TickContext, outcome: Outcome) -> Outcome:
    """Each phase's pull request as GitHub has it now (SPEC §19, forge/follow.py): its required
    checks and reviews, a change request turned into notes and its tasks back to pending. Before
    the tick's documents are committed, so the notes and the plan go with them; the alert says a
    failing check, and with ``[architect] auto`` the architect gets it as it gets a blocked task.
    Never changes the outcome: a forge that is down is said in cron.log."""
    from ..forge import pulls

    if ctx.config is None or not pulls.path_of(ctx.ws).exists():
        return outcome
    from ..forge.follow import follow

    if not follow(ctx.ws, ctx.config):
        return outcome
    try:
        plan = ctx.plan()
    except MementoError:
        return outcome
    write_alert(ctx, plan, extra=ctx.state.architect_alert)
    failing = any(r.checks == "failing" and r.state in ("open", "merged") for r in pulls.load(ctx.ws).values())
    if failing and ctx.config.architect_auto and not any(t.status == "!" for t in plan.tasks):
        # (a blocked task brings the architect in through nothing_to_pick, with these checks too)
        from .architect.auto import after_blocked

        return after_blocked(ctx, plan, outcome)
    return outcome


# ---------------------------------------------------------------- step 2


def load_config_and_plan(ctx: TickContext) -> Plan | Outcome:
    """memento.toml and the plan; a bad config, no repository or a plan-level error ends the tick."""
    try:
        ctx.config = load_config(ctx.ws.config_path)
        confine.check_network(ctx)
    except MementoError as exc:
        return cannot_run(ctx, str(exc))
    if not is_repo(ctx.root):
        return cannot_run(ctx, f"{ctx.root} is not a git repository")
    try:
        plan = ctx.plan()
    except MementoError as exc:
        return cannot_run(ctx, str(exc))
    if stopping_errors(plan):  # a plan-level error, or invalid tasks that leave nothing to pick
        return plan_invalid(ctx, plan)
    return plan


def cannot_run(ctx: TickContext, message: str) -> Outcome:
    cron_log(ctx.ws, f"tick could not run: {message}")
    _alert_cannot_run(ctx, message)
    return Outcome(EXIT_ERROR, message)


def _alert_cannot_run(ctx: TickContext, message: str) -> None:
    """`.memento_alert` says why no tick runs (a broken memento.toml, no repository), in the word
    `memento status` says, rather than what an earlier tick left there."""
    from ..checkpoint import write_alert as write

    try:
        write(ctx.ws, ctx.plan(), ctx.state, extra=message.splitlines()[0] if message else "")
    except (MementoError, OSError):
        pass  # an unreadable plan: the error above is all there is to say


def plan_invalid(ctx: TickContext, plan: Plan) -> Outcome:
    """One "PLAN INVALID" entry listing the errors that stop the pipeline (not repeated while they
    are unchanged), exit 2: plan-level errors, or invalid tasks when nothing else can be picked."""
    errors = tell_plan_invalid(ctx, plan)
    cron_log(ctx.ws, f"tick could not run: plan invalid ({len(errors)} errors)")
    shown = errors[0] + (f" (and {len(errors) - 1} more; `memento lint`)" if len(errors) > 1 else "")
    return Outcome(EXIT_ERROR, "plan invalid: " + shown)


def tell_plan_invalid(ctx: TickContext, plan: Plan) -> list[str]:
    """The "❌ PLAN INVALID" entry, the alert and the checkpoint, once per change of the errors;
    the errors that stop the pipeline, as text."""
    errors = [str(e) for e in stopping_errors(plan)]
    signature = "\n".join(errors)
    if signature != ctx.state.plan_invalid_signature:
        ctx.number_saved = True  # never edit a plan that does not parse cleanly
        ctx.event("❌ PLAN INVALID", [("Errors", f"{len(errors)} — fix the plan, then the next tick runs")],
                  tail="\n".join(errors))
        ctx.state.plan_invalid_signature = signature
        ctx.state.last_tick = ctx.number or ctx.state.last_tick  # its number is used
        ctx.state.save(ctx.ws)
        # Tell whoever watches the alert file or the checkpoint, not only the log.
        write_alert(ctx, plan, extra=f"docs/MASTER_PLAN.md is invalid ({plural(len(errors), 'error')}): {errors[0]}")
        write_checkpoint(ctx, plan)
    return errors


# ---------------------------------------------------------------- step 3


def skip_unless_auto(ctx: TickContext, plan: Plan) -> Outcome | None:
    """A paused or stopped plan: one line in cron.log, exit 0 (skips never flood TICK_STATUS.md)."""
    state = ctx.state
    fixed = bool(state.plan_invalid_signature)
    state.plan_invalid_signature = ""
    if plan.meta.tick_mode != "auto":
        message = f"tick skipped: tick_mode is {plan.meta.tick_mode}"
        cron_log(ctx.ws, message)
        if fixed:  # a skip writes nothing else: only remember that the plan was mended
            state.save(ctx.ws)
        return Outcome(EXIT_OK, message)
    if state.breaker_reason:
        # The breaker paused the plan; it says auto again, so a person resumed it by hand.
        state.breaker_reason = state.breaker_at = ""
        state.consecutive_failed_ticks = 0
    return None


def wait_out_limits(ctx: TickContext) -> Outcome | None:
    """Rate limited until a time, or today's budget spent (SPEC §14): one line in cron.log, exit 0."""
    from .limits import skip_reason

    message = skip_reason(ctx)
    if not message:
        return None
    cron_log(ctx.ws, message)
    ctx.state.save(ctx.ws)
    return Outcome(EXIT_OK, message)


# ---------------------------------------------------------------- step 4


def recover(ctx: TickContext, plan: Plan) -> Plan:
    """What a killed tick left behind, then stale claims (recovery.py). Every process of a dead
    tick's attempts ended before this, as soon as the lock was taken (orphans.py, __main__)."""
    crash_point("tick:recovering")
    clean_leftovers(ctx)
    remote.clean_leftovers(ctx)  # [workers] remote: a rebase a killed tick left half done
    stop_stale_workers(ctx, plan)  # a killed tick's parallel workers (stale_workers.py, SPEC §12)
    plan = recover_stale_claims(ctx, plan, skip=remote.foreign_claims(ctx, plan))
    prune_worktrees(ctx)
    return plan


# ---------------------------------------------------------------- step 5


def refuse_dirty_tree(ctx: TickContext) -> Outcome | None:
    """Refuse a person's uncommitted work (exit 1); commit Memento's own documents as `memento: sync docs`."""
    own = set(OWN_DOCS)
    entries = status(ctx.root)
    # Untracked files are safe where they are: no rollback removes a file that
    # existed before the tick and no commit stages one the task did not touch.
    # Changes to tracked files are a person's work in progress: refuse.
    foreign = sorted({e.path for e in entries if e.path not in own and e.xy != "??"})
    if foreign:
        return _refuse(ctx, foreign)
    ctx.state.dirty_signature = ""
    docs = sorted({e.path for e in entries if e.path in own})
    if docs:
        ctx.commit(docs, "memento: sync docs")
    # What the first attempt's snapshot takes as the person's untracked files, unless HEAD moves first.
    ctx.untracked_at_start = (head(ctx.root), frozenset(e.path for e in entries if e.xy == "??" and e.path not in own))
    return None


def _refuse(ctx: TickContext, foreign: list[str]) -> Outcome:
    signature = "\n".join(foreign)
    if signature != ctx.state.dirty_signature:
        shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
        ctx.event("⚠️ DIRTY TREE — uncommitted changes to tracked files; tick refused",
                  [("Paths", shown),
                   ("Action", "commit them, or set them aside with `git stash push -- <paths>` "
                    "(a plain `git stash` would also take Memento's own uncommitted documents)")])
        ctx.state.dirty_signature = signature
        write_checkpoint(ctx, ctx.plan())
    cron_log(ctx.ws, f"tick refused: uncommitted changes in {len(foreign)} path(s)")
    write_alert(ctx, ctx.plan(), extra="uncommitted changes outside Memento's files")
    ctx.state.save(ctx.ws)
    return Outcome(EXIT_ATTENTION, "refused: the work tree has uncommitted changes: " + ", ".join(foreign))


# ---------------------------------------------------------------- step 6


def pick_task(ctx: TickContext) -> tuple[Plan, Task] | Outcome:
    """The plan as it is now and the next task in it; with nothing to pick, the COMPLETE, BLOCKED or
    PLAN INVALID outcome."""
    plan = ctx.plan()
    # A task whose verify the architect changed waits for a person; one whose context_files overlap
    # a task claimed `[~]` (another host's, in a fleet) waits until that one ends (SPEC §20).
    verdict = pick_unheld(ctx, plan, beside=[t for t in plan.tasks if t.status == "~"])
    if verdict.kind != TASK or plan.plan_errors:  # a person may have broken the plan since the tick began
        return nothing_to_pick(ctx, plan, verdict)
    return plan, verdict.task


def nothing_to_pick(ctx: TickContext, plan: Plan, verdict) -> Outcome:
    """"🎉 ALL TASKS COMPLETE", "⚠️ PIPELINE BLOCKED" or "⏸ WAITING FOR INPUT — T-1" (only questions
    are left, SPEC §18), each written once per change of state;
    "❌ PLAN INVALID" when what is left cannot run for the plan's errors."""
    if stopping_errors(plan, verdict):
        if not ctx.results:
            return plan_invalid(ctx, plan)
        errors = tell_plan_invalid(ctx, plan)  # the tasks this tick ran are recorded as always
        return afterwards(ctx, EXIT_ATTENTION, summary(ctx) + f"; then nothing can run: plan invalid: {errors[0]}")
    signature = f"{verdict.kind}:{verdict.message}"
    if not ctx.state.last_event and _last_logged_event(ctx) == verdict.message:
        ctx.state.last_event = signature  # a fresh clone (a CI runner): the committed log already says it
    # (no entry for failing checks: a commit of it on the phase's branch would be pushed as a new head
    # for CI to run again, hiding what failed; the alert and the needs-you list say it)
    if verdict.kind in (COMPLETE, BLOCKED, HELD, INPUT, land.PR_CLOSED) and signature != ctx.state.last_event:
        fields = [("Tasks", ", ".join(verdict.tasks))] if verdict.tasks else []
        ctx.event(verdict.message, fields or [("Tasks", f"{len(plan.tasks)} in the plan")])
        ctx.state.last_event = signature
    cron_log(ctx.ws, f"tick idle: {verdict.message}")
    code = EXIT_ATTENTION if verdict.kind in (BLOCKED, HELD, INPUT, land.PR_CLOSED, land.CHECKS_FAILING) else EXIT_OK
    if not ctx.results:
        # An idle tick writes nothing that would only say "still idle".
        keep_house(ctx, plan)
        ctx.state.save(ctx.ws)
        outcome = Outcome(code, verdict.message, ctx.number if ctx.attempted else None, warning=errors_left(ctx))
    else:
        outcome = afterwards(ctx, code, summary(ctx) + f"; then {verdict.message}", warning=errors_left(ctx))
    if verdict.kind == BLOCKED and ctx.config.architect_auto:
        from .architect.auto import after_blocked  # [architect] auto (SPEC §16)

        return after_blocked(ctx, ctx.plan(), outcome)
    return outcome


def _last_logged_event(ctx: TickContext) -> str | None:
    """The Event of the status log's last entry (None when it is not an event)."""
    from ..status_log import parse_status

    entries = parse_status(ctx.ws.status_path)
    return entries[-1].field("Event") if entries else None


# ---------------------------------------------------------------- steps 6–15


def work_through_tasks(ctx: TickContext) -> Outcome:
    """Pick and attempt tasks (steps 6–14), again while fewer than `max_tasks_per_tick` passed (15)."""
    completed, moves = 0, 0
    limit = ctx.plan().meta.max_tasks_per_tick
    while True:
        ctx.check_interrupt()
        picked = remote.pick(ctx, pick_task, afterwards, limit - completed)  # with a remote: fetch, pick, claim by CAS
        if isinstance(picked, Outcome):
            return picked
        plan, task = picked
        moved = land.enter(ctx, plan, task)  # [forge] land = "pr": onto the phase's branch
        if isinstance(moved, Outcome):
            return afterwards(ctx, moved.exit_code, moved.message)
        if moved:  # the plan on that branch decides what runs
            moves += 1
            if moves > land.MAX_MOVES:
                return afterwards(ctx, EXIT_OK, summary(ctx) + "; the work tree moved between phase branches, "
                                  "the next tick picks again")
            continue
        ctx.state.last_event = ""
        if runs_in_parallel(ctx, plan, task):  # a `parallel: true` phase with [workers] max > 1
            from .workers import run_parallel  # the crew's modules, for a parallel phase only

            # A parallel phase runs at least one round of workers: max_tasks_per_tick or [workers] max.
            passed, stop = run_parallel(ctx, max(limit, ctx.config.workers_max) - completed)
            completed += passed
            ctx.check_interrupt()
            if stop or not passed or completed >= limit or daily_budget_spent(ctx):
                break
            continue
        continued = (completed + 1, limit) if completed else None
        result = attempt_task(ctx, plan, task, continued)
        # [workers] remote: a tick that goes on claims its next task in the result's own push.
        goes_on = (result.passed and completed + 1 < limit and not ctx.interrupted
                   and remote.enabled(ctx) and not daily_budget_spent(ctx))
        result = remote.publish(ctx, result, chain=goes_on, room=limit - completed - 1)
        ctx.results.append(result)
        if not result.passed:
            break
        completed += 1
        if completed >= limit or daily_budget_spent(ctx):
            break
    return afterwards(ctx, EXIT_OK, summary(ctx), warning=errors_left(ctx))


def errors_left(ctx: TickContext) -> str:
    """The plan's errors a tick that ran leaves for a person (tasks never picked until fixed), or ''."""
    errors = plan_errors(ctx.plan())
    if not errors:
        return ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"the plan has {plural(len(errors), 'error')}, never picked until fixed (`memento lint`): {errors[0]}{more}"


# ---------------------------------------------------------------- step 16


def afterwards(ctx: TickContext, code: int, message: str, warning: str = "") -> Outcome:
    """The circuit breaker, then rotation, alert, checkpoint and journal; the tick's outcome
    (``warning``: what a person must fix that did not stop this tick)."""
    plan = check_breaker(ctx, ctx.plan())
    if ctx.interrupted:
        cron_log(ctx.ws, "tick interrupted by SIGTERM")
    state = ctx.state
    state.last_tick = ctx.number or state.last_tick
    state.last_tick_started = ctx.stamp
    state.last_tick_finished = utc_stamp()
    state.last_log = ctx.rel_log() or ""
    keep_house(ctx, plan)
    if state.breaker_reason or any(r.blocked for r in ctx.results):
        code = max(code, EXIT_ATTENTION)
    state.last_tick_exit = code
    state.save(ctx.ws)
    return Outcome(code, message, ctx.number, ctx.results, ctx.rel_log(), warning=warning)


def summary(ctx: TickContext) -> str:
    """One line for cron.log and the CLI: what each attempt of this tick did."""
    parts = [f"{r.task_id} passed" if r.passed else f"{r.task_id} {'blocked' if r.blocked else 'failed'}: {r.reason}"
             for r in ctx.results]
    return f"tick #{ctx.number}: " + ("; ".join(parts) or "nothing ran")


def _catch_sigterm(ctx: TickContext):
    """SIGTERM of the tick kills the agent's group and stops at the next safe point."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(signum, frame) -> None:
        ctx.interrupted = True
        agents.terminate_running()

    return signal.signal(signal.SIGTERM, on_sigterm)
