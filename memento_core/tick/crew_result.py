"""A parallel worker's end turned into its result in the main work tree (SPEC §12; §4 steps 13–14).

A worker that passed (:func:`passed`) commits its task on its branch, which is
rebased onto the crew's HEAD and brought into the main work tree as one commit
with the plan, notes and status entry (:func:`merge`): a rebase conflict, or a
rebase that merged the main branch's changes into what verify passed, fails
the attempt naming the paths, and the retry starts from the new HEAD. A worker
that failed (:func:`failed`) has its worktree rolled back to its snapshot, then
the failure entry written and the retry counted in main (:func:`fail_in_main`),
or its question recorded (:func:`asked_in_main`, SPEC §18). What touches the
main work tree happens under the crew's lock, one worker at a time; the
worktree and its branch are removed when the worker's thread ends (workers.py).
"""

from __future__ import annotations

from .. import notes
from ..errors import MementoError
from ..git import state as git_state
from ..git import worktrees
from ..git.commit import commit_paths
from ..git.objects import hash_blobs
from ..git.repo import head as git_head
from ..git.status import persons_paths
from ..git.status import status as git_status
from ..state import remove_claim
from ..workspace import KEPT_DOCS
from . import crew_judge, limits, own, receipts, review, unseen
from .agent import SIGTERM_REASON
from .claim import take_snapshot
from .context import Attempt, TaskResult, TickContext
from .crew import Crew, Worker
from .observe import put_back_objects
from .outcome import (
    _count_retry,
    _failure_fields,
    _failure_status,
    asking_done,
    question_fields,
    record_pass,
)
from .record import remove_record, tail_lines
from .rollback import roll_back, rollback_folder


def passed(crew: Crew, w: Worker, ctx: TickContext, at, touched, duration: float, verify_tail: str, report):
    """The task's one commit on its branch, then (under the lock) rebased and brought into main."""
    message = f"memento: complete {w.task.id} {w.task.title}".strip()
    paths = [c.path for c in touched]
    with crew.lock:  # its branch moves: never while another worker's guards compare the refs
        crew_judge.sweep(crew)
        crew_judge.sweep_worktrees(crew, w)
        written = crew_judge.judge_worktree(crew, w, paths)  # since its guards: still nobody else's
        if written:
            return failed(crew, w, ctx, at, written[0], duration, 0, verify_tail, report)
        if w.foreign:  # found by this sweep, or by another worker's look at its fresh worktree
            said, w.foreign = "; ".join(f"the agent {r}" for r in dict.fromkeys(w.foreign)), []
            return failed(crew, w, ctx, at, said, duration, 0, verify_tail, report)
        moved = git_head(ctx.root)
        if moved != at.snap.base:  # its guards folded it there and its own processes have ended
            return failed(crew, w, ctx, at, f"its branch was moved after its guards (to {(moved or 'nothing')[:7]}, "
                          f"expected {(at.snap.base or '')[:7]}): another worker's agent, or a process outside "
                          "the tick; set aside, no retry counted", duration, 0, verify_tail, report,
                          count_retry=False)
        if paths:
            try:
                commit_paths(ctx.root, paths, message, author=ctx.config.author, blobs=at.blobs)
            except MementoError as exc:
                if "nothing to commit" not in str(exc):
                    return failed(crew, w, ctx, at, f"could not commit in its worktree: {exc}", duration, 0,
                                  verify_tail, report)
        return merge(crew, w, at, touched, duration, verify_tail, report)

