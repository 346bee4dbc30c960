"""Claims of other hosts gone stale (SPEC §12 "Across machines").

A ``[~]`` task this host has no claim or record of is another host's (:func:`foreign_claims`),
judged by its heartbeat ref, never by the local stale recovery: one older than
``stale_lock_timeout`` is taken over by any host, its retry counted
(:func:`take_over_stale`), in a push that deletes the old claim ref leased on its value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..attempt_record import read_record
from ..errors import EditConflict
from ..git.run import run_git
from ..plan.edits import edit_plan
from ..plan.model import Plan, Task
from ..runlog import cron_log
from ..state import read_claim
from . import remote
from .host import CLAIMS, PLAN, STATUS, Beat, fleet
from .remote import _lease, _seen

if TYPE_CHECKING:
    from ..tick.context import TickContext


def foreign_claims(ctx: TickContext, plan: Plan) -> frozenset[str]:
    """`[~]` tasks this host has no claim or record of: another host's, judged by their heartbeat
    ref (:func:`take_over_stale`), never by the local stale recovery. Asked with a remote only (calls.foreign_claims)."""
    return frozenset(t.id for t in plan.tasks if t.status == "~" and not _local(ctx, t.id))


def _local(ctx: TickContext, task_id: str) -> bool:
    return read_claim(ctx.ws, task_id) is not None or read_record(ctx.ws, task_id) is not None


def take_over_stale(ctx: TickContext, upstream: str | None) -> bool:
    """Reset the `[~]` tasks of other hosts whose heartbeat ref is older than `stale_lock_timeout`
    (a retry counted); False when the push lost a race (fetch again)."""
    plan = ctx.plan()
    for task, beat, why in stale_claims(ctx, plan, _seen(ctx)):
        if not _take_over(ctx, plan, task, beat, why, upstream):
            return False
    return True


def stale_claims(ctx: TickContext, plan: Plan, seen: dict[str, Beat],
                 now: float | None = None) -> list[tuple[Task, Beat | None, str]]:
    """The `[~]` tasks of other hosts in ``plan`` whose heartbeat (``seen``, as fetched) is older
    than `stale_lock_timeout`, each with its Beat and why; reads only, pushes nothing."""
    now = remote._now() if now is None else now
    stale = []
    for task in plan.tasks:
        if task.status != "~" or _local(ctx, task.id):
            continue
        beat = seen.get(task.id)
        if beat is None:  # a reader may see the branch before the claim ref: the claim commit's time
            claimed = _claim_commit(ctx, task.id)
            if claimed is not None and now - claimed.at <= plan.meta.stale_lock_timeout:
                continue
        elif now - beat.at <= plan.meta.stale_lock_timeout:
            continue
        why = ("no heartbeat ref" if beat is None
               else f"the heartbeat ref of {beat.host} is {int(now - beat.at)}s old")
        stale.append((task, beat, why))
    return stale


def _claim_commit(ctx: TickContext, task_id: str) -> Beat | None:
    """The newest ``memento: claim <ID> on <host>`` commit on HEAD, as a Beat (its committer time)."""
    out = run_git(ctx.root, ["log", "-1", "--fixed-strings", f"--grep=memento: claim {task_id} on ",
                             "--format=%H%x09%ct%x09%B", "HEAD"], check=False).stdout.decode("utf-8", "replace")
    parts = out.strip().split("\t", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    # A claim of several tasks names the first in its subject and each other on a line of its own.
    line = next((line for line in parts[2].splitlines() if line.startswith(f"memento: claim {task_id} on ")), None)
    return Beat(parts[0], line.rpartition(" on ")[2].strip(), float(parts[1])) if line else None


def _take_over(ctx: TickContext, plan: Plan, task: Task, beat: Beat | None, why: str, upstream: str | None) -> bool:
    f = fleet(ctx)
    max_retries = plan.meta.max_retries
    retries = task.retries + 1
    new = "!" if retries >= max_retries else " "

    def apply(e):
        e.set_field(task.id, "retries", str(retries))
        e.set_status(task.id, new, expect="~")
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:  # a person's edit between the read above and this one: theirs stands
        return True  # pragma: no mutate (no test can time that edit without a mock)
    said = f"{retries}/{max_retries}" + (" — blocked" if new == "!" else "")
    ctx.event(f"⚠️ STALE — Stale [~] detected on {task.id}, reset to [{new}]",
              [("Task", task.label), ("Reason", why), ("Claimed By", beat.host if beat else "(unknown)"),
               ("Retries", said)])
    message = f"memento: {task.id} taken over from {beat.host if beat else 'a lost claim'} (retry {said})"
    sha = ctx.commit([PLAN, STATUS], message)
    specs, leases = [f"HEAD:refs/heads/{f.branch}"], [_lease(f, upstream)]
    if beat is not None:
        specs.append(f":{CLAIMS}{task.id}")
        leases.append(f"{CLAIMS}{task.id}:{beat.sha}")
    if remote.push(ctx, specs, leases):
        cron_log(ctx.ws, f"took over the stale claim of {task.id} ({why})")
        return True
    if sha and upstream:
        _move_back(ctx, sha, upstream)
    return False


def _move_back(ctx: TickContext, sha: str, base: str) -> None:
    """Undo a local commit of Memento's that lost its race: HEAD from ``sha`` back to ``base``,
    its paths in the index and the work tree too."""
    changed = run_git(ctx.root, ["diff", "--name-only", "-z", base, sha]).stdout.decode("utf-8", "surrogateescape")
    paths = [p for p in changed.split("\0") if p]
    if run_git(ctx.root, ["update-ref", "-m", "memento: lost the race", "HEAD", base, sha],
               check=False).returncode != 0:
        return  # HEAD is no longer sha (update-ref compared): nothing of this commit's to undo
    if paths:
        run_git(ctx.root, ["checkout", "-q", base, "--", *paths])  # a tree's paths: the index's too
