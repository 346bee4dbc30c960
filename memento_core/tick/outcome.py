"""Steps 13 and 14 of SPEC §4, written down: pass or fail.

:func:`record_pass`: `[x]`, the notes used marked read, the SUCCESS entry, one commit of exactly
the task's paths plus Memento's documents (the tick's record says first which commit it is
making). :func:`record_failure`: everything the agent did put back and rolled back to the
snapshot (rollback.py), a retry counted (`[!]` at max_retries), the entry, the documents
committed. A worker's question (SPEC §18) ends there too, without a retry.
"""

from __future__ import annotations

from .. import notes, status_log
from ..crashpoints import crash_point
from ..durations import format_duration
from ..errors import EditConflict
from ..git import state as git_state
from ..git.history import TICK_TRAILER
from ..git.objects import GONE
from ..plan.edits import edit_plan
from ..questions import forget_question
from ..runlog import utc_stamp
from ..state import remove_claim
from ..status_log import SELF_COMMIT
from ..workspace import KEPT_DOCS
from . import asking, limits, modes, own, receipts, review, unseen
from . import kept as kept_files
from .context import Attempt, TaskResult, TickContext
from .observe import put_back_objects, settle_modes
from .record import failure_output, last_line, mark_committing, remove_record, tail_lines
from .rollback import restore_documents, roll_back, rollback_folder


def record_pass(ctx: TickContext, at: Attempt, changes, duration: float, verify_tail: str, report) -> TaskResult:
    """`[x]`, the notes used marked read, the SUCCESS entry, one commit of the task's paths."""
    ws, task = ctx.ws, at.task
    subject = f"memento: complete {task.id} {task.title}".strip()
    # The entry is in the commit, so it cannot hold the commit's sha: it names the commit that
    # adds it, and the commit's trailer names the entry (tick_commits resolves it).
    message = f"{subject}\n\n{TICK_TRAILER}: {ctx.tick_number()} {task.id}\n"
    paths = sorted({c.path for c in changes} | set(KEPT_DOCS))
    fields = review.entry_fields(_modes_field(_success_fields(ctx, task, changes, duration, verify_tail, report,
                                                              subject), at), at.review)
    entry = ctx.format_entry(limits.with_usage(fields, at.agent), at.continued)
    # Record where we are first: a crash from here on is finished by the next tick,
    # which commits exactly these files (their hashes are in the claim) and this entry.
    hashes = {p: oid for p, (mode, oid) in at.blobs.items() if mode != GONE[0]}
    mark_committing(ws, task.id, paths, message, hashes, entry)  # the tick's own record first
    at.beat.update(stage="committing", commit_paths=paths, commit_message=message, commit_hashes=hashes,
                   entry=entry)
    try:
        edit_plan(ws.plan_path, lambda e: (e.set_status(task.id, "x", expect="~"), e.remove_field(task.id, "question"),
                                           e.update_counters()))
    except EditConflict as exc:
        # A person changed the task while it ran: their word stands, the work is set aside.
        at.beat.update(stage="failing")
        return record_failure(ctx, at, f"the task was changed in the plan while it ran ({exc}); "
                              "its work was set aside", duration, 0, verify_tail, report, count_retry=False)
    notes.mark_read(ws.notes_path, [n.key for n in at.given_notes])
    forget_question(ws, task.id)  # answered and done: no longer open
    status_log.append_entry(ws.status_path, entry)
    crash_point("tick:before-commit")
    sha = ctx.commit(paths, message, blobs=at.blobs)  # the task's files exactly as verify passed them
    crash_point("tick:after-commit")
    at.beat.stop()
    remove_claim(ws, task.id)
    remove_record(ws, task.id)  # the attempt is over: nothing left to recover
    # Without a remote the tick's documents are folded into this commit when the tick ends
    # (afterwards.fold_into_tick_commit), which gives it its final sha: recorded then.
    known = (sha or "")[:7] if ctx.config.workers_remote else ""
    ctx.state.unsurfaced.append({"task": task.id, "title": task.title, "commit": known,
                                 "at": utc_stamp()})
    return TaskResult(task.id, True, "", duration, sha)

