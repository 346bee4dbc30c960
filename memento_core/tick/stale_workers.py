"""A killed tick's parallel workers (SPEC §4 step 4, §12): their processes stopped, their worktrees pruned.

A worker's claim names its worktree (`.memento/worktrees/<ID>/`) and the tick's
own record its branch (git/worktrees.py). Before the stale claims are reset
(recovery.py), :func:`stop_stale_workers` stops a dead tick's worker's agent
group and removes its worktree and branch (its work saved under logs/rollback/
first); the claim stays, for recovery to reset the task and count it. After
them, :func:`prune_worktrees` removes what no claim holds. The doctor asks
:func:`recorded_branch` to tell Memento's branches from a person's.
"""

from __future__ import annotations

import os
import re
from functools import partial

from ..agents.reaper import kill_marked
from ..attempt_record import read_record
from ..git import worktrees
from ..plan.model import Plan
from ..runlog import cron_log
from ..state import read_claim, remove_claim, this_host
from ..workspace import Workspace
from .context import TickContext
from .record import leader_is_ours

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


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

