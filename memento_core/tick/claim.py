"""Steps 7 and 8 of SPEC §4: claim the task, then snapshot what the attempt starts from.

:func:`claim_task` writes the claim file before the task is marked `[~]` (a `[~]` without a
claim is always stale); :func:`take_snapshot` records HEAD, the untracked files, Memento's
documents and everything the guards compare against later (git's own state, the object store,
a person's ignored files, modes, what git does not show), as a guards.Snapshot.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from .. import notes, sandbox
from ..errors import EditConflict
from ..git import state as git_state
from ..git.patterns import read_pattern_file
from ..plan.edits import edit_plan
from ..plan.model import Task
from ..runlog import utc_stamp
from ..state import Claim, remove_claim, this_host, write_claim
from . import kept as kept_files
from . import modes, objects, own, receipts, unseen
from .context import TaskResult, TickContext, append_log, read_or_none
from .guards import Snapshot
from .record import remove_record


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
    kept = kept_files.take(ctx.root, untracked, read_pattern_file(ws.cleanignore_path), archive,
                           confined=sandbox.resolve(ctx.config).confined)
    snap = Snapshot(
        base=base, untracked=frozenset(untracked),
        plan=ws.plan_path.read_bytes(), project_map=read_or_none(ws.map_path),
        status=read_or_none(ws.status_path) or b"", notes=receipts.settled(ws.notes_path),
        note_keys=frozenset(n.key for n in notes.parse_notes(ws.notes_path)),
        cleanignore=tuple(read_pattern_file(ws.cleanignore_path)),
        taken_at=datetime.now(UTC).replace(microsecond=0), git=git_state.capture(ctx.root),
        runtime=own.runtime_copy(ws),
        absent=own.absent_own(ws, archive), archive_dir=archive, memory_head=receipts.memory_head(ws),
        kept=kept, modes=modes.take(ctx.root, kept.modes, untracked, archive),
        objects=objects.take(ctx.root, ws.project_memento_dir / objects.MIRROR),
        unseen=unseen.look(ctx.root),
    )
    if snap.objects is not None:  # what housekeeping packs past a limit (tick/afterwards.py)
        ctx.loose_objects = max(ctx.loose_objects, len(snap.objects.loose))
    return snap