def _success_fields(ctx, task, changes, duration, verify_tail, report, message) -> list[tuple[str, str]]:
    files = ", ".join(f"{c.path} (+{c.added} -{c.removed})" for c in changes) or "(none)"
    fields = [
        ("Task", task.label),
        ("Status", "✅ SUCCESS"),
        ("Verify Output", f"`{last_line(verify_tail) or '(no output)'}` (exit code 0)"),
        ("Duration", format_duration(duration)),
        ("Files Modified", files),
        ("Diff Size", f"{sum(c.added + c.removed for c in changes)} lines"),
        ("Git Commit", SELF_COMMIT + f' — "{message}"'),
    ]
    if report.get("outputs"):
        fields.append(("Outputs", report["outputs"]))
    fields.append(("Log", ctx.ws.rel(ctx.log_path)))
    return fields

def record_failure(ctx: TickContext, at: Attempt, reason: str, duration: float, exit_code: int | None,
                   output: str, report, *, count_retry: bool = True, status: str = "") -> TaskResult:
    """Roll back to the snapshot, count a retry (`[!]` at max_retries), write the entry, commit the docs."""
    ws, task = ctx.ws, at.task
    own.unlink_own_links(ws, at.snap, task.id, ctx.log_path)
    own.split_own_hard_links(ws, at.snap, task.id, ctx.log_path)  # before the entry, the plan's edit
    reason = own.with_state_reason(ws, task.id, reason)  # before the entry: the ledger, notify state, claims
    at.beat.update(stage="failing")
    git_state.put_back(ctx.root, at.snap.git, rollback_folder(ws, f"{task.id}-git"))  # the agent may have failed
    damaged = put_back_objects(ctx, at, "the agent")  # before the checkout below reads one
    reason = f"{reason}; {damaged}" if damaged and damaged not in reason else reason
    forged = receipts.forged_memory(ws, at.snap.memory_head, receipts.held(ws), task.id)  # guards may not have run
    if forged:
        reason += f"; the agent made {len(forged)} commit(s) in memory/ that say they are a person's: " \
                  f"{', '.join(forged)} (taken out of memory/'s history)"
    unseen.settle(ctx.root, at.snap.unseen, rollback_folder(ws, f"{task.id}-unseen"), ctx.log_path)
    kept_files.settle(ctx.root, at.snap.kept, ctx.log_path, at.snap.archive_dir,
                      rollback_folder(ws, f"{task.id}-ignored"))
    settle_modes(ctx, at)  # named before the rollback undoes the files they were on (modes.py)
    kept_files.restore_modes(ctx.root, at.snap.kept, ctx.log_path)  # a chmod 000 folder stops no checkout
    rolled = ctx.rolled_back(roll_back(ws, at.snap.base, at.snap.untracked, task.id,
                                       keep_patterns=at.snap.cleanignore))
    crash_point("tick:after-rollback")
    kept_files.restore_modes(ctx.root, at.snap.kept, ctx.log_path)
    rolled += restore_documents(ws, at.snap, task.id, confined=bool(at.wrap))
    max_retries = ctx.plan().meta.max_retries
    if at.question is not None:
        return _record_question(ctx, at, reason, duration, report, rolled)
    uncounted = ctx.interrupted or not count_retry
    retries = task.retries + (0 if uncounted else 1)
    by_review = at.review is not None and at.review.blocks and not uncounted  # max_rounds failed reviews
    blocked = (retries >= max_retries or by_review) and not uncounted
    status = status or (at.review.status if by_review else "")
    fields = _modes_field(_failure_fields(ctx, task, reason, duration, exit_code, output, report,
                                          status or _failure_status(ctx, count_retry, blocked, retries, max_retries),
                                          blocked, rolled), at)
    fields = review.entry_fields(limits.with_usage(fields, at.agent), at.review)
    # The entry goes first: a crash before the plan edit loses no record (the attempt
    # is then simply not counted as a retry).
    ctx.entry(fields, at.continued, tail=tail_lines(output) or None)
    _count_retry(ctx, task.id, retries, blocked, uncounted)
    if blocked:
        notes.mark_read(ws.notes_path, [n.key for n in at.given_notes])
    if uncounted:
        why = "interrupted" if ctx.interrupted else "rate limited" if status.startswith("⏳") else "set aside"
        message = f"memento: {task.id} {why}"
    else:
        message = f"memento: {task.id} {'blocked' if blocked else 'failed'} (retry {retries}/{max_retries})"
    ctx.commit(list(KEPT_DOCS), message)
    at.beat.stop()
    remove_claim(ws, task.id)
    remove_record(ws, task.id)  # the attempt is over: nothing left to recover
    return TaskResult(task.id, False, reason, duration, None, blocked)

