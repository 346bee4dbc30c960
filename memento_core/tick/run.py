"""The tick (SPEC §4): one verified task at a time, committed or rolled back, all on disk.

``run_tick(root)`` does the whole algorithm and returns a :class:`TickOutcome`
with the exit code (0 ran, 1 needs attention, 2 could not run). Every step
that changes a shared file goes through the locked line edits of plan.py,
notes.py and status_log.py; every git step through gitops.py; every process
through agents.py (own process group, output to the tick log, killed whole).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .. import agents, gitops, notes, status_log
from ..config import Config, format_duration, load_config
from ..crashpoints import crash_point
from ..errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, EditConflict, MementoError
from ..locks import atomic_write_bytes, atomic_write_text, file_lock, lock_path_for, locked_edit
from ..plan import Plan, Task, edit_plan, parse_plan
from ..runlog import Outcome, cron_log
from ..scheduler import BLOCKED, COMPLETE, TASK, pick
from ..state import (
    Claim,
    Heartbeat,
    TickState,
    claim_is_stale,
    read_claim,
    remove_claim,
    this_host,
    write_claim,
)
from ..workspace import KEPT_DOCS, OWN_DOCS, Workspace

MIN_FREE_BYTES = 500 * 1024 * 1024
BLOCKED_RATIO = 0.30
ERROR_TAIL_LINES = 20
# Retention of what logs/ accumulates, so a tick's cost and the disk do not grow with history.
PRUNE_EVERY = 20
KEEP_TICK_LOGS = 2000
KEEP_ROLLBACKS = 500
CRON_LOG_MAX = 1024 * 1024
PENDING_COMMIT = "(recorded after the commit)"



@dataclass
class TaskResult:
    task_id: str
    passed: bool
    reason: str = ""
    duration: float = 0.0
    commit: str | None = None
    blocked: bool = False


TickOutcome = Outcome


@dataclass
class _Attempt:
    """One task's run: the snapshot taken at the claim, and what the tick learns on the way."""

    task: Task
    base: str | None
    untracked_before: set[str]
    continued: tuple[int, int] | None
    plan: bytes  # the plan right after the claim
    project_map: bytes | None
    status: bytes
    notes: bytes
    note_keys: set[str]
    cleanignore: list[str]
    beat: Heartbeat | None = None
    given_notes: list = field(default_factory=list)


class _Interrupted(Exception):
    """SIGTERM arrived: stop at the next safe point."""


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


