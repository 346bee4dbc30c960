"""What a killed tick left behind (SPEC §4 step 4): stale claims, an interrupted commit, temp files.

A tick can die at any instant (kill -9). The next one finds the traces here:
orphaned temp files and a half-refreshed index (:func:`clean_leftovers`), a
`[~]` task whose worker is gone (:func:`reset_stale_claim`: its agent group is
killed, its change rolled back, the task reset), and a task marked `[x]` whose
commit never happened (:func:`finish_interrupted_commit`).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from .. import status_log
from ..agents.reaper import kill_marked
from ..attempt_record import Record, read_record, recorded_plan, recorded_status, records_dir
from ..errors import EditConflict, MementoError
from ..git.history import commits_since, log_subjects
from ..git.objects import hash_files, object_path, show_file
from ..git.repo import head as git_head
from ..git.rollback import reset_index
from ..git.state import put_back
from ..git.status import matches_head, persons_paths
from ..git.status import status as git_status
from ..locks import atomic_write_bytes, file_lock, lock_path_for, locked_edit
from ..plan.edits import edit_plan
from ..plan.model import Plan, Task
from ..plan.scan import decode_text, scan_plan
from ..runlog import cron_log
from ..state import Claim, claim_is_stale, read_claim, remove_claim, this_host
from .context import TickContext, read_or_none, unlink
from .guards import LIMIT_KEYS, Snapshot, git_damage
from .kept import after_a_killed_tick
from .record import (
    PENDING_COMMIT,
    claim_disagrees,
    fill_commit,
    last_sign_of_life,
    leader_is_ours,
    recorded_git,
    recorded_objects,
    recorded_unseen,
    remove_record,
    tick_alive,
)
from .rollback import restore_task_definition, roll_back, rollback_folder


def recover_stale_claims(ctx: TickContext, plan: Plan, skip: frozenset[str] = frozenset()) -> Plan:
    """Reset every `[~]` task whose worker is gone, finish interrupted commits, drop orphan claims;
    ``skip``: `[~]` tasks another host holds (fleet/stale.py judges those)."""
    ws = ctx.ws
    if (records_dir(ws) / "ARCHITECT.json").exists():  # an architect run killed outright (SPEC §16)
        from .architect.run import recover_interrupted

        recover_interrupted(ctx)
        plan = ctx.plan()
    stale_after = plan.meta.stale_lock_timeout
    # Interrupted commits first: a parallel tick's verified work is in the main work tree
    # uncommitted, and resetting another of its tasks rolls back what is not committed.
    unclaimed = []  # [~] with neither claim nor record: judged once every killed attempt is undone
    for task in [t for t in plan.tasks if t.status == "x"] + [t for t in plan.tasks if t.status == "~"]:
        if task.status == "~" and task.id not in skip:
            claim, rec = read_claim(ws, task.id), read_record(ws, task.id)
            why = stale_reason(ws, claim, rec, stale_after)
            if why is not None and claim is None and rec is None:
                unclaimed.append((task, why))
            elif why is not None:
                reset_stale_claim(ctx, task, claim, why)
        elif task.status == "x":
            claim = read_claim(ws, task.id)
            if claim is not None and claim.stage == "committing":
                rec = read_record(ws, task.id)
                wrong = "the tick left no record of it" if rec is None else claim_disagrees(claim, rec)
                if wrong:
                    # Not the tick's commit: the agent wrote the claim (and marked the task [x]).
                    reset_stale_claim(ctx, task, claim, f"a commit claim the tick did not write ({wrong})",
                                      status="x")
                else:
                    finish_interrupted_commit(ctx, claim)
    # After the resets: a killed agent's own commit (one that says a task is [x]) is undone by then,
    # so the last commit tells an editor's stale save over a pass from the agent's forgery.
    for task, why in unclaimed:
        if passed_at_head(ctx, task.id):
            set_back_passed(ctx, task, why)
        else:
            reset_stale_claim(ctx, task, None, why)
    _drop_orphans(ctx, plan)
    return ctx.plan()


def passed_at_head(ctx: TickContext, task_id: str) -> bool:
    """Whether the plan of the last commit has ``task_id`` done (``[x]``)."""
    data = show_file(ctx.root, "HEAD", "./" + ctx.ws.rel(ctx.ws.plan_path))
    if data is None:
        return False
    try:
        task = scan_plan(decode_text(data, ctx.ws.plan_path), str(ctx.ws.plan_path)).task(task_id)
    except MementoError:
        return False
    return task is not None and task.status == "x"


def set_back_passed(ctx: TickContext, task: Task, why: str) -> None:
    """A `[~]` with neither claim nor record whose last commit has it `[x]`: an editor saved an older copy
    of the plan over the pass (read while the task ran, saved after it passed). No attempt is under
    way, so nothing is rolled back and no retry counted: the task is done again, not run a second
    time (where its empty change would fail as "nothing changed")."""

    def apply(e):
        e.set_status(task.id, "x", expect="~")
        e.update_counters()  # the older copy's completed_tasks did not count the pass

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        return  # a person changed the task meanwhile: the next tick looks again
    ctx.event(f"⚠️ STALE — Stale [~] detected on {task.id}, set back to [x]",
              [("Task", task.label),
               ("Reason", f"{why}; the last commit's plan has it [x]: a save of an older copy of the plan "
                          "put [~] back over its pass"),
               ("Retries", "not counted: no attempt was under way")])


def _drop_orphans(ctx: TickContext, plan: Plan) -> None:
    """Claims and records of tasks that are neither running nor committing."""
    ws = ctx.ws
    for leftover in ws.claims_dir.glob("*.json") if ws.claims_dir.is_dir() else ():
        task = plan.task(leftover.stem)
        if task is None or task.status not in ("~", "x"):
            kill_attempt_processes(ctx, leftover.stem, read_claim(ws, leftover.stem), read_record(ws, leftover.stem))
            remove_claim(ws, leftover.stem)
    for leftover in records_dir(ws).glob("*.json") if records_dir(ws).is_dir() else ():
        if read_claim(ws, leftover.stem) is None:
            remove_record(ws, leftover.stem)


def stale_reason(ws, claim: Claim | None, rec: Record | None, stale_after: float) -> str | None:
    """Why the attempt's tick is gone, or None while it lives; the tick's record decides
    over the claim (the pid and its start time come from /proc, not from a file)."""
    if rec is None:
        return claim_is_stale(claim, stale_after)
    if rec.host != this_host():
        return claim_is_stale(claim, stale_after)
    if rec.pid == os.getpid():
        return "left behind by an earlier tick of this process"
    if not tick_alive(rec):
        return f"worker pid {rec.pid} is gone"
    if claim is None or claim_disagrees(claim, rec):
        # The tick lives (hung?): its beacon, not a heartbeat the agent may have forged.
        quiet = time.time() - last_sign_of_life(ws, rec)
        return f"no sign of life for {int(quiet)}s" if quiet > stale_after else None
    return claim_is_stale(claim, stale_after)


def reset_stale_claim(ctx: TickContext, task: Task, claim: Claim | None, why: str, *, status: str = "~") -> None:
    """Kill what is left of the attempt, roll back its change and the task's definition, count a retry."""
    ws = ctx.ws
    rec = read_record(ws, task.id)
    if rec is not None and claim is not None and claim.stage != "committing":
        wrong = claim_disagrees(claim, rec)
        why += f"; {wrong}" if wrong else ""
    kill_attempt_processes(ctx, task.id, claim, rec)
    # A parallel worker's changes were in its worktree (gone by now, stale_workers.stop_stale_workers); the
    # main work tree, its refs and its status log hold the other workers' work: only tracked
    # changes on top of HEAD are undone there, as without a record.
    main = None if rec is not None and rec.worktree else rec
    restored = restore_recorded_git(ctx, task, main)  # before any other git command reads .git
    restored += restore_objects(ctx, task, rec)  # before the rollback's checkout reads one
    unseen = remove_unseen(ctx, task, main)  # a repository the agent nested: before any copy meets it
    rolled = roll_back_stale(ctx, task, main) + restored + unseen  # what was undone, then what was put back
    rolled += restore_recorded_plan(ctx, task, rec)
    rolled += cut_appended_entries(ctx, task, main)
    counted = count_stale_retry(ctx, task, rec, status)
    remove_claim(ws, task.id)
    remove_record(ws, task.id)
    ctx.event(f"⚠️ STALE — Stale [{status}] detected on {task.id}, reset to [{counted.status}]",
              [("Task", task.label), ("Reason", why), ("Rollback", rolled), ("Retries", counted.said)])