def _record_question(ctx: TickContext, at: Attempt, reason: str, duration: float, report, rolled: str) -> TaskResult:
    """The worker asked (SPEC §18): ``❓ NEEDS INPUT`` and ``[?]``, or past max_questions ``[!]``;
    no retry counted either way, the documents committed."""
    ws, task = ctx.ws, at.task
    fields, blocked, message = question_fields(ctx, at, reason, duration, report, rolled)
    ctx.entry(fields, at.continued)
    asking_done(ctx, at, blocked)
    ctx.commit(list(KEPT_DOCS), message)
    at.beat.stop()
    remove_claim(ws, task.id)
    remove_record(ws, task.id)  # the attempt is over: nothing left to recover
    return TaskResult(task.id, False, reason, duration, None, blocked, asked=True)

def question_fields(ctx: TickContext, at: Attempt, reason: str, duration: float, report,
                    rolled: str) -> tuple[list[tuple[str, str]], bool, str]:
    """The entry's fields of a question, whether the task blocks, and the commit message."""
    plan, task = ctx.plan(), at.task
    status, blocked, count = asking.outcome(plan, task)
    fields = _failure_fields(ctx, task, reason, duration, None, "", report, status, False, rolled)
    at_reason = next(i for i, (name, _) in enumerate(fields) if name == "Reason") + 1
    fields[at_reason:at_reason] = asking.entry_fields(task, at.question, blocked)
    fields = limits.with_usage(_modes_field(fields, at), at.agent)
    limit = plan.meta.max_questions
    message = (f"memento: {task.id} blocked (max_questions {limit} reached)" if blocked else
               f"memento: {task.id} needs input (question {count}/{limit})")
    return fields, blocked, message

def asking_done(ctx: TickContext, at: Attempt, blocked: bool) -> None:
    """The plan after a question, and the notes given marked read when the task blocks."""
    plan, task = ctx.plan(), at.task
    _, _, count = asking.outcome(plan, task)
    asking.mark_waiting(ctx, task, at.question, blocked, count)
    if blocked:
        notes.mark_read(ctx.ws.notes_path, [n.key for n in at.given_notes])

def _failure_status(ctx: TickContext, count_retry: bool, blocked: bool, retries: int, max_retries: int) -> str:
    if ctx.interrupted:
        return "⏹ INTERRUPTED (no retry counted)"
    if not count_retry:
        return "⏹ SET ASIDE (no retry counted)"
    if blocked:
        return f"🚫 BLOCKED (retry {retries}/{max_retries} — max_retries exceeded)"
    return f"❌ FAILED (retry {retries}/{max_retries})"

def _failure_fields(ctx, task, reason, duration, exit_code, output, report, status, blocked, rolled):
    fields = [
        ("Task", task.label),
        ("Status", status),
        ("Verify Output", failure_output(output, reason, exit_code)),
        ("Duration", format_duration(duration)),
        ("Reason", reason),
    ]
    if report.get("error_analysis"):
        fields.append(("Error Analysis", report["error_analysis"]))
    if blocked:
        fields.append(("Escalation", "⚠️ NEEDS ARCHITECT ATTENTION"))
    fields += [("Files Modified", f"(rolled back; {rolled})"), ("Git Commit", "(none — rollback)"),
               ("Log", ctx.ws.rel(ctx.log_path))]
    return fields

def _count_retry(ctx: TickContext, task_id: str, retries: int, blocked: bool, uncounted: bool) -> None:
    def apply(e):
        if uncounted:
            e.set_status(task_id, " ", expect="~")  # not the task's fault: no retry counted
            return
        e.set_field(task_id, "retries", str(retries))
        e.set_status(task_id, "!" if blocked else " ", expect="~")
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        pass  # a person changed the task meanwhile; their edit stands

def _modes_field(fields: list[tuple[str, str]], at: Attempt) -> list[tuple[str, str]]:
    """The entry's fields with "Modes Reset" before its log when settle_modes removed something."""
    if not at.modes_reset:
        return fields
    said = ("Modes Reset", modes.listed(at.modes_reset, 20))
    return [*fields[:-1], said, fields[-1]] if fields and fields[-1][0] == "Log" else [*fields, said]
