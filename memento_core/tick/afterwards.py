"""After the work (SPEC §4 step 16): the circuit breaker, then the housekeeping.

**The circuit breaker** (:func:`check_breaker`) pauses the plan when ticking on would only do
harm. It trips on `circuit_breaker_threshold` consecutive ticks that attempted work
and passed nothing, on more than 30% of the tasks blocked, on less than 500 MB
of free disk, or on a git error. Tripping sets `tick_mode: paused` and writes
one "🔴 CIRCUIT BREAKER TRIGGERED" entry; a person resumes by hand.

**The housekeeping** (:func:`keep_house`): rotation, alert, checkpoint, journal, pruning, and
the repository's loose objects packed once an attempt found :data:`~..git.objects.LOOSE_LIMIT`
of them (:func:`pack_objects`).
None of these may stop a tick: a failure is a line in logs/cron.log. Logs and
rollback folders are pruned so that nothing Memento keeps grows without bound
(SPEC §11), and the memory journal gets this tick's attempts.
"""

from __future__ import annotations

import os
import shutil

from .. import status_log
from ..errors import MementoError
from ..plan.edits import edit_plan
from ..plan.model import Plan
from ..runlog import cron_log, utc_stamp
from ..workspace import KEPT_DOCS, Workspace
from .context import TickContext, append_log, unlink

MIN_FREE_BYTES = 500 * 1024 * 1024
BLOCKED_RATIO = 0.30


def count_this_tick(ctx: TickContext) -> None:
    """A tick that attempted work and passed nothing lengthens the failure streak; a pass ends it."""
    if not ctx.attempted:
        return
    if any(r.passed for r in ctx.results):
        ctx.state.consecutive_failed_ticks = 0
    elif ctx.results and all(r.asked for r in ctx.results):
        return  # a question is no failure: the streak neither grows nor ends (SPEC §18)
    elif not ctx.interrupted and not ctx.rate_limited:
        ctx.state.consecutive_failed_ticks += 1


def breaker_reason(ctx: TickContext, plan: Plan, free_bytes: int) -> str:
    """Why the circuit breaker trips after this tick, or ''."""
    streak = ctx.state.consecutive_failed_ticks
    if streak >= plan.meta.circuit_breaker_threshold:
        return f"{streak} consecutive ticks attempted work and passed nothing"
    counted = [t for t in plan.tasks if t.status != "-"]
    blocked = sum(1 for t in counted if t.status == "!")
    if counted and blocked / len(counted) > BLOCKED_RATIO:
        # Past tense: the reason is kept until a person resumes, the blocked count may be 0 by then.
        return f"{blocked} of {len(counted)} tasks were blocked (more than {int(BLOCKED_RATIO * 100)}%)"
    if free_bytes < MIN_FREE_BYTES:
        return f"only {free_bytes // (1024 * 1024)} MB free on disk (less than 500 MB)"
    if ctx.git_failed:
        return f"git error: {ctx.git_failed}"
    return ""


def check_breaker(ctx: TickContext, plan: Plan) -> Plan:
    """Count this tick, trip the breaker if it must (once), and return the plan as it is now."""
    count_this_tick(ctx)
    reason = breaker_reason(ctx, plan, shutil.disk_usage(ctx.root).free)
    if not reason or ctx.state.breaker_reason:
        return plan
    ctx.state.breaker_reason, ctx.state.breaker_at = reason, utc_stamp()
    try:
        edit_plan(ctx.ws.plan_path, lambda e: e.set_meta("tick_mode", "paused"))
    except MementoError:
        pass
    ctx.event(f"🔴 CIRCUIT BREAKER TRIGGERED — reason: {reason}",
              [("Action", "fix the cause, then `memento resume` (or resume in the dashboard)")])
    if ctx.config is not None and ctx.config.workers_remote:
        ctx.commit(list(KEPT_DOCS), "memento: circuit breaker triggered")
    # else: the tick's one commit takes the entry (fold_into_tick_commit, right after)
    return ctx.plan()


# ---------------------------------------------------------------- the housekeeping

# Retention of what logs/ accumulates, so a tick's cost and the disk do not grow with history.
PRUNE_EVERY = 20
KEEP_TICK_LOGS = 2000
KEEP_ROLLBACKS = 500
CRON_LOG_MAX = 1024 * 1024