class Tick:
    """One tick's work; created and run while holding the tick lock."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.root = ws.root
        self.started = datetime.now(UTC)
        self.stamp = utc_stamp(self.started)
        self.number: int | None = None
        self.log_path = _unique(ws.logs_dir / f"tick_{self.started.strftime('%Y-%m-%dT%H%M%SZ')}.log")
        self._number_saved = False
        self.state = TickState.load(ws)
        self.config: Config | None = None
        self.interrupted = False
        self.results: list[TaskResult] = []
        self.git_failed: str = ""
        self.attempted = False

    # ------------------------------------------------------------------ the algorithm

    def run(self) -> TickOutcome:
        # 2. configuration and plan
        try:
            self.config = load_config(self.ws.config_path)
        except MementoError as exc:
            return self._cannot_run(str(exc))
        if not gitops.is_repo(self.root):
            return self._cannot_run(f"{self.root} is not a git repository")
        try:
            plan = self._plan()
        except MementoError as exc:
            return self._cannot_run(str(exc))
        if plan.plan_errors:
            return self._plan_invalid(plan)
        fixed = bool(self.state.plan_invalid_signature)
        self.state.plan_invalid_signature = ""
        # 3. mode
        if plan.meta.tick_mode != "auto":
            cron_log(self.ws, f"tick skipped: tick_mode is {plan.meta.tick_mode}")
            if fixed:  # a skip writes nothing else: only remember that the plan was mended
                self.state.save(self.ws)
            return TickOutcome(EXIT_OK, f"tick skipped: tick_mode is {plan.meta.tick_mode}")
        if self.state.breaker_reason:
            # The breaker paused the plan; it says auto again, so a person resumed it by hand.
            self.state.breaker_reason = self.state.breaker_at = ""
            self.state.consecutive_failed_ticks = 0
        self.number = plan.meta.total_ticks + 1
        previous = signal.signal(signal.SIGTERM, self._on_sigterm) if _main_thread() else None
        try:
            return self._run_auto(plan)
        except _Interrupted:
            return self._finish(EXIT_OK, "interrupted by SIGTERM")
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _run_auto(self, plan: Plan) -> TickOutcome:
        # 4. what a killed tick left behind, then stale claims
        self._clean_leftovers()
        plan = self._recover_stale(plan)
        # 5. a person's uncommitted work stops everything; Memento's own docs are synced
        refusal = self._check_tree()
        if refusal is not None:
            return refusal
        completed = 0
        limit = plan.meta.max_tasks_per_tick
        while True:
            self._check_interrupt()
            plan = self._plan()
            if plan.plan_errors:
                return self._plan_invalid(plan)
            verdict = pick(plan)
            if verdict.kind != TASK:
                return self._nothing_to_pick(plan, verdict)
            self.state.last_event = ""
            result = self._run_task(plan, verdict.task, continued=(completed + 1, limit) if completed else None)
            self.results.append(result)
            if not result.passed:
                break
            completed += 1
            if completed >= limit:
                break
        return self._finish(EXIT_OK, self._summary())

    # ------------------------------------------------------------------ steps

    def _plan(self) -> Plan:
        return parse_plan(self.ws.plan_path, display=self.ws.rel(self.ws.plan_path))

    def _cannot_run(self, message: str) -> TickOutcome:
        cron_log(self.ws, f"tick could not run: {message}")
        return TickOutcome(EXIT_ERROR, message)

    def _plan_invalid(self, plan: Plan) -> TickOutcome:
        errors = [str(e) for e in plan.plan_errors]
        signature = "\n".join(errors)
        if signature != self.state.plan_invalid_signature:
            self._number_saved = True  # never edit a plan that does not parse cleanly
            self._event("❌ PLAN INVALID", [("Errors", f"{len(errors)} — fix the plan, then the next tick runs")],
                        tail="\n".join(errors))
            self.state.plan_invalid_signature = signature
            self.state.save(self.ws)
            # Tell whoever watches the alert file or the checkpoint, not only the log.
            self._write_alert(plan, extra=f"docs/MASTER_PLAN.md is invalid ({len(errors)} error(s))")
            self._write_checkpoint(plan)
        cron_log(self.ws, f"tick could not run: plan invalid ({len(errors)} errors)")
        shown = errors[0] + (f" (and {len(errors) - 1} more; `memento lint`)" if len(errors) > 1 else "")
        return TickOutcome(EXIT_ERROR, "plan invalid: " + shown)

    def _on_sigterm(self, signum, frame) -> None:
        self.interrupted = True
        agents.terminate_running()

    def _check_interrupt(self) -> None:
        if self.interrupted:
            raise _Interrupted()

    def _recover_stale(self, plan: Plan) -> Plan:
        stale_after = plan.meta.stale_lock_timeout
        for task in plan.tasks:
            if task.status == "~":
                claim = read_claim(self.ws, task.id)
                why = claim_is_stale(claim, stale_after)
                if why is None:
                    continue
                self._reset_stale(task, claim, why)
            elif task.status == "x":
                claim = read_claim(self.ws, task.id)
                if claim is not None and claim.stage == "committing":
                    self._finish_interrupted_commit(claim)
        for leftover in self.ws.claims_dir.glob("*.json") if self.ws.claims_dir.is_dir() else ():
            task = plan.task(leftover.stem)
            if task is None or task.status not in ("~", "x"):
                _kill_local_group(read_claim(self.ws, leftover.stem))
                remove_claim(self.ws, leftover.stem)
        return self._plan()

    def _reset_stale(self, task: Task, claim: Claim | None, why: str) -> None:
        _kill_local_group(claim)
        rolled = "nothing to roll back"
        if claim is not None:
            head = gitops.head(self.root)
            if head != claim.base:
                # Commits made since the claim may be a person's: never fold them here.
                # Only what is uncommitted on top of the current HEAD is rolled back.
                rolled = self._rollback(head, set(claim.untracked), f"stale-{task.id}", fold=False)
                rolled += "; HEAD had moved since the claim, its commits were kept"
            else:
                rolled = self._rollback(claim.base, set(claim.untracked), f"stale-{task.id}")
        try:
            edit_plan(self.ws.plan_path, lambda e: e.set_status(task.id, " ", expect="~"))
        except EditConflict:
            pass  # a person already changed it: their word stands
        remove_claim(self.ws, task.id)
        self._event(f"⚠️ STALE — Stale [~] detected on {task.id}, reset to [ ]",
                    [("Task", task.label), ("Reason", why), ("Rollback", rolled)])

    def _finish_interrupted_commit(self, claim: Claim) -> None:
        """A tick died between marking [x] and committing: make the commit it was making.

        Only if the files are still exactly the ones verify passed on (their blob ids are
        in the claim); a person's later edit is never swept into a task's commit.
        """
        paths = [p for p in claim.commit_paths if p]
        message = claim.commit_message or f"memento: complete {claim.task}"
        status = _read_or_none(self.ws.status_path) or b""
        if claim.entry and claim.entry.splitlines()[0].encode() not in status:
            status_log.append_entry(self.ws.status_path, claim.entry)
        now = gitops.hash_files(self.root, list(claim.commit_hashes))
        if now != claim.commit_hashes:
            changed = sorted(p for p in claim.commit_hashes if now.get(p) != claim.commit_hashes[p])
            self._event(f"⚠️ INTERRUPTED COMMIT — {claim.task}'s files changed after it passed; not committed",
                        [("Paths", ", ".join(changed)),
                         ("Action", "review and commit them by hand, or `memento reset` the task")])
            remove_claim(self.ws, claim.task)
            return
        sha = self._commit(paths, message)
        if sha is None:  # it had landed: find it
            sha = next((s for s, subject in gitops.log_subjects(self.root, 20) if subject == message), None)
        if sha:
            _fill_commit(self.ws.status_path, sha[:7])
        remove_claim(self.ws, claim.task)

    def _clean_leftovers(self) -> None:
        """Temp files of atomic writes a killed process never renamed, and a stale git index."""
        # Under a document's own edit lock no writer is between its temp file and the
        # rename, so every temp file of that document is an orphan.
        for doc in (self.ws.plan_path, self.ws.notes_path, self.ws.status_path):
            orphans = list(doc.parent.glob(f".{doc.name}.*.tmp"))
            if orphans:
                with file_lock(lock_path_for(doc)):
                    for tmp in doc.parent.glob(f".{doc.name}.*.tmp"):
                        _unlink(tmp)
        cutoff = time.time() - 60  # other writers rename their temp file within milliseconds
        for folder in (self.ws.docs, self.ws.memento_dir, self.ws.claims_dir):
            for tmp in folder.glob(".*.tmp") if folder.is_dir() else ():
                try:
                    if tmp.stat().st_mtime < cutoff:
                        tmp.unlink()
                except OSError:
                    pass
        # A commit killed between moving HEAD and refreshing the index leaves index
        # entries that disagree with HEAD while the files themselves match it.
        # Only paths a commit of ours was writing (recorded in its claim) are considered:
        # content a person staged is theirs, even when the file matches HEAD again.
        ours = set()
        for path in self.ws.claims_dir.glob("*.json") if self.ws.claims_dir.is_dir() else ():
            claim = read_claim(self.ws, path.stem)
            if claim is not None and claim.stage == "committing":
                ours.update(claim.commit_paths)
        stale = [e.path for e in gitops.status(self.root)
                 if e.path in ours and e.xy[0] not in " ?" and gitops.matches_head(self.root, e.path)]
        if stale:
            gitops.reset_index(self.root, stale)

    def _check_tree(self) -> TickOutcome | None:
        own = set(OWN_DOCS)
        entries = gitops.status(self.root)
        dirty = sorted({e.path for e in entries})
        # Untracked files are safe where they are: no rollback removes a file that
        # existed before the tick and no commit stages one the task did not touch.
        # Changes to tracked files are a person's work in progress: refuse.
        foreign = sorted({e.path for e in entries if e.path not in own and e.xy != "??"})
        if foreign:
            signature = "\n".join(foreign)
            if signature != self.state.dirty_signature:
                shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
                self._event("⚠️ DIRTY TREE — uncommitted changes to tracked files; tick refused",
                            [("Paths", shown),
                             ("Action", "commit them, or set them aside with `git stash push -- <paths>` "
                              "(a plain `git stash` would also take Memento's own uncommitted documents)")])
                self.state.dirty_signature = signature
                self._write_checkpoint(self._plan())
            cron_log(self.ws, f"tick refused: uncommitted changes in {len(foreign)} path(s)")
            self._write_alert(self._plan(), extra="uncommitted changes outside Memento's files")
            self.state.save(self.ws)
            return TickOutcome(EXIT_ATTENTION, "refused: the work tree has uncommitted changes: " + ", ".join(foreign))
        self.state.dirty_signature = ""
        docs = [p for p in dirty if p in own]
        if docs:
            self._commit(docs, "memento: sync docs")
        return None

    def _nothing_to_pick(self, plan: Plan, verdict) -> TickOutcome:
        signature = f"{verdict.kind}:{verdict.message}"
        attention = verdict.kind == BLOCKED
        if verdict.kind in (COMPLETE, BLOCKED):
            if signature != self.state.last_event:
                fields = [("Tasks", ", ".join(verdict.tasks))] if verdict.tasks else []
                self._event(verdict.message, fields or [("Tasks", f"{len(plan.tasks)} in the plan")])
                self.state.last_event = signature
        cron_log(self.ws, f"tick idle: {verdict.message}")
        code = EXIT_ATTENTION if attention else EXIT_OK
        if not self.results:
            # An idle tick writes nothing that would only say "still idle".
            self._housekeeping(plan)
            self.state.save(self.ws)
            return TickOutcome(code, verdict.message, self.number if self.attempted else None)
        return self._finish(code, self._summary() + f"; then {verdict.message}")

    # ------------------------------------------------------------------ one task

    def _run_task(self, plan: Plan, task: Task, continued: tuple[int, int] | None) -> TaskResult:
        ws = self.ws
        self.attempted = True
        began = time.monotonic()
        base = gitops.head(self.root)
        untracked_before = gitops.untracked(self.root)
        claim = Claim(task=task.id, pid=os.getpid(), host=this_host(), started=utc_stamp(),
                      heartbeat=time.time(), tick=self.number or 0, base=base,
                      untracked=sorted(untracked_before))
        # The claim file exists before [~] does, so a [~] without a claim is always stale.
        write_claim(ws, claim)
        number = self.number

        def mark(e):
            e.set_status(task.id, "~", expect=" ")
            e.set_meta("total_ticks", str(number))

        self._number_saved = True

        try:
            edit_plan(ws.plan_path, mark)
        except EditConflict as exc:
            remove_claim(ws, task.id)
            return TaskResult(task.id, False, f"could not claim: {exc}")
        crash_point("tick:after-claim")
        at = _Attempt(
            task=task, base=base, untracked_before=untracked_before, continued=continued,
            plan=ws.plan_path.read_bytes(), project_map=_read_or_none(ws.map_path),
            status=_read_or_none(ws.status_path) or b"",
            notes=_read_or_none(ws.notes_path) or b"",
            note_keys={n.key for n in notes.parse_notes(ws.notes_path)},
            cleanignore=gitops.read_pattern_file(ws.cleanignore_path),
        )
        with Heartbeat(ws, claim) as beat:
            at.beat = beat
            prompt_file, at.given_notes = self._write_prompt(task)
            _unlink(ws.tick_result_path)
            beat.update(stage="running")
            reason, agent_exit = self._run_agent(task, prompt_file, beat)
            # Memory lives in its own repository: whatever the agent wrote there bypassing
            # `memento memory write` is committed now, before any rollback of the project.
            _memory_hook("commit_unattributed", self.ws, task.id)
            changes: list[gitops.FileChange] = []
            if not reason and self.interrupted:
                reason = "interrupted by SIGTERM"
            if not reason:
                reason, changes = self._guards(plan, at)
                crash_point("tick:after-guards")
            verify_exit, verify_tail = None, ""
            if not reason and not self.interrupted:
                beat.update(stage="verifying")
                verify_exit, verify_tail, reason = self._verify(task)
            if not reason and not self.interrupted:
                # What verify itself changed (a refreshed lock file, a snapshot) is checked too.
                reason, changes = self._guards(plan, at, after_verify=True)
            if self.interrupted and not reason:
                reason = "interrupted by SIGTERM"
            duration = time.monotonic() - began
            crash_point("tick:after-verify")
            report = _read_tick_result(ws.tick_result_path)
            if not reason:
                return self._pass(at, changes, duration, verify_tail, report)
            return self._fail(at, reason, duration, verify_exit if verify_exit is not None else agent_exit,
                              verify_tail, report)

    def _write_prompt(self, task: Task) -> tuple[Path, list[notes.Note]]:
        from ..prompt import build_prompt

        spec = agents.PRESETS.get(self.config.agent_preset)
        separate = spec is not None and spec.separate_system_prompt and self.ws.system_prompt_path.is_file()
        text, given = build_prompt(self.ws, self._plan(), task, include_system=not separate)
        prompt_file = self.ws.memento_dir / "prompts" / f"{task.id}.md"
        atomic_write_text(prompt_file, text)
        # The prompt file is overwritten by the next attempt; the log keeps the evidence
        # that this worker was given the checkpoint (the doctor's recovery-priority check).
        included = "CURRENT_STATE.md included" if self.ws.checkpoint_path.exists() else "no CURRENT_STATE.md"
        _append_log(self.log_path, f"[memento] prompt {self.ws.rel(prompt_file)} "
                                   f"({text.count(chr(10))} lines, {included})\n")
        return prompt_file, given

    def _run_agent(self, task: Task, prompt_file: Path, beat: Heartbeat) -> tuple[str, int | None]:
        config = self.config
        try:
            invocation = agents.build_invocation(
                config, task_id=task.id, do_command=task.do, prompt_file=prompt_file,
                system_prompt_file=self.ws.system_prompt_path, workdir=self.root,
                context_files=task.context_files)
        except MementoError as exc:
            _append_log(self.log_path, f"[memento] {task.id}: {exc}\n")
            return str(exc), None
        env = agents.agent_env(self.ws, task_id=task.id, prompt_file=prompt_file,
                               system_prompt_file=self.ws.system_prompt_path)
        _append_log(self.log_path, f"[memento] tick #{self.number} task {task.label}\n")
        result = agents.run_agent(invocation, cwd=self.root, log_path=self.log_path,
                                  timeout=task.timeout_seconds or config.agent_timeout, env=env,
                                  on_start=lambda pgid: (beat.update(pgid=pgid), crash_point("tick:agent-running")))
        if result.error:
            return result.error, None
        if result.interrupted:
            return "interrupted by SIGTERM", None
        if result.timed_out:
            limit = task.timeout_seconds or config.agent_timeout
            return f"agent timed out after {format_duration(limit)} (its process group was killed)", None
        if result.exit_code != 0:
            return f"agent exited with code {result.exit_code}", result.exit_code
        return "", 0

    def _guards(self, plan: Plan, at: _Attempt, *, after_verify: bool = False) -> tuple[str, list[gitops.FileChange]]:
        """Every guard of SPEC §4 step 11: the reasons, and the task's change when there are none."""
        task = at.task
        reasons = []
        folded = gitops.fold_commits(self.root, at.base)
        if folded:
            who = "verify" if after_verify else "the agent"
            reasons.append(f"{who} made {folded} commit(s) of its own (Memento makes the commits); "
                           "they were folded back into the change")
        changes = gitops.changes_since(self.root, at.base, at.untracked_before)
        own = set(KEPT_DOCS)
        touched = [c for c in changes if c.path not in own and not is_own_temp(c.path)]
        prefix = "verify " if after_verify else "the agent "
        if at.project_map is not None and _read_or_none(self.ws.map_path) != at.project_map:
            reasons.append(f"{prefix}edited docs/PROJECT_MAP.md (the worker only reads it)")
        plan_change = _own_definition_change(at.plan, _read_or_none(self.ws.plan_path), task.id)
        if plan_change:
            reasons.append(f"{prefix}{plan_change} in {self.ws.rel(self.ws.plan_path)}")
        history = self._history_damage(at)
        if history:
            reasons.append(f"{prefix}{history}")
        guard_hits = [c.path for c in touched if task.guard_files and gitops.matches_any(c.path, task.guard_files)]
        if guard_hits:
            reasons.append(f"{'verify changed a ' if after_verify else ''}guard file changed: " + ", ".join(guard_hits))
        outside = [c.path for c in touched if c.path != "docs/PROJECT_MAP.md"
                   and c.path not in guard_hits and not gitops.matches_any(c.path, task.context_files)]
        if outside:
            reasons.append(f"{'verify ' if after_verify else ''}changed files outside context_files: "
                           + ", ".join(outside[:10]))
        size = sum(c.added + c.removed for c in touched)
        if size > plan.meta.max_diff_lines:
            reasons.append(f"diff too large: {size} lines > max_diff_lines {plan.meta.max_diff_lines} "
                           "(possible full-file rewrite)")
        return "; ".join(reasons), touched

    def _history_damage(self, at: _Attempt) -> str:
        """'' unless the status log lost entries or notes disappeared since the task started."""
        status = _read_or_none(self.ws.status_path) or b""
        if not status.startswith(at.status.rstrip(b"\r\n")):
            return "rewrote docs/TICK_STATUS.md (only Memento appends to it)"
        try:
            now = {n.key for n in notes.parse_notes(self.ws.notes_path)}
        except MementoError:
            return "made docs/HUMAN_NOTES.md unreadable"
        if not at.note_keys <= now:
            return f"removed {len(at.note_keys - now)} note(s) from docs/HUMAN_NOTES.md"
        return ""

    def _verify(self, task: Task) -> tuple[int | None, str, str]:
        _append_log(self.log_path, f"\n[memento] verify {task.id}: {task.verify}\n")
        start = self.log_path.stat().st_size
        env = agents.agent_env(self.ws, task_id=task.id)
        result = agents.run_in_group(task.verify, cwd=self.root, log_path=self.log_path,
                                     timeout=task.timeout_seconds or self.config.verify_timeout,
                                     env=env, shell=True)
        tail = _tail(self.log_path, start)
        _append_log(self.log_path, f"[memento] verify exit code: {result.exit_code}\n")
        if result.interrupted:
            return None, tail, "interrupted by SIGTERM"
        if result.timed_out:
            return None, tail, f"verify timed out after {format_duration(self.config.verify_timeout)}"
        if result.error:
            return None, tail, f"verify could not run: {result.error}"
        if result.exit_code != 0:
            return result.exit_code, tail, f"verify failed with exit code {result.exit_code}"
        return 0, tail, ""

    # ------------------------------------------------------------------ pass and fail

    def _pass(self, at: _Attempt, changes, duration, verify_tail, report) -> TaskResult:
        ws, task = self.ws, at.task
        message = f"memento: complete {task.id} {task.title}".strip()
        paths = sorted({c.path for c in changes} | set(KEPT_DOCS))
        files = ", ".join(f"{c.path} (+{c.added} -{c.removed})" for c in changes) or "(none)"
        fields = [
            ("Task", task.label),
            ("Status", "✅ SUCCESS"),
            ("Verify Output", f"`{_first_line(verify_tail) or '(no output)'}` (exit code 0)"),
            ("Duration", format_duration(duration)),
            ("Files Modified", files),
            ("Diff Size", f"{sum(c.added + c.removed for c in changes)} lines"),
            ("Git Commit", PENDING_COMMIT + f' — "{message}"'),
        ]
        if report.get("outputs"):
            fields.append(("Outputs", report["outputs"]))
        fields.append(("Log", self.ws.rel(self.log_path)))
        entry = self._format(fields, at.continued)
        # Record where we are first: a crash from here on is finished by the next tick,
        # which commits exactly these files (their hashes are in the claim) and this entry.
        at.beat.update(stage="committing", commit_paths=paths, commit_message=message,
                       commit_hashes=gitops.hash_files(self.root, [c.path for c in changes if c.kind != "deleted"]),
                       entry=entry)
        try:
            edit_plan(ws.plan_path, lambda e: (e.set_status(task.id, "x", expect="~"), e.update_counters()))
        except EditConflict as exc:
            # A person changed the task while it ran: their word stands, the work is set aside.
            at.beat.update(stage="failing")
            return self._fail(at, f"the task was changed in the plan while it ran ({exc}); its work was set aside",
                              duration, 0, verify_tail, report, count_retry=False)
        notes.mark_read(ws.notes_path, [n.key for n in at.given_notes])
        status_log.append_entry(ws.status_path, entry)
        crash_point("tick:before-commit")
        sha = self._commit(paths, message)
        if sha:
            _fill_commit(ws.status_path, sha[:7])
        at.beat.stop()
        remove_claim(ws, task.id)
        self.state.unsurfaced.append({"task": task.id, "title": task.title, "commit": (sha or "")[:7],
                                      "at": utc_stamp()})
        return TaskResult(task.id, True, "", duration, sha)

    def _fail(self, at: _Attempt, reason, duration, exit_code, tail, report, *, count_retry: bool = True) -> TaskResult:
        ws, task = self.ws, at.task
        at.beat.update(stage="failing")
        rolled = self._rollback(at.base, at.untracked_before, task.id, keep_patterns=at.cleanignore)
        crash_point("tick:after-rollback")
        rolled += self._restore_documents(at)
        max_retries = self._plan().meta.max_retries
        interrupted = self.interrupted or not count_retry
        retries = task.retries + (0 if interrupted else 1)
        blocked = retries >= max_retries and not interrupted
        if self.interrupted:
            status = "⏹ INTERRUPTED (no retry counted)"
        elif not count_retry:
            status = "⏹ SET ASIDE (no retry counted)"
        elif blocked:
            status = f"🚫 BLOCKED (retry {retries}/{max_retries} — max_retries exceeded)"
        else:
            status = f"❌ FAILED (retry {retries}/{max_retries})"
        code = "none" if exit_code is None else str(exit_code)
        fields = [
            ("Task", task.label),
            ("Status", status),
            ("Verify Output", f"`{_first_line(tail) or reason}` (exit code {code})"),
            ("Duration", format_duration(duration)),
            ("Reason", reason),
        ]
        if report.get("error_analysis"):
            fields.append(("Error Analysis", report["error_analysis"]))
        if blocked:
            fields.append(("Escalation", "⚠️ NEEDS ARCHITECT ATTENTION"))
        fields += [("Files Modified", f"(rolled back; {rolled})"), ("Git Commit", "(none — rollback)"),
                   ("Log", ws.rel(self.log_path))]
        # The entry goes first: a crash before the plan edit loses no record (the attempt
        # is then simply not counted as a retry).
        self._entry(fields, at.continued, tail=_tail_lines(tail) or None)

        def apply(e):
            if interrupted:
                e.set_status(task.id, " ", expect="~")  # not the task's fault: no retry counted
                return
            e.set_field(task.id, "retries", str(retries))
            e.set_status(task.id, "!" if blocked else " ", expect="~")
            e.update_counters()

        try:
            edit_plan(ws.plan_path, apply)
        except EditConflict:
            pass  # a person changed the task meanwhile; their edit stands
        if blocked:
            notes.mark_read(ws.notes_path, [n.key for n in at.given_notes])
        if interrupted:
            message = f"memento: {task.id} {'interrupted' if self.interrupted else 'set aside'}"
        else:
            message = f"memento: {task.id} {'blocked' if blocked else 'failed'} (retry {retries}/{max_retries})"
        self._commit(list(KEPT_DOCS), message)
        at.beat.stop()
        remove_claim(ws, task.id)
        return TaskResult(task.id, False, reason, duration, None, blocked)

    def _restore_documents(self, at: _Attempt) -> str:
        """Undo what the agent did to Memento's documents; what it wrote is saved first."""
        ws = self.ws
        said = ""
        current = _read_or_none(ws.plan_path)
        if current is None or _own_definition_change(at.plan, current, at.task.id):
            dest = ws.rollback_dir / f"{datetime.now(UTC).strftime('%Y-%m-%dT%H%M%S.%fZ')}-{at.task.id}-plan"
            if current is not None:
                atomic_write_bytes(dest / "MASTER_PLAN.md", current)
            atomic_write_text(dest / "README.txt", "The plan as the agent left it; Memento restored the "
                              "task's definition from the start of the task.\n")
            if current is None:
                atomic_write_bytes(ws.plan_path, at.plan)
            else:
                edit_plan(ws.plan_path, lambda e: e.replace_task_block(at.task.id, at.plan))
            said += f"; the task's definition restored, the agent's plan in {ws.rel(dest)}"
        if self._history_damage(at):
            dest = ws.rollback_dir / f"{datetime.now(UTC).strftime('%Y-%m-%dT%H%M%S.%fZ')}-{at.task.id}-docs"
            for path in (ws.status_path, ws.notes_path):
                data = _read_or_none(path)
                if data is not None:
                    atomic_write_bytes(dest / path.name, data)
            status_now = _read_or_none(ws.status_path) or b""
            if not status_now.startswith(at.status.rstrip(b"\r\n")):
                locked_edit(ws.status_path, lambda _data: at.status)
            self._restore_notes(at)
            said += f"; status log and notes restored, the agent's versions in {ws.rel(dest)}"
        return said

    def _restore_notes(self, at: _Attempt) -> None:
        """The notes file as it was at the claim, plus the notes people added since."""
        try:
            now = notes.parse_notes(self.ws.notes_path)
        except MementoError:
            now = []
        added = [n for n in now if n.key not in at.note_keys]
        locked_edit(self.ws.notes_path, lambda _data: at.notes)
        for note in added:
            notes.add_note(self.ws.notes_path, note.text, target=note.target)

    def _rollback(self, base: str | None, untracked_before: set[str], label: str, *, fold: bool = True,
                  keep_patterns: list[str] | None = None) -> str:
        """Save, then undo every change since the snapshot except Memento's docs and cleanignored paths.

        ``keep_patterns``: .memento_cleanignore as it was when the task started, so an
        agent cannot exempt its own changes by editing the file.
        """
        try:
            if fold:
                gitops.fold_commits(self.root, base)
            changes = gitops.changes_since(self.root, base, untracked_before)
            if keep_patterns is None:
                keep_patterns = gitops.read_pattern_file(self.ws.cleanignore_path)
            own = set(KEPT_DOCS)

            def keep(path: str) -> bool:
                if path == ".memento_cleanignore":
                    return False
                return path in own or is_own_temp(path) or gitops.matches_any(path, keep_patterns)

            undone = [c for c in changes if not keep(c.path)]
            if not undone:
                return "nothing to roll back"
            dest = self.ws.rollback_dir / f"{datetime.now(UTC).strftime('%Y-%m-%dT%H%M%S.%fZ')}-{label}"
            gitops.save_rollback(self.root, base, undone, dest)
            gitops.rollback(self.root, base, undone, keep=keep)
            return f"{len(undone)} path(s), saved in {self.ws.rel(dest)}"
        except (MementoError, OSError) as exc:
            self.git_failed = f"rollback failed: {exc}"
            cron_log(self.ws, self.git_failed)
            return f"rollback failed: {exc}"

    # ------------------------------------------------------------------ writing things down

    def _commit(self, paths: list[str], message: str) -> str | None:
        try:
            return gitops.commit_paths(self.root, paths, message, author=self.config.git_author)
        except MementoError as exc:
            if "nothing to commit" in str(exc):
                return None
            self.git_failed = str(exc)
            cron_log(self.ws, f"git error: {exc}")
            return None

    def _format(self, fields, continued=None, tail: str | None = None) -> str:
        return status_log.format_entry(self.stamp, self._save_number(), fields, continued=continued,
                                       error_tail=tail)

    def _entry(self, fields, continued=None, tail: str | None = None) -> None:
        status_log.append_entry(self.ws.status_path, self._format(fields, continued, tail))

    def _save_number(self) -> int:
        """This tick's number, written to Meta `total_ticks` the first time it is used."""
        if self.number is None:
            self.number = self._plan().meta.total_ticks + 1
        number = self.number
        if not self._number_saved:
            # A tick that writes an entry is a tick that counts (total_ticks in Meta).
            try:
                edit_plan(self.ws.plan_path, lambda e: e.set_meta("total_ticks", str(number)))
            except MementoError:
                pass  # an unreadable plan (PLAN INVALID) keeps its count
            self._number_saved = True
        return number

    def _event(self, event: str, fields, tail: str | None = None) -> None:
        self._entry([("Event", event), *fields], tail=tail)

    def _housekeeping(self, plan: Plan) -> None:
        """Step 16 minus the breaker: rotation, alert, checkpoint."""
        meta = plan.meta
        try:
            status_log.rotate(self.ws.status_path, self.root / meta.status_archive_dir, meta.status_max_entries)
        except (MementoError, OSError) as exc:
            cron_log(self.ws, f"status rotation failed: {exc}")
        self._write_alert(plan)
        self._write_checkpoint(plan)
        if self.number and self.number % PRUNE_EVERY == 0:
            prune_logs(self.ws)
        if self.results:
            _memory_hook("record_tick", self.ws, self.number, self.stamp, self.results)
            _memory_hook("weekly_gc", self.ws)

    def _write_checkpoint(self, plan: Plan) -> None:
        from ..checkpoint import write_checkpoint

        try:
            write_checkpoint(self.ws, plan, self.state, self.results)
        except (MementoError, OSError) as exc:  # the checkpoint must never stop a tick
            cron_log(self.ws, f"checkpoint not written: {exc}")

    def _breaker(self, plan: Plan) -> str:
        """Why the circuit breaker trips after this tick, or ''."""
        if self.attempted:
            if any(r.passed for r in self.results):
                self.state.consecutive_failed_ticks = 0
            elif not self.interrupted:
                self.state.consecutive_failed_ticks += 1
        threshold = plan.meta.circuit_breaker_threshold
        if self.state.consecutive_failed_ticks >= threshold:
            return f"{self.state.consecutive_failed_ticks} consecutive ticks attempted work and passed nothing"
        counted = [t for t in plan.tasks if t.status != "-"]
        blocked = sum(1 for t in counted if t.status == "!")
        if counted and blocked / len(counted) > BLOCKED_RATIO:
            return f"{blocked} of {len(counted)} tasks are blocked (more than {int(BLOCKED_RATIO * 100)}%)"
        free = shutil.disk_usage(self.root).free
        if free < MIN_FREE_BYTES:
            return f"only {free // (1024 * 1024)} MB free on disk (less than 500 MB)"
        if self.git_failed:
            return f"git error: {self.git_failed}"
        return ""

    def _finish(self, code: int, message: str) -> TickOutcome:
        plan = self._plan()
        reason = self._breaker(plan)
        if reason and not self.state.breaker_reason:
            self.state.breaker_reason, self.state.breaker_at = reason, utc_stamp()
            try:
                edit_plan(self.ws.plan_path, lambda e: e.set_meta("tick_mode", "paused"))
            except MementoError:
                pass
            self._event(f"🔴 CIRCUIT BREAKER TRIGGERED — reason: {reason}",
                        [("Action", "fix the cause, then `memento resume` (or resume in the dashboard)")])
            self._commit(list(KEPT_DOCS), "memento: circuit breaker triggered")
            plan = self._plan()
        if self.interrupted:
            cron_log(self.ws, "tick interrupted by SIGTERM")
        self.state.last_tick = self.number or self.state.last_tick
        self.state.last_tick_started = self.stamp
        self.state.last_tick_finished = utc_stamp()
        self.state.last_log = self.ws.rel(self.log_path) if self.log_path.exists() else ""
        self._housekeeping(plan)
        if self.state.breaker_reason or any(r.blocked for r in self.results):
            code = max(code, EXIT_ATTENTION)
        self.state.last_tick_exit = code
        self.state.save(self.ws)
        return TickOutcome(code, message, self.number, self.results,
                           self.ws.rel(self.log_path) if self.log_path.exists() else None)

    def _summary(self) -> str:
        parts = []
        for r in self.results:
            parts.append(f"{r.task_id} passed" if r.passed else f"{r.task_id} {'blocked' if r.blocked else 'failed'}: {r.reason}")
        return f"tick #{self.number}: " + ("; ".join(parts) or "nothing ran")

    def _write_alert(self, plan: Plan, extra: str = "") -> None:
        blocked = [t.id for t in plan.tasks if t.status == "!"]
        breaker = self.state.breaker_reason
        if not blocked and not breaker and not extra:
            _unlink(self.ws.alert_path)
            return
        lines = [
            f"timestamp: {utc_stamp()}",
            f"blocked_tasks: {len(blocked)}",
            f"blocked: {', '.join(blocked)}",
            f"circuit_breaker: {'TRIGGERED — ' + breaker if breaker else 'OK'}",
        ]
        if extra:
            lines.append(f"problem: {extra}")
        lines.append("message: the pipeline needs attention; see docs/TICK_STATUS.md")
        text = "\n".join(lines) + "\n"
        if _read_or_none(self.ws.alert_path) != text.encode():
            atomic_write_text(self.ws.alert_path, text)


