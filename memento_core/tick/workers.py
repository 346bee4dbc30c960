"""Several workers on one machine (SPEC §12): a `parallel: true` phase run `[workers] max` tasks at once.

:func:`run_parallel` is steps 6–15 for such a phase. Each task gets its own
git worktree (worktrees.py) at the main branch's HEAD, and a thread that runs
the serial attempt's own steps there (attempt._work: prompt, agent, guards,
verify) with the worktree as the agent's cwd and the sandbox's project. What
touches the main work tree happens under the crew's lock, one worker at a
time, inside the tick's lock: the claim (`[~]`), the result (the task's one
commit rebased onto the current HEAD and brought in as one commit with the
plan, notes and status entry), or the failure (the worktree rolled back, the
retry counted). A rebase conflict fails the attempt naming the paths; the
retry starts from the new HEAD. The worktree and its branch are removed when
the task ends; a killed tick's are found by the next one
(:func:`stop_stale_workers` before the stale claims are reset,
:func:`prune_worktrees` after).

Git's own state is guarded per worktree (git_state.py) against a snapshot; every
ref but the worker's own branch and the main branch is brought up to date in
each snapshot before its guards look (:meth:`Crew.refresh`): the other workers'
branches move with the crew, tags and other branches are a person's to move.
A person's commit on the main branch is the crew's new HEAD
(:meth:`Crew.follow_main`). Each worker has the tick's own record in the main
project (record.py), so a killed tick's committing worker is finished, not rerun.
"""

from __future__ import annotations

import copy
import os
import re
import threading
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from .. import agents, notes, sandbox, scratch
from ..agents.reaper import kill_marked
from ..attempt_record import read_record
from ..errors import EditConflict, MementoError
from ..git import state as git_state
from ..git import worktrees
from ..git.commit import commit_paths
from ..git.objects import hash_blobs
from ..git.repo import head as git_head
from ..git.run import run_git
from ..git.status import persons_paths
from ..git.status import status as git_status
from ..plan.edits import edit_plan
from ..plan.model import Plan, Task
from ..runlog import cron_log, utc_stamp
from ..scheduler import TASK
from ..state import Claim, Heartbeat, read_claim, remove_claim, this_host, write_claim
from ..workspace import KEPT_DOCS, Workspace
from . import attempt, limits, own, receipts, review, unseen
from .agent import SIGTERM_REASON
from .attempt import attempt_safely
from .claim import take_snapshot
from .context import Attempt, TaskResult, TickContext, _unique
from .crew_watch import MainWatch, Window, changed_at, own_run_at
from .observe import check_guards, put_back_objects
from .outcome import (
    _count_retry,
    _failure_fields,
    _failure_status,
    asking_done,
    question_fields,
    record_pass,
)
from .pick import pick_unheld
from .record import leader_is_ours, remove_record, save_git, tail_lines, write_record
from .rollback import roll_back, rollback_folder

POLL_SECONDS = 0.2  # how often the waiting tick looks for a finished worker or a SIGTERM
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class WorktreeSpace(Workspace):
    """A worker's worktree as a workspace: its files are the worktree's; its logs and memory the project's."""

    main: Path | None = None

    @property
    def logs_dir(self) -> Path:
        return (self.main or self.root) / "logs"

    @property
    def memory_dir(self) -> Path:
        """The project's one memory store: the worker's prompt shows it, its queued writes go there."""
        return (self.main or self.root) / "memory"

    @property
    def memory_lock_path(self) -> Path:
        return Workspace(self.main or self.root).memory_lock_path

    @property
    def reviews_dir(self) -> Path:
        """The acceptance gate's findings outlive the worktree: the next attempt's prompt reads them."""
        return Workspace(self.main or self.root).reviews_dir

    @property
    def project_memento_dir(self) -> Path:
        """The project's `.memento/`: the worker's spending reaches the day's budget (usage.json)."""
        return Workspace(self.main or self.root).memento_dir


