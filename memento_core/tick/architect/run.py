"""One architect run (SPEC §16), under the tick lock: snapshot, agent, checks, then commit or roll back.

:func:`run_architect` takes the tick lock and runs :func:`architect_under_lock`,
which a tick that finds the pipeline BLOCKED calls too (auto.py). The steps:

1. refuse when a task is `[~]`, tracked files outside Memento's documents have
   uncommitted changes (a rollback would take them) or a document is a link;
2. snapshot: HEAD, the untracked files, git's own state, every document;
3. the architect's prompt (prompt.py) and the agent, confined like the worker
   (SPEC §13) but with only the plan, the map and the notes writable;
4. the checks (changes.py): only the plan, the map and the notes' read marks
   changed; the plan lints; no task marked `[x]`, no done task changed, no task
   line deleted; no commit, no change to git's state;
5. a violation (or the agent failing) rolls back everything it did, its
   versions saved under logs/rollback/; ``--dry-run`` restores everything too,
   after the diff is taken; otherwise the resets get ``retries: 0``, the notes
   it acted on are archived, a ``🏗 ARCHITECT`` entry lists what changed, and
   one commit ``memento: architect — <summary>`` holds it.

Step 3 is agent.py (the prompts, the confinement, the agent); the snapshot of step 2 and
the checks of step 4 are judge.py (what it may write, its documents, the rules); this module is
the run's order, its record, the rollback and the commit.
"""

from __future__ import annotations

import difflib
import signal
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from ... import agents, notes, verify_changes
from ...config.model import Config
from ...errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, MementoError
from ...fleet import calls as remote
from ...git import state as git_state
from ...git.repo import head as git_head
from ...git.repo import is_repo
from ...git.status import persons_paths, status
from ...locks import atomic_write_bytes
from ...plan.edits import edit_plan
from ...runlog import utc_stamp
from ...workspace import OWN_DOCS, Workspace
from .. import guards, own
from ..claim import take_snapshot as worker_snapshot
from ..context import Interrupted, TickContext, append_log, read_or_none
from ..context import _unique as unique_path
from ..record import PENDING_COMMIT, fill_commit
from ..rollback import restore_notes, roll_back, rollback_folder
from . import ARCHITECT_ID, EVENT
from . import record as arch_record
from .agent import run_architect_agent
from .changes import NotesChanges, PlanChanges
from .judge import (
    CHECKPOINT_REL,
    MAP_REL,
    NOTES_REL,
    PLAN_REL,
    STATUS_REL,
    WRITABLE,
    ArchitectSnapshot,
    docs_tree,
    judge,
    remove_new_in_docs,
)
from .person import person_ops, persons_notes, replay, with_person_edits

CHANGED, UNCHANGED, ROLLED_BACK, REFUSED = "changed", "unchanged", "rolled back", "refused"
R = TypeVar("R")


@dataclass(frozen=True)
class ArchitectResult:
    """How one run ended: what changed (or why nothing stays), the diff, the commit."""

    outcome: str  # CHANGED | UNCHANGED | ROLLED_BACK | REFUSED
    message: str
    changes: PlanChanges = PlanChanges()
    notes: NotesChanges = NotesChanges()
    map_changed: bool = False
    diff: str = ""
    reasons: tuple[str, ...] = ()
    commit: str | None = None
    log: str | None = None
    dry_run: bool = False
    # A dry run's proposal (apply_proposal keeps exactly it): the documents before and after, and HEAD.
    proposed: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    base: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    head: str | None = None

    @property
    def exit_code(self) -> int:
        """0 the plan changed (or would have), 1 nothing changed or it was rolled back, 2 it could not run."""
        return {CHANGED: EXIT_OK, REFUSED: EXIT_ERROR}.get(self.outcome, EXIT_ATTENTION)


def architect_config(config: Config) -> Config:
    """The agent settings the architect runs with: memento.toml's [architect] (the agent's by default)."""
    return config.as_agent(config.architect)


