"""Claims and their heartbeats (SPEC §12 "Across machines").

A claim is a commit marking the task ``[~]`` (its host named) on the remote's branch,
pushed with ``git push --atomic`` and a lease on the branch's sha: of two hosts racing for a
task exactly one wins (:func:`claim`). Its heartbeat is the ref ``refs/memento/claims/<ID>``
(a commit whose committer time is the heartbeat), pushed every :data:`HEARTBEAT_SECONDS` by a
thread (:func:`start_beating`), leased on the value this host last pushed: a ref another host
changed means the claim is lost.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import EditConflict, MementoError
from ..git.commit import MadeCommit, adopt_commit, identity_env, make_commit
from ..git.commit_fast import can_build, commit_bytes
from ..git.objects import object_format, object_id, show_file, write_objects
from ..git.repo import empty_tree, head, repo_path
from ..git.run import git_env, run_git
from ..git.trees import At, read_at, with_files
from ..lines import decode
from ..plan.edits import PlanEditor
from ..plan.model import Task
from ..runlog import cron_log, utc_stamp
from . import remote
from .host import CLAIMS, PLAN, Beat, Fleet, Held, fleet
from .pending import adopt, save_pending
from .remote import _lease, _seen, remote_ref

if TYPE_CHECKING:
    from ..tick.context import TickContext


HEARTBEAT_SECONDS = float(os.environ.get("MEMENTO_REMOTE_HEARTBEAT_SECONDS", "60"))


@dataclass(frozen=True)
class Claim:
    """A claim commit made on HEAD but not HEAD yet, nor pushed: its tasks, each with its claim
    ref's value as seen ('' when none), the commit (its sha and the HEAD it was made on) and the
    heartbeat commit their refs get."""

    tasks: tuple[tuple[str, str], ...]
    made: MadeCommit
    beat: str


def claim(ctx: TickContext, task: Task, batch: list[Task] | None = None) -> bool:
    """A commit marking ``task`` `[~]` (its host named) and its heartbeat ref, pushed atomically
    with a lease on the branch's sha: True when this host won the task. ``batch`` (``task``
    first, :func:`batch._batch`): the same commit and push claim those too, each with its own ref;
    the tick attempts them after ``task`` (:func:`pick._take_chained`).

    The commit is made from the plan as committed (the work tree's plan keeps `[ ]`, so the
    attempt's own claim step marks it as without a remote) and HEAD moves to it.
    """
    f = fleet(ctx)
    made = _make_claim(ctx, task, _seen(ctx), batch=batch)
    if made is None:
        return False
    # HEAD moves to the claim commit only once its push has won: a lost race, a refusal or a push
    # without an answer (and the remote unreadable) leaves HEAD and the index as they were.
    specs, leases = [f"{made.made.sha}:refs/heads/{f.branch}"], [_lease(f, made.made.parent)]
    for task_id, old in made.tasks:
        specs.append(f"{made.beat}:{CLAIMS}{task_id}")
        leases.append(f"{CLAIMS}{task_id}:{old}")
    if not remote.push(ctx, specs, leases):
        return False
    if not adopt_commit(ctx.root, made.made):
        raise MementoError(f"HEAD moved while the claim of {task.id} was pushed")
    _hold(ctx, [t for t, _ in made.tasks], made.beat)
    return True


def _make_claim(ctx: TickContext, task: Task, seen: dict[str, Beat],
                committed: tuple[str, bytes] | None = None, at: At | None = None,
                batch: list[Task] | None = None) -> Claim | None:
    """The claim commit on HEAD (from the plan as committed) and its heartbeat commit, not pushed;
    None when the committed plan does not have ``task`` as `[ ]`. ``committed``: HEAD and its
    plan's bytes, when the caller has just read them; ``at``: HEAD as git.trees.read_at read it.
    ``batch`` (``task`` first): the tasks to claim; one no longer `[ ]` there is left out."""
    f = fleet(ctx)
    ident = identity_env(ctx.root, ctx.config.author)
    if at is not None or (committed is None and can_build(ident)):
        return _build_claim(ctx, batch or [task], seen, ident, at)
    old = seen.get(task.id)
    message = f"memento: claim {task.id} on {f.host}\n\n{_nonce()}\n"
    if committed is not None:
        base, data = committed
    else:
        base = head(ctx.root)
        data = show_file(ctx.root, base, PLAN) if base else None
    if base is None or data is None:
        raise MementoError(f"{PLAN} is not committed on {f.branch}")
    editor = PlanEditor(decode(data, PLAN), PLAN)
    try:
        editor.set_status(task.id, "~", expect=" ")
    except EditConflict:
        return None
    oid = run_git(ctx.root, ["hash-object", "-w", "--stdin"], input=editor.doc.encode()).stdout.decode().strip()
    beat = heartbeat_commit(ctx, task.id, f.host)
    made = make_commit(ctx.root, [], message, author=ctx.config.author, blobs={PLAN: ("100644", oid)})
    if made.parent != base:
        raise MementoError(f"HEAD moved while the claim of {task.id} was made")
    return Claim(((task.id, old.sha if old else ""),), made, beat)


def _build_claim(ctx: TickContext, tasks: list[Task], seen: dict[str, Beat], ident: dict[str, str],
                 at: At | None = None) -> Claim | None:
    """:func:`_make_claim` in two git commands (git.trees, git.objects): HEAD, its trees and its plan read in
    one (unless ``at`` holds them), the plan blob, trees, claim commit and heartbeat commit
    written in the other."""
    f = fleet(ctx)
    path = repo_path(ctx.root, PLAN)
    at = at or read_at(ctx.root, "HEAD", [path])
    found = at.files.get(path)
    if found is None:
        raise MementoError(f"{PLAN} is not committed on {f.branch}")
    editor = PlanEditor(decode(found[2], PLAN), PLAN)
    claimed = []
    for task in tasks:
        try:
            editor.set_status(task.id, "~", expect=" ")
        except EditConflict:
            if not claimed:
                return None  # the task picked is no longer free here
            continue
        claimed.append(task.id)
    message = "\n\n".join(f"memento: claim {t} on {f.host}" for t in claimed) + f"\n\n{_nonce()}\n"
    fmt = object_format(ctx.root)
    tree, objects = with_files(at, {path: (b"100644", editor.doc.encode())}, fmt)
    claim = commit_bytes(tree, [at.commit], message, ident)
    empty = object_id(fmt, "tree", b"")
    beat = commit_bytes(empty, [], _heartbeat_message(", ".join(claimed), f.host), ident)
    ids = write_objects(ctx.root, [*objects, ("tree", b""), ("commit", claim), ("commit", beat)])
    made = MadeCommit(ids[-2], at.commit, message.splitlines()[0], (PLAN,))
    olds = tuple((t, seen[t].sha if t in seen else "") for t in claimed)
    return Claim(olds, made, ids[-1])


def _hold(ctx: TickContext, tasks: list[str], beat: str, *, chained: bool = False) -> None:
    """This host won the claims of ``tasks`` with heartbeat ``beat``: kept (pending file) and
    beaten. The first is in hand: attempted now, or (``chained``, won with a result's push) by
    the next pick; the others are queued for the picks after it."""
    f = fleet(ctx)
    f.task, f.lost = tasks[0], ""
    f.claims.update({t: Held(beat) for t in tasks})
    f.queued = list(tasks) if chained else list(tasks[1:])
    save_pending(ctx)
    start_beating(f)


def start_beating(f: Fleet) -> None:
    """Beat every claim ``f`` holds (:func:`_beat`) in a thread until ``f.stop_beating()``."""
    f._stop.clear()
    f._thread = threading.Thread(target=_beat, args=(f,), name=f"claim-ref-{f.task}", daemon=True)
    f._thread.start()


def _beat(f: Fleet) -> None:
    while not f._stop.wait(HEARTBEAT_SECONDS):
        for task in list(f.claims):
            try:
                with f._lock:
                    held = f.claims.get(task)
                    if held is None:
                        continue
                    new = heartbeat_commit(f.ctx, task, f.host)
                    ref = f"{CLAIMS}{task}"
                    held.unsure.add(new)  # until the remote's answer says otherwise
                    if remote.push(f.ctx, [f"{new}:{ref}"], [f"{ref}:{held.ref}"]):
                        adopt(f, new, task)
                    elif not adopt(f, remote_ref(f.ctx, ref), task):
                        f.lost = f"its heartbeat ref {ref} was changed by another host"
                        return
            except (OSError, MementoError) as exc:
                cron_log(f.ctx.ws, f"claim heartbeat not pushed (tried again in {HEARTBEAT_SECONDS:g}s): {exc}")


def heartbeat_commit(ctx: TickContext, task_id: str, host: str) -> str:
    """A commit (empty tree) whose committer time is the heartbeat and whose subject names the host."""
    tree = empty_tree(ctx.root)
    env = git_env(identity_env(ctx.root, ctx.config.author))
    body = _heartbeat_message(task_id, host).encode()
    return run_git(ctx.root, ["commit-tree", tree, "-F", "-"], input=body, env=env).stdout.decode().strip()


def _heartbeat_message(task_id: str, host: str) -> str:
    return f"memento: claim {task_id} on {host}\n\nheartbeat {utc_stamp()} {_nonce()}\n"


def _nonce() -> str:
    """Makes every claim and heartbeat commit unique: two hosts' identical commits would both
    "win" a push (the remote would already be up to date)."""
    return f"pid {os.getpid()} nonce {os.urandom(6).hex()}"
