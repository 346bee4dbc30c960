"""One task's attempt (SPEC §4 steps 7–14): claim, snapshot, prompt, agent, guards, verify, pass or fail.

:func:`attempt_task` runs the steps in order; each step is a function named
after it. The guards themselves are pure (guards.py); this module gathers what
they look at. A pass commits exactly the task's paths plus Memento's documents;
a failure rolls back to the snapshot (rollback.py) and counts a retry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from .. import agents, gitops, notes, sandbox, status_log
from ..crashpoints import crash_point
from ..durations import format_duration
from ..errors import EditConflict, MementoError
from ..locks import atomic_write_bytes
from ..plan import Plan, Task, edit_plan
from ..questions import forget_question
from ..runlog import utc_stamp
from ..state import Claim, Heartbeat, remove_claim, this_host, write_claim
from ..status_log import SELF_COMMIT
from ..workspace import KEPT_DOCS
from . import (
    asking,
    confine,
    gitstate,
    limits,
    modes,
    objects,
    own,
    receipts,
    review,
    unseen,
)
from . import kept as kept_files
from .context import TaskResult, TickContext
from .failsafe import attempt_safely
from .files import append_log, read_or_none, tail, unlink
from .guards import Observed, Snapshot, Verdict, changed_during_verify, check
from .record import (
    failure_output,
    last_line,
    mark_committing,
    read_tick_result,
    remove_record,
    save_git,
    save_unseen,
    tail_lines,
    write_record,
)
from .rollback import note_keys, restore_documents, roll_back, rollback_folder
from .sizes import diff_bytes_reason

SIGTERM_REASON = "interrupted by SIGTERM"


@dataclass
class Attempt:
    """One task's run: the snapshot taken at the claim, and what the tick learns on the way."""

    task: Task
    snap: Snapshot
    continued: tuple[int, int] | None
    began: float
    beat: Heartbeat | None = None
    given_notes: list = field(default_factory=list)
    wrap: tuple[str, ...] = ()  # the sandbox's argv prefix the agent ran in; verify runs in it too
    agent: object = None  # limits.AgentOutcome: usage, rate limit, fallbacks
    blobs: dict = field(default_factory=dict)  # path -> (mode, blob id) verify passed on: what is committed
    review: object = None  # review.Outcome when the acceptance gate ran (SPEC §16)
    modes_reset: list = field(default_factory=list)  # what settle_modes removed, named in the entry
    question: tuple | None = None  # (text, first line, choices) when the worker asked (asking.py, SPEC §18)
    # A parallel worker's own steps (tick/workers.py); None: the serial ones of this module.
    guards: object = None  # like check_guards
    on_pass: object = None  # like record_pass
    on_fail: object = None  # like record_failure


def attempt_task(ctx: TickContext, plan: Plan, task: Task, continued: tuple[int, int] | None) -> TaskResult:
    """Steps 7–14 for ``task``: its result, passed or failed, with everything written down."""
    ctx.attempted = True
    began = time.monotonic()
    base, untracked = gitops.head(ctx.root), gitops.persons_paths(ctx.root)
    write_record(ctx.ws, task, ctx.number or 0, base, untracked, plan.meta.max_retries, ctx.ws.rel(ctx.log_path))
    claim = claim_task(ctx, task, base, untracked)
    if isinstance(claim, TaskResult):
        return claim
    crash_point("tick:after-claim")
    at = Attempt(task, take_snapshot(ctx, base, untracked), continued, began)
    own.take_state(ctx.ws, task.id)  # the ledger, notify state and claims as they are now
    save_git(ctx.ws, task.id, at.snap.git)  # what the stale recovery restores .git from (SPEC §13)
    save_unseen(ctx.ws, task.id, at.snap.unseen)  # and what was below the work tree, a person's
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
    reason, agent_exit = limits.run_agent(ctx, at, prompt_file, run_one, build_worker_prompt)
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
    touched: tuple[gitops.FileChange, ...] = ()
    if not reason and ctx.interrupted:
        reason = SIGTERM_REASON
    if not reason:
        verdict = (at.guards or check_guards)(ctx, plan, at)
        reason, touched = verdict.reason, verdict.touched
        crash_point("tick:after-guards")
    verify_exit, verify_tail = None, ""
    if not reason and not ctx.interrupted:
        beat.update(stage="verifying")
        before = gitops.hash_blobs(ctx.root, [c.path for c in touched], write=False)  # only compared
        verify_exit, verify_tail, reason = run_verify(ctx, task, at.wrap)
    if not reason and not ctx.interrupted:
        # What verify itself changed (a refreshed lock file, a snapshot) is checked too.
        verdict = (at.guards or check_guards)(ctx, plan, at, after_verify=True)
        reason, touched = verdict.reason, verdict.touched
        at.blobs = gitops.hash_blobs(ctx.root, [c.path for c in touched])
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