def runs_in_parallel(ctx: TickContext, plan: Plan, task: Task) -> bool:
    """``task`` is in a `parallel: true` phase and `[workers] max` is above 1. With a fleet
    (`[workers] remote`) every host runs one task at a time: its claim is the remote's CAS."""
    if ctx.config is None or ctx.config.workers_max < 2 or ctx.config.workers_remote:
        return False
    return any(p.id == task.phase and p.parallel for p in plan.phases)


@dataclass
class Worker:
    """One task running in its worktree."""

    task: Task
    plan: Plan
    claim: Claim
    ctx: TickContext  # the worktree's: agent, guards, verify, rollback
    docs: TickContext  # the main work tree's, with this worker's log: plan, notes, status, commits
    branch: str = ""  # its branch (worktrees.free_branch: never a person's)
    at: Attempt | None = None
    thread: threading.Thread | None = None
    result: TaskResult | None = None
    finished: bool = False
    window: Window | None = None  # from its snapshot to its end (crew_watch.py)
    foreign: list[str] = field(default_factory=list)  # what other workers' guards found it did
    set_aside: bool = False  # its worktree was written by someone else: failed, no retry counted


def run_parallel(ctx: TickContext, budget: int) -> tuple[int, bool]:
    """The parallel phase's tasks, up to `[workers] max` at once and ``budget`` in all:
    (how many passed, whether to stop the tick: a failure, SIGTERM or the day's budget)."""
    crew = Crew(ctx)
    started = passed = 0
    stop = False
    try:
        while True:
            while not (stop or ctx.interrupted) and len(crew.running) < crew.size and started < budget:
                got = crew.start_next()
                if got is None:
                    break
                started += 1
                if isinstance(got, TaskResult):  # could not claim or make its worktree
                    ctx.results.append(got)
                    stop = True
            if not crew.running:
                break
            for result in crew.wait():
                ctx.results.append(result)
                passed += result.passed
                stop = stop or not result.passed
            stop = stop or limits.daily_budget_spent(ctx)
    finally:
        crew.stop_all()
    return passed, stop or ctx.interrupted


