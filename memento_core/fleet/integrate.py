"""This host's commits brought onto the remote's branch (SPEC §12 "Across machines"):
fast-forward, or rebase them (:func:`integrate`).

A conflict in Memento's documents is resolved by re-applying this host's edits to the
remote's version (docs.py); a conflict anywhere else stops the tick (:class:`host.FleetConflict`).
The rebase is done in memory where it can (replay: a few git commands rather than
a few dozen, inside the window between a fetch and a push where each one widens the race),
by ``git rebase`` otherwise. Before a push that follows at once, HEAD and the files move only
after the push (:func:`integrate_later`); a move a killed tick left half done is finished by
the next (:func:`clean_leftovers`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from ..crashpoints import crash_point
from ..errors import MementoError
from ..git.commit import identity_env
from ..git.objects import read_blobs
from ..git.replay import replay
from ..git.repo import head, repo_path
from ..git.run import git_env, run_git
from ..locks import atomic_write_bytes
from ..runlog import cron_log
from .docs import RESOLVERS, _fix_commit_shas, _resolve, _say_plan_notes, commit_own_docs
from .host import NOTES_DOC, FleetConflict, enabled, fleet

if TYPE_CHECKING:
    from ..tick.context import TickContext


def integrate(ctx: TickContext, upstream: str | None) -> str | None:
    """Bring HEAD onto ``upstream``: fast-forward, or rebase the local commits (FleetConflict).
    Returns the commit HEAD is then at."""
    local = head(ctx.root)
    if upstream is None or local == upstream:
        return local
    return _integrate(ctx, upstream, local, _merge_base(ctx, local, upstream))


def _integrate(ctx: TickContext, upstream: str, local: str | None, base: str | None) -> str | None:
    """:func:`integrate` once HEAD (``local``) and its merge base with ``upstream`` are known."""
    if base == upstream:  # nothing new on the remote
        return local
    if local is None or base == local:
        # No `maintenance run --auto` after it (a process more on every fast-forward): as the fetch.
        run_git(ctx.root, ["-c", "maintenance.auto=false", "merge", "-q", "--ff-only", upstream])
        return upstream
    moved = _replay(ctx, upstream, base, local) if base else None
    if moved is None:
        before = _subjects(ctx, upstream, local)
        rebase(ctx, upstream)
        after = {subject: sha for sha, subject in _subjects(ctx, upstream, "HEAD")}
        moved = {old: after[s] for old, s in before if s in after and after[s] != old}
    _after_replay(ctx, moved)
    return head(ctx.root)


def integrate_later(ctx: TickContext, upstream: str | None) -> tuple[str | None, Callable[[Callable[[], object]], None]]:
    """:func:`integrate` for a push that follows at once (:func:`publish.publish`): the commit to push,
    and what to call after the push, landed or lost, with what must run once HEAD is there and
    before the documents are committed on top (the chained claim made on that commit held).
    When this host's commits must be replayed
    onto the remote's, they are made as objects only, and HEAD, the index and the files move
    to them after the push (:func:`_arrive`): the move and the documents' commit after it
    (five git commands or so) leave the window from the fetch to the end of the push, in which
    any other host's push that lands loses this one its race. Anything else (nothing to do, a
    fast-forward, a replay git must do) is integrated now, as before."""
    local = head(ctx.root)
    if upstream is None or local is None or local == upstream:
        return local, _at_once
    base = _merge_base(ctx, local, upstream)
    if base and base not in (local, upstream):
        notes = list(fleet(ctx).plan_notes)
        replayed = _replayed(ctx, upstream, base, local)
        if replayed is not None:
            return replayed[0], partial(_arrive, ctx, local, upstream, *replayed, notes)
    return _integrate(ctx, upstream, local, base), _at_once


def _nothing() -> None:
    pass


def _at_once(then: Callable[[], object]) -> None:
    then()


def _arrive(ctx: TickContext, local: str, upstream: str, tip: str, moved: dict[str, str], notes: list[str],
            then: Callable[[], object]) -> None:
    """HEAD from ``local`` to ``tip`` (this host's commits replayed onto ``upstream``), ``then()``,
    then what :func:`integrate` does after a replay (a status entry for the plan notes, the
    documents' commit: pushed by the next push). Files in the way (a person's edit since the
    tick began) leave HEAD where it was and integrate as :func:`integrate` would, git's rebase
    included; the replay's plan notes are then its own."""
    if not _move_head(ctx, local, tip, f"rebase (memento): onto {upstream}"):
        fleet(ctx).plan_notes[:] = notes
        try:
            integrate(ctx, tip)
        except MementoError as exc:
            cron_log(ctx.ws, f"the work tree could not follow the commits replayed onto {upstream[:12]}: {exc}")
        then()
        return
    held = then()
    _after_replay(ctx, moved, plan=not held)  # a held claim's `[~]` is not the work tree's yet: never undone


def _after_replay(ctx: TickContext, moved: dict[str, str], *, plan: bool = True) -> None:
    """What follows a replay or a rebase once HEAD is there: the status entries' commit ids
    follow their commits, the plan notes become an entry, and the documents are committed
    (``plan`` False: all but the plan, see :func:`docs.commit_own_docs`)."""
    _fix_commit_shas(ctx, moved)
    _say_plan_notes(ctx)
    commit_own_docs(ctx, plan=plan)


def _replayed(ctx: TickContext, upstream: str, base: str, local: str) -> tuple[str, dict[str, str]] | None:
    """replay of this host's commits from ``base`` to ``local`` onto ``upstream``, with
    the resolvers of Memento's documents: (the new tip, old id -> new id), objects only; None
    when git's rebase must do it."""
    ident = identity_env(ctx.root, ctx.config.author)
    resolvers = {repo_path(ctx.root, path): partial(resolver, ctx)
                 for path, resolver in RESOLVERS.items() if path != NOTES_DOC}  # merge_notes writes the file
    return replay(ctx.root, upstream, base, local, ident, resolvers)


def _replay(ctx: TickContext, upstream: str, base: str, local: str) -> dict[str, str] | None:
    """What :func:`rebase` does, in a few git commands rather than a few dozen (the rebase is
    in the window between a fetch and a push, where each one started widens the race): the
    commits replayed in memory (replay: the plan, the status log and the state
    merged as the rebase's resolvers merge them), HEAD moved to them, then the index and the
    work tree (``read-tree -m -u``, which refuses to overwrite a change of the work tree's).
    Old id -> new id of the commits moved; None, nothing changed, when ``git rebase`` must do
    it (what the replay does not take on, or the work tree in the way)."""
    notes = list(fleet(ctx).plan_notes)
    replayed = _replayed(ctx, upstream, base, local)
    if replayed is not None and _move_head(ctx, local, replayed[0], f"rebase (memento): onto {upstream}"):
        return replayed[1]
    fleet(ctx).plan_notes[:] = notes  # the rebase merges them again
    return None


def _replay_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_replay.json"


def _move_head(ctx: TickContext, local: str, tip: str, why: str) -> bool:
    """HEAD from ``local`` to ``tip`` (compared), then the index and the files (``read-tree -m -u``,
    which refuses to overwrite a change of the work tree's); False, HEAD put back, when it did.
    A journal (.memento/fleet_replay.json) says what was under way until both are done: a tick
    killed between them leaves HEAD ahead of the files, and the next one finishes the move
    (:func:`_finish_move`)."""
    journal = _replay_path(ctx)
    # Not synced: it guards against a killed process, as the ref git moves next does (git
    # syncs no ref either), and a sync here would sit in the race's window.
    atomic_write_bytes(journal, json.dumps({"from": local, "to": tip}).encode(), sync=False)
    try:
        crash_point("replay:before-ref")
        if run_git(ctx.root, ["update-ref", "-m", why, "HEAD", tip, local], check=False).returncode != 0:
            return False
        crash_point("replay:before-files")
        if run_git(ctx.root, ["read-tree", "-m", "-u", local, tip], check=False).returncode != 0:
            run_git(ctx.root, ["update-ref", "-m", "rebase (memento): back", "HEAD", local, tip])
            return False
        return True
    finally:
        journal.unlink(missing_ok=True)


def _finish_move(ctx: TickContext) -> None:
    """A move of :func:`_move_head` a killed tick left half done: HEAD at the replayed commits, the
    index and the files still at the old ones (the read-tree never ran) get there; a move that
    never moved HEAD is dropped (its commits are objects no ref names)."""
    journal = _replay_path(ctx)
    try:
        move = json.loads(journal.read_bytes())
        local, tip = str(move["from"]), str(move["to"])
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        journal.unlink(missing_ok=True)
        return
    if head(ctx.root) == tip:
        done = run_git(ctx.root, ["read-tree", "-m", "-u", local, tip], check=False).returncode == 0
        cron_log(ctx.ws, f"finished moving the files to {tip[:12]}, which a killed tick had left behind HEAD"
                 if done else f"HEAD is at {tip[:12]} but the files could not be moved there (`git status` shows "
                              "what differs): a killed tick left them half way")
    journal.unlink(missing_ok=True)


# The rounds of a git rebase (a commit that stops on a conflict each) before it is given up.
REBASE_ROUNDS = 1000


def rebase(ctx: TickContext, upstream: str) -> None:
    """``git rebase upstream``; conflicts in Memento's documents resolved (RESOLVERS), any other
    aborts the rebase and raises FleetConflict naming the paths."""
    env = git_env({"GIT_EDITOR": "true", **identity_env(ctx.root, ctx.config.author)})
    proc = run_git(ctx.root, ["rebase", "-q", upstream], env=env, check=False)
    for _ in range(REBASE_ROUNDS):
        if proc.returncode == 0:
            return
        conflicted = _unmerged(ctx)
        if not conflicted:
            _abort(ctx)
            raise MementoError("git rebase failed: " + proc.stderr.decode("utf-8", "replace").strip()[-500:])
        foreign = [p for p, stages in conflicted.items() if not _resolve(ctx, p, stages)]
        if foreign:
            _abort(ctx)
            raise FleetConflict(foreign)
        run_git(ctx.root, ["add", "--", *conflicted])
        staged = run_git(ctx.root, ["diff", "--cached", "--quiet"], check=False).returncode != 0
        proc = run_git(ctx.root, ["rebase", "--continue" if staged else "--skip"], env=env, check=False)
    if proc.returncode == 0:  # the last round's conflict was the last one
        return
    _abort(ctx)
    raise MementoError("git rebase did not finish")


def _abort(ctx: TickContext) -> None:
    run_git(ctx.root, ["rebase", "--abort"], check=False)


def _unmerged(ctx: TickContext) -> dict[str, dict[int, bytes]]:
    """The conflicted paths (from the top level, sorted), each with its stages' bytes (1 the
    base, 2 the upstream in a rebase, 3 this host's; a side that deleted the file has none),
    in two git commands whatever their number: ``ls-files -u``, then one ``cat-file --batch``."""
    out = run_git(ctx.root, ["ls-files", "-u", "-z", "--full-name"]).stdout
    entries = []
    for item in out.split(b"\0"):
        info, _, path = item.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[2].isdigit():
            entries.append((path.decode("utf-8", "surrogateescape"), int(fields[2]), fields[0], fields[1]))
    # A submodule's stage is a commit of another repository, not a blob here: no bytes, so
    # no resolver takes it and the rebase stops naming it (FleetConflict).
    blobs = read_blobs(ctx.root, sorted({sha for _, _, mode, sha in entries if mode != b"160000"}))
    conflicted: dict[str, dict[int, bytes]] = {}
    for path, stage, _, sha in sorted(entries):
        stages = conflicted.setdefault(path, {})
        if sha in blobs:
            stages[stage] = blobs[sha]
    return conflicted


def _merge_base(ctx: TickContext, a: str | None, b: str) -> str | None:
    """The best common ancestor of ``a`` and ``b`` (None when they have none, or ``a`` is None)."""
    if not a:
        return None
    proc = run_git(ctx.root, ["merge-base", a, b], check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _is_ancestor(ctx: TickContext, a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return run_git(ctx.root, ["merge-base", "--is-ancestor", a, b], check=False).returncode == 0


def _subjects(ctx: TickContext, upstream: str, tip: str | None) -> list[tuple[str, str]]:
    out = run_git(ctx.root, ["log", "--format=%H%x09%s", f"{upstream}..{tip}"], check=False).stdout.decode()
    return [tuple(line.split("\t", 1)) for line in out.splitlines() if "\t" in line]


def clean_leftovers(ctx: TickContext) -> None:
    """A rebase a killed tick left half done is aborted (its commits are still on the branch);
    a replayed one whose files lag behind HEAD is finished (:func:`_finish_move`)."""
    if not enabled(ctx):
        return
    _finish_move(ctx)
    for name in ("rebase-merge", "rebase-apply"):
        where = run_git(ctx.root, ["rev-parse", "--git-path", name], check=False).stdout.decode().strip()
        if where and (ctx.root / where).exists():
            _abort(ctx)
            cron_log(ctx.ws, "aborted a rebase a killed tick left half done")
            return
