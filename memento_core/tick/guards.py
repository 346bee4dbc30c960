"""The guards of SPEC §4 step 11, as pure functions: a snapshot and what was observed in, reasons out.

Nothing here reads a file or runs git. attempt.py takes the :class:`Snapshot`
at the claim (step 8) and an :class:`Observed` after the agent (and again
after verify); :func:`check` says what is wrong with the change, each reason a
sentence that goes into the status log. Because it is all values, every guard
is unit-tested on values (tests/core/tick/test_guards.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from ..errors import MementoError
from ..git.changes import FileChange
from ..git.patterns import matches_any
from ..git.state import GitState
from ..notes import parse_notes_text
from ..plan.model import Task
from ..plan.scan import decode_text, scan_plan
from ..receipts import NO_RECEIPTS, Receipts
from ..workspace import KEPT_DOCS, OWN_DOCS, own_file
from .startup import added_startup_files
from .startup import reason as startup_reason

MAP_REL = "docs/PROJECT_MAP.md"
PLAN_REL = "docs/MASTER_PLAN.md"


# Meta limits neither an attempt nor the architect may change (a person sets them): recovery.py
# puts them back after an attempt, the architect's checks refuse its change of one.
LIMIT_KEYS = ("max_retries", "max_diff_lines", "max_diff_bytes", "max_tasks_per_tick", "circuit_breaker_threshold",
              "max_questions")


@dataclass(frozen=True)
class Snapshot:
    """What the tick recorded right after the claim, before the agent ran (step 8)."""

    base: str | None  # HEAD
    untracked: frozenset[str]  # a person's untracked files: never the task's, never removed
    plan: bytes
    project_map: bytes | None
    status: bytes
    notes: bytes
    note_keys: frozenset[str]
    cleanignore: tuple[str, ...]  # .memento_cleanignore as it was: the agent cannot widen it
    taken_at: datetime | None = None  # UTC, whole seconds (the precision of a note's timestamp)
    git: GitState | None = None  # .git/config, info/, hooks/, every ref and HEAD
    runtime: tuple[tuple[str, bytes | None], ...] = ()  # .memento/state.json, logs/cron.log (own.py)
    absent: frozenset[str] = frozenset()  # Memento's own files not there at the snapshot (own.py)
    archive_dir: str = "logs/status_archive/"  # Meta status_archive_dir: Memento's too
    memory_head: str | None = None  # memory/'s HEAD (its own repository, never rolled back)
    kept: object = None  # kept.Kept: a person's untracked and ignored files, printed and copied
    modes: object = None  # modes.Before: the tracked paths' modes and extended attributes
    objects: object = None  # objects.Objects: the object store's print, its copies in .memento/objects/
    unseen: object = None  # unseen.Seen: nested repositories and too-long paths below the work tree


@dataclass(frozen=True)
class Observed:
    """What the tick saw after the agent (or verify) ran."""

    folded: int  # commits made on top of the snapshot, folded back into the change
    changes: tuple[FileChange, ...]  # every path changed since the snapshot
    plan: bytes | None  # None: the plan is gone
    project_map: bytes | None
    status: bytes
    note_keys: frozenset[str] | None  # None: HUMAN_NOTES.md no longer parses
    git: GitState | None = None  # as found, before it was restored
    links: tuple[str, ...] = ()  # Memento's files and folders found replaced by symbolic links
    notes: bytes | None = None  # HUMAN_NOTES.md now (None: not looked at)
    impostors: tuple[str, ...] = ()  # Memento's files the agent made or replaced by a FIFO, a folder…
    persons: Receipts = NO_RECEIPTS  # what people announced to the tick meanwhile (tick/receipts.py)
    memory_forged: tuple[str, ...] = ()  # commits in memory/ that said they were a person's, unannounced


@dataclass(frozen=True)
class Verdict:
    """The guards' answer: why the change is refused ('' = it is not), and the task's own change."""

    reasons: tuple[str, ...]
    touched: tuple[FileChange, ...]

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def check(task: Task, snap: Snapshot, seen: Observed, max_diff_lines: int, *, after_verify: bool = False,
          confined: bool = False) -> Verdict:
    """Every guard of step 11, in the order the reasons are reported.

    ``confined``: the agent and verify ran in the sandbox, where docs/ is read-only, so a
    change to the plan's other tasks or to the notes during the run is a person's: kept,
    not a failure (:func:`persons_docs`). The running task's own definition is still checked."""
    who = "verify" if after_verify else "the agent"
    prefix = f"{who} "
    reasons: list[str] = []
    if seen.folded:
        reasons.append(f"{who} made {seen.folded} commit(s) of its own (Memento makes the commits); "
                       "they were folded back into the change")
    touched = task_change(seen.changes)
    if snap.project_map is not None and seen.project_map != snap.project_map:
        reasons.append(f"{prefix}edited {MAP_REL} (the worker only reads it)")
    plan_change = own_definition_change(snap.plan, seen.plan, task.id)
    if plan_change:
        reasons.append(f"{prefix}{plan_change} in {PLAN_REL}")
    others = "" if confined else plan_damage(snap.plan, seen.plan, task.id, seen.persons)
    if others:
        reasons.append(f"{prefix}{others} in {PLAN_REL} (a person's `memento skip`, `reset`, `pause` "
                       "from outside the run are kept)")
    if seen.links:
        reasons.append(f"{prefix}replaced Memento's own files by symbolic links: {_listed(list(seen.links))} "
                       "(the links removed, the files restored)")
    if seen.impostors:
        reasons.append(f"{prefix}made Memento's own files (absent before, or now not a regular file): "
                       f"{_listed(list(seen.impostors))} (removed)")
    own = [c.path for c in touched if own_file(c.path, snap.archive_dir) and c.path not in seen.impostors
           and not (c.path == MAP_REL and snap.project_map is not None)]
    if own:
        reasons.append(f"{prefix}changed Memento's own files: {_listed(own)} (never a task's, "
                       "whatever its context_files say)")
    if seen.memory_forged:
        reasons.append(f"{prefix}made {len(seen.memory_forged)} commit(s) in memory/ that say they are a "
                       f"person's: {_listed(list(seen.memory_forged))} (taken out of memory/'s history, their files kept as the "
                       "task's unattributed writes; `memento memory write` attributes a write)")
    if snap.git is not None and seen.git is not None:
        damage = git_damage(snap.git, seen.git)
        if damage:
            reasons.append(f"{prefix}changed git's own state: {damage} (restored)")
    history = history_damage(snap, seen.status, persons_docs(snap, seen.note_keys, confined))
    if history:
        reasons.append(f"{prefix}{history}")
    elif seen.notes is not None and not confined:
        forged = notes_damage(snap.notes, seen.notes, seen.persons.notes)
        if forged:
            reasons.append(f"{prefix}{forged} in docs/HUMAN_NOTES.md (a person adds notes with `memento note`)")
    guard_hits = [c.path for c in touched if task.guard_files and matches_any(c.path, task.guard_files)]
    if guard_hits:
        reasons.append(f"{'verify changed a ' if after_verify else ''}guard file changed: " + ", ".join(guard_hits))
    outside = [c.path for c in touched if c.path != MAP_REL and c.path not in own and c.path not in seen.impostors
               and c.path not in guard_hits and not matches_any(c.path, task.context_files)]
    if outside:
        reasons.append(f"{'verify ' if after_verify else ''}changed files outside context_files: "
                       + _listed(outside))
    inside = [c for c in touched if c.path not in outside and c.path not in guard_hits and c.path not in own]
    startup = added_startup_files(inside, task.verify, task.context_files)
    if startup:
        reasons.append(startup_reason(startup, who))
    if not touched and not after_verify and not task.check_only and not reasons:  # (folded commits: a reason)
        reasons.append(nothing_changed(task.id))
    size = diff_lines(touched)
    if size > max_diff_lines:
        reasons.append(f"diff too large: {size} lines > max_diff_lines {max_diff_lines} "
                       "(possible full-file rewrite)")
    return Verdict(tuple(reasons), touched)


