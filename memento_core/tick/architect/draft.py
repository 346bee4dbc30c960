"""Drafting the plan (SPEC §17): `memento plan draft BRIEF` turns what a person wants into a checked plan.

The architect agent (``[architect]`` settings, else ``[agent]``), confined like the worker, under
the tick lock, gets the brief, the current plan and map and the repository's file list; it may
write only docs/MASTER_PLAN.md and docs/PROJECT_MAP.md. Memento then checks the draft (it lints,
every new task has verify and context_files, ids unique, phases known, depends acyclic, existing
tasks unchanged, no task born [x], nothing else changed), runs each new task's verify once on the
current tree (red first), and keeps it as one commit ``memento: plan drafted from BRIEF`` with the
plan left ``tick_mode: paused``, or puts everything back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace

from ... import agents
from ...durations import format_duration
from ...errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, MementoError
from ...git.repo import head as git_head
from ...lines import clipped, strip_controls
from ...locks import atomic_write_bytes
from ...plan.edits import edit_plan
from ...plan.model import Task
from ...plan.scan import decode_text, parse_plan_text
from ...runlog import utc_stamp
from ...workspace import Workspace
from ..context import Interrupted, TickContext, append_log, read_or_none
from ..context import _unique as unique_path
from ..record import PENDING_COMMIT, fill_commit
from .agent import AgentRole, run_architect_agent
from .changes import compare_notes
from .draft_checks import check_draft
from .draft_prompt import build_draft_prompt
from .draft_prompt import system_prompt as draft_system_prompt
from .judge import MAP_REL, NOTES_REL, PLAN_REL, STATUS_REL, ArchitectSnapshot, judge_tree
from .person import person_ops, persons_notes, replay, with_person_edits
from .run import (
    _rewrite_checkpoint,
    _sigterm_raises,
    architect_config,
    diff_text,
    preflight,
    recorded,
    recover_interrupted,
    restore_all,
    take_snapshot,
)

KEPT, PROPOSED, REFUSED, ERROR = "kept", "proposed", "refused", "error"
EVENT = "📝 PLAN DRAFTED"
DRAFT_ID = "DRAFT"  # its prompt is .memento/prompts/DRAFT.md
WRITABLE = (PLAN_REL, MAP_REL)
MAX_BRIEF_BYTES = 200 * 1024
DETAIL_CHARS = 200


@dataclass(frozen=True)
class RedCheck:
    """One new task's verify run on the current tree (red first): a pass proves nothing."""

    task_id: str
    exit_code: int | None  # None: it timed out or could not start
    passed: bool
    detail: str  # "exit code 1: <its last line of output>", "timed out after 10s", "could not run: …"
    log: str | None = None  # logs/draft_<stamp>_<ID>.log: the whole output


@dataclass
class DraftResult:
    """How one draft ended: kept, proposed (a dry run: nothing changed), refused (with reasons) or an error."""

    outcome: str  # KEPT | PROPOSED | REFUSED | ERROR
    reasons: tuple[str, ...] = ()  # refusals (or the error), each naming file:line where there is one
    warnings: tuple[str, ...] = ()  # e.g. "T-3's verify already passes: it proves nothing"
    new_ids: tuple[str, ...] = ()
    red: tuple[RedCheck, ...] = ()
    diff: str = ""  # unified diff of docs/MASTER_PLAN.md and docs/PROJECT_MAP.md
    commit: str | None = None  # the kept draft's commit
    log: str | None = None
    brief_name: str = "BRIEF"
    map_changed: bool = False
    # A dry run's proposal (apply_draft keeps exactly it): the documents before and after, and HEAD.
    proposed: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    base: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    head: str | None = None

    def exit_code(self) -> int:
        """0 kept or proposed, 1 refused (the checks said no), 2 it could not run (bad input, the drafter failed)."""
        return {KEPT: EXIT_OK, PROPOSED: EXIT_OK, REFUSED: EXIT_ATTENTION}.get(self.outcome, EXIT_ERROR)

    def to_json(self) -> dict:
        return {"outcome": self.outcome, "brief": self.brief_name, "new_ids": list(self.new_ids),
                "warnings": list(self.warnings), "reasons": list(self.reasons),
                "red": [{"task_id": r.task_id, "exit_code": r.exit_code, "passed": r.passed, "detail": r.detail,
                         "log": r.log} for r in self.red],
                "map_changed": self.map_changed, "diff": self.diff, "commit": self.commit, "log": self.log,
                "exit_code": self.exit_code()}