def run_architect(ws: Workspace, *, dry_run: bool = False) -> ArchitectResult:
    """`memento architect`: take the tick lock (never wait for a tick) and run the architect once."""
    from ...agents.reaper import subreaper
    from ...config.load import load_config
    from ...locks import LockBusy, file_lock
    from ..lock import beacon

    try:  # the beacon: a later tick can tell this run stopped (SIGSTOP) from a live one (tick/lock.py)
        with file_lock(ws.tick_lock_path, blocking=False) as fd, beacon(fd):
            ctx = TickContext(ws)
            ctx.config = load_config(ws.config_path)
            ctx.log_path = architect_log(ctx)
            remote.sync_for_architect(ctx)  # [workers] remote: the fleet's plan
            with subreaper(), _sigterm_raises():  # orphans of the agent come to us, none outlives the run
                try:
                    result = architect_under_lock(ctx, dry_run=dry_run)
                except Interrupted:  # everything was put back on the way out
                    return ArchitectResult(ROLLED_BACK, "interrupted by SIGTERM: everything was put back",
                                           reasons=("interrupted by SIGTERM",), log=ctx.rel_log(), dry_run=dry_run)
            if not dry_run and result.outcome != REFUSED:
                ctx.state.save(ws)
            if not dry_run and result.outcome == CHANGED:
                remote.push_for_architect(ctx)
                notify_now(ws)
            return result
    except LockBusy:
        raise MementoError("a tick is running (the tick lock is taken); run the architect when it "
                           "has finished") from None


def notify_now(ws: Workspace) -> None:
    """[notify]: a run a person started tells at once (a changed verify command above all), not
    at the next tick; under the tick lock still held, as a tick sends."""
    from ...notify import after_tick

    after_tick(ws)