def nothing_changed(task_id: str) -> str:
    """The reason of an attempt that left the project as it was (SPEC §4 step 11): a real project's
    verify is often its whole suite, which passes before any work, so an empty change is no work."""
    return (f"nothing changed: the attempt left every file as it was. If the work is already done, skip the "
            f"task (`memento skip {task_id} --reason \"done in …\"`); a task that only checks says "
            "`- changes: none` in the plan and is judged by its verify alone")


def task_change(changes: tuple[FileChange, ...] | list[FileChange]) -> tuple[FileChange, ...]:
    """The changes that are the task's: not Memento's documents, not their temp files, not the
    scratch a tool made (scratch.py: a ``x.pyc.123``, a ``__pycache__/`` git does not ignore)."""
    own = set(KEPT_DOCS)
    return tuple(c for c in changes if c.path not in own and not is_own_temp(c.path) and not c.scratch)


def diff_lines(changes) -> int:
    return sum(c.added + c.removed for c in changes)


def is_own_temp(path: str) -> bool:
    """A temp file of an atomic write to one of Memento's documents (a person's note being
    saved right now, say): neither the task's change nor something a rollback may remove."""
    folder, _, name = path.rpartition("/")
    return name.startswith(".") and name.endswith(".tmp") and any(
        folder == doc.rpartition("/")[0] and name.startswith(f".{doc.rpartition('/')[2]}.") for doc in OWN_DOCS)


