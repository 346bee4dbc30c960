"""The result of an attempt pushed to the remote (SPEC §12 "Across machines").

The result commit goes the way a claim does, rebasing on rejection, and deletes the
heartbeat ref in the same atomic push, leased on the value this host last pushed: a claim
taken over meanwhile is never completed twice (:func:`publish`). A tick that goes on claims
its next task in that same push (:func:`_chain_claim`: the claim commit on top of the
result, its heartbeat ref created), so a task costs one push, not two, and the next pick
needs no fetch.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ..errors import EditConflict, MementoError
from ..git.commit import adopt_commit, identity_env
from ..git.commit_fast import can_build
from ..git.objects import show_file
from ..git.repo import repo_path
from ..git.trees import read_at
from ..held import held_tasks
from ..lines import decode
from ..plan.edits import edit_plan
from ..plan.scan import parse_plan_doc
from ..runlog import TaskResult, cron_log
from ..scheduler import TASK
from ..scheduler import pick as pick_verdict
from . import remote
from .batch import _batch, _spread
from .claims import Claim, _hold, _make_claim, start_beating
from .docs import commit_own_docs
from .host import CLAIMS, MAX_RACES, PLAN, Beat, Fleet, FleetConflict, _forget, enabled, fleet
from .integrate import _nothing, integrate_later
from .pending import _claim_lost, _conflicted, _release_commits, adopt, save_pending
from .remote import PushRefused, _fetched, _lease
from .stale import stale_claims

if TYPE_CHECKING:
    from ..tick.context import TickContext


def publish(ctx: TickContext, result: TaskResult, *, chain: bool = False, room: int = 1) -> TaskResult:
    """Push the attempt's result commit (and drop its heartbeat ref) the same way, rebasing on rejection.

    ``chain`` (the tick goes on after a passed task): the same atomic push also claims the next
    task of the plan it lands on (:func:`_chain_claim`); won, the fleet holds that claim and the
    next :func:`pick.pick` returns it without a sync or a claim push of its own. A lost race goes
    round again (the next task may be another); a refusal or an error undoes the claim commit
    and the result is treated as without ``chain``. ``room``: the tasks the tick may attempt
    after this one (the next claim may take more than one, :func:`batch._batch`).

    With a task of this host's claim still queued (a claim of two), a passed result that goes
    on is not pushed yet: it stays committed here, its claim ref kept and beaten, and the push
    after the queued task carries both. Every push deletes every claim ref this host holds: the
    results it carries mark their tasks, and a queued task never attempted is `[ ]` in them
    (the work tree's plan never had its `[~]`), so it goes back with no retry counted."""
    f = ctx.fleet
    if not enabled(ctx) or f is None or not f.task:
        return result
    f.stop_beating()
    _release_if_still_claimed(ctx, f.task)
    chain = chain and result.passed
    if chain and f.queued and f.queued[0] != f.task:
        _keep_for_the_next_push(ctx, f)
        return result
    if f.queued:  # claimed, never attempted: each goes back with a commit that says so
        _release_commits(ctx, list(f.queued))
    try:
        for _ in range(MAX_RACES):
            result, chain, done = _push_round(ctx, f, result, chain, room)
            if done:
                return result
    except MementoError as exc:
        _not_pushed(ctx, f, result, exc)
        return result
    cron_log(ctx.ws, f"the result of {result.task_id} was not pushed after {MAX_RACES} races; the next tick does")
    _forget(f)
    return result


def _keep_for_the_next_push(ctx: TickContext, f: Fleet) -> None:
    """A passed result with a task of the same claim queued: committed here, not pushed; the
    queued task is in hand (the next pick gets it, :func:`pick._take_chained`), every claim beaten."""
    f.task = f.queued[0]
    save_pending(ctx)
    start_beating(f)


def _push_round(ctx: TickContext, f: Fleet, result: TaskResult, chain: bool,
                room: int) -> tuple[TaskResult, bool, bool]:
    """One try at landing the result: fetch, check the claims, integrate, push. Returns the
    result (a lost claim or a conflict makes it a failure), whether the push still chains the
    next claim, and whether publish is done (the push landed, or the claim was lost)."""
    commit_own_docs(ctx)
    remote.fetch(ctx)
    upstream, seen = _fetched(ctx)
    _check_claims(f, seen)
    if f.lost:
        return _claim_lost(ctx, result, upstream), chain, True
    try:
        local, arrive = integrate_later(ctx, upstream)
    except FleetConflict as exc:
        return _conflicted(ctx, result, upstream, exc.paths), False, False
    nxt, chain = _next_claim(ctx, result, seen, local, room) if chain else (None, False)
    landed = remote.push(ctx, *_result_push(f, upstream, local, nxt))
    if landed:
        _answered(ctx)  # the pending file first: a kill from here on leaves nothing to push
    # HEAD and the files to the replayed commits, out of the push's window; the chained
    # claim, made on them, held before anything is committed on top.
    arrive(partial(_hold_chained, ctx, nxt) if landed else _nothing)
    return result, chain, landed


def _check_claims(f: Fleet, seen: dict[str, Beat]) -> None:
    """Every claim ref this host holds, as just fetched, is still a beat of its own; the first
    that is not is said in ``f.lost``."""
    for task_id in f.claims:
        if not f.lost and not adopt(f, seen.get(task_id, Beat("", "", 0)).sha, task_id):
            f.lost = f"its claim ref {CLAIMS}{task_id} is gone or another host's (taken over as stale?)"


def _next_claim(ctx: TickContext, result: TaskResult, seen: dict[str, Beat], local: str | None,
                room: int) -> tuple[Claim | None, bool]:
    """The claim to chain on the result (:func:`_chain_claim`) and whether to go on chaining: an
    error pushes the result as without a chain."""
    try:
        return _chain_claim(ctx, seen, local, room), True
    except MementoError as exc:
        cron_log(ctx.ws, f"the next task was not claimed with the result of {result.task_id}: {exc}")
        return None, False


def _result_push(f: Fleet, upstream: str | None, local: str | None,
                 nxt: Claim | None) -> tuple[list[str], list[str]]:
    """The specs and leases of a result's push: the branch to the result, every claim ref this
    host holds deleted, and a chained claim's commit and refs. The claim commit goes on the
    result as an object only: HEAD moves to it once the push has won, so a lost race or a
    refusal leaves nothing to undo here."""
    specs = [f"{nxt.made.sha if nxt else local or 'HEAD'}:refs/heads/{f.branch}",
             *(f":{CLAIMS}{t}" for t in f.claims)]
    leases = [_lease(f, upstream), *(f"{CLAIMS}{t}:{held.ref}" for t, held in f.claims.items())]
    if nxt is not None:
        for task_id, old in nxt.tasks:
            specs.append(f"{nxt.beat}:{CLAIMS}{task_id}")
            leases.append(f"{CLAIMS}{task_id}:{old}")
    return specs, leases


def _not_pushed(ctx: TickContext, f: Fleet, result: TaskResult, exc: MementoError) -> None:
    """The remote could not be used (or refused): the result stays committed here, its claims
    kept in the pending file for the next sync."""
    cron_log(ctx.ws, f"the result of {result.task_id} is committed here but not pushed "
                     f"(the next sync pushes it if the claim is still this host's): {exc}")
    if isinstance(exc, PushRefused):
        ctx.event(f"⚠️ NOT PUSHED — the remote {exc.remote} refused the result of {result.task_id}",
                  [("Reason", exc.said), ("Action", "committed here; the next tick pushes it with its claim "
                                                    "ref once the remote takes it")])
    _forget(f)


def _answered(ctx: TickContext) -> None:
    """The push of :func:`publish` landed: every claim it answered forgotten (the pending file too)."""
    f = fleet(ctx)
    if f.queued:
        cron_log(ctx.ws, f"released the claim of {', '.join(f.queued)}: the tick stopped before attempting it")
    _forget(f)
    save_pending(ctx)


def _hold_chained(ctx: TickContext, nxt: Claim | None) -> bool:
    """The next claim (``nxt``), won in the push of :func:`publish`, made HEAD and held: True
    when it is (the work tree's plan then lags HEAD's by the claim's `[~]` until the attempt)."""
    if nxt is None:
        return False
    if adopt_commit(ctx.root, nxt.made):
        _hold(ctx, [t for t, _ in nxt.tasks], nxt.beat, chained=True)
        return True
    # HEAD could not follow the push (files in the way): the claim is left to go stale
    cron_log(ctx.ws, f"the claim of {', '.join(t for t, _ in nxt.tasks)} landed but HEAD is not at "
                     f"{(nxt.made.parent or '')[:12]} to hold it: its heartbeat ref goes stale and another host takes it over")
    return False


def _chain_claim(ctx: TickContext, seen: dict[str, Beat], head: str | None, room: int) -> Claim | None:
    """The claim of the next task, made on the result just integrated onto the remote's branch
    (HEAD, commit ``head``), to go in the result's push; None when there is none to chain: the
    plan is not ``tick_mode: auto``, nothing is pickable, or a claim of another host looks stale
    (the normal pick then takes it over)."""
    if not head:
        return None
    ident = identity_env(ctx.root, ctx.config.author)
    at = None
    if can_build(ident):
        at = read_at(ctx.root, head, [repo_path(ctx.root, PLAN)])
        found = at.files.get(repo_path(ctx.root, PLAN))
        data = found[2] if found else None
    else:
        data = show_file(ctx.root, head, PLAN)
    if data is None:
        return None
    try:
        plan = parse_plan_doc(decode(data, PLAN), PLAN)
    except (MementoError, ValueError):
        return None
    if plan.plan_errors or plan.meta.tick_mode != "auto" or stale_claims(ctx, plan, seen):
        return None
    verdict = pick_verdict(plan, exclude=held_tasks(ctx, plan, head))  # as the result's history says
    if verdict.kind != TASK or verdict.task is None:
        return None
    _, task = _spread(ctx, plan, verdict.task, head)
    batch = [t for t in _batch(ctx, plan, task, room, head) if t.id not in fleet(ctx).claims]
    return _make_claim(ctx, task, seen, committed=(head, data), at=at, batch=batch) if batch and batch[0] is task \
        else None


def release_chained(ctx: TickContext) -> None:
    """Claims the tick stopped before attempting (SIGTERM, an error): their `[~]` put back to
    `[ ]` (no retry counted) and their heartbeat refs deleted, in one push that also carries the
    results of this host's not pushed yet."""
    f = ctx.fleet
    if f is None or not f.queued:
        return
    task_id = f.task = f.queued[0]
    publish(ctx, TaskResult(task_id, False, "released: the tick stopped before its attempt"))


def _release_if_still_claimed(ctx: TickContext, task_id: str) -> None:
    """An attempt that never reached the plan (its claim step refused) leaves the task `[~]`
    only in the claim commit: put it back to `[ ]` (no retry) before the ref is dropped."""
    task = ctx.plan().task(task_id)
    if task is None or task.status != "~":
        return
    try:
        edit_plan(ctx.ws.plan_path, lambda e: e.set_status(task_id, " ", expect="~"))
    except EditConflict:
        pass