def brief_problem(brief: str) -> str:
    """'' or why ``brief`` cannot be drafted from (empty, over 200 KB)."""
    if not brief.strip():
        return "the brief is empty: say what you want built (a few sentences are enough)"
    size = len(brief.encode("utf-8", "surrogateescape"))
    if size > MAX_BRIEF_BYTES:
        return (f"the brief is {size // 1024} KB, over the limit of {MAX_BRIEF_BYTES // 1024} KB: "
                "write what is wanted, and let the drafter read the files themselves")
    return ""


def draft_plan(ws: Workspace, brief: str, *, brief_name: str = "BRIEF", dry_run: bool = False, strict: bool = False,
               on_progress: Callable[[str], None] | None = None) -> DraftResult:
    """Run the drafter once under the tick lock, check its draft, keep it (or propose it: ``dry_run``).

    Never raises for what a person can fix: bad input, a busy lock, a workspace without an agent
    are an ``error`` result with the reason. ``on_progress`` is called in the calling thread."""
    from ...agents.reaper import subreaper
    from ...config.load import load_config
    from ...locks import LockBusy, file_lock

    say = on_progress or (lambda message: None)
    # It names the commit and the entry: one line, no controls, short (a file called "a\nb" is "a b").
    brief_name = clipped(" ".join(strip_controls(brief_name, " ").split()), 80) or "BRIEF"

    def error(reason: str) -> DraftResult:
        return DraftResult(ERROR, reasons=(reason,), brief_name=brief_name)

    problem = brief_problem(brief)
    if problem:
        return error(problem)
    try:
        config = load_config(ws.config_path)
    except MementoError as exc:
        return error(str(exc))
    if architect_config(config).agent_preset == "script":
        return error('drafting needs an agent: memento.toml sets no [architect] preset and no [agent] preset '
                     '(the default "script" runs no model); set one, e.g. [architect] preset = "claude"')
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            ctx = TickContext(ws)
            ctx.config = config
            ctx.log_path = draft_log(ctx)
            _fleet_sync(ctx)
            with subreaper(), _sigterm_raises():  # orphans of the agent come to us, none outlives the run
                try:
                    result = _draft_under_lock(ctx, brief, brief_name, dry_run=dry_run, strict=strict, say=say)
                except Interrupted:  # everything was put back on the way out
                    return replace(error("interrupted by SIGTERM: everything was put back"), log=ctx.rel_log())
            if result.outcome == KEPT:
                ctx.state.save(ws)
                _fleet_push(ctx)
            return result
    except LockBusy:
        return error("a tick is running (the tick lock is taken); draft the plan when it has finished")


def _fleet_sync(ctx: TickContext) -> None:
    from ...fleet import calls as remote

    remote.sync_for_architect(ctx)  # [workers] remote: the fleet's plan


def _fleet_push(ctx: TickContext) -> None:
    from ...fleet import calls as remote

    remote.push_for_architect(ctx)


def draft_log(ctx: TickContext):
    """logs/draft_<stamp>.log (``-2``, ``-3``… when two runs start in the same second)."""
    return unique_path(ctx.ws.logs_dir / f"draft_{ctx.started.strftime('%Y-%m-%dT%H%M%SZ')}.log")


def _draft_under_lock(ctx: TickContext, brief: str, brief_name: str, *, dry_run: bool, strict: bool,
                      say: Callable[[str], None]) -> DraftResult:
    """One draft; the caller holds the tick lock. The architect's run record (record.py) is written
    first, so a run killed outright is put back by the next tick or architect run."""
    from ..receipts import listening

    recover_interrupted(ctx)
    refused = preflight(ctx)
    if refused:
        return DraftResult(ERROR, reasons=(refused,), brief_name=brief_name)
    with listening(ctx.ws):  # a person's receipts during the draft, the drafter's refused (tick/receipts.py)
        result = recorded(ctx, lambda snap: _run_and_check(ctx, snap, brief, brief_name, dry_run=dry_run,
                                                           strict=strict, say=say))
    if result.outcome == KEPT:
        _rewrite_checkpoint(ctx)  # the plan it describes is the draft's, paused
    return result


