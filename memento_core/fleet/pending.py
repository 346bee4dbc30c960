"""Results waiting for the remote (SPEC §12 "Across machines").

The claims this host holds whose results are not on the remote yet are kept in
``.memento/fleet_pending.json`` (:func:`save_pending`) until the atomic push with those
claim refs' leases lands, so a result an earlier tick could not push goes with the next
sync (:func:`_pending_claims`). A result that can never land is set aside under
logs/rollback/, never pushed: its claim was taken over meanwhile (:func:`_claim_lost`), or
it conflicts with what landed (:func:`_conflicted`, a failed attempt naming the paths).
A claimed task never attempted goes back `[ ]` with a commit that says so
(:func:`_release_commits`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..errors import EditConflict, MementoError
from ..git.commit import MadeCommit, adopt_commit, commit_paths, identity_env
from ..git.repo import head
from ..git.run import git_env, run_git
from ..locks import atomic_write_bytes
from ..plan.edits import edit_plan
from ..runlog import TaskResult, cron_log, rollback_folder
from .docs import commit_own_docs
from .host import CLAIMS, PLAN, STATUS, Beat, Fleet, _forget, fleet
from .integrate import _is_ancestor, _subjects
from .remote import _seen

if TYPE_CHECKING:
    from ..tick.context import TickContext


def _pending_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_pending.json"


def save_pending(ctx: TickContext) -> None:
    """The claims this host holds, whose results are not yet on the remote (each task and the
    claim ref this host last pushed for it; the claim in hand first as ``task``/``ref``), kept
    until the atomic push with those refs' leases lands; with none held the file goes."""
    f = fleet(ctx)
    path = _pending_path(ctx)
    if not f.claims:
        path.unlink(missing_ok=True)
        return
    first = f.task if f.task in f.claims else next(iter(f.claims))
    body = {"task": first, "ref": f.claims[first].ref, "claims": {t: held.ref for t, held in f.claims.items()}}
    atomic_write_bytes(path, json.dumps(body).encode())


def adopt(f: Fleet, sha: str | None, task: str | None = None) -> bool:
    """``sha`` is the value on the remote of the claim ref of ``task`` (the claim in hand when
    None): True when it is a beat of this host's (the last one it knows landed, or one whose
    push answered with an error but landed)."""
    held = f.claims.get(f.task if task is None else task)
    if held is None or not sha or (sha != held.ref and sha not in held.unsure):
        return False
    held.ref, held.unsure = sha, set()
    save_pending(f.ctx)
    return True