def persons_docs(snap: Snapshot, note_keys: frozenset[str] | None, confined: bool) -> frozenset[str] | None:
    """The note keys history_damage judges: confined, the snapshot's own (the notes a person
    removed or broke during the run are theirs: nothing to judge), else ``note_keys``."""
    return snap.note_keys if confined else note_keys


def history_damage(snap: Snapshot, status: bytes, note_keys: frozenset[str] | None) -> str:
    """'' unless the status log lost entries or notes disappeared since the task started."""
    if not status.startswith(snap.status.rstrip(b"\r\n")):
        return "rewrote docs/TICK_STATUS.md (only Memento appends to it)"
    if status.rstrip(b"\r\n") != snap.status.rstrip(b"\r\n"):
        return "wrote into docs/TICK_STATUS.md (only Memento appends to it)"
    if note_keys is None:
        return "made docs/HUMAN_NOTES.md unreadable"
    if not snap.note_keys <= note_keys:
        return f"removed {len(snap.note_keys - note_keys)} note(s) from docs/HUMAN_NOTES.md"
    return ""


def own_definition_change(before: bytes, after: bytes | None, task_id: str) -> str:
    """'' unless the running task's definition (its line minus the status, its fields minus
    retries) differs; other tasks belong to the architect, who may edit them any time."""
    if after is None:
        return "deleted the plan"
    if before == after:
        return ""
    old, new = _definition(before, task_id), _definition(after, task_id)
    if new is None:
        return f"removed or broke the definition of {task_id}"
    if old != new:
        return f"edited the definition of {task_id}"
    return ""


def _definition(data: bytes, task_id: str) -> tuple[str, str] | None:
    try:
        task = scan_plan(decode_text(data, "plan"), "plan").task(task_id)
    except MementoError:
        return None
    if task is None:
        return None
    block = "\n".join(ln for ln in task.block.splitlines() if not ln.strip().startswith("- retries:"))
    return task.raw_rest.strip(), block.strip()


def git_damage(before: GitState, after: GitState) -> str:
    """'' unless the repository was swapped (git.state.bring_back), or HEAD, a ref other than
    HEAD's branch (whose new commits are folded) and the refs left loose (the other parallel
    workers' branches) or a watched file of `.git/` differs; else what
    differs, in one clause per kind."""
    parts = [after.replaced] if after.replaced else []
    if after.head != before.head:
        parts.append(f"moved HEAD from {_head_name(before.head)} to {_head_name(after.head)}")
    mine = {before.branch} | before.loose
    refs = set(before.refs) | set(after.refs)
    for verb, names in (
        ("deleted", [r for r in refs if r not in after.refs]),
        ("created", [r for r in refs if r not in before.refs]),
        ("moved", [r for r in refs if r in before.refs and r in after.refs and before.refs[r] != after.refs[r]]),
    ):
        names = sorted(set(names) - mine)
        if names:
            parts.append(f"{verb} {_listed(names)}")
    files = sorted(p for p in set(before.files) | set(after.files) if before.files.get(p) != after.files.get(p))
    if files:
        parts.append("wrote " + _listed([f".git/{p}" for p in files]))
    return "; ".join(parts)