def keep_house(ctx: TickContext, plan: Plan) -> None:
    """Rotate the status log, write the alert and the checkpoint, prune, record the journal."""
    rotate_status_log(ctx, plan)
    write_alert(ctx, plan)
    write_checkpoint(ctx, plan)
    fold_into_tick_commit(ctx)
    if ctx.number and ctx.number % PRUNE_EVERY == 0:
        prune_logs(ctx.ws)
    if ctx.results:
        record_memory(ctx)
    pack_objects(ctx)


def pack_objects(ctx: TickContext) -> None:
    """Pack the loose objects (git/objects.pack_loose) when an attempt's snapshot found
    ``LOOSE_LIMIT`` or more: the guard reads each of them three times a tick (tick/objects.py),
    and Memento's commits add some fifteen a tick that git's own ``gc --auto`` never packs. After
    the tick's commit, with every guard done: the next snapshot takes the packs as it finds
    them. Said in the tick's log; a failure in cron.log, and the tick goes on (where the person's
    configuration says not to pack, nothing is said). Never after the
    guards found objects they could not put back (``git_failed``): git packs what a loose file
    holds without checking it, and a forged object would then be read from the pack, whatever
    a person restores under its loose name."""
    from ..git.objects import GC_AUTO_OFF, LOOSE_LIMIT, PARTIAL_CLONE, pack_loose

    if ctx.loose_objects < LOOSE_LIMIT or ctx.git_failed:
        return
    why = pack_loose(ctx.root)
    if not why:
        append_log(ctx.log_path, f"[memento] packed the repository's {ctx.loose_objects} loose objects "
                                 "(git repack --geometric=2 -d)\n")
    elif why not in (GC_AUTO_OFF, PARTIAL_CLONE):  # the person's configuration: nothing to say
        cron_log(ctx.ws, f"git could not pack the repository's {ctx.loose_objects} loose objects: {why}")


def rotate_status_log(ctx: TickContext, plan: Plan) -> None:
    """Move the oldest entries into the archive when TICK_STATUS.md holds more than the limit."""
    meta = plan.meta
    try:
        status_log.rotate(ctx.ws.status_path, archive_folder(ctx, plan), meta.status_max_entries)
    except (MementoError, OSError) as exc:
        cron_log(ctx.ws, f"status rotation failed: {exc}")


def archive_folder(ctx: TickContext, plan: Plan):
    """The status archive: Meta ``status_archive_dir``, or the default when that leads outside the
    project through a link (or into .git/): the history never leaves it (SPEC §13). Said in cron.log."""
    from ..workspace import ARCHIVE_DEFAULT, archive_dir_escape

    value = plan.meta.status_archive_dir
    problem = archive_dir_escape(ctx.root, value)
    if problem:
        line = plan.meta.lines.get("status_archive_dir", 0)
        cron_log(ctx.ws, f"{ctx.ws.rel(ctx.ws.plan_path)}:{line}: Meta `status_archive_dir`: {problem}; "
                         f"rotating into {ARCHIVE_DEFAULT}")
        value = ARCHIVE_DEFAULT
    return ctx.root / value


def write_alert(ctx: TickContext, plan: Plan, extra: str = "") -> None:
    """Write `.memento_alert` while the pipeline needs attention; remove it when it does not."""
    from ..checkpoint import write_alert as write

    write(ctx.ws, plan, ctx.state, extra)


def write_checkpoint(ctx: TickContext, plan: Plan) -> None:
    """Overwrite CURRENT_STATE.md (SPEC §8); the checkpoint must never stop a tick."""
    from ..checkpoint import write_checkpoint as write

    try:
        write(ctx.ws, plan, ctx.state, ctx.results)
    except (MementoError, OSError) as exc:
        cron_log(ctx.ws, f"checkpoint not written: {exc}")