# --------------------------------------------------------------------------- helpers


def is_own_temp(path: str) -> bool:
    """A temp file of an atomic write to one of Memento's documents (a person's note being
    saved right now, say): neither the task's change nor something a rollback may remove."""
    folder, _, name = path.rpartition("/")
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    return any(folder == doc.rpartition("/")[0] and name.startswith(f".{doc.rpartition('/')[2]}.")
               for doc in OWN_DOCS)


def prune_logs(ws: Workspace) -> None:
    """Keep the newest tick logs and rollback folders; roll cron.log over at 1 MB.

    Names start with a UTC stamp, so name order is time order. The status log
    archive is never pruned: it is the record of every tick.
    """
    logs = sorted(ws.logs_dir.glob("tick_*.log"))
    for old in logs[: max(0, len(logs) - KEEP_TICK_LOGS)]:
        _unlink(old)
    if ws.rollback_dir.is_dir():
        saved = sorted(p for p in ws.rollback_dir.iterdir() if p.is_dir())
        for old in saved[: max(0, len(saved) - KEEP_ROLLBACKS)]:
            shutil.rmtree(old, ignore_errors=True)
    try:
        if ws.cron_log.stat().st_size > CRON_LOG_MAX:
            os.replace(ws.cron_log, ws.cron_log.with_name("cron.log.1"))
    except FileNotFoundError:
        pass