def kill_attempt_processes(ctx: TickContext, task_id: str, claim: Claim | None, rec: Record | None) -> None:
    """The attempt's agent group, if its leader (the run's guard) carries the tick's marker, and
    every process started under the dead tick that still carries it, with everything below them
    (never an unrelated group). Frozen, then killed outright (reaper.kill_marked): a SIGTERM to
    the group would let the guard go first and hand what it kept to init. The tick's start did
    this already for every dead tick's record (orphans.py); this covers a claim without one."""
    leaders = []
    if claim is not None and claim.pgid and claim.host == this_host():
        if leader_is_ours(claim.pgid, ctx.ws, task_id, rec.identity if rec else None):
            leaders.append(claim.pgid)
    if rec is not None and rec.host == this_host() and rec.pid != os.getpid():
        # A parallel worker's agent carries its worktree as its project.
        projects = [str(ctx.root)] + ([str(ctx.root / rec.worktree)] if rec.worktree else [])
        kill_marked(rec.identity, projects, leaders)
    elif leaders:
        kill_marked("", (), leaders)  # no record: only the group


def restore_recorded_git(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """`.git/` as the tick's copy of it at the snapshot says (config, info/, hooks, every ref but
    HEAD's branch, HEAD, the index, the stash): nothing the agent planted there survives its
    tick. The refs found changed are listed in logs/rollback/ first, so nothing is lost."""
    snap = recorded_git(ctx.ws, rec) if rec is not None else None
    if snap is None:
        return ""
    dest = rollback_folder(ctx.ws, f"stale-{task.id}-git")
    found = put_back(ctx.root, snap, dest)
    changed = git_damage(snap, found) if found is not None else ""
    if not changed:
        return ""
    lines = [f"{name}\t{found.refs.get(name, '(deleted)')}\twas {snap.refs.get(name, '(absent)')}\n"
             for name in sorted(set(snap.refs) | set(found.refs)) if snap.refs.get(name) != found.refs.get(name)]
    atomic_write_bytes(dest / "refs.txt", "".join(lines).encode("utf-8", "surrogateescape"))
    return f"; git's own state restored to the snapshot ({changed}; refs found listed in {ctx.ws.rel(dest)})"


def restore_objects(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """Git objects as their names say: judged against the killed tick's print of the store at its
    snapshot, kept beside its record (record.save_objects), as its own guards would have judged
    them (objects.put_back: loose objects, packs rewritten in place, a forged new pack, changed
    derived indexes); without an intact one, every loose object is re-hashed (objects.check_loose:
    no pack is looked at). What has no valid copy stops the tick for a person (the breaker's git
    error), as after a live attempt."""
    from .objects import MIRROR, check_loose, put_back

    mirror, aside = ctx.ws.project_memento_dir / MIRROR, rollback_folder(ctx.ws, f"stale-{task.id}-objects")
    snap = recorded_objects(ctx.ws, rec, ctx.root, mirror) if rec is not None else None
    damage = put_back(snap, ctx.root, aside) if snap is not None else check_loose(ctx.root, mirror, aside)
    if damage.lost and not ctx.git_failed:
        ctx.git_failed = f"git objects changed during {task.id} could not be put back: {', '.join(damage.lost[:5])}"
    return f"; {damage.reason('the killed attempt')}" if damage else ""


def remove_unseen(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """The nested repositories and too-long paths the agent left before its tick died, told from
    a person's by the tick's own list of them at the snapshot (tick/unseen.py); '' without one."""
    from .unseen import settle

    seen = recorded_unseen(ctx.ws, rec) if rec is not None else None
    done = settle(ctx.root, seen, rollback_folder(ctx.ws, f"stale-{task.id}-unseen"))
    said = done.reason()
    return f"; {said}" if said else ""


def roll_back_stale(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """Undo the attempt: from the recorded base with the recorded cleanignore; commits made
    before the tick died are the attempt's, as a live tick treats them."""
    ws, label = ctx.ws, f"stale-{task.id}"
    head = git_head(ctx.root)
    if rec is None:
        # No record of the tick's own: believe nothing. Only tracked changes on top of
        # HEAD are undone; every untracked file stays where it is.
        keep = _committed_patterns(ctx.root, head)
        said = ctx.rolled_back(roll_back(ws, head, persons_paths(ctx.root), label, fold=False,
                                         keep_patterns=keep))
        return said + "; the tick left no record: untracked files and commits were kept"
    untracked, keep = set(rec.untracked), rec.cleanignore
    # What the agent planted among ignored paths (a .pyc, a conftest.py) goes too (kept.py).
    planted = after_a_killed_tick(ctx.root, untracked, keep, ctx.plan().meta.status_archive_dir,
                                  rollback_folder(ws, f"{label}-ignored")).said()
    if planted:
        cron_log(ws, f"stale {task.id}: untracked and ignored files: {planted}")
    if head == rec.base:
        return ctx.rolled_back(roll_back(ws, rec.base, untracked, label, keep_patterns=keep))
    theirs = _commits_of_the_attempt(ctx, rec, head)
    if theirs is None:
        said = ctx.rolled_back(roll_back(ws, head, untracked, label, fold=False, keep_patterns=keep))
        return said + "; HEAD had moved since the claim by a later commit (a person's): its commits were kept"
    said = ctx.rolled_back(roll_back(ws, rec.base, untracked, label, keep_patterns=keep))
    return said + f"; {theirs} commit(s) made during the attempt were undone (HEAD was {(head or '')[:7]})"


def _commits_of_the_attempt(ctx: TickContext, rec: Record, head: str | None) -> int | None:
    """How many commits since the base were made while the tick could still be alive;
    None when there are none to undo safely (a later commit, another history)."""
    if not head or not rec.base:
        return None
    commits = commits_since(ctx.root, rec.base, head)
    if not commits:
        return None
    bound = last_sign_of_life(ctx.ws, rec) + 2 * rec.heartbeat_every
    for sha, committed in commits:
        loose = object_path(ctx.root, sha)
        when = loose.lstat().st_ctime if loose is not None else committed
        if when > bound and committed <= time.time() + 60:
            return None
    return len(commits)


def _committed_patterns(root, head: str | None) -> list[str]:
    if not head:
        return []
    data = show_file(root, head, ".memento_cleanignore")
    if data is None:
        return []
    return [ln.strip() for ln in data.decode("utf-8", "replace").splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def restore_recorded_plan(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """The task's definition and the plan's limits as they were at the claim."""
    if rec is None:
        return ""
    plan = recorded_plan(ctx.ws, rec)
    if plan is None:
        return "; the recorded plan is missing: the task's definition was not checked"
    snap = Snapshot(base=rec.base, untracked=frozenset(), plan=plan, project_map=None, status=b"", notes=b"",
                    note_keys=frozenset(), cleanignore=rec.cleanignore)
    said = restore_task_definition(ctx.ws, snap, task.id)
    return said + restore_limits(ctx, plan)


def cut_appended_entries(ctx: TickContext, task: Task, rec: Record | None) -> str:
    """Entries appended to the status log since the claim: the killed tick wrote none that
    its STALE entry does not replace, so they are the agent's (saved, then cut)."""
    if rec is None:
        return ""
    before = recorded_status(ctx.ws, rec)
    now = read_or_none(ctx.ws.status_path)
    if before is None or now is None or now == before or not now.startswith(before):
        return ""
    dest = rollback_folder(ctx.ws, f"stale-{task.id}-docs")
    atomic_write_bytes(dest / "TICK_STATUS.appended.md", now[len(before):])
    locked_edit(ctx.ws.status_path, lambda data: before if data.startswith(before) else data)
    return f"; entries appended to the status log during the attempt cut, saved in {ctx.ws.rel(dest)}"


def restore_limits(ctx: TickContext, plan: bytes) -> str:
    """Meta limits an attempt must not raise for itself (max_retries, max_diff_lines, …)."""
    try:
        before = scan_plan(decode_text(plan, "plan"), "plan").meta
        now = ctx.plan().meta
    except MementoError:
        return ""
    changed = [key for key in LIMIT_KEYS if key in before.lines
               and _meta_value(before, key) != _meta_value(now, key)]
    if not changed:
        return ""

    def put_back(e):
        for key in changed:
            e.set_meta(key, _meta_value(before, key))

    try:
        edit_plan(ctx.ws.plan_path, put_back)
    except EditConflict:
        return ""
    return f"; Meta {', '.join(changed)} restored to the values at the claim"


def _meta_value(meta, key: str) -> str:
    value = getattr(meta, key, None)
    if value is None:
        value = meta.extra.get(key, "")
    return str(value)


@dataclass(frozen=True)
class Counted:
    """A killed attempt counted as a failed one: the task's new status and the words that say why."""

    status: str
    said: str


def count_stale_retry(ctx: TickContext, task: Task, rec: Record | None, status: str) -> Counted:
    """A killed attempt is a failed attempt: one retry, `[!]` at max_retries (the limits of the claim)."""
    current = ctx.plan().task(task.id)
    retries = (rec.retries if rec is not None else (current.retries if current else task.retries)) + 1
    max_retries = rec.max_retries if rec is not None else ctx.plan().meta.max_retries
    blocked = retries >= max_retries
    new = "!" if blocked else " "

    def apply(e):
        e.set_field(task.id, "retries", str(retries))
        e.set_status(task.id, new, expect=status)
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        return Counted(status, "not counted: a person changed the task meanwhile")
    # The killed tick never reached its circuit breaker: count its failure here, once per
    # dead tick (a parallel tick's workers are one tick).
    dead = f"{rec.identity}:{rec.tick}" if rec is not None else f"task:{task.id}"
    if dead not in ctx.stale_ticks:
        ctx.stale_ticks.add(dead)
        ctx.state.consecutive_failed_ticks += 1
        ctx.state.save(ctx.ws)
    return Counted(new, f"{retries}/{max_retries}" + (" — blocked" if blocked else ""))


def finish_interrupted_commit(ctx: TickContext, claim: Claim) -> None:
    """A tick died between marking [x] and committing: make the commit it was making.

    Only if the files are still exactly the ones verify passed on (their blob ids are
    in the claim); a person's later edit is never swept into a task's commit.
    """
    ws = ctx.ws
    paths = [p for p in claim.commit_paths if p]
    message = claim.commit_message or f"memento: complete {claim.task}"
    status = (read_or_none(ws.status_path) or b"").decode("utf-8", "replace")
    if claim.entry and _entry_span(status, claim.entry) is None:  # by the task, not by the tick's heading
        status_log.append_entry(ws.status_path, claim.entry)
    now = hash_files(ctx.root, list(claim.commit_hashes))
    if now != claim.commit_hashes:
        changed = sorted(p for p in claim.commit_hashes if now.get(p) != claim.commit_hashes[p])
        ctx.event(f"⚠️ INTERRUPTED COMMIT — {claim.task}'s files changed after it passed; not committed",
                  [("Paths", ", ".join(changed)),
                   ("Action", "review and commit them by hand, or `memento reset` the task")])
        remove_claim(ws, claim.task)
        remove_record(ws, claim.task)
        return
    sha = ctx.commit(paths, message, sha_in_entry=PENDING_COMMIT in (claim.entry or ""))  # an old entry names it
    if sha is None:  # it had landed: find it
        sha = next((s for s, subject in log_subjects(ctx.root, 20) if subject == message), None)
    if sha:
        _fill_entry_commit(ws.status_path, claim.entry, sha[:7])
    remove_claim(ws, claim.task)
    remove_record(ws, claim.task)


def _entry_key(entry) -> tuple:
    return entry.timestamp, entry.tick, entry.field("Task"), entry.field("Status")


def _entry_span(status: str, entry: str) -> tuple[int, int] | None:
    """The lines (0-based, end excluded) of the status log's last entry that is ``entry``: same
    stamp and tick, same Task and Status. Other entries of the tick share its heading (a STALE
    event, another worker's entry); they are not it."""
    wanted = status_log.parse_status_text(entry)
    if not wanted:
        return None
    found = status_log.parse_status_text(status)
    for i in range(len(found) - 1, -1, -1):
        if _entry_key(found[i]) == _entry_key(wanted[0]):
            end = found[i + 1].line - 1 if i + 1 < len(found) else len(_lines(status))
            return found[i].line - 1, end
    return None


def _lines(text: str) -> list[str]:
    """Lines as the status log's parser counts them (ended by \\n only), each with its ending."""
    return [ln for ln in re.split(r"(?<=\n)", text) if ln]


def _fill_entry_commit(path, entry: str, sha: str) -> None:
    """The sha into the Git Commit field of ``entry`` (found by _entry_span); else as fill_commit does."""

    def transform(data: bytes) -> bytes | None:
        text = data.decode("utf-8")
        span = _entry_span(text, entry) if entry else None
        if span is None:
            return None
        lines = _lines(text)
        field = f"- **Git Commit**: {PENDING_COMMIT}"
        for n in range(span[0], span[1]):
            if lines[n].startswith(field):
                lines[n] = lines[n].replace(PENDING_COMMIT, f"`{sha}`", 1)
                return "".join(lines).encode("utf-8")
        return None

    if entry and _entry_span((read_or_none(path) or b"").decode("utf-8", "replace"), entry) is not None:
        locked_edit(path, transform)
    else:
        fill_commit(path, sha)


def clean_leftovers(ctx: TickContext) -> None:
    """Temp files of atomic writes a killed process never renamed, and a stale git index."""
    ws = ctx.ws
    # Under a document's own edit lock no writer is between its temp file and the
    # rename, so every temp file of that document is an orphan.
    for doc in (ws.plan_path, ws.notes_path, ws.status_path):
        if any(doc.parent.glob(f".{doc.name}.*.tmp")):
            with file_lock(lock_path_for(doc)):
                for tmp in doc.parent.glob(f".{doc.name}.*.tmp"):
                    unlink(tmp)
    cutoff = time.time() - 60  # other writers rename their temp file within milliseconds
    for folder in (ws.docs, ws.memento_dir, ws.claims_dir):
        for tmp in folder.glob(".*.tmp") if folder.is_dir() else ():
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
            except OSError:
                pass
    _reset_stale_index(ctx)


def _reset_stale_index(ctx: TickContext) -> None:
    """A commit killed between moving HEAD and refreshing the index leaves index entries
    that disagree with HEAD while the files themselves match it.

    Only paths a commit of ours was writing (recorded in its claim) are considered:
    content a person staged is theirs, even when the file matches HEAD again.
    """
    ws = ctx.ws
    ours = set()
    for path in ws.claims_dir.glob("*.json") if ws.claims_dir.is_dir() else ():
        claim = read_claim(ws, path.stem)
        if claim is not None and claim.stage == "committing":
            ours.update(claim.commit_paths)
    if not ours:
        return  # no commit of ours was under way: no git status to read
    stale = [e.path for e in git_status(ctx.root)
             if e.path in ours and e.xy[0] not in " ?" and matches_head(ctx.root, e.path)]
    if stale:
        reset_index(ctx.root, stale)
