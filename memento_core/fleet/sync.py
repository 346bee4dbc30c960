"""The local branch brought to the remote's (SPEC §12 "Across machines"): before each pick,
when a paused plan may have been resumed elsewhere, around `memento architect`, and at the
end of a tick (:func:`sync`, :func:`finish`). Fetch, integrate this host's unpushed commits
(integrate.py) and push them with the claim refs of results an earlier tick could not push
(pending.py); then stale claims of other hosts are taken over (stale.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import EXIT_OK, MementoError
from ..git.repo import head as git_head
from ..plan.model import Plan
from ..runlog import Outcome, cron_log
from . import remote
from .docs import commit_own_docs
from .host import CLAIMS, MAX_RACES, enabled, fleet
from .integrate import integrate
from .pending import (
    _never_attempted,
    _pending_claims,
    _release_commits,
    read_pending_claims,
    save_pending,
)
from .publish import release_chained
from .remote import _lease, remote_head
from .stale import take_over_stale

if TYPE_CHECKING:
    from ..tick.context import TickContext


def sync(ctx: TickContext, *, take_over: bool = True) -> None:
    """Local branch = the remote's, plus this host's unpushed commits rebased and pushed;
    then (``take_over``) stale claims of other hosts taken over."""
    f = fleet(ctx)
    for _ in range(MAX_RACES):
        commit_own_docs(ctx)
        remote.fetch(ctx)
        upstream = remote_head(ctx)
        pending = _pending_claims(ctx, upstream)
        if pending:
            _release_commits(ctx, _never_attempted(ctx, pending, upstream))
        local = integrate(ctx, upstream)
        specs, leases = [f"HEAD:refs/heads/{f.branch}"], [_lease(f, upstream)]
        for task_id, ref in pending.items():  # results an earlier tick could not push: with their claim refs, or not at all
            specs.append(f":{CLAIMS}{task_id}")
            leases.append(f"{CLAIMS}{task_id}:{ref}")
        if local != upstream and not remote.push(ctx, specs, leases):
            continue
        if pending and local != upstream:
            save_pending(ctx)
        if not take_over or take_over_stale(ctx, local):
            return
    raise MementoError(f"lost the race to the remote {MAX_RACES} times")


def refresh(ctx: TickContext, plan: Plan) -> Plan:
    """A plan paused on this host may have been resumed on the remote (or paused here by a
    person, which the fleet then hears of): sync before the tick_mode check."""
    if not enabled(ctx) or plan.meta.tick_mode == "auto":
        return plan
    try:
        sync(ctx)
    except MementoError as exc:
        cron_log(ctx.ws, f"the remote {ctx.config.workers_remote!r} could not be used: {exc}")
        return plan
    fresh = ctx.plan()
    return plan if fresh.plan_errors else fresh


def finish(ctx: TickContext, outcome: Outcome) -> Outcome:
    """After the tick, a normal end or SIGTERM: Memento's documents committed and pushed, and a
    result an earlier push could not land pushed with its claim ref (a CI runner keeps nothing)."""
    if not enabled(ctx):
        return outcome
    try:
        release_chained(ctx)
    except (OSError, MementoError) as exc:
        cron_log(ctx.ws, f"a chained claim was not released: {exc}")
    try:
        if not _all_pushed(ctx):
            sync(ctx, take_over=False)
    except MementoError as exc:
        cron_log(ctx.ws, f"memento's documents were not pushed to {ctx.config.workers_remote}: {exc}")
    return outcome


def _all_pushed(ctx: TickContext) -> bool:
    """Memento's documents committed, and HEAD is the remote's branch as this host last pushed
    or fetched it, with no result waiting for its claim ref: nothing to push, so no remote.fetch."""
    f = fleet(ctx)
    commit_own_docs(ctx)
    head = git_head(ctx.root)
    return head is not None and head == remote_head(ctx) and not f.claims and not read_pending_claims(ctx)


def sync_for_architect(ctx: TickContext) -> None:
    """`memento architect` with a remote: it reads the fleet's plan, not this clone's old one."""
    if not enabled(ctx):
        return
    try:
        sync(ctx)
    except MementoError as exc:
        cron_log(ctx.ws, f"the architect runs on this clone's plan: the remote {ctx.config.workers_remote!r} "
                         f"could not be used: {exc}")


def push_for_architect(ctx: TickContext) -> None:
    """The architect's commit pushed to the remote the way a tick's documents are (:func:`finish`)."""
    finish(ctx, Outcome(EXIT_OK, ""))