def _kill_local_group(claim: Claim | None) -> None:
    """Kill a claim's agent group, but only one started on this host (a pgid means
    nothing on another machine sharing the repository)."""
    if claim is not None and claim.pgid and claim.host == this_host():
        agents.kill_group(claim.pgid)


def _memory_hook(name: str, *args) -> None:
    """Call memento_core.memory.<name>(*args) when the memory layer is installed.

    Memory is a separate repository and must never break a tick: its errors
    go to cron.log (args[0] is the workspace), not up the stack.
    """
    try:
        from .. import memory
    except ImportError:
        return
    func = getattr(memory, name, None)
    if func is None:
        return
    try:
        func(*args)
    except Exception as exc:  # noqa: BLE001 - memory is best effort by design
        cron_log(args[0], f"memory {name} failed: {type(exc).__name__}: {exc}")


def _unique(path: Path) -> Path:
    """``path``, or ``name-2.log``, ``name-3.log``… when two ticks start in the same second."""
    n = 1
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _append_log(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _tail(path: Path, start: int, limit: int = 64 * 1024) -> str:
    """What was written to ``path`` after byte ``start`` (at most the last ``limit`` bytes)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            fh.seek(max(start, size - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _tail_lines(text: str, n: int = ERROR_TAIL_LINES) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def _first_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip().replace("`", "'")[:200]
    return ""


def _own_definition_change(before: bytes, after: bytes | None, task_id: str) -> str:
    """'' unless the running task's definition (its line minus the status, its fields minus
    retries) differs; other tasks belong to the architect, who may edit them any time."""
    if after is None:
        return "deleted the plan"
    if before == after:
        return ""
    from ..plan import decode_text, scan_plan

    def definition(data: bytes) -> tuple[str, str] | None:
        try:
            task = scan_plan(decode_text(data, "plan"), "plan").task(task_id)
        except MementoError:
            return None
        if task is None:
            return None
        block = "\n".join(ln for ln in task.block.splitlines() if not ln.strip().startswith("- retries:"))
        return task.raw_rest.strip(), block.strip()

    old, new = definition(before), definition(after)
    if new is None:
        return f"removed or broke the definition of {task_id}"
    if old != new:
        return f"edited the definition of {task_id}"
    return ""


def _read_tick_result(path: Path) -> dict[str, str]:
    """The worker's Outputs and Error Analysis sections from .memento/tick_result.md."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:20_000]
    except OSError:
        return {}
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = line.strip().lstrip("#").strip().lower()
        if line.lstrip().startswith("#") and heading in ("outputs", "error analysis"):
            current = heading.replace(" ", "_")
            sections[current] = []
        elif current:
            sections[current].append(line.strip().lstrip("-* ").strip())
    return {k: "; ".join(x for x in v if x)[:1000] for k, v in sections.items() if any(v)}


def _fill_commit(status_path: Path, sha: str) -> None:
    """Put the commit's sha into the entry that was written before the commit existed."""

    def transform(data: bytes) -> bytes | None:
        text = data.decode("utf-8")
        field = f"- **Git Commit**: {PENDING_COMMIT}"
        idx = text.rfind(field)  # the field line, not the same words in a worker's Outputs
        if idx < 0:
            return None
        start = idx + len("- **Git Commit**: ")
        return (text[:start] + f"`{sha}`" + text[start + len(PENDING_COMMIT):]).encode("utf-8")

    locked_edit(status_path, transform)