# ---------------------------------------------------------------- step 7: claim


def claim_task(ctx: TickContext, task: Task, base: str | None, untracked: set[str]) -> Claim | TaskResult:
    """Write the claim file, then mark the task `[~]` (and this tick's number in Meta)."""
    ws = ctx.ws
    claim = Claim(task=task.id, pid=os.getpid(), host=this_host(), started=utc_stamp(),
                  heartbeat=time.time(), tick=ctx.number or 0, base=base, untracked=sorted(untracked),
                  log=ws.rel(ctx.log_path))
    # The claim file exists before [~] does, so a [~] without a claim is always stale.
    write_claim(ws, claim)
    number = ctx.number

    def mark(e):
        e.set_status(task.id, "~", expect=" ")
        e.set_meta("total_ticks", str(number))

    ctx.number_saved = True
    try:
        edit_plan(ws.plan_path, mark)
    except EditConflict as exc:
        remove_claim(ws, task.id)
        remove_record(ws, task.id)  # the attempt is over: nothing left to recover
        return TaskResult(task.id, False, f"could not claim: {exc}")
    return claim


# ---------------------------------------------------------------- step 8: snapshot


def take_snapshot(ctx: TickContext, base: str | None, untracked: set[str]) -> Snapshot:
    """HEAD, the untracked files and Memento's documents as they are right after the claim."""
    ws = ctx.ws
    archive = ctx.plan().meta.status_archive_dir
    # A FIFO or socket an earlier run left in Memento's folders goes now, unread: only what this
    # run's agent makes fails this attempt (confine.after_agent).
    left = own.remove_specials(ws)
    if left:
        append_log(ctx.log_path, f"[memento] before the run: {own.specials_reason(left)}\n")
    own.split_own_hard_links(ws, None, "", ctx.log_path)  # an earlier run's, not this agent's: said in the log
    kept = kept_files.take(ctx.root, untracked, gitops.read_pattern_file(ws.cleanignore_path), archive,
                           confined=sandbox.resolve(ctx.config).confined)
    return Snapshot(
        base=base, untracked=frozenset(untracked),
        plan=ws.plan_path.read_bytes(), project_map=read_or_none(ws.map_path),
        status=read_or_none(ws.status_path) or b"", notes=receipts.settled(ws.notes_path),
        note_keys=frozenset(n.key for n in notes.parse_notes(ws.notes_path)),
        cleanignore=tuple(gitops.read_pattern_file(ws.cleanignore_path)),
        taken_at=datetime.now(UTC).replace(microsecond=0), git=gitstate.capture(ctx.root),
        runtime=own.runtime_copy(ws),
        absent=own.absent_own(ws, archive), archive_dir=archive, memory_head=receipts.memory_head(ws),
        kept=kept, modes=modes.take(ctx.root, kept.modes, untracked, archive),
        objects=objects.take(ctx.root, ws.project_memento_dir / objects.MIRROR),
        unseen=unseen.look(ctx.root),
    )


# ---------------------------------------------------------------- step 9: prompt


def build_worker_prompt(ctx: TickContext, task: Task) -> tuple[Path, list[notes.Note]]:
    """The worker's prompt in .memento/prompts/ID.md, and the notes it was given."""
    from ..prompt import build_prompt

    ws = ctx.ws
    spec = agents.PRESETS.get(ctx.config.agent_preset)
    separate = spec is not None and spec.separate_system_prompt and ws.system_prompt_path.is_file()
    text, given = build_prompt(ws, ctx.plan(), task, include_system=not separate)
    prompt_file = ws.memento_dir / "prompts" / f"{task.id}.md"
    atomic_write_bytes(prompt_file, text.encode("utf-8"), sync=False)  # made again by every attempt
    # The prompt file is overwritten by the next attempt; the log keeps the evidence
    # that this worker was given the checkpoint (the doctor's recovery-priority check).
    included = "CURRENT_STATE.md included" if ws.checkpoint_path.exists() else "no CURRENT_STATE.md"
    append_log(ctx.log_path, f"[memento] prompt {ws.rel(prompt_file)} "
                             f"({text.count(chr(10))} lines, {included})\n")
    return prompt_file, given