def merge(crew: Crew, w: Worker, at, touched, duration: float, verify_tail: str, report) -> TaskResult:
    """The worker's branch rebased onto the crew's HEAD and brought into the main work tree, then its
    success entry and commit there; a conflict, a rebase that merged into what verify passed or a
    person's uncommitted change to one of its files fails it."""
    docs, root = w.docs, crew.ctx.root
    crew.reclaim_main()  # moved by an agent: put back, and that worker answers for it
    # The crew's HEAD, never the branch as read now: a move from here on is put back and the commit
    # made once more on this one (TickContext.commit); the work tree's files are this commit's.
    onto = crew.main_head
    tip, conflicts, said = worktrees.rebase(w.ctx.root, onto, docs.config.author)
    if tip is None:
        if conflicts:
            reason = (f"merge conflict: {', '.join(conflicts)} changed on the main branch since the task "
                      f"started (rebase onto {(onto or '')[:7]} failed); a retry starts from the new HEAD")
        else:
            reason = f"could not rebase onto {(onto or '')[:7]}: " + " ".join(said.split())[:300]
        return failed(crew, w, w.ctx, at, reason, duration, 0, verify_tail, report)
    merged = sorted(p for p, blob in hash_blobs(w.ctx.root, list(at.blobs)).items()
                    if blob != at.blobs.get(p))
    if merged:  # git merged the main branch's changes into them: contents verify never checked (§13)
        return failed(crew, w, w.ctx, at, f"merge conflict: {', '.join(merged)} changed on the main branch "
                      f"since the task started (the rebase onto {(onto or '')[:7]} merged them into "
                      "what verify passed); a retry starts from the new HEAD", duration, 0,
                      verify_tail, report)
    blobs = worktrees.changes_of(w.ctx.root, tip) if tip != onto else {}
    busy = sorted(e.path for e in git_status(root) if e.path in blobs)
    if not busy:
        main_at = Attempt(w.task, take_snapshot(docs, onto, persons_paths(root)), None,
                          at.began, beat=at.beat, given_notes=at.given_notes, agent=at.agent,
                          blobs=blobs, review=at.review)
        busy = worktrees.bring_into(root, onto, blobs)  # each file compared again just before it is replaced
    if busy:
        return failed(crew, w, w.ctx, at, "the main work tree has uncommitted changes to "
                      + ", ".join(busy) + "; the task's work was set aside", duration, 0,
                      verify_tail, report, count_retry=False)
    crew.commit_onto(docs)
    result = record_pass(docs, main_at, touched, duration, verify_tail, report)
    crew.main_head = result.commit or crew.main_head  # never a HEAD read after it: an agent may move it
    crew.settle()
    return result

def failed(crew: Crew, w: Worker, ctx: TickContext, at, reason: str, duration: float, exit_code, output: str,
           report, *, count_retry: bool = True, status: str = "") -> TaskResult:
    """Roll the worktree back to its snapshot, then write the failure in the main work tree."""
    count_retry = count_retry and not w.set_aside  # someone else wrote its worktree: not its fault
    with crew.lock:
        reason = own.with_state_reason(crew.ws, w.task.id, reason)
        rolled = "nothing ran"
        if at is not None and at.snap is not None:
            wctx = w.ctx
            own.unlink_own_links(wctx.ws, at.snap, w.task.id, wctx.log_path)
            own.split_own_hard_links(wctx.ws, at.snap, w.task.id, wctx.log_path)
            if at.beat is not None:
                at.beat.update(stage="failing")
            crew.refresh(w)
            # Its guards may not have run (an agent that exits non-zero): what was found, it answers for.
            found, w.foreign = w.foreign, []
            for said in dict.fromkeys(found):
                if said not in reason:
                    reason += f"; the agent {said}"
            git_state.put_back(wctx.root, at.snap.git, rollback_folder(crew.ws, f"{w.task.id}-git"))
            damaged = put_back_objects(wctx, at, "the agent")  # before the checkout reads one
            reason = f"{reason}; {damaged}" if damaged and damaged not in reason else reason
            forged = receipts.forged_memory(crew.ws, at.snap.memory_head, receipts.held(crew.ws), w.task.id)
            if forged:  # its guards may not have run (an agent that exits non-zero)
                reason += (f"; the agent made {len(forged)} commit(s) in memory/ that say they are a person's: "
                           f"{', '.join(forged)} (taken out of memory/'s history)")
            unseen.settle(wctx.root, at.snap.unseen, rollback_folder(crew.ws, f"{w.task.id}-unseen"),
                          wctx.log_path)
            rolled = "in its worktree: " + wctx.rolled_back(
                roll_back(wctx.ws, at.snap.base, at.snap.untracked, w.task.id,
                          keep_patterns=at.snap.cleanignore))
        return fail_in_main(crew, w, reason, duration, exit_code, output, report, rolled, count_retry, status)