def _run_and_check(ctx: TickContext, snap: ArchitectSnapshot, brief: str, brief_name: str, *, dry_run: bool,
                   strict: bool, say: Callable[[str], None]) -> DraftResult:
    ws = ctx.ws
    config = architect_config(ctx.config)
    append_log(ctx.log_path, f"[memento] plan draft from {brief_name}{' (dry run)' if dry_run else ''} "
                             f"at {utc_stamp()}\n")
    say(f"drafting: the {config.agent_preset} agent writes the plan from {brief_name} "
        f"(at most {format_duration(config.agent_timeout)})")
    role = AgentRole(ws.plan_prompt_path,
                     lambda inline: build_draft_prompt(ws, brief, brief_name, include_system=inline),
                     lambda: draft_system_prompt(ws), writable=WRITABLE, readonly=(NOTES_REL,), name=DRAFT_ID,
                     who="the drafter")
    persons = persons_documents(config)
    failed = run_architect_agent(ctx, config, role=role)
    replay(ws.plan_path, person_ops(ws))  # a person's skip/reset during the run is theirs, on the draft too
    snap = with_person_edits(ws, snap, PLAN_REL)
    log = ctx.rel_log()
    if failed:
        said = restore_all(ctx, snap, save=True, persons=persons)
        append_log(ctx.log_path, f"[memento] draft put back: {failed}; {said}\n")
        return DraftResult(ERROR, reasons=(f"{failed}: everything was put back",), log=log, brief_name=brief_name)
    say("checking the draft")
    checked = _check(ctx, snap, persons)
    reasons, new_ids = list(checked.reasons), checked.new_ids
    diff = diff_text(ws, snap, WRITABLE)
    map_changed = read_or_none(ws.map_path) != snap.docs.get(MAP_REL)
    red: tuple[RedCheck, ...] = ()
    warnings: list[str] = list(checked.warnings)
    # What was checked is what is kept: an unconfined verify that rewrites the plan changes nothing.
    proposed = {rel: read_or_none(ws.root / rel) for rel in WRITABLE}
    if not reasons:
        red = run_red_first(ctx, [checked.plan.by_id[t] for t in new_ids], say)
        passing = [f"{r.task_id}'s verify already passes: it proves nothing" for r in red if r.passed]
        warnings = passing + warnings
        if strict and passing:
            reasons = [f"--strict: {w}" for w in passing]
    # Everything back as it was (what an unconfined verify left, too); a kept draft is written again below.
    said = restore_all(ctx, snap, save=bool(reasons) or dry_run, persons=persons)
    result = DraftResult(REFUSED if reasons else PROPOSED, tuple(reasons), tuple(warnings), new_ids, red, diff,
                         log=log, brief_name=brief_name, map_changed=map_changed)
    if reasons:
        append_log(ctx.log_path, "[memento] draft refused: " + "; ".join(reasons) + f"; {said}\n")
        return result
    if dry_run:
        return replace(result, proposed=proposed, base={rel: snap.docs.get(rel) for rel in WRITABLE},
                       head=snap.snap.base)
    return keep(ctx, result, proposed)


# ---------------------------------------------------------------- the checks


@dataclass(frozen=True)
class Checked:
    reasons: tuple[str, ...]
    new_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    plan: object = None  # the draft's Plan


def persons_documents(config) -> tuple[str, ...]:
    """The documents a confined drafter cannot write (its sandbox binds them read-only): what changes
    there during its run is a person's (an edit of HUMAN_NOTES.md in an editor), never judged as the
    drafter's and never put back. Unconfined, the drafter could have written them: none."""
    from ... import sandbox

    return (NOTES_REL,) if sandbox.resolve(config).confined else ()


def _check(ctx: TickContext, snap: ArchitectSnapshot, persons: tuple[str, ...] = ()) -> Checked:
    """Every rule of SPEC §17 the draft breaks, and the lint warnings it adds."""
    ws = ctx.ws
    reasons = judge_tree(ctx, snap, allowed="the plan and the map")
    now_notes = read_or_none(ws.notes_path) or b""
    acted = compare_notes(snap.snap.notes, snap.snap.notes if NOTES_REL in persons else now_notes,
                          persons_notes(ws))
    reasons += list(acted.violations)
    if acted.acted:
        reasons.append(f"changed {NOTES_REL} (marked {len(acted.acted)} note(s) read): the drafter may write only "
                       f"{PLAN_REL} and {MAP_REL}")
    now = read_or_none(ws.plan_path)
    if now is None:
        return Checked((*reasons, f"deleted {PLAN_REL}"))
    try:
        old_text = decode_text(snap.snap.plan, PLAN_REL)
        new_text = decode_text(now, PLAN_REL)
        old, new = parse_plan_text(old_text, PLAN_REL), parse_plan_text(new_text, PLAN_REL)
    except MementoError as exc:
        return Checked((*reasons, f"left a plan that cannot be read: {exc}"))
    preset = ctx.config.agent_preset
    check = check_draft(old, old_text, new, new_text, root=ws.root, preset=preset)
    warnings = _new_warnings(old, old_text, new, new_text, ws, preset, check.new_ids)
    return Checked((*reasons, *check.reasons), check.new_ids, warnings, new)


