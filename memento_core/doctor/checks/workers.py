"""Check of the parallel workers' git worktrees (SPEC §12): none left behind by a dead tick."""

from __future__ import annotations

from functools import partial

from ...git.worktrees import WORKTREES_REL, present
from ...state import claim_is_stale, read_claim
from ...tick.stale_workers import recorded_branch
from ...workspace import Workspace
from ..context import Context
from ..findings import WARNING, CheckResult, Finding


def stale(ws: Workspace) -> list[str]:
    """The task ids whose worktree or `memento/<ID>` branch has no live claim: the next tick
    removes them."""
    found = []
    for task_id in present(ws, partial(recorded_branch, ws)):
        claim = read_claim(ws, task_id)
        if claim is None or claim_is_stale(claim, float("inf")) is not None:
            found.append(task_id)
    return found


def check_worktrees(c: Context) -> CheckResult:
    try:
        left = stale(c.ws)
    except Exception as exc:  # noqa: BLE001 - no repository, no git: the work-tree check says so
        return f"worktrees: not checked ({type(exc).__name__})"
    if left:
        return [Finding(WARNING, "worktrees",
                        f"stale worktree(s) of {', '.join(left)} (their tick is gone); "
                        "the next tick removes them and their memento/<ID> branches", WORKTREES_REL)]
    return "no stale worktrees"