def fail_in_main(crew: Crew, w: Worker, reason: str, duration: float, exit_code, output: str, report,
                 rolled: str, count_retry: bool, status: str) -> TaskResult:
    """The failure entry, the retry counted (`[!]` at max_retries), the documents committed."""
    docs, task = w.docs, w.task
    with crew.lock:
        crew_judge.sweep(crew)
        # The tick's SIGTERM reaches the workers' contexts at the crew's next poll: look at it here.
        docs.interrupted = docs.interrupted or crew.ctx.interrupted or reason == SIGTERM_REASON
        if w.at is not None and w.at.question is not None:  # the worker asked (SPEC §18)
            return asked_in_main(crew, w, reason, duration, report, rolled)
        limited, max_retries = status, docs.plan().meta.max_retries
        uncounted = docs.interrupted or not count_retry
        retries = task.retries + (0 if uncounted else 1)
        outcome = w.at.review if w.at is not None else None  # the acceptance gate's (review.py)
        by_review = outcome is not None and outcome.blocks and not uncounted  # max_rounds failed reviews
        blocked = (retries >= max_retries or by_review) and not uncounted
        status = status or (outcome.status if by_review else "") \
            or _failure_status(docs, count_retry, blocked, retries, max_retries)
        agent = w.at.agent if w.at is not None else None
        fields = limits.with_usage(_failure_fields(docs, task, reason, duration, exit_code, output,
                                                   report, status, blocked, rolled), agent)
        fields = review.entry_fields(fields, outcome)
        docs.entry(fields, None, tail=tail_lines(output) or None)
        _count_retry(docs, task.id, retries, blocked, uncounted)
        if blocked and w.at is not None:
            notes.mark_read(docs.ws.notes_path, [n.key for n in w.at.given_notes])
        why = "interrupted" if docs.interrupted else "rate limited" if limited.startswith("⏳") else "set aside"
        message = (f"memento: {task.id} {why}" if uncounted else
                   f"memento: {task.id} {'blocked' if blocked else 'failed'} (retry {retries}/{max_retries})")
        crew.commit_onto(docs)
        crew.main_head = docs.commit(list(KEPT_DOCS), message) or crew.main_head
        if w.at is not None and w.at.beat is not None:
            w.at.beat.stop()
        remove_claim(crew.ws, task.id)
        remove_record(crew.ws, task.id)  # the attempt is over: nothing left to recover
        crew.settle()
    return TaskResult(task.id, False, reason, duration, None, blocked)

def asked_in_main(crew: Crew, w: Worker, reason: str, duration: float, report, rolled: str) -> TaskResult:
    """A question's entry, the task ``[?]`` (``[!]`` past max_questions), the documents committed."""
    docs, task = w.docs, w.task
    fields, blocked, message = question_fields(docs, w.at, reason, duration, report, rolled)
    docs.entry(fields, None)
    asking_done(docs, w.at, blocked)
    crew.commit_onto(docs)
    crew.main_head = docs.commit(list(KEPT_DOCS), message) or crew.main_head
    if w.at.beat is not None:
        w.at.beat.stop()
    remove_claim(crew.ws, task.id)
    remove_record(crew.ws, task.id)
    crew.settle()
    return TaskResult(task.id, False, reason, duration, None, blocked, asked=True)
