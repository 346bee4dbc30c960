"""Check of the parallel workers' git worktrees (SPEC §12): none left behind by a dead tick."""

from __future__ import annotations

from ...tick.worktrees import WORKTREES_REL, stale
from ..context import Context
from ..findings import WARNING, CheckResult, Finding


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
