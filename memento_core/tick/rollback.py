"""Undoing a failed attempt (SPEC §4 step 14): saved first, then restored, never a person's file.

:func:`roll_back` puts the work tree back to the snapshot: tracked files
restored, only files the tick created removed, never a pre-existing untracked
file nor a path in `.memento_cleanignore`, and everything it undoes saved under
``logs/rollback/<stamp>/`` first. :func:`restore_documents` undoes what the
agent did to Memento's own documents (the task's definition, the status log,
the notes), keeping what people wrote meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import notes
from ..errors import EditConflict, MementoError
from ..git.changes import changes_since
from ..git.commit import fold_commits
from ..git.patterns import matches_any, read_pattern_file
from ..git.rollback import rollback, save_rollback
from ..locks import atomic_write_bytes, atomic_write_text, locked_edit
from ..plan.edits import edit_plan
from ..plan.scan import decode_text, parse_plan_text
from ..receipts import Receipts
from ..runlog import rollback_folder as rollback_folder  # re-exported for tick/
from ..workspace import KEPT_DOCS, Workspace
from .context import read_or_none
from .guards import (
    Snapshot,
    history_damage,
    is_own_temp,
    notes_damage,
    own_definition_change,
    persons_docs,
    plan_damage,
)
from .receipts import held

# How alike an agent's version of a note and the note must be to count as an edit of it.
EDIT_SIMILARITY = 0.5


@dataclass(frozen=True)
class RolledBack:
    """What a rollback says for the status log, and the error that stopped it ('' = none)."""

    said: str
    error: str = ""


def roll_back(ws: Workspace, base: str | None, untracked_before: set[str] | frozenset[str], label: str, *,
              fold: bool = True, keep_patterns: list[str] | tuple[str, ...] | None = None) -> RolledBack:
    """Save, then undo every change since the snapshot except Memento's docs and cleanignored paths.

    ``keep_patterns``: .memento_cleanignore as it was when the task started, so an
    agent cannot exempt its own changes by editing the file.
    """
    root = ws.root
    try:
        if fold:
            fold_commits(root, base)
        changes = changes_since(root, base, set(untracked_before))
        if keep_patterns is None:
            keep_patterns = read_pattern_file(ws.cleanignore_path)
        own = set(KEPT_DOCS)

        def keep(path: str) -> bool:
            if path == ".memento_cleanignore":
                return False
            return path in own or is_own_temp(path) or matches_any(path, keep_patterns)

        undone = [c for c in changes if not keep(c.path)]
        if not undone:
            return RolledBack("nothing to roll back")
        dest = rollback_folder(ws, label)
        save_rollback(root, base, undone, dest)
        rollback(root, base, undone, keep=keep)
        if any(c.path.rpartition("/")[2] == ".gitignore" for c in undone):
            # What the agent hid with its own .gitignore line shows now that the line is gone (SPEC §13).
            hidden = [c for c in changes_since(root, base, set(untracked_before))
                      if c.kind == "created" and not keep(c.path)]
            if hidden:
                save_rollback(root, base, hidden, dest / "hidden")
                rollback(root, base, hidden, keep=keep)
                undone += hidden
        big = " (files over the 50 MB copy limit listed, not copied: NOT_COPIED.txt)" \
            if (dest / "NOT_COPIED.txt").exists() else ""
        return RolledBack(f"{len(undone)} path(s), saved in {ws.rel(dest)}{big}")
    except (MementoError, OSError) as exc:
        return RolledBack(f"rollback failed: {exc}", f"rollback failed: {exc}")


def restore_documents(ws: Workspace, snap: Snapshot, task_id: str, *, confined: bool = False) -> str:
    """Undo what the agent did to Memento's documents; what it wrote is saved first.

    ``confined`` (the run was sandboxed, docs/ read-only to it): the plan's other tasks and
    the notes were changed by a person if at all, and stay as they are."""
    said = _restore_definition(ws, snap, task_id)
    persons = held(ws)  # what people announced to this tick (tick/receipts.py): theirs, kept
    said += "" if confined else _restore_other_tasks(ws, snap, task_id, persons)
    said += _restore_own_status(ws, snap, task_id)
    status_now = read_or_none(ws.status_path) or b""
    notes_now = read_or_none(ws.notes_path) or b""
    forged = not confined and notes_damage(snap.notes, notes_now, persons.notes)
    if history_damage(snap, status_now, persons_docs(snap, note_keys(ws), confined)) or forged:
        dest = rollback_folder(ws, f"{task_id}-docs")
        for path in (ws.status_path, ws.notes_path):
            data = read_or_none(path)
            if data is not None:
                atomic_write_bytes(dest / path.name, data)
        if status_now.rstrip(b"\r\n") != snap.status.rstrip(b"\r\n"):
            locked_edit(ws.status_path, lambda _data: snap.status)
        if not confined:
            restore_notes(ws, snap, persons.notes)
        said += f"; status log {'' if confined else 'and notes '}restored, the agent's versions in {ws.rel(dest)}"
    return said


def restore_task_definition(ws: Workspace, snap: Snapshot, task_id: str) -> str:
    """The running task's definition as in ``snap.plan`` (also used by the stale recovery)."""
    return _restore_definition(ws, snap, task_id)


