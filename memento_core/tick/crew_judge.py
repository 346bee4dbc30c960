"""What a parallel worker wrote outside its worktree or into another's, judged (SPEC §12, §13).

Unconfined, a worker's agent can write anywhere the person can: the main work
tree, a fresh worktree no agent has run in yet, or a running worker's worktree.
crew_watch.py judges the main work tree by whose window holds a change's
ctime; this module judges the workers' worktrees the same way and names the
worker that answers for a write: the one other worker whose window holds it
(:func:`blame`) fails at its guards with the write among its reasons, and the
worker whose worktree was written is set aside (:func:`judge_worktree`: failed,
no retry counted, its work never committed with what it did not write). Every
function here runs under the crew's lock; in the sandbox (``crew.watch`` None)
the other worktrees are read-only to a worker and nothing is judged here.
"""

from __future__ import annotations

import os

from .. import scratch
from ..git.status import status as git_status
from ..runlog import cron_log
from .crew import Crew, Worker
from .crew_watch import changed_at, listed, own_run_at


def sweep(crew: Crew) -> None:
    """Memento is about to write the main work tree (under the lock): what changed there since it
    last did is judged first, for every running worker whose window holds it (crew_watch.py)."""
    if crew.watch is None:
        return
    found = crew.watch.judge(crew.windows(), untracked=False)  # new files: at the guards
    for w in crew.running:
        w.foreign += found.get(w.task.id, [])
    for said in found.get("", []):
        cron_log(crew.ws, f"parallel workers: an agent {said}")


def judge_outside(crew: Crew, w: Worker) -> list[str]:
    """What ``w``'s agent did outside its worktree: the main work tree, the other worktrees."""
    if crew.watch is None or w.window is None:
        return []
    for other in crew.running:
        if other is not w and other.window is None:  # not started yet: its worktree is fresh
            clean_fresh(crew, other)
    sweep_worktrees(crew, w)
    found, w.foreign = list(w.foreign), []
    found += crew.watch.judge({**crew.windows(), w.task.id: w.window}, w.task.id).get(w.task.id, [])
    return [f"the agent {r}" for r in dict.fromkeys(found)]


def written_by_others(crew: Crew, v: Worker, paths) -> list[tuple[str, float, bool]]:
    """The paths of ``v``'s worktree last changed when neither its agent nor its verify ran
    (crew_watch.own_run_at), or while its verify ran and another worker's window held the
    moment too: (path, ctime, sure). Scratch (bytecode, a runner's cache) is never judged."""
    if crew.watch is None or v.window is None or v.ctx.own_runs is None:
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
        others = [o for o in crew.started if o is not v and o.window is not None and o.window.holds(moment)]
        if mine == "verify" and not others:
            continue  # what its verify wrote (a refreshed lock file): judged as verify's
        found.append((rel, moment, mine == ""))
    return found


def judge_worktree(crew: Crew, w: Worker, paths) -> list[str]:
    """What someone else wrote into ``w``'s worktree among the task's change: ``w`` is set aside
    (its work is never committed with what it did not write, no retry counted) and the one
    other worker whose window holds the write answers for it at its guards."""
    written = written_by_others(crew, w, paths)
    if not written:
        return []
    w.set_aside = True
    for rel, moment, _sure in written:
        blame(crew, w, rel, moment)
    sure = [rel for rel, _m, s in written if s]
    unsure = [rel for rel, _m, s in written if not s]
    said = []
    if sure:
        said.append(f"{listed(sure)} changed in its worktree after its own agent had ended, while neither "
                    "it nor its verify ran (another worker's agent, or a process outside the tick)")
    if unsure:
        said.append(f"{listed(unsure)} changed while its verify ran and another worker ran too (whose "
                    "write it was cannot be told)")
    return ["; ".join(said) + ": what the task did not write is never committed as its work; set aside, "
            "no retry counted"]


def blame(crew: Crew, victim: Worker, rel: str, moment: float) -> None:
    """The one other running worker whose window holds ``moment`` wrote ``rel`` into ``victim``'s
    worktree; held by several: nobody can be named (the cron log says so)."""
    holders = [o for o in crew.started if o is not victim and o.window is not None and o.window.holds(moment)]
    said = f"wrote into the worktree of {victim.task.id}: {rel}"
    if len(holders) == 1:
        if said not in holders[0].foreign:
            holders[0].foreign.append(said)
    elif holders:
        cron_log(crew.ws, f"parallel workers: {rel} in the worktree of {victim.task.id} was written while "
                          f"{', '.join(o.task.id for o in holders)} ran")


def sweep_worktrees(crew: Crew, w: Worker) -> None:
    """Before ``w``'s guards and its commit: the other running worktrees, for what was written
    there while ``w`` ran (its agent may end, and pass, before their owners look)."""
    for v in crew.running:
        if v is w or v.window is None or not (v.ctx.root / ".git").exists():
            continue
        paths = sorted({e.path for e in git_status(v.ctx.root)} - {""})
        for rel, moment, _sure in written_by_others(crew, v, paths):
            if w.window is not None and w.window.holds(moment):
                blame(crew, v, rel, moment)


def clean_fresh(crew: Crew, w: Worker) -> None:
    """``w``'s worktree before its snapshot holds exactly its base: anything else is another
    worker's agent's (whose window holds the change: its guards fail), removed."""
    if crew.watch is None:
        return
    root = w.ctx.root
    paths = crew.watch.foreign_in_fresh(root, w.claim.base)
    if not paths:
        return
    for other in crew.running:
        if other is w or other.window is None:
            continue
        theirs = [p for p in paths if other.window.holds(changed_at(root / p))]
        if theirs:
            other.foreign.append(f"wrote into the worktree of {w.task.id}: {', '.join(theirs[:10])} (removed)")
    crew.watch.clean_fresh(w.task.id, root, w.claim.base, paths)