def _read_pending_file(ctx: TickContext) -> dict:
    try:
        data = json.loads(_pending_path(ctx).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def read_pending(ctx: TickContext) -> tuple[str, str] | None:
    """The claim in hand as the pending file has it (task, ref), None when there is none."""
    data = _read_pending_file(ctx)
    task, ref = data.get("task"), data.get("ref")
    return (task, ref) if isinstance(task, str) and isinstance(ref, str) and task and ref else None


def read_pending_claims(ctx: TickContext) -> dict[str, str]:
    """Every claim the pending file holds: task -> the ref this host last pushed for it."""
    data = _read_pending_file(ctx)
    claims = data.get("claims")
    if isinstance(claims, dict) and all(isinstance(k, str) and isinstance(v, str) and k and v
                                        for k, v in claims.items()):
        return dict(claims)
    first = read_pending(ctx)  # a file an older Memento wrote: one claim
    return {first[0]: first[1]} if first else {}


def _pending_claims(ctx: TickContext, upstream: str | None) -> dict[str, str]:
    """The claims an earlier tick's unpushed results depend on, when every one of their refs is
    still this host's; when another host took one over meanwhile, the local results are set
    aside (CLAIM LOST), never pushed."""
    pending = read_pending_claims(ctx)
    if not pending or (ctx.fleet is not None and ctx.fleet.claims):
        return {}
    seen = _seen(ctx)
    # A claim is still this host's when its ref is what this host last pushed and its heartbeat
    # names this host: a file naming another host's claim (an unconfined agent's, that claim's
    # sha copied from refs/memento/seen/) is a lost claim here, never a ref this host deletes.
    host = fleet(ctx).host
    nobody = Beat("", "", 0)
    lost = [t for t, ref in pending.items() if seen.get(t, nobody).sha != ref or seen.get(t, nobody).host != host]
    if not lost:
        return pending
    local = head(ctx.root)
    if local == upstream or _is_ancestor(ctx, local, upstream):
        save_pending(ctx)
        return {}
    task_id = lost[0]
    saved = _set_aside(ctx, task_id, upstream)
    reason = (f"claim lost: its claim ref {CLAIMS}{task_id} is gone or another host's (taken over as stale?) "
              f"before this host's result was pushed; the result was set aside in {saved}")
    ctx.event(f"⚠️ CLAIM LOST — {task_id} was taken over before its result was pushed from here", [("Reason", reason)])
    cron_log(ctx.ws, reason)
    save_pending(ctx)
    commit_own_docs(ctx)
    return {}


def _claim_lost(ctx: TickContext, result: TaskResult, upstream: str | None) -> TaskResult:
    """Another host took the claim over while this one ran: its result is set aside, never pushed."""
    f = ctx.fleet
    saved = _set_aside(ctx, result.task_id, upstream)
    # The claim's other tasks done here before this one (neither queued nor in hand): set aside too.
    others = [t for t in f.claims if t not in f.queued and t not in (f.task, result.task_id)]
    reason = (f"claim lost: {f.lost}; the result was set aside in {saved}"
              + (f", with the results of {', '.join(others)} done here before it" if others else ""))
    ctx.event(f"⚠️ CLAIM LOST — {result.task_id} was taken over while it ran here", [("Reason", reason)])
    _forget(f)
    f.lost = ""
    save_pending(ctx)
    return TaskResult(result.task_id, False, reason, result.duration)


def _conflicted(ctx: TickContext, result: TaskResult, upstream: str | None, paths: list[str]) -> TaskResult:
    """The result conflicts with what landed on the remote meanwhile: a failed attempt naming the
    paths (a retry starts from the new HEAD); the work is saved under logs/rollback/."""
    saved = _set_aside(ctx, result.task_id, upstream)
    reason = (f"conflict with {ctx.config.workers_remote}/{fleet(ctx).branch} in {', '.join(paths)}; "
              f"the work was saved in {saved}")
    plan = ctx.plan()
    task = plan.task(result.task_id)
    if task is None:
        return TaskResult(result.task_id, False, reason, result.duration)
    retries = task.retries + 1
    blocked = retries >= plan.meta.max_retries

    others = [t for t in fleet(ctx).claims if t != task.id]  # their results were set aside too

    def apply(e):
        e.set_field(task.id, "retries", str(retries))
        e.set_status(task.id, "!" if blocked else " ", expect="~")
        for other in others:  # `[ ]` again, no retry: the push deletes their claim refs
            try:
                e.set_status(other, " ", expect="~")
            except EditConflict:
                pass
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        pass  # a person changed the task meanwhile; their edit stands
    status = "🚫 BLOCKED" if blocked else "❌ FAILED"
    ctx.entry([("Task", task.label), ("Status", f"{status} (retry {retries}/{plan.meta.max_retries})"),
               ("Reason", reason), ("Files Modified", "(set aside)"), ("Git Commit", "(none — conflict)")])
    ctx.commit([PLAN, STATUS], f"memento: {task.id} failed (retry {retries}/{plan.meta.max_retries}): conflict")
    return TaskResult(result.task_id, False, reason, result.duration, None, blocked)


def _set_aside(ctx: TickContext, task_id: str, upstream: str | None) -> str:
    """This host's unpushed commits as a patch under logs/rollback/, then the branch = the remote's."""
    dest = rollback_folder(ctx.ws, f"fleet-{task_id}")
    local = head(ctx.root)
    if upstream and local and local != upstream:
        patch = run_git(ctx.root, ["format-patch", "--stdout", f"{upstream}..{local}"], check=False).stdout
        atomic_write_bytes(dest / "unpushed.patch", patch)
    if upstream:
        run_git(ctx.root, ["reset", "-q", "--keep", upstream])
    return ctx.ws.rel(dest)


def _never_attempted(ctx: TickContext, pending: dict[str, str], upstream: str | None) -> list[str]:
    """Of an earlier tick's claims, those it never attempted (a claim of two whose host was
    killed before the second): `[ ]` here, and no unpushed commit of this host's names them."""
    if upstream is None:
        return []
    plan = ctx.plan()
    said = [subject for _, subject in _subjects(ctx, upstream, "HEAD")]
    return [t for t in pending
            if (task := plan.task(t)) is not None and task.status == " "
            and not any(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", s) for s in said)]


def _release_commits(ctx: TickContext, task_ids: list[str]) -> None:
    """A commit ``memento: release <ID> …`` for each claimed task never attempted, so that every
    claim in the history has its answer. The work tree's plan has them `[ ]` (a claim commit's
    `[~]` never reaches it): the first commit carries that plan; when a result commit carried
    it already, the commit changes nothing but says so."""
    for task_id in task_ids:
        message = f"memento: release {task_id} (the tick stopped before its attempt)"
        try:
            commit_paths(ctx.root, [PLAN], message, author=ctx.config.author)
        except MementoError:  # nothing left to change: an empty commit of HEAD's tree
            base = head(ctx.root)
            if base is None:
                continue
            env = git_env(identity_env(ctx.root, ctx.config.author))
            sha = run_git(ctx.root, ["commit-tree", f"{base}^{{tree}}", "-p", base, "-F", "-"],
                          input=(message + "\n").encode(), env=env).stdout.decode().strip()
            adopt_commit(ctx.root, MadeCommit(sha, base, message, ()))