# ---------------------------------------------------------------- step 10: the agent


def run_confined_agent(ctx: TickContext, task: Task, prompt_file: Path, beat: Heartbeat, *,
                       at: Attempt) -> tuple[str, int | None]:
    """Step 10 inside the sandbox when there is one (the preset in ctx.config decides its state
    dirs); verify then runs in the same sandbox (``at.wrap``)."""
    at.wrap, refused = confine.prepare(ctx, task, at.snap.untracked, archive_dir=at.snap.archive_dir)
    if refused:
        return refused, None
    return run_agent(ctx, task, prompt_file, beat, at.wrap)


def run_agent(ctx: TickContext, task: Task, prompt_file: Path, beat: Heartbeat,
              wrap: tuple[str, ...] = (), *, system_prompt: Path | None = None,
              context_files: tuple[str, ...] | None = None, timeout: float | None = None) -> tuple[str, int | None]:
    """Run the agent in its own process group with a timeout: ('' or the failure reason, exit code).
    ``system_prompt``, ``context_files`` and ``timeout``: another role's (the reviewer's), else the worker's."""
    config, ws = ctx.config, ctx.ws
    system_prompt = system_prompt or ws.system_prompt_path
    try:
        invocation = agents.build_invocation(
            config, task_id=task.id, do_command=task.do, prompt_file=prompt_file,
            system_prompt_file=system_prompt, workdir=ctx.root,
            context_files=task.context_files if context_files is None else context_files,
            confined=bool(wrap))
    except MementoError as exc:
        append_log(ctx.log_path, f"[memento] {task.id}: {exc}\n")
        return str(exc), None
    env = agents.agent_env(ws, task_id=task.id, prompt_file=prompt_file,
                           system_prompt_file=system_prompt, extra=invocation.env, config=config)
    if wrap:  # .git is read-only in the sandbox: the agent stages into its own index (SPEC §13)
        try:
            env.update(sandbox.agent_git_env(ws))
        except (OSError, MementoError) as exc:
            append_log(ctx.log_path, f"[memento] sandbox: no private git index ({exc})\n")
    append_log(ctx.log_path, f"[memento] tick #{ctx.number} task {task.label}\n")
    limit = timeout or task.timeout_seconds or config.agent_timeout
    with own_run(ctx, "agent"):
        result = agents.run_agent(invocation, cwd=ctx.root, log_path=ctx.log_path, timeout=limit, env=env,
                                  wrap=wrap, on_start=lambda pgid: (beat.update(pgid=pgid),
                                                                    crash_point("tick:agent-running")))
    if result.error:
        return result.error, None
    if result.interrupted:
        return SIGTERM_REASON, None
    if result.timed_out:
        return f"agent timed out after {format_duration(limit)} (its process group was killed)", None
    if result.exit_code != 0:
        return f"agent exited with code {result.exit_code}", result.exit_code
    return "", 0


@contextmanager
def own_run(ctx: TickContext, kind: str) -> Iterator[None]:
    """When a parallel worker's own agent or verify ran (``ctx.own_runs``): a change in its worktree
    at another moment is not its own (workers.Crew judges it)."""
    if ctx.own_runs is None:
        yield
        return
    run = [kind, time.time(), None]
    ctx.own_runs.append(run)
    try:
        yield
    finally:
        run[2] = time.time()  # its processes are gone: run_in_group waited for the whole group


def commit_memory_writes(ctx: TickContext, task: Task) -> None:
    """Commit what the agent wrote into memory/ without `memento memory write` (attributed to the task)."""
    from ..memory import commit_unattributed
    from .afterwards import best_effort

    best_effort(ctx.ws, "commit_unattributed", commit_unattributed, ctx.ws, task.id)


# ---------------------------------------------------------------- step 11: guards


