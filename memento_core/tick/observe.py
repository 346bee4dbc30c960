"""Step 11 of SPEC §4, the guards: observe the work tree and Memento's documents, then judge.

:func:`check_guards` runs after the agent and again after verify. Before git reads anything it
puts back what no diff shows (Memento's own files, git's own state and objects, what git does not
show, a person's ignored files, modes); then it gathers an :class:`~.guards.Observed` and asks
the pure guards.check, adding the reasons those put-backs found, and ``max_diff_bytes`` (Meta,
default 5 MB): the bytes a task's change adds, binary files included (:func:`diff_bytes_reason`;
``max_diff_lines`` alone let a 100 MB binary through as ``+0 -0``). The other size limits of
SPEC §13: a rollback copies at most ROLLBACK_COPY_LIMIT of created files, a tick log keeps
its first and last agents/logcap.KEEP bytes.
"""

from __future__ import annotations

from pathlib import Path

from ..git import state as git_state
from ..git.changes import added_bytes, changes_since
from ..git.commit import fold_commits
from ..plan.model import Plan
from . import kept as kept_files
from . import modes, objects, own, receipts, unseen
from .context import Attempt, TickContext, append_log, read_or_none
from .guards import Observed, Snapshot, Verdict, check
from .rollback import note_keys, rollback_folder


def check_guards(ctx: TickContext, plan: Plan, at: Attempt, *, after_verify: bool = False) -> Verdict:
    """Observe the work tree and Memento's documents, and judge them against the snapshot."""
    ws, snap = ctx.ws, at.snap
    links = own.unlink_own_links(ws, snap, at.task.id, ctx.log_path)  # before anything is written
    hard = own.split_own_hard_links(ws, snap, at.task.id, ctx.log_path)  # nor appended, chmod-ed
    impostors = own.remove_impostors(ws, snap)  # nor read: a FIFO is never opened
    # Before any other git command reads it; a decoy put where .git was goes to logs/rollback/.
    git_found = git_state.put_back(ctx.root, snap.git, rollback_folder(ws, f"{at.task.id}-git"))
    who = "verify" if after_verify else "the agent"
    damaged = put_back_objects(ctx, at, who)  # before git reads one
    # A repository it nested or a path too long for git: gone before any copy or git command meets it.
    below = unseen.settle(ctx.root, snap.unseen, rollback_folder(ws, f"{at.task.id}-unseen"), ctx.log_path, who)
    # Before verify: nothing the agent made or changed among ignored paths may fool it (kept.py).
    kept = kept_files.PutBack() if after_verify else kept_files.settle(
        ctx.root, snap.kept, ctx.log_path, snap.archive_dir, rollback_folder(ws, f"{at.task.id}-ignored"))
    folded = 0 if _branch_untouched(snap, git_found) else fold_commits(ctx.root, snap.base)
    changes = tuple(changes_since(ctx.root, snap.base, set(snap.untracked)))
    if not after_verify:  # the agent's new scratch git does not ignore (x.pyc.1, a __pycache__/): gone
        kept_files.remove_scratch(ctx.root, changes, ctx.log_path)
    else:  # the task's code ran in verify: no bytecode it wrote outlives the attempt (a forged .pyc)
        kept_files.remove_bytecode(ctx.root, snap.kept, changes, ctx.log_path, snap.archive_dir)
    reset = settle_modes(ctx, at, changes)
    seen = Observed(
        folded=folded,
        changes=changes,
        plan=read_or_none(ws.plan_path), project_map=read_or_none(ws.map_path),
        status=read_or_none(ws.status_path) or b"", note_keys=note_keys(ws), git=git_found, links=links,
        notes=read_or_none(ws.notes_path) or b"", impostors=impostors,
        persons=(persons := receipts.held(ws)),  # what people announced while it ran: theirs (tick/receipts.py)
        memory_forged=receipts.forged_memory(ws, snap.memory_head, persons, at.task.id),
    )
    verdict = check(at.task, snap, seen, plan.meta.max_diff_lines, after_verify=after_verify,
                    confined=bool(at.wrap))
    bad_links = kept_files.link_reason(ctx.root, verdict.touched, at.task.guard_files, snap.kept,
                                       snap.archive_dir, "verify" if after_verify else "the agent")
    gitlinks = unseen.gitlink_reason(ctx.root, verdict.touched, at.task.context_files, who)
    hard_links = own.hard_links_reason(hard, who)
    extra = tuple(r for r in (damaged, hard_links, below.reason(who), kept.reason(), bad_links, gitlinks,
                              reset.reason(who)) if r)
    verdict = Verdict((*verdict.reasons, *extra), verdict.touched) if extra else verdict
    too_big = diff_bytes_reason(ctx.root, snap.base, verdict.touched, plan.meta.max_diff_bytes,
                                after_verify=after_verify)
    state = own.state_reason(ws, at.task.id, who)
    extra = tuple(r for r in (too_big, state) if r)
    return Verdict(verdict.reasons + extra, verdict.touched) if extra else verdict

def settle_modes(ctx: TickContext, at: Attempt, changes=()) -> modes.Found:
    """Modes are git's (modes.py, SPEC §13): the one step both ways run, at the guards after the agent
    and after verify, and at a rollback (before it undoes the files). What it removed is kept for the attempt's entry."""
    found = modes.settle(ctx.root, at.snap.modes, changes, ctx.log_path)
    at.modes_reset += [item for item in found.special + found.named if item not in at.modes_reset]
    return found

def put_back_objects(ctx: TickContext, at: Attempt, who: str) -> str:
    """The git objects of the snapshot as they were (objects.py), saved under logs/rollback/ what
    was found; '' or the guard failure. Objects with no copy to put back stop the tick for a person
    (the breaker's git error: the plan paused, the alert, exit 1)."""
    damage = objects.put_back(at.snap.objects, ctx.root, rollback_folder(ctx.ws, f"{at.task.id}-objects"))
    if damage.lost and not ctx.git_failed:
        ctx.git_failed = f"git objects changed during {at.task.id} could not be put back: {', '.join(damage.lost[:5])}"
    if damage:
        append_log(ctx.log_path, f"[memento] {damage.reason(who)}\n")
    return damage.reason(who)

def _branch_untouched(snap: Snapshot, found: git_state.GitState | None) -> bool:
    """Whether HEAD's branch was found at the snapshot's commit, read under the snapshot's own
    git config, hooks and info (unchanged): HEAD, put back on that branch, is then at the base
    and there is nothing to fold, without asking git again (a command fewer, twice a task)."""
    return (found is not None and snap.git is not None and bool(snap.git.branch) and snap.base is not None
            and found.files == snap.git.files and found.refs.get(snap.git.branch) == snap.base)


def diff_bytes_reason(root: Path, base: str | None, touched, limit: int, *, after_verify: bool = False) -> str:
    """'' unless the task's change adds more than ``limit`` bytes."""
    size = added_bytes(root, base, touched)
    if size <= limit:
        return ""
    who = "verify's change" if after_verify else "diff"
    return f"{who} too large: {_mb(size)} added > max_diff_bytes {_mb(limit)} (binary files count)"


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n} bytes"