def _head_name(head: str) -> str:
    return head[5:] if head.startswith("ref: ") else (head[:7] or "nothing")


def _listed(names: list[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def changed_during_verify(before: Mapping[str, tuple[str, str]], after: Mapping[str, tuple[str, str]]) -> str:
    """'' unless a file of the change was not the same (mode, blob) after verify as before
    it: then what verify passed on is not one thing, and neither version is committed."""
    moved = sorted(p for p in before if p in after and before[p] != after[p])
    if not moved:
        return ""
    return f"changed while verify ran: {_listed(moved)} (what verify checked is not what is there now)"


# Meta keys that Memento itself keeps (`skip` and `reset` recount them); tick_mode is a
# person's (a receipt covers it); every other key is the architect's, not the run's.
META_KEPT = frozenset({"total_tasks", "completed_tasks", "total_ticks", "last_architect_edit"})


def plan_damage(before: bytes, after: bytes | None, task_id: str, persons: Receipts) -> str:
    """'' unless the plan changed during the run beyond what people announced (``persons``,
    tick/receipts.py): another task's status, retries or reason, and tick_mode, change only as
    a person's reset, skip or mode change says; a task added or removed, a definition or
    another Meta key changed never (the counters are Memento's)."""
    if after is None or before == after:
        return ""
    try:
        old, new = (scan_plan(decode_text(d, "plan"), "plan") for d in (before, after))
    except MementoError:
        return ""  # a broken plan is own_definition_change's "removed or broke"
    parts = []
    meta = sorted(k for k in {*vars(old.meta), *old.meta.extra, *new.meta.extra}
                  if k not in META_KEPT | {"extra", "lines", "line"} and _meta(old.meta, k) != _meta(new.meta, k)
                  and not (k == "tick_mode" and new.meta.tick_mode in persons.modes))
    if meta:
        parts.append("changed Meta " + _listed(meta))
    old_tasks = {t.id: t for t in old.tasks if t.id != task_id}
    new_tasks = {t.id: t for t in new.tasks if t.id != task_id}
    added, removed = sorted(new_tasks.keys() - old_tasks.keys()), sorted(old_tasks.keys() - new_tasks.keys())
    if added:
        parts.append("added " + _listed(added))
    if removed:
        parts.append("removed " + _listed(removed))
    for tid in sorted(old_tasks.keys() & new_tasks.keys()):
        was, now = old_tasks[tid], new_tasks[tid]
        if now.status != was.status and not persons.status(tid, now.status, now.reason or ""):
            parts.append(f"marked {tid} [{now.status}]")
        if _bare_definition(was) != _bare_definition(now):
            parts.append(f"edited the definition of {tid}")
        fields = [k for k in ("retries", "reason") if was.fields.get(k) != now.fields.get(k)
                  and not persons.field(tid, k, now.fields.get(k))]
        if fields:
            parts.append(f"changed {' and '.join(fields)} of {tid}")
    return "; ".join(parts)


def _meta(meta, key: str):
    return meta.extra.get(key) if key in meta.extra or not hasattr(meta, key) else getattr(meta, key)


def _bare_definition(task: Task) -> tuple[str, str]:
    """A task's line after its status and its fields but the ones reset and skip write."""
    block = "\n".join(ln for ln in task.block.splitlines()
                      if not ln.strip().startswith(("- retries:", "- reason:")))
    return task.raw_rest.strip(), block.strip()


def notes_damage(before: bytes, after: bytes, added_through_memento: frozenset[str]) -> str:
    """'' unless a note appeared that was not added through Memento, or a note's read mark
    changed (Memento marks a note read when a worker was given it, after the guards)."""
    if before == after:
        return ""
    old = {n.key: n for n in parse_notes_text(before.decode("utf-8", "replace"))}  # any text parses
    new = parse_notes_text(after.decode("utf-8", "replace"))
    parts = []
    forged = [n for n in new if n.key not in old and n.key not in added_through_memento]
    if forged:
        parts.append(f"wrote {len(forged)} note(s) by hand")
    marked = [n for n in new if n.key in old and n.read != old[n.key].read]
    if marked:
        parts.append(f"changed the read mark of {len(marked)} note(s)")
    return "; ".join(parts)