def fold_into_tick_commit(ctx: TickContext, why: str = "status log and checkpoint") -> bool:
    """One commit per tick, and a clean `git status` after it: what the tick wrote after its
    commit (the checkpoint, a rotated status log, the breaker's entry) goes into that commit.
    True when a commit was made or amended.

    The commit is amended once, here, under the tick lock and before anything else has seen it
    (nothing is pushed without a remote; its entry names it by its trailer, not by a sha, so the
    amended commit is still the one the entry names). A tick that made no commit but wrote its
    documents (an ALL TASKS COMPLETE entry, a PLAN INVALID or DIRTY TREE entry: ``why`` says
    which), or whose last commit an entry names by its sha (the architect's), makes one. After
    a git error too: the error may have passed, and a plan the breaker paused must not be left
    uncommitted (if git still fails, cron.log says so). With ``[workers] remote`` the fleet has
    pushed the result already: its own code commits and pushes the rest (fleet/).
    """
    from dataclasses import replace

    from ..git.commit import amend_paths
    from ..git.commit_fast import changed_from_made, commit_here
    from ..git.status import status
    from ..workspace import OWN_DOCS

    if ctx.config is None or ctx.config.workers_remote:
        return False
    seen = docs_stat(ctx)
    if seen == ctx.docs_committed:
        return False  # nothing written since they were found committed: no second `git status`
    try:
        own = set(OWN_DOCS)
        # Against the commit the tick just made when HEAD is still it (no process), else git status.
        docs = changed_from_made(ctx.root, OWN_DOCS) if ctx.tick_commit else None
        if docs is None:
            docs = sorted({e.path for e in status(ctx.root) if e.path in own and e.xy != "??"})
        if not docs:
            ctx.docs_committed = seen
            return False
        old = ctx.tick_commit
        # Amended only while HEAD is still the tick's commit (compared as HEAD moves).
        new = amend_paths(ctx.root, docs, author=ctx.config.author, onto=old,
                          build=commit_here) if old else None
        if new is not None:
            ctx.tick_commit = new
        else:
            old, new = None, ctx.commit(docs, f"memento: tick #{ctx.number} ({why})"
                                        if ctx.number else "memento: sync docs")
    except MementoError as exc:
        cron_log(ctx.ws, f"the tick's documents were not committed: {exc}")
        return False
    ctx.docs_committed = seen if new is not None else None
    # What named the commit before it was amended names the amended one; this tick's passed
    # tasks get their commits in the unsurfaced results now (the checkpoint shows them next time).
    ctx.results[:] = [replace(r, commit=new) if r.commit and old and r.commit == old else r for r in ctx.results]
    shas = {r.task_id: r.commit for r in ctx.results if r.passed and r.commit}
    for item in ctx.state.unsurfaced:
        if not item.get("commit") and item.get("task") in shas:
            item["commit"] = shas[item["task"]][:7]
    return new is not None


def docs_stat(ctx: TickContext) -> tuple:
    """Memento's documents as the file system has them (inode, size, mtime): any write changes it
    (every write of a document renames a new file into place)."""
    from ..workspace import OWN_DOCS

    out = []
    for rel in OWN_DOCS:
        try:
            st = os.lstat(ctx.root / rel)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def record_memory(ctx: TickContext) -> None:
    """This tick's attempts into the memory journal, and the weekly gc when it is due."""
    from ..memory import weekly_gc
    from ..memory.journal import record_tick

    best_effort(ctx.ws, "record_tick", record_tick, ctx.ws, ctx.number, ctx.stamp, ctx.results)
    best_effort(ctx.ws, "weekly_gc", weekly_gc, ctx.ws)


def best_effort(ws: Workspace, what: str, func, *args) -> None:
    """Call ``func(*args)``; memory is its own repository and must never break a tick,
    so its errors go to cron.log, not up the stack."""
    try:
        func(*args)
    except Exception as exc:  # noqa: BLE001 - memory is best effort by design
        cron_log(ws, f"memory {what} failed: {type(exc).__name__}: {exc}")


def prune_logs(ws: Workspace) -> None:
    """Keep the newest tick logs and rollback folders; roll cron.log over at 1 MB.

    Names start with a UTC stamp, so name order is time order. The status log
    archive is never pruned: it is the record of every tick.
    """
    logs = sorted(ws.logs_dir.glob("tick_*.log"))
    for old in logs[: max(0, len(logs) - KEEP_TICK_LOGS)]:
        unlink(old)
    if ws.rollback_dir.is_dir():
        saved = sorted(p for p in ws.rollback_dir.iterdir() if p.is_dir())
        for old in saved[: max(0, len(saved) - KEEP_ROLLBACKS)]:
            shutil.rmtree(old, ignore_errors=True)
    try:
        if ws.cron_log.stat().st_size > CRON_LOG_MAX:
            os.replace(ws.cron_log, ws.cron_log.with_name("cron.log.1"))
    except FileNotFoundError:
        pass