def check_guards(ctx: TickContext, plan: Plan, at: Attempt, *, after_verify: bool = False) -> Verdict:
    """Observe the work tree and Memento's documents, and judge them against the snapshot."""
    ws, snap = ctx.ws, at.snap
    links = own.unlink_own_links(ws, snap, at.task.id, ctx.log_path)  # before anything is written
    hard = own.split_own_hard_links(ws, snap, at.task.id, ctx.log_path)  # nor appended, chmod-ed
    impostors = own.remove_impostors(ws, snap)  # nor read: a FIFO is never opened
    # Before any other git command reads it; a decoy put where .git was goes to logs/rollback/.
    git_found = gitstate.put_back(ctx.root, snap.git, rollback_folder(ws, f"{at.task.id}-git"))
    who = "verify" if after_verify else "the agent"
    damaged = put_back_objects(ctx, at, who)  # before git reads one
    # A repository it nested or a path too long for git: gone before any copy or git command meets it.
    below = unseen.settle(ctx.root, snap.unseen, rollback_folder(ws, f"{at.task.id}-unseen"), ctx.log_path, who)
    # Before verify: nothing the agent made or changed among ignored paths may fool it (kept.py).
    kept = kept_files.PutBack() if after_verify else kept_files.settle(
        ctx.root, snap.kept, ctx.log_path, snap.archive_dir, rollback_folder(ws, f"{at.task.id}-ignored"))
    folded = 0 if _branch_untouched(snap, git_found) else gitops.fold_commits(ctx.root, snap.base)
    changes = tuple(gitops.changes_since(ctx.root, snap.base, set(snap.untracked)))
    if not after_verify:  # the agent's new scratch git does not ignore (x.pyc.1, a __pycache__/): gone
        kept_files.remove_scratch(ctx.root, changes, ctx.log_path)
    else:  # the task's code ran in verify: no bytecode it wrote outlives the attempt (a forged .pyc)
        kept_files.remove_bytecode(ctx.root, snap.kept, changes, ctx.log_path, snap.archive_dir)
    reset = settle_modes(ctx, at, changes)
    seen = Observed(
        folded=folded,
        changes=changes,
        plan=read_or_none(ws.plan_path), project_map=read_or_none(ws.map_path),
        status=read_or_none(ws.status_path) or b"", note_keys=note_keys(ws), git=git_found, links=links,
        notes=read_or_none(ws.notes_path) or b"", impostors=impostors,
        persons=(persons := receipts.held(ws)),  # what people announced while it ran: theirs (tick/receipts.py)
        memory_forged=receipts.forged_memory(ws, snap.memory_head, persons, at.task.id),
    )
    verdict = check(at.task, snap, seen, plan.meta.max_diff_lines, after_verify=after_verify,
                    confined=bool(at.wrap))
    bad_links = kept_files.link_reason(ctx.root, verdict.touched, at.task.guard_files, snap.kept,
                                       snap.archive_dir, "verify" if after_verify else "the agent")
    gitlinks = unseen.gitlink_reason(ctx.root, verdict.touched, at.task.context_files, who)
    hard_links = own.hard_links_reason(hard, who)
    extra = tuple(r for r in (damaged, hard_links, below.reason(who), kept.reason(), bad_links, gitlinks,
                              reset.reason(who)) if r)
    verdict = Verdict((*verdict.reasons, *extra), verdict.touched) if extra else verdict
    too_big = diff_bytes_reason(ctx.root, snap.base, verdict.touched, plan.meta.max_diff_bytes,
                                after_verify=after_verify)
    state = own.state_reason(ws, at.task.id, who)
    extra = tuple(r for r in (too_big, state) if r)
    return Verdict(verdict.reasons + extra, verdict.touched) if extra else verdict


def settle_modes(ctx: TickContext, at: Attempt, changes=()) -> modes.Found:
    """Modes are git's (modes.py, SPEC §13): the one step both ways run, at the guards after the agent
    and after verify, and at a rollback (before it undoes the files). What it removed is kept for the attempt's entry."""
    found = modes.settle(ctx.root, at.snap.modes, changes, ctx.log_path)
    at.modes_reset += [item for item in found.special + found.named if item not in at.modes_reset]
    return found


def _modes_field(fields: list[tuple[str, str]], at: Attempt) -> list[tuple[str, str]]:
    """The entry's fields with "Modes Reset" before its log when settle_modes removed something."""
    if not at.modes_reset:
        return fields
    said = ("Modes Reset", modes.listed(at.modes_reset, 20))
    return [*fields[:-1], said, fields[-1]] if fields and fields[-1][0] == "Log" else [*fields, said]


def put_back_objects(ctx: TickContext, at: Attempt, who: str) -> str:
    """The git objects of the snapshot as they were (objects.py), saved under logs/rollback/ what
    was found; '' or the guard failure. Objects with no copy to put back stop the tick for a person
    (the breaker's git error: the plan paused, the alert, exit 1)."""
    damage = objects.put_back(at.snap.objects, ctx.root, rollback_folder(ctx.ws, f"{at.task.id}-objects"))
    if damage.lost and not ctx.git_failed:
        ctx.git_failed = f"git objects changed during {at.task.id} could not be put back: {', '.join(damage.lost[:5])}"
    if damage:
        append_log(ctx.log_path, f"[memento] {damage.reason(who)}\n")
    return damage.reason(who)