@contextmanager
def _sigterm_raises():
    """In the main thread, SIGTERM stops the agent's group and raises Interrupted once (the run
    puts everything back on the way out; a second SIGTERM does not interrupt that)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    def on_sigterm(signum, frame) -> None:
        agents.terminate_running()
        if not fired:
            fired.append(signum)
            raise Interrupted()

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def architect_log(ctx: TickContext) -> Path:
    """logs/architect_<stamp>.log (``-2``, ``-3``… when two runs start in the same second)."""
    return unique_path(ctx.ws.logs_dir / f"architect_{ctx.started.strftime('%Y-%m-%dT%H%M%SZ')}.log")


def architect_under_lock(ctx: TickContext, *, dry_run: bool = False) -> ArchitectResult:
    """One run of the architect; the caller holds the tick lock and has set ``ctx.config``.

    The run's record (record.py) is written before the agent starts; however the run ends
    (an exception, SIGTERM, Ctrl-C) everything is put back before the record goes, and a
    run killed outright leaves the record for :func:`recover_interrupted`."""
    from ..receipts import listening

    recover_interrupted(ctx)  # a killed run's person ops are read from its files: no receipt survives it
    with listening(ctx.ws):  # a person's receipts during this run, the agent's refused (tick/receipts.py)
        return _recorded_run(ctx, dry_run)


def _recorded_run(ctx: TickContext, dry_run: bool) -> ArchitectResult:
    refused = preflight(ctx)
    if refused:
        return ArchitectResult(REFUSED, refused, dry_run=dry_run)
    return recorded(ctx, lambda snap: _run_and_judge(ctx, snap, dry_run))


def recorded(ctx: TickContext, run: Callable[[ArchitectSnapshot], R]) -> R:
    """The snapshot, the run's record, ``run(snapshot)``; however it ends, everything is put back
    before the record goes (a drafter's run, draft.py, is recorded the same way)."""
    snap = take_snapshot(ctx)
    base = snap.snap
    arch_record.write_record(ctx.ws, base=base.base, untracked=base.untracked, cleanignore=base.cleanignore,
                             taken_at=base.taken_at, docs=snap.docs, git=base.git, docs_tree=snap.docs_tree)
    try:
        result = run(snap)
    except BaseException:
        try:
            restore_all(ctx, with_person_edits(ctx.ws, snap, PLAN_REL), save=True)
        finally:
            arch_record.remove_record(ctx.ws)
        raise
    arch_record.remove_record(ctx.ws)
    if read_or_none(ctx.root / CHECKPOINT_REL) != snap.docs.get(CHECKPOINT_REL):
        _rewrite_checkpoint(ctx)
    return result


def _rewrite_checkpoint(ctx: TickContext) -> None:
    """CURRENT_STATE.md from the plan as the run left it (whatever the agent or a person wrote there)."""
    from ..afterwards import write_checkpoint

    try:
        write_checkpoint(ctx, ctx.plan())
    except MementoError:
        pass


def _run_and_judge(ctx: TickContext, snap: ArchitectSnapshot, dry_run: bool) -> ArchitectResult:
    append_log(ctx.log_path, f"[memento] architect run{' (dry run)' if dry_run else ''} at {utc_stamp()}\n")
    if not dry_run:
        ctx.state.architect_last = utc_stamp()
    failed = run_architect_agent(ctx, architect_config(ctx.config))
    snap = with_person_edits(ctx.ws, snap, PLAN_REL)  # a person's skip/reset meanwhile is not the architect's
    judged = judge(ctx, snap)
    reasons = ((failed,) if failed else ()) + judged.reasons
    log = ctx.rel_log()
    if reasons:
        saved = restore_all(ctx, snap, save=True)
        if not dry_run:
            record_rollback(ctx, reasons, saved)
        return ArchitectResult(ROLLED_BACK, "the architect's changes were rolled back: " + "; ".join(reasons),
                               reasons=reasons, log=log, dry_run=dry_run)
    diff = diff_text(ctx.ws, snap)
    if not diff:
        restore_all(ctx, snap, save=False)
        return ArchitectResult(UNCHANGED, "the architect changed nothing", log=log, dry_run=dry_run)
    result = ArchitectResult(CHANGED, summary_of(judged.changes, judged.notes, judged.map_changed),
                             judged.changes, judged.notes, judged.map_changed, diff, log=log, dry_run=dry_run)
    if dry_run:
        proposed = {rel: read_or_none(ctx.root / rel) for rel in WRITABLE}
        # Saved first: a person's hand edit of the plan made meanwhile is in these bytes too.
        restore_all(ctx, snap, save=True)
        return replace(result, proposed=proposed, base={rel: snap.docs.get(rel) for rel in WRITABLE},
                       head=snap.snap.base)
    return replace(result, commit=apply(ctx, result))


def apply_proposal(ws: Workspace, proposal: ArchitectResult) -> ArchitectResult:
    """Keep what a dry run showed (the dashboard's confirmation), without running the agent again:
    under the tick lock, when nothing changed since, its documents are written and checked as a
    run's are, then committed with the 🏗 ARCHITECT entry."""
    from ...config.load import load_config
    from ...locks import LockBusy, file_lock

    if proposal.outcome != CHANGED or not proposal.proposed:
        raise MementoError("nothing to apply: the dry run proposed no change")
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            ctx = TickContext(ws)
            ctx.config = load_config(ws.config_path)
            ctx.log_path = architect_log(ctx)
            result = _apply_locked(ctx, proposal)
            ctx.state.save(ws)
            if result.outcome == CHANGED:
                remote.push_for_architect(ctx)  # [workers] remote
                notify_now(ws)
            return result
    except LockBusy:
        raise MementoError("a tick is running (the tick lock is taken); apply when it has finished") from None


def _apply_locked(ctx: TickContext, proposal: ArchitectResult) -> ArchitectResult:
    refused = preflight(ctx)
    now = {rel: read_or_none(ctx.root / rel) for rel in WRITABLE}
    if not refused and (now != proposal.base or git_head(ctx.root) != proposal.head):
        refused = "the plan, the map or the notes changed since the dry run: run the architect again"
    deleted = [rel for rel, data in proposal.proposed.items() if data is None and proposal.base.get(rel) is not None]
    if not refused and deleted:
        refused = f"the proposal deletes {', '.join(deleted)}, which is not allowed (update it instead)"
    if refused:
        return ArchitectResult(REFUSED, refused)
    snap = take_snapshot(ctx)
    append_log(ctx.log_path, f"[memento] architect: applying the dry run's proposal at {utc_stamp()}\n")
    for rel, data in proposal.proposed.items():
        if data is not None:
            atomic_write_bytes(ctx.root / rel, data)
    judged = judge(ctx, snap)
    if judged.reasons:
        restore_all(ctx, snap, save=False)
        return ArchitectResult(ROLLED_BACK, "; ".join(judged.reasons), reasons=judged.reasons, log=ctx.rel_log())
    ctx.state.architect_last = utc_stamp()
    result = ArchitectResult(CHANGED, summary_of(judged.changes, judged.notes, judged.map_changed),
                             judged.changes, judged.notes, judged.map_changed, proposal.diff, log=ctx.rel_log())
    return replace(result, commit=apply(ctx, result))


# ---------------------------------------------------------------- a run killed outright


def recover_interrupted(ctx: TickContext) -> str:
    """A killed run's record (record.py): kill its agent, put back everything it changed from
    the record (its versions saved under logs/rollback/), drop the record; '' when there was none."""
    from ...agents.reaper import kill_marked
    from ...state import this_host

    ws = ctx.ws
    if not arch_record.has_record(ws):
        return ""
    rec = arch_record.read_record(ws)
    if rec is not None and arch_record.run_alive(rec):
        return ""  # never under the tick lock; but a live run is never touched
    if rec is None:
        arch_record.remove_record(ws)
        ctx.event(f"{EVENT} — interrupted", [("Reason", "an architect run left a record that cannot be read")])
        return "the record could not be read"
    if rec.host == this_host():
        kill_marked(rec.identity, str(ctx.root))  # only what that run started carries its marker
    # Even a commit saying "memento: architect" on top is undone: its agent could have made it (killed
    # in the instant between its own commit and the record's removal, a run is undone whole: safe).
    docs = rec.docs
    notes_bytes = docs.get(NOTES_REL) or b""
    snap = guards.Snapshot(
        base=rec.base, untracked=frozenset(rec.untracked), plan=docs.get(PLAN_REL) or b"",
        project_map=docs.get(MAP_REL), status=docs.get(STATUS_REL) or b"", notes=notes_bytes,
        note_keys=frozenset(n.key for n in notes.parse_notes_text(notes_bytes.decode("utf-8", "replace"))),
        cleanignore=rec.cleanignore, taken_at=datetime.fromisoformat(rec.taken_at), git=arch_record.recorded_git(ws))
    said = restore_all(ctx, with_person_edits(ws, ArchitectSnapshot(snap, dict(docs), rec.docs_tree), PLAN_REL),
                       save=True)
    arch_record.remove_record(ws)
    ctx.event(f"{EVENT} — interrupted, rolled back",
              [("Reason", f"the architect's run (pid {rec.pid}) was killed before it finished"),
               ("Rolled Back", said or "nothing had changed")])
    return said or "nothing had changed"


# ---------------------------------------------------------------- 1, 2: before the run


def preflight(ctx: TickContext) -> str:
    """'' or why the architect cannot run now."""
    ws = ctx.ws
    if architect_config(ctx.config).agent_preset == "script":
        return ('the architect needs an agent: [architect] takes [agent] preset "script", which runs no '
                'model; set [architect] preset (e.g. preset = "claude") in memento.toml')
    try:
        plan = ctx.plan()
    except MementoError as exc:
        return str(exc)
    running = [t.id for t in plan.tasks if t.status == "~"]
    if running:
        return (f"{', '.join(running)} is running ([~]); the architect runs between tasks "
                "(a tick recovers a stale claim)")
    if not is_repo(ws.root):
        return f"{ws.root} is not a git repository"
    foreign = sorted({e.path for e in status(ws.root) if e.path not in OWN_DOCS and e.xy != "??"})
    if foreign:
        return ("uncommitted changes to tracked files (" + ", ".join(foreign[:5])
                + (" …" if len(foreign) > 5 else "") + "): commit or stash them first, a rollback would undo them")
    links = own.links_among(ws, [*OWN_DOCS, "docs"])
    if links:
        return f"{', '.join(links)} is a symbolic link; Memento's documents must be plain files"
    return ""


def take_snapshot(ctx: TickContext) -> ArchitectSnapshot:
    """The worker's snapshot (claim.take_snapshot) at HEAD, plus every document's bytes and docs/."""
    ws = ctx.ws
    snap = worker_snapshot(ctx, git_head(ws.root), persons_paths(ws.root))
    return ArchitectSnapshot(snap, {rel: read_or_none(ws.root / rel) for rel in OWN_DOCS}, docs_tree(ws))


# ---------------------------------------------------------------- 5: undo, or keep


def restore_all(ctx: TickContext, snap: ArchitectSnapshot, *, save: bool, persons: tuple[str, ...] = ()) -> str:
    """Everything back as it was at the snapshot: code (roll_back), git's state, every document but
    ``persons`` (documents the agent could not write: what changed there is a person's, kept).
    With ``save``, the architect's versions of the documents are kept under logs/rollback/ first."""
    ws, base = ctx.ws, snap.snap
    own.unlink_own_links(ws, base, ARCHITECT_ID, ctx.log_path)
    own.split_own_hard_links(ws, base, ARCHITECT_ID, ctx.log_path)
    git_state.put_back(ctx.root, base.git, rollback_folder(ws, f"{ARCHITECT_ID}-git"))
    changed = [rel for rel in OWN_DOCS if rel != CHECKPOINT_REL and rel not in persons
               and read_or_none(ws.root / rel) != snap.docs.get(rel)]
    dest = rollback_folder(ws, f"{ARCHITECT_ID}-docs")
    if save and changed:
        for rel in changed:
            data = read_or_none(ws.root / rel)
            if data is not None:
                atomic_write_bytes(dest / rel, data)
    keep = (*base.cleanignore, MAP_REL, "memento.toml")  # the documents come back by their bytes below
    rolled = ctx.rolled_back(roll_back(ws, base.base, set(base.untracked), ARCHITECT_ID, keep_patterns=keep))
    if snap.docs_tree is not None:
        remove_new_in_docs(ws, snap, dest)
    for rel in changed:
        if rel == NOTES_REL:
            restore_notes(ws, base, persons_notes(ws))  # with the notes people added meanwhile
            continue
        data = snap.docs.get(rel)
        if data is None:
            (ws.root / rel).unlink(missing_ok=True)
        else:
            atomic_write_bytes(ws.root / rel, data)
    said = rolled
    if save and changed:
        said += f"; {', '.join(changed)} restored, the architect's versions in {ws.rel(dest)}"
    return said


def record_rollback(ctx: TickContext, reasons: tuple[str, ...], rolled: str) -> None:
    """The `🏗 ARCHITECT — rolled back` entry and its commit (only the status log changes)."""
    ctx.event(f"{EVENT} — rolled back", [("Reason", "; ".join(reasons)), ("Rolled Back", rolled),
                                         ("Log", ctx.rel_log() or "(none)")])
    ctx.commit([PLAN_REL, STATUS_REL], "memento: architect rolled back")


def diff_text(ws: Workspace, snap: ArchitectSnapshot, rels: tuple[str, ...] = WRITABLE) -> str:
    """The unified diff of ``rels`` (the plan, the map and the notes), snapshot → now ('' when all are equal)."""
    out: list[str] = []
    for rel in rels:
        before, after = snap.docs.get(rel), read_or_none(ws.root / rel)
        if before == after:
            continue
        old = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        out += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def summary_of(changes: PlanChanges, acted: NotesChanges, map_changed: bool) -> str:
    parts = changes.parts()
    if map_changed:
        parts.append("updated PROJECT_MAP.md")
    if acted.acted:
        parts.append(f"archived {len(acted.acted)} note(s)")
    return "; ".join(parts) or "edited the plan's text"


def apply(ctx: TickContext, result: ArchitectResult) -> str | None:
    """Keep the change: resets get retries 0, the notes acted on are archived, the entry, one commit."""
    ws, stamp = ctx.ws, utc_stamp()

    def finish(e):
        for tid in result.changes.reset:
            e.set_field(tid, "retries", "0")
        e.set_meta("last_architect_edit", stamp)
        e.update_counters()

    edit_plan(ws.plan_path, finish)
    replay(ws.plan_path, person_ops(ws))  # a person's skip/reset during the run stays, whatever the agent wrote
    if result.notes.acted:
        notes.archive_read(ws.notes_path)
    ch = result.changes
    fields = [("Summary", result.message)]
    fields += [(name, ", ".join(ids)) for name, ids in (("Edited", ch.edited), ("Added", ch.added),
                                                         ("Skipped", ch.skipped), ("Reset", ch.reset)) if ids]
    if result.notes.acted:
        fields.append(("Notes Archived", "; ".join(result.notes.acted_text)))
    if result.map_changed:
        fields.append(("Project Map", "updated"))
    verify = verify_changes.changes_of(ch.verify, stamp)
    if verify:
        fields.append(("Verify Changed", "; ".join(c.describe() for c in verify) + " — " + verify_changes.ACK_HINT))
    message = f"memento: architect — {result.message}"
    if len(message) > 120:
        message = message[:119] + "…"
    fields += [("Git Commit", PENDING_COMMIT + f' — "{message}"'), ("Log", ctx.rel_log() or "(none)")]
    ctx.event(EVENT, fields)
    verify_changes.record(ws, verify)  # "needs you" and notified until a person acknowledges them
    body = "".join(f"\n- {c.describe()}" for c in verify)
    body = f"\n\nVerify changed ({verify_changes.ACK_HINT}):{body}" if verify else ""
    if verify:  # how the other hosts of a fleet learn of the change (verify_changes.history)
        body += "\n\n" + verify_changes.trailers(verify_changes.CHANGED_TRAILER, verify)
    sha = ctx.commit([PLAN_REL, MAP_REL, NOTES_REL, STATUS_REL], message + body, sha_in_entry=True)
    if sha:
        fill_commit(ws.status_path, sha[:7])
    return sha
