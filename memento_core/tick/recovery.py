"""What a killed tick left behind (SPEC §4 step 4): stale claims, an interrupted commit, temp files.

A tick can die at any instant (kill -9). The next one finds the traces here:
orphaned temp files and a half-refreshed index (:func:`clean_leftovers`), a
`[~]` task whose worker is gone (:func:`reset_stale_claim`: its agent group is
killed, its change rolled back, the task reset), and a task marked `[x]` whose
commit never happened (:func:`finish_interrupted_commit`).
"""

from __future__ import annotations

import time

from .. import gitops, status_log
from ..agents import kill_group
from ..errors import EditConflict
from ..locks import file_lock, lock_path_for
from ..plan import Plan, Task, edit_plan
from ..state import Claim, claim_is_stale, read_claim, remove_claim, this_host
from .context import TickContext
from .entries import fill_commit
from .files import read_or_none, unlink
from .rollback import roll_back


def recover_stale_claims(ctx: TickContext, plan: Plan) -> Plan:
    """Reset every `[~]` task whose worker is gone, finish interrupted commits, drop orphan claims."""
    ws = ctx.ws
    stale_after = plan.meta.stale_lock_timeout
    for task in plan.tasks:
        if task.status == "~":
            claim = read_claim(ws, task.id)
            why = claim_is_stale(claim, stale_after)
            if why is not None:
                reset_stale_claim(ctx, task, claim, why)
        elif task.status == "x":
            claim = read_claim(ws, task.id)
            if claim is not None and claim.stage == "committing":
                finish_interrupted_commit(ctx, claim)
    for leftover in ws.claims_dir.glob("*.json") if ws.claims_dir.is_dir() else ():
        task = plan.task(leftover.stem)
        if task is None or task.status not in ("~", "x"):
            kill_local_group(read_claim(ws, leftover.stem))
            remove_claim(ws, leftover.stem)
    return ctx.plan()


def reset_stale_claim(ctx: TickContext, task: Task, claim: Claim | None, why: str) -> None:
    """Kill the dead worker's agent group, roll back its half-done change, `[~]` back to `[ ]`."""
    kill_local_group(claim)
    rolled = "nothing to roll back"
    if claim is not None:
        head = gitops.head(ctx.root)
        if head != claim.base:
            # Commits made since the claim may be a person's: never fold them here.
            # Only what is uncommitted on top of the current HEAD is rolled back.
            rolled = ctx.rolled_back(roll_back(ctx.ws, head, set(claim.untracked), f"stale-{task.id}", fold=False))
            rolled += "; HEAD had moved since the claim, its commits were kept"
        else:
            rolled = ctx.rolled_back(roll_back(ctx.ws, claim.base, set(claim.untracked), f"stale-{task.id}"))
    try:
        edit_plan(ctx.ws.plan_path, lambda e: e.set_status(task.id, " ", expect="~"))
    except EditConflict:
        pass  # a person already changed it: their word stands
    remove_claim(ctx.ws, task.id)
    ctx.event(f"⚠️ STALE — Stale [~] detected on {task.id}, reset to [ ]",
              [("Task", task.label), ("Reason", why), ("Rollback", rolled)])


def finish_interrupted_commit(ctx: TickContext, claim: Claim) -> None:
    """A tick died between marking [x] and committing: make the commit it was making.

    Only if the files are still exactly the ones verify passed on (their blob ids are
    in the claim); a person's later edit is never swept into a task's commit.
    """
    ws = ctx.ws
    paths = [p for p in claim.commit_paths if p]
    message = claim.commit_message or f"memento: complete {claim.task}"
    status = read_or_none(ws.status_path) or b""
    if claim.entry and claim.entry.splitlines()[0].encode() not in status:
        status_log.append_entry(ws.status_path, claim.entry)
    now = gitops.hash_files(ctx.root, list(claim.commit_hashes))
    if now != claim.commit_hashes:
        changed = sorted(p for p in claim.commit_hashes if now.get(p) != claim.commit_hashes[p])
        ctx.event(f"⚠️ INTERRUPTED COMMIT — {claim.task}'s files changed after it passed; not committed",
                  [("Paths", ", ".join(changed)),
                   ("Action", "review and commit them by hand, or `memento reset` the task")])
        remove_claim(ws, claim.task)
        return
    sha = ctx.commit(paths, message)
    if sha is None:  # it had landed: find it
        sha = next((s for s, subject in gitops.log_subjects(ctx.root, 20) if subject == message), None)
    if sha:
        fill_commit(ws.status_path, sha[:7])
    remove_claim(ws, claim.task)


def clean_leftovers(ctx: TickContext) -> None:
    """Temp files of atomic writes a killed process never renamed, and a stale git index."""
    ws = ctx.ws
    # Under a document's own edit lock no writer is between its temp file and the
    # rename, so every temp file of that document is an orphan.
    for doc in (ws.plan_path, ws.notes_path, ws.status_path):
        if any(doc.parent.glob(f".{doc.name}.*.tmp")):
            with file_lock(lock_path_for(doc)):
                for tmp in doc.parent.glob(f".{doc.name}.*.tmp"):
                    unlink(tmp)
    cutoff = time.time() - 60  # other writers rename their temp file within milliseconds
    for folder in (ws.docs, ws.memento_dir, ws.claims_dir):
        for tmp in folder.glob(".*.tmp") if folder.is_dir() else ():
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
            except OSError:
                pass
    _reset_stale_index(ctx)


def _reset_stale_index(ctx: TickContext) -> None:
    """A commit killed between moving HEAD and refreshing the index leaves index entries
    that disagree with HEAD while the files themselves match it.

    Only paths a commit of ours was writing (recorded in its claim) are considered:
    content a person staged is theirs, even when the file matches HEAD again.
    """
    ws = ctx.ws
    ours = set()
    for path in ws.claims_dir.glob("*.json") if ws.claims_dir.is_dir() else ():
        claim = read_claim(ws, path.stem)
        if claim is not None and claim.stage == "committing":
            ours.update(claim.commit_paths)
    stale = [e.path for e in gitops.status(ctx.root)
             if e.path in ours and e.xy[0] not in " ?" and gitops.matches_head(ctx.root, e.path)]
    if stale:
        gitops.reset_index(ctx.root, stale)


def kill_local_group(claim: Claim | None) -> None:
    """Kill a claim's agent group, but only one started on this host (a pgid means
    nothing on another machine sharing the repository)."""
    if claim is not None and claim.pgid and claim.host == this_host():
        kill_group(claim.pgid)