def _branch_untouched(snap: Snapshot, found: gitstate.GitState | None) -> bool:
    """Whether HEAD's branch was found at the snapshot's commit, read under the snapshot's own
    git config, hooks and info (unchanged): HEAD, put back on that branch, is then at the base
    and there is nothing to fold, without asking git again (a command fewer, twice a task)."""
    return (found is not None and snap.git is not None and bool(snap.git.branch) and snap.base is not None
            and found.files == snap.git.files and found.refs.get(snap.git.branch) == snap.base)


# ---------------------------------------------------------------- step 12: verify


def run_verify(ctx: TickContext, task: Task, wrap: tuple[str, ...] = ()) -> tuple[int | None, str, str]:
    """Run the task's verify command: (exit code or None, the output's tail, '' or the failure reason)."""
    log = ctx.log_path
    append_log(log, f"\n[memento] verify {task.id}: {task.verify}\n")
    start = log.stat().st_size
    # Confined, the user site of Python is the agent's private home: a .pth it planted there must
    # not run inside the tests that judge it (the person's own user site is not visible anyway).
    extra = {"PYTHONNOUSERSITE": "1"} if wrap else None
    env = agents.agent_env(ctx.ws, task_id=task.id, config=ctx.config, model=False, extra=extra)
    limit = task.timeout_seconds or ctx.config.verify_timeout  # the task's own `timeout:` first
    with own_run(ctx, "verify"):
        result = agents.run_in_group(task.verify, cwd=ctx.root, log_path=log, timeout=limit,
                                     env=env, shell=True, wrap=wrap)
    output = tail(log, start)
    append_log(log, f"[memento] verify exit code: {result.exit_code}\n")
    if result.interrupted:
        return None, output, SIGTERM_REASON
    if result.timed_out:
        return None, output, f"verify timed out after {format_duration(limit)}"
    if result.error:
        return None, output, f"verify could not run: {result.error}"
    if result.exit_code != 0:
        return result.exit_code, output, f"verify failed with exit code {result.exit_code}"
    return 0, output, ""


# ---------------------------------------------------------------- step 13: pass


def record_pass(ctx: TickContext, at: Attempt, changes, duration: float, verify_tail: str, report) -> TaskResult:
    """`[x]`, the notes used marked read, the SUCCESS entry, one commit of the task's paths."""
    ws, task = ctx.ws, at.task
    subject = f"memento: complete {task.id} {task.title}".strip()
    # The entry is in the commit, so it cannot hold the commit's sha: it names the commit that
    # adds it, and the commit's trailer names the entry (gitops.tick_commits resolves it).
    message = f"{subject}\n\n{gitops.TICK_TRAILER}: {ctx.tick_number()} {task.id}\n"
    paths = sorted({c.path for c in changes} | set(KEPT_DOCS))
    fields = review.entry_fields(_modes_field(_success_fields(ctx, task, changes, duration, verify_tail, report,
                                                              subject), at), at.review)
    entry = ctx.format_entry(limits.with_usage(fields, at.agent), at.continued)
    # Record where we are first: a crash from here on is finished by the next tick,
    # which commits exactly these files (their hashes are in the claim) and this entry.
    hashes = {p: oid for p, (mode, oid) in at.blobs.items() if mode != gitops.GONE[0]}
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


# ---------------------------------------------------------------- step 14: fail


def record_failure(ctx: TickContext, at: Attempt, reason: str, duration: float, exit_code: int | None,
                   output: str, report, *, count_retry: bool = True, status: str = "") -> TaskResult:
    """Roll back to the snapshot, count a retry (`[!]` at max_retries), write the entry, commit the docs."""
    ws, task = ctx.ws, at.task
    own.unlink_own_links(ws, at.snap, task.id, ctx.log_path)
    own.split_own_hard_links(ws, at.snap, task.id, ctx.log_path)  # before the entry, the plan's edit
    reason = own.with_state_reason(ws, task.id, reason)  # before the entry: the ledger, notify state, claims
    at.beat.update(stage="failing")
    gitstate.put_back(ctx.root, at.snap.git, rollback_folder(ws, f"{task.id}-git"))  # the agent may have failed
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