def _new_warnings(old, old_text, new, new_text, ws, preset, new_ids) -> tuple[str, ...]:
    """`memento lint`'s warnings on the new tasks (a verify the worker could rewrite, …)."""
    from ...plan_lint import lint_problems

    ids = set(new_ids)
    return tuple(str(e) for e in lint_problems(new, new_text, PLAN_REL, ws.root, preset)
                 if e.severity != "error" and e.task_id in ids)


# ---------------------------------------------------------------- red first


def run_red_first(ctx: TickContext, tasks: list[Task], say: Callable[[str], None]) -> tuple[RedCheck, ...]:
    """Each task's verify once on the current tree, confined (the project read-only, no network),
    at most ``[workers] max`` at a time, each under its timeout (the task's, else [verify] timeout).
    A check-only task (``changes: none``) is not run: its verify may well pass already."""
    tasks = [t for t in tasks if t.verify and not t.check_only]
    if not tasks:
        return ()
    at_once = max(1, min(ctx.config.workers_max, len(tasks)))
    say(f"red first: running {len(tasks)} new verify command(s), {at_once} at a time")
    wraps = {t.id: _red_wrap(ctx) for t in tasks}  # built here: the private home is made once, not in threads
    found: dict[str, RedCheck] = {}
    with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="memento-red") as pool:
        futures = [pool.submit(_red_one, ctx, task, *wraps[task.id]) for task in tasks]
        for future in as_completed(futures):
            check = future.result()
            found[check.task_id] = check
            verdict = "already passes: it proves nothing" if check.passed else f"fails as it should ({check.detail})"
            say(f"red first {len(found)}/{len(tasks)}: {check.task_id} {verdict}")
    return tuple(found[t.id] for t in tasks)


def _red_wrap(ctx: TickContext) -> tuple[tuple[str, ...], str]:
    """(the sandbox's prefix for one red run, '' or why it cannot be confined)."""
    from ... import sandbox
    from ..confine import sandboxed

    config = replace(ctx.config, sandbox_network="none")  # verify needs no model; nothing else either
    return sandboxed(config, lambda binary: sandbox.architect_prefix(ctx.ws, config, binary=binary, writable_docs=()),
                     log=None)


def _red_one(ctx: TickContext, task: Task, wrap: tuple[str, ...], refused: str) -> RedCheck:
    log = ctx.log_path.with_name(f"{ctx.log_path.stem}_{task.id}.log")
    if refused:
        return RedCheck(task.id, None, False, f"not run: {refused}")
    append_log(log, f"[memento] red first {task.id}: {task.verify}\n")
    extra = {"PYTHONNOUSERSITE": "1"} if wrap else None
    env = agents.agent_env(ctx.ws, task_id=task.id, config=ctx.config, model=False, extra=extra)
    limit = task.timeout_seconds or ctx.config.verify_timeout
    result = agents.run_in_group(task.verify, cwd=ctx.root, log_path=log, timeout=limit, env=env, shell=True,
                                 wrap=wrap)
    append_log(log, f"[memento] exit code: {result.exit_code}\n")
    rel = ctx.ws.rel(log)
    if result.timed_out:
        return RedCheck(task.id, None, False, f"timed out after {format_duration(limit)}", rel)
    if result.error or result.interrupted:
        return RedCheck(task.id, None, False, f"could not run: {result.error or 'interrupted'}", rel)
    last = _last_output_line(log)
    detail = f"exit code {result.exit_code}" + (f": {last}" if last and result.exit_code else "")
    return RedCheck(task.id, result.exit_code, result.exit_code == 0, detail, rel)