def _restore_definition(ws: Workspace, snap: Snapshot, task_id: str) -> str:
    """Put the running task's definition back as it was at the claim (the rest of the plan stays)."""
    current = read_or_none(ws.plan_path)
    if current is not None and not own_definition_change(snap.plan, current, task_id):
        return ""
    dest = rollback_folder(ws, f"{task_id}-plan")
    if current is not None:
        atomic_write_bytes(dest / "MASTER_PLAN.md", current)
    atomic_write_text(dest / "README.txt", "The plan as the agent left it; Memento restored the "
                      "task's definition from the start of the task.\n")
    said = f"; the task's definition restored, the agent's plan in {ws.rel(dest)}"
    if current is not None:
        try:
            edit_plan(ws.plan_path, lambda e: e.replace_task_block(task_id, snap.plan))
            return said
        except MementoError:
            pass  # emptied, not UTF-8 or the task cut out: no plan to put the definition into
    atomic_write_bytes(ws.plan_path, snap.plan)  # the plan of the claim, whole
    return said


def _restore_own_status(ws: Workspace, snap: Snapshot, task_id: str) -> str:
    """The running task's status as at the claim (`[~]`): its definition's guard leaves the status
    out, so an agent that marked its own task `[x]` in a run that then failed would leave it done,
    the failure's retry never counted (its edit expects `[~]`). The plan found is saved first."""
    # _restore_definition has just left a plan that reads: gone or not UTF-8 again only when a
    # person wrote it since, a moment no test can time (both returns marked so).
    current = read_or_none(ws.plan_path)
    if current is None:
        return ""  # pragma: no mutate
    try:
        was, now = (parse_plan_text(decode_text(d, "plan")).task(task_id) for d in (snap.plan, current))
    except MementoError:
        return ""  # pragma: no mutate
    if was is None or now is None or was.status == now.status:
        return ""
    dest = rollback_folder(ws, f"{task_id}-plan-status")
    atomic_write_bytes(dest / "MASTER_PLAN.md", current)
    try:
        edit_plan(ws.plan_path, lambda e: e.set_status(task_id, was.status, expect=now.status))
    except EditConflict:
        return ""  # changed again meanwhile: the failure's own edit says what it finds
    return f"; {task_id} [{was.status}] again (marked [{now.status}] during the run), the plan found in {ws.rel(dest)}"


def _restore_other_tasks(ws: Workspace, snap: Snapshot, task_id: str, persons: Receipts) -> str:
    """The plan as it was at the claim when the run changed more than people announced
    (guards.plan_damage), with the resets, skips and mode changes they announced applied again."""
    current = read_or_none(ws.plan_path)
    if current is None or not plan_damage(snap.plan, current, task_id, persons):
        return ""
    dest = rollback_folder(ws, f"{task_id}-plan-others")
    atomic_write_bytes(dest / "MASTER_PLAN.md", current)
    found, old = (parse_plan_text(decode_text(d, "plan")) for d in (current, snap.plan))
    now, before = ({t.id: t for t in p.tasks} for p in (found, old))

    def apply(e):
        e.replace_all(snap.plan)
        if found.meta.tick_mode != old.meta.tick_mode and found.meta.tick_mode in persons.modes:
            e.set_meta("tick_mode", found.meta.tick_mode)
        for tid, task in now.items():
            was = before.get(tid)
            if tid == task_id or was is None or not persons.status(tid, task.status, task.reason or ""):
                continue
            e.set_status(tid, task.status)
            if task.status == "-":
                e.set_field(tid, "reason", task.reason or "")
            else:  # a reset: retries 0, a skip's reason gone
                e.set_field(tid, "retries", "0")
                if was.reason is not None:
                    e.remove_field(tid, "reason")
        e.update_counters()

    edit_plan(ws.plan_path, apply)
    return f"; the plan restored (but for resets and skips), the version found in {ws.rel(dest)}"


def restore_notes(ws: Workspace, snap: Snapshot, receipts: frozenset[str] | None = None) -> None:
    """The notes file as it was at the claim, plus the notes people added since (``receipts``:
    the keys of the notes a person's `memento note` announced to the tick; None: the architect's
    run, which reads .memento/notes_added).

    People's notes come back with their own timestamp, target and text; the agent's
    version of the file was saved first (restore_documents).
    """
    try:
        now = notes.parse_notes(ws.notes_path)
    except MementoError:
        now = []
    if receipts is None:
        receipts = notes.added_keys(ws.notes_added_path)
    added = [n for n in notes_added_since(snap, now) if n.key in receipts]  # through `memento note` only
    locked_edit(ws.notes_path, lambda _data: snap.notes)
    for note in added:
        notes.add_note(ws.notes_path, note.text, target=note.target, now=note.when)


def notes_added_since(snap: Snapshot, now: list[notes.Note]) -> list[notes.Note]:
    """The notes in ``now`` that people added after the snapshot, not the ones the agent edited.

    An edited note is new by its key (the key digests the text) but keeps its timestamp:
    a new note older than the snapshot was not written during the run. Within the very
    second of the snapshot, a new note is the agent's edit when a note of the same
    timestamp and target went missing and the two texts are mostly the same.
    """
    from difflib import SequenceMatcher  # on a rollback only: a passing tick never loads difflib

    gone = [n for n in notes.parse_notes_text(snap.notes.decode("utf-8", errors="replace"))
            if n.key not in {m.key for m in now}]
    added = []
    for note in now:
        if note.key in snap.note_keys:
            continue
        if snap.taken_at is not None and (note.when is None or note.when < snap.taken_at):
            continue
        edited = next((old for old in gone if (old.timestamp, old.target) == (note.timestamp, note.target)
                       and SequenceMatcher(None, old.text, note.text).ratio() >= EDIT_SIMILARITY), None)
        if edited is not None:
            gone.remove(edited)
            continue
        added.append(note)
    return added


def note_keys(ws: Workspace) -> frozenset[str] | None:
    """The keys of the notes on disk now; None when HUMAN_NOTES.md no longer parses."""
    try:
        return frozenset(n.key for n in notes.parse_notes(ws.notes_path))
    except MementoError:
        return None