class Crew:
    """The workers of one tick, and the lock under which they touch the main work tree."""

    def __init__(self, ctx: TickContext):
        self.ctx, self.ws = ctx, ctx.ws
        self.size = ctx.config.workers_max
        self.lock = ctx.state_lock  # also the lock of the tick's state the workers share (limits.py)
        self.changed = threading.Event()
        self.running: list[Worker] = []
        self.started: list[Worker] = []  # every worker of this crew, ended ones too (their windows)
        self.main_ref = worktrees.head_ref(ctx.root)
        self.main_head = git_head(ctx.root)
        self.on_branches: set[str] = set()  # commits seen on a worker's branch (follow_main)
        # Unconfined, the whole repository is judged at each worker's guards (crew_watch.py); in the
        # sandbox the main work tree and the other worktrees are read-only to a worker.
        self.watch = None if sandbox.resolve(ctx.config).confined else \
            MainWatch(ctx.ws, ctx.plan().meta.status_archive_dir)

    # ------------------------------------------------------------ starting

    def start_next(self) -> Worker | TaskResult | None:
        """Claim the next task of a parallel phase and start its worker; None when there is none."""
        with self.lock:
            self.sweep()  # before the pick: never from a plan a worker's agent forged
            plan = self.ctx.plan()
            # A task whose verify the architect changed waits (memento_core/held.py); so does one whose context_files
            # overlap a running worker's: it runs when that one ends, never beside it (SPEC §20).
            verdict = pick_unheld(self.ctx, plan, beside=[w.task for w in self.running])
            if verdict.kind != TASK or not runs_in_parallel(self.ctx, plan, verdict.task):
                return None
            got = self._claim(plan, verdict.task)
        if isinstance(got, Worker):
            self.running.append(got)
            self.started.append(got)
            got.thread = threading.Thread(target=self._run, args=(got,), name=f"worker-{got.task.id}", daemon=True)
            got.thread.start()
        return got

    def _claim(self, plan: Plan, task: Task) -> Worker | TaskResult:
        """The claim file (with the worktree), `[~]` in the main plan, then the worktree at HEAD."""
        ctx, ws = self.ctx, self.ws
        ctx.attempted = True
        base = self.main_head  # the crew's own HEAD: never a main branch an agent moved meanwhile
        log = _unique(ws.logs_dir / f"{ctx.log_path.stem}-{task.id}.log")
        claim = Claim(task=task.id, pid=os.getpid(), host=this_host(), started=utc_stamp(), heartbeat=time.time(),
                      tick=ctx.number or 0, base=base, worktree=f"{worktrees.WORKTREES_REL}/{task.id}",
                      log=ws.rel(log))
        # The tick's own record first (SPEC §13), in main: recovery believes it, not the claim.
        # A fresh worktree at the base has no untracked files; its branch is a name no branch has.
        branch = worktrees.free_branch(ws, task.id)
        write_record(ws, task, ctx.number or 0, base, set(), plan.meta.max_retries, ws.rel(log),
                     worktree=claim.worktree, branch=branch)
        write_claim(ws, claim)
        number = ctx.number
        ctx.number_saved = True
        try:
            edit_plan(ws.plan_path, lambda e: (e.set_status(task.id, "~", expect=" "),
                                               e.set_meta("total_ticks", str(number))))
            self.settle()
        except EditConflict as exc:
            remove_claim(ws, task.id)
            remove_record(ws, task.id)
            return TaskResult(task.id, False, f"could not claim: {exc}")
        docs = _copy(ctx, ws, log)
        worker = Worker(task, plan, claim, docs, docs, branch)
        try:
            path = worktrees.add(ws, task.id, base, branch)
        except MementoError as exc:
            result = self._fail_in_main(worker, f"could not make its worktree: {exc}", 0.0, None, "", {},
                                        "nothing ran", False, "")
            worktrees.remove(ws, task.id, branch)
            return result
        worker.ctx = _copy(ctx, WorktreeSpace(path, main=ctx.root), log)
        worker.ctx.own_runs = [] if self.watch is not None else None  # when its agent and verify ran
        return worker

    # ------------------------------------------------------------ one worker (its thread)

    def _run(self, w: Worker) -> None:
        at = w.at = Attempt(w.task, None, None, time.monotonic(), guards=partial(self._guards, w),
                                    on_pass=partial(self._passed, w), on_fail=partial(self._failed, w))
        try:
            with Heartbeat(self.ws, w.claim) as beat:
                at.beat = beat

                def work() -> TaskResult:
                    with self.lock:
                        self._clean_fresh(w)
                        w.window = Window(time.time())
                        at.snap = take_snapshot(w.ctx, w.claim.base, persons_paths(w.ctx.root))
                        own.take_state(self.ws, w.task.id)
                        save_git(self.ws, w.task.id, at.snap.git)
                    return attempt._work(w.ctx, w.plan, at)

                w.result = attempt_safely(w.ctx, at, work, at.on_fail)
        except BaseException as exc:  # noqa: BLE001 - a worker's thread must always end with a result
            w.result = TaskResult(w.task.id, False, f"the worker stopped: {type(exc).__name__}: {exc}")
        finally:
            with self.lock:
                worktrees.remove(self.ws, w.task.id, w.branch)
                if w.window is not None:
                    w.window.end = time.time()
                for sub in (w.docs, w.ctx):
                    self.ctx.git_failed = self.ctx.git_failed or sub.git_failed
                    self.ctx.rate_limited = self.ctx.rate_limited or sub.rate_limited
            w.finished = True
            self.changed.set()

    def refresh(self, w: Worker) -> None:
        """The refs as they are now in ``w``'s snapshot, but its own branch (as the guards fold it)
        and the main branch (at the crew's last commit, or a person's commit on top of it): the other
        workers' branches, and the tags and branches a person may move meanwhile, are never
        compared nor put back by a worker's guards."""
        snap = w.at.snap if w.at is not None else None
        if snap is None or snap.git is None:
            return
        own = w.branch
        now = git_state.watched_refs(self.ctx.root)
        refs = {k: v for k, v in now.items() if k != own and k != self.main_ref}
        refs.update({k: v for k, v in snap.git.refs.items() if k == own})
        self.follow_main()
        if self.main_ref and self.main_head:
            refs[self.main_ref] = self.main_head
        w.at.snap = replace(snap, git=replace(snap.git, refs=refs))

    def follow_main(self) -> None:
        """A person's commit on the main branch during the tick is taken as the crew's new HEAD: the
        branch moved forward to a commit no worker's branch holds. Any other move (backwards,
        elsewhere, or to a commit of a worker's branch: its agent's) stays foreign to the crew."""
        head, root = git_head(self.ctx.root), self.ctx.root
        if not self.main_head:
            return
        # Every commit ever seen on a worker's branch (a guard folds them away later).
        prefix = "refs/heads/" + worktrees.BRANCH_PREFIX
        tips = [tip for ref, tip in worktrees.refs(root).items() if ref.startswith(prefix)]
        if tips:
            out = run_git(root, ["rev-list", *tips, "^" + self.main_head, "--"], check=False).stdout
            self.on_branches.update(out.decode("ascii", "replace").split())
        if not head or head == self.main_head or head in self.on_branches:
            return  # unmoved, or on a worker's branch: made by its agent
        if run_git(root, ["merge-base", "--is-ancestor", self.main_head, head], check=False).returncode:
            return
        self.main_head = head

    def _guards(self, w: Worker, ctx: TickContext, plan: Plan, at, *, after_verify: bool = False):
        with self.lock:
            self.refresh(w)
            verdict = check_guards(ctx, plan, at, after_verify=after_verify)
            written = self._judge_worktree(w, [c.path for c in verdict.touched])
            outside = self._judge_outside(w)
            extra = tuple(written) + tuple(outside)
            return replace(verdict, reasons=extra + verdict.reasons) if extra else verdict

    # ------------------------------------------------------------ the whole repository (unconfined)

    def settle(self) -> None:
        """Memento wrote the main work tree (under the lock, just now): that is how it is now."""
        if self.watch is not None:
            self.watch.settle()

    def sweep(self) -> None:
        """Memento is about to write the main work tree (under the lock): what changed there since it
        last did is judged first, for every running worker whose window holds it (crew_watch.py)."""
        if self.watch is None:
            return
        found = self.watch.judge(self._windows(), untracked=False)  # new files: at the guards
        for w in self.running:
            w.foreign += found.get(w.task.id, [])
        for said in found.get("", []):
            cron_log(self.ws, f"parallel workers: an agent {said}")

    def _windows(self) -> dict[str, Window]:
        return {w.task.id: w.window for w in self.running if w.window is not None}

    def _judge_outside(self, w: Worker) -> list[str]:
        """What ``w``'s agent did outside its worktree: the main work tree, the other worktrees."""
        if self.watch is None or w.window is None:
            return []
        for other in self.running:
            if other is not w and other.window is None:  # not started yet: its worktree is fresh
                self._clean_fresh(other)
        self._sweep_worktrees(w)
        found, w.foreign = list(w.foreign), []
        found += self.watch.judge({**self._windows(), w.task.id: w.window}, w.task.id).get(w.task.id, [])
        return [f"the agent {r}" for r in dict.fromkeys(found)]

    # ------------------------------------------------------------ the running worktrees (unconfined)

    def _written_by_others(self, v: Worker, paths) -> list[tuple[str, float, bool]]:
        """The paths of ``v``'s worktree last changed when neither its agent nor its verify ran
        (crew_watch.own_run_at), or while its verify ran and another worker's window held the
        moment too: (path, ctime, sure). Scratch (bytecode, a runner's cache) is never judged."""
        if self.watch is None or v.window is None or v.ctx.own_runs is None:
            return []
        root, found = v.ctx.root, []
        for rel in paths:
            # A deletion has no time of its own (its folder's ctime moves with any file made there,
            # a test run's cache say): only what exists is judged.
            if scratch.is_scratch(root, rel) or not os.path.lexists(root / rel):
                continue
            moment = changed_at(root / rel)
            mine = own_run_at(moment, v.ctx.own_runs)
            if mine == "agent":
                continue  # the one moment time cannot tell (docs/confinement.md): only the sandbox can
            others = [o for o in self.started if o is not v and o.window is not None and o.window.holds(moment)]
            if mine == "verify" and not others:
                continue  # what its verify wrote (a refreshed lock file): judged as verify's
            found.append((rel, moment, mine == ""))
        return found

    def _judge_worktree(self, w: Worker, paths) -> list[str]:
        """What someone else wrote into ``w``'s worktree among the task's change: ``w`` is set aside
        (its work is never committed with what it did not write, no retry counted) and the one
        other worker whose window holds the write answers for it at its guards."""
        written = self._written_by_others(w, paths)
        if not written:
            return []
        w.set_aside = True
        for rel, moment, _sure in written:
            self._blame(w, rel, moment)
        sure = [rel for rel, _m, s in written if s]
        unsure = [rel for rel, _m, s in written if not s]
        said = []
        if sure:
            said.append(f"{_listed(sure)} changed in its worktree after its own agent had ended, while neither "
                        "it nor its verify ran (another worker's agent, or a process outside the tick)")
        if unsure:
            said.append(f"{_listed(unsure)} changed while its verify ran and another worker ran too (whose "
                        "write it was cannot be told)")
        return ["; ".join(said) + ": what the task did not write is never committed as its work; set aside, "
                "no retry counted"]

    def _blame(self, victim: Worker, rel: str, moment: float) -> None:
        """The one other running worker whose window holds ``moment`` wrote ``rel`` into ``victim``'s
        worktree; held by several: nobody can be named (the cron log says so)."""
        holders = [o for o in self.started if o is not victim and o.window is not None and o.window.holds(moment)]
        said = f"wrote into the worktree of {victim.task.id}: {rel}"
        if len(holders) == 1:
            if said not in holders[0].foreign:
                holders[0].foreign.append(said)
        elif holders:
            cron_log(self.ws, f"parallel workers: {rel} in the worktree of {victim.task.id} was written while "
                              f"{', '.join(o.task.id for o in holders)} ran")

    def _sweep_worktrees(self, w: Worker) -> None:
        """Before ``w``'s guards and its commit: the other running worktrees, for what was written
        there while ``w`` ran (its agent may end, and pass, before their owners look)."""
        for v in self.running:
            if v is w or v.window is None or not (v.ctx.root / ".git").exists():
                continue
            paths = sorted({e.path for e in git_status(v.ctx.root)} - {""})
            for rel, moment, _sure in self._written_by_others(v, paths):
                if w.window is not None and w.window.holds(moment):
                    self._blame(v, rel, moment)

    def _clean_fresh(self, w: Worker) -> None:
        """``w``'s worktree before its snapshot holds exactly its base: anything else is another
        worker's agent's (whose window holds the change: its guards fail), removed."""
        if self.watch is None:
            return
        root = w.ctx.root
        paths = self.watch.foreign_in_fresh(root, w.claim.base)
        if not paths:
            return
        for other in self.running:
            if other is w or other.window is None:
                continue
            theirs = [p for p in paths if other.window.holds(changed_at(root / p))]
            if theirs:
                other.foreign.append(f"wrote into the worktree of {w.task.id}: {', '.join(theirs[:10])} (removed)")
        self.watch.clean_fresh(w.task.id, root, w.claim.base, paths)

    # ------------------------------------------------------------ pass: rebase, bring in, commit

    def _passed(self, w: Worker, ctx: TickContext, at, touched, duration: float, verify_tail: str, report):
        """The task's one commit on its branch, then (under the lock) rebased and brought into main."""
        message = f"memento: complete {w.task.id} {w.task.title}".strip()
        paths = [c.path for c in touched]
        with self.lock:  # its branch moves: never while another worker's guards compare the refs
            self.sweep()
            self._sweep_worktrees(w)
            written = self._judge_worktree(w, paths)  # since its guards: still nobody else's
            if written:
                return self._failed(w, ctx, at, written[0], duration, 0, verify_tail, report)
            if w.foreign:  # found by this sweep, or by another worker's look at its fresh worktree
                said, w.foreign = "; ".join(f"the agent {r}" for r in dict.fromkeys(w.foreign)), []
                return self._failed(w, ctx, at, said, duration, 0, verify_tail, report)
            if paths:
                try:
                    commit_paths(ctx.root, paths, message, author=ctx.config.author, blobs=at.blobs)
                except MementoError as exc:
                    if "nothing to commit" not in str(exc):
                        return self._failed(w, ctx, at, f"could not commit in its worktree: {exc}", duration, 0,
                                            verify_tail, report)
            return self._merge(w, at, touched, duration, verify_tail, report)

    def _merge(self, w: Worker, at, touched, duration: float, verify_tail: str, report) -> TaskResult:
        docs, root = w.docs, self.ctx.root
        self.follow_main()
        onto = git_head(root)
        if onto != self.main_head:  # not a commit of the crew's: a worker's agent (its guards restore it)
            return self._failed(w, w.ctx, at, f"the main branch moved outside Memento during the tick (to "
                                f"{(onto or '')[:7]}, expected {(self.main_head or '')[:7]}); the task's work "
                                "was set aside", duration, 0, verify_tail, report, count_retry=False)
        tip, conflicts, said = worktrees.rebase(w.ctx.root, onto, docs.config.author)
        if tip is None:
            if conflicts:
                reason = (f"merge conflict: {', '.join(conflicts)} changed on the main branch since the task "
                          f"started (rebase onto {(onto or '')[:7]} failed); a retry starts from the new HEAD")
            else:
                reason = f"could not rebase onto {(onto or '')[:7]}: " + " ".join(said.split())[:300]
            return self._failed(w, w.ctx, at, reason, duration, 0, verify_tail, report)
        merged = sorted(p for p, blob in hash_blobs(w.ctx.root, list(at.blobs)).items()
                        if blob != at.blobs.get(p))
        if merged:  # git merged the main branch's changes into them: contents verify never checked (§13)
            return self._failed(w, w.ctx, at, f"merge conflict: {', '.join(merged)} changed on the main branch "
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
            return self._failed(w, w.ctx, at, "the main work tree has uncommitted changes to "
                                + ", ".join(busy) + "; the task's work was set aside", duration, 0,
                                verify_tail, report, count_retry=False)
        result = record_pass(docs, main_at, touched, duration, verify_tail, report)
        self.main_head = git_head(root)
        self.settle()
        return result

    # ------------------------------------------------------------ fail: roll back the worktree, count

    def _failed(self, w: Worker, ctx: TickContext, at, reason: str, duration: float, exit_code, output: str,
                report, *, count_retry: bool = True, status: str = "") -> TaskResult:
        """Roll the worktree back to its snapshot, then write the failure in the main work tree."""
        count_retry = count_retry and not w.set_aside  # someone else wrote its worktree: not its fault
        with self.lock:
            reason = own.with_state_reason(self.ws, w.task.id, reason)
            rolled = "nothing ran"
            if at is not None and at.snap is not None:
                wctx = w.ctx
                own.unlink_own_links(wctx.ws, at.snap, w.task.id, wctx.log_path)
                own.split_own_hard_links(wctx.ws, at.snap, w.task.id, wctx.log_path)
                if at.beat is not None:
                    at.beat.update(stage="failing")
                self.refresh(w)
                git_state.put_back(wctx.root, at.snap.git, rollback_folder(self.ws, f"{w.task.id}-git"))
                damaged = put_back_objects(wctx, at, "the agent")  # before the checkout reads one
                reason = f"{reason}; {damaged}" if damaged and damaged not in reason else reason
                forged = receipts.forged_memory(self.ws, at.snap.memory_head, receipts.held(self.ws), w.task.id)
                if forged:  # its guards may not have run (an agent that exits non-zero)
                    reason += (f"; the agent made {len(forged)} commit(s) in memory/ that say they are a person's: "
                               f"{', '.join(forged)} (taken out of memory/'s history)")
                unseen.settle(wctx.root, at.snap.unseen, rollback_folder(self.ws, f"{w.task.id}-unseen"),
                              wctx.log_path)
                rolled = "in its worktree: " + wctx.rolled_back(
                    roll_back(wctx.ws, at.snap.base, at.snap.untracked, w.task.id,
                              keep_patterns=at.snap.cleanignore))
            return self._fail_in_main(w, reason, duration, exit_code, output, report, rolled, count_retry, status)

    def _fail_in_main(self, w: Worker, reason: str, duration: float, exit_code, output: str, report,
                      rolled: str, count_retry: bool, status: str) -> TaskResult:
        """The failure entry, the retry counted (`[!]` at max_retries), the documents committed."""
        docs, task = w.docs, w.task
        with self.lock:
            self.sweep()
            # The tick's SIGTERM reaches the workers' contexts at the crew's next poll: look at it here.
            docs.interrupted = docs.interrupted or self.ctx.interrupted or reason == SIGTERM_REASON
            if w.at is not None and w.at.question is not None:  # the worker asked (SPEC §18)
                return self._asked_in_main(w, reason, duration, report, rolled)
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
            docs.commit(list(KEPT_DOCS), message)
            self.main_head = git_head(self.ctx.root)
            if w.at is not None and w.at.beat is not None:
                w.at.beat.stop()
            remove_claim(self.ws, task.id)
            remove_record(self.ws, task.id)  # the attempt is over: nothing left to recover
            self.settle()
        return TaskResult(task.id, False, reason, duration, None, blocked)

    def _asked_in_main(self, w: Worker, reason: str, duration: float, report, rolled: str) -> TaskResult:
        """A question's entry, the task ``[?]`` (``[!]`` past max_questions), the documents committed."""
        docs, task = w.docs, w.task
        fields, blocked, message = question_fields(docs, w.at, reason, duration, report, rolled)
        docs.entry(fields, None)
        asking_done(docs, w.at, blocked)
        docs.commit(list(KEPT_DOCS), message)
        self.main_head = git_head(self.ctx.root)
        if w.at.beat is not None:
            w.at.beat.stop()
        remove_claim(self.ws, task.id)
        remove_record(self.ws, task.id)
        self.settle()
        return TaskResult(task.id, False, reason, duration, None, blocked, asked=True)

    # ------------------------------------------------------------ waiting, SIGTERM

    def wait(self) -> list[TaskResult]:
        """Wait for at least one worker to end (passing a SIGTERM on to all); their results."""
        while True:
            if self.ctx.interrupted:
                self.interrupt()
            done = [w for w in self.running if w.finished]
            if done:
                break
            self.changed.wait(POLL_SECONDS)
            self.changed.clear()
        for w in done:
            w.thread.join()
            self.running.remove(w)
        return [w.result or TaskResult(w.task.id, False, "the worker ended without a result") for w in done]

    def interrupt(self) -> None:
        """Every worker stops at its next safe point; every process group they wait on is stopped."""
        for w in self.running:
            w.ctx.interrupted = w.docs.interrupted = True
        agents.terminate_running()

    def stop_all(self) -> None:
        """Nothing outlives the tick: interrupt what still runs and wait for it."""
        if not self.running:
            return
        self.ctx.interrupted = self.ctx.interrupted or any(not w.finished for w in self.running)
        while self.running:
            self.ctx.results.extend(self.wait())


def _listed(names: list[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _copy(ctx: TickContext, ws: Workspace, log: Path) -> TickContext:
    """The tick's context for one worker: same config, state and number; its own workspace and log."""
    sub = copy.copy(ctx)
    sub.ws, sub.log_path = ws, log
    sub.results, sub.git_failed, sub.own_runs = [], "", None
    return sub


# ---------------------------------------------------------------- recovery (SPEC §4 step 4)


def stop_stale_workers(ctx: TickContext, plan: Plan) -> None:
    """Before stale claims are reset: a dead tick's worker has its agent group stopped and its
    worktree and branch removed (the claim stays, for recovery to reset the task and count it)."""
    from .recovery import stale_reason

    ws = ctx.ws
    for path in sorted(ws.claims_dir.glob("*.json")) if ws.claims_dir.is_dir() else ():
        task_id = path.stem
        claim = read_claim(ws, task_id)
        if claim is None or not claim.worktree or not _SAFE_ID.fullmatch(task_id):
            continue
        rec = read_record(ws, task_id)
        why = stale_reason(ws, claim, rec, plan.meta.stale_lock_timeout)
        if why is None and claim.pid != os.getpid():
            continue
        where = worktrees.worktree_path(ws, task_id)
        # Frozen and killed outright (reaper.kill_marked), the run's guard with the rest: a SIGTERM
        # to the group would let the guard go first and hand what it kept to init.
        leaders = [claim.pgid] if claim.pgid and claim.host == this_host() and leader_is_ours(
            claim.pgid, Workspace(where), task_id, None) else []
        if rec is not None and rec.host == this_host() and rec.pid != os.getpid():
            kill_marked(rec.identity, str(where), leaders)  # the agent carries its worktree as its project
        elif leaders:
            kill_marked("", (), leaders)  # no record: only the group
        saved = worktrees.save_work(ws, task_id, (rec.base if rec is not None else None) or claim.base)
        removed = worktrees.remove(ws, task_id, rec.branch if rec is not None else None) + saved
        if why is None:  # this process's own (a worker thread that died): recovery then sees no claim
            remove_claim(ws, task_id)
        cron_log(ws, f"stale worker {task_id} ({why or 'left by this process'}): removed "
                     + (", ".join(removed) or "nothing"))


def recorded_branch(ws: Workspace, task_id: str) -> str:
    """The branch the task's record names ('' when none): one of Memento's (worktrees.ours_of)."""
    rec = read_record(ws, task_id)
    return rec.branch if rec is not None else ""


def prune_worktrees(ctx: TickContext) -> list[str]:
    """Worktrees and `memento/<ID>` branches with no claim: removed; what was removed."""
    ws, removed = ctx.ws, []
    if not worktrees.worktrees_dir(ws).exists() and (ctx.config is None or ctx.config.workers_max < 2):
        return removed  # never had a worker here: no git command for it on every serial tick
    for task_id in worktrees.present(ws, partial(recorded_branch, ws)):
        if _SAFE_ID.fullmatch(task_id) and read_claim(ws, task_id) is None:
            gone = worktrees.remove(ws, task_id, recorded=recorded_branch(ws, task_id))
            removed += gone
            if gone:
                cron_log(ws, f"pruned a stale worktree of {task_id}: {', '.join(gone)}")
    return removed