def _last_output_line(log) -> str:
    try:
        lines = [ln for ln in log.read_text(encoding="utf-8", errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("[memento]")]
    except OSError:
        return ""
    last = lines[-1].strip() if lines else ""
    return last if len(last) <= DETAIL_CHARS else last[: DETAIL_CHARS - 1] + "…"


# ---------------------------------------------------------------- keep


def keep(ctx: TickContext, result: DraftResult, proposed: dict[str, bytes | None]) -> DraftResult:
    """Write the draft, pause the plan, the 📝 PLAN DRAFTED entry, one commit ``memento: plan drafted from BRIEF``."""
    ws, stamp = ctx.ws, utc_stamp()
    for rel, data in proposed.items():
        if data is not None:
            atomic_write_bytes(ws.root / rel, data)

    def finish(e):
        e.set_meta("tick_mode", "paused")
        e.set_meta("last_architect_edit", stamp)
        e.update_counters()

    edit_plan(ws.plan_path, finish)
    failing = [r.task_id for r in result.red if not r.passed]
    passing = [r.task_id for r in result.red if r.passed]
    red = f"{len(failing)} of {len(result.red)} new verify commands fail as they should"
    if passing:
        red += f"; already passing (they prove nothing): {', '.join(passing)}"
    message = f"memento: plan drafted from {result.brief_name}"
    fields = [("Summary", f"plan drafted from {result.brief_name}: {len(result.new_ids)} new task(s)"),
              ("Added", ", ".join(result.new_ids)), ("Red First", red)]
    if result.map_changed:
        fields.append(("Project Map", "updated"))
    fields += [("Tick Mode", "paused: read the plan, then `memento resume`"),
               ("Git Commit", PENDING_COMMIT + f' — "{message}"'), ("Log", ctx.rel_log() or "(none)")]
    ctx.event(EVENT, fields)
    sha = ctx.commit([PLAN_REL, MAP_REL, STATUS_REL], message, sha_in_entry=True)
    if sha:
        fill_commit(ws.status_path, sha[:7])
    append_log(ctx.log_path, f"[memento] draft kept: {', '.join(result.new_ids)} (commit {sha})\n")
    return replace(result, outcome=KEPT if sha else ERROR, commit=sha,
                   reasons=() if sha else (f"the commit failed: {ctx.git_failed or 'git said nothing'}",))


def apply_draft(ws: Workspace, proposal: DraftResult) -> DraftResult:
    """Keep exactly a dry run's proposal (the dashboard's confirmation), the agent not run again:
    under the tick lock, when the plan, the map and HEAD are as the dry run saw them, its documents
    are written and checked as a run's are (red first is the dry run's), then kept."""
    from ...config.load import load_config
    from ...locks import LockBusy, file_lock

    if proposal.outcome != PROPOSED or not proposal.proposed:
        return replace(proposal, outcome=ERROR, reasons=("nothing to apply: the dry run proposed no draft",))
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            ctx = TickContext(ws)
            ctx.config = load_config(ws.config_path)
            ctx.log_path = draft_log(ctx)
            result = _apply_locked(ctx, proposal)
            if result.outcome == KEPT:
                ctx.state.save(ws)
                _fleet_push(ctx)
                _rewrite_checkpoint(ctx)
            return result
    except LockBusy:
        return replace(proposal, outcome=ERROR, reasons=("a tick is running (the tick lock is taken); keep the "
                                                         "draft when it has finished",))
    except MementoError as exc:
        return replace(proposal, outcome=ERROR, reasons=(str(exc),))


def _apply_locked(ctx: TickContext, proposal: DraftResult) -> DraftResult:
    refused = preflight(ctx)
    now = {rel: read_or_none(ctx.root / rel) for rel in WRITABLE}
    if not refused and (now != proposal.base or git_head(ctx.root) != proposal.head):
        refused = "the plan, the map or HEAD changed since the dry run: draft the plan again"
    if not refused and any(data is None for data in proposal.proposed.values()):
        refused = "the proposal deletes the plan or the map, which is not allowed"
    if refused:
        return replace(proposal, outcome=REFUSED, reasons=(refused,))
    snap = take_snapshot(ctx)
    append_log(ctx.log_path, f"[memento] plan draft: keeping the dry run's proposal at {utc_stamp()} "
                             f"({_digest(proposal.proposed)})\n")
    for rel, data in proposal.proposed.items():
        atomic_write_bytes(ctx.root / rel, data)
    checked = _check(ctx, snap)
    if checked.reasons:
        restore_all(ctx, snap, save=False)
        return replace(proposal, outcome=REFUSED, reasons=checked.reasons, log=ctx.rel_log())
    restore_all(ctx, snap, save=False)
    return keep(ctx, replace(proposal, log=ctx.rel_log()), proposal.proposed)


def _digest(docs: dict[str, bytes | None]) -> str:
    return ", ".join(f"{rel} {hashlib.sha256(data or b'').hexdigest()[:12]}" for rel, data in docs.items())
