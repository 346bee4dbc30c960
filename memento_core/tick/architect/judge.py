"""An architect run's snapshot and its checks (SPEC §16, steps 2 and 4 of run.py).

What the architect may write (:data:`WRITABLE`: the plan, the map and the notes) and
what it may not although it lives in docs/ (:data:`NOT_ITS`); the snapshot a run is
judged against (:class:`ArchitectSnapshot`: the worker's snapshot and every document's
bytes, and every other file under docs/ by its digest, :func:`docs_tree`); and the
checks (:func:`judge`, :func:`judge_tree`): no link, FIFO or hard link in a document's
place, no change to git's state and no commit (put back and folded on the way), no file
changed but the plan, the map and the notes, Memento's other documents untouched, the
map not deleted, the plan readable with no done task changed (changes.py), the notes'
read marks only (changes.py), Meta ``status_archive_dir`` kept inside the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MementoError
from ...git import state as git_state
from ...git.changes import changes_since
from ...git.commit import fold_commits
from ...locks import atomic_write_bytes
from ...plan.scan import decode_text, parse_plan_text
from ...workspace import OWN_DOCS, Workspace
from .. import guards, own
from ..context import TickContext, read_or_none
from ..rollback import rollback_folder
from . import ARCHITECT_ID
from .changes import NotesChanges, PlanChanges, compare_notes, compare_plans
from .person import persons_notes

PLAN_REL, MAP_REL = guards.PLAN_REL, guards.MAP_REL
NOTES_REL, STATUS_REL = own.NOTES_REL, own.STATUS_REL
WRITABLE = (PLAN_REL, MAP_REL, NOTES_REL)
# What it may not change although it lives in docs/ or at the root: Memento writes these.
# CURRENT_STATE.md is not among them: a person's `memento skip` rewrites it during a run, and
# Memento rewrites it after every run anyway (checkpoint.py).
CHECKPOINT_REL = "docs/CURRENT_STATE.md"
NOT_ITS = tuple(rel for rel in OWN_DOCS if rel not in WRITABLE and rel != CHECKPOINT_REL)


@dataclass(frozen=True)
class ArchitectSnapshot:
    """The worker's Snapshot (HEAD, untracked files, git's state, the notes) and every document's bytes."""

    snap: guards.Snapshot
    docs: dict[str, bytes | None] = field(default_factory=dict)
    # Every other file under docs/ (ignored ones too) by its digest: docs/ is writable in the sandbox.
    docs_tree: dict[str, str] | None = None  # None: not known (nothing under docs/ is removed then)



def docs_tree(ws: Workspace) -> dict[str, str]:
    """``{rel: sha256}`` of every file under docs/ but Memento's documents (links not followed)."""
    import hashlib
    import os
    import stat

    from ...lines import file_kind, read_regular

    found: dict[str, str] = {}
    top = ws.root / "docs"
    for folder, _dirs, files in os.walk(top):
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(ws.root).as_posix()
            if rel in OWN_DOCS:
                continue
            try:
                mode = os.lstat(path).st_mode
                data = read_regular(path) if stat.S_ISREG(mode) else None  # a FIFO is never opened
                found[rel] = hashlib.sha256(data).hexdigest() if data is not None else file_kind(mode)
            except (OSError, MementoError):
                found[rel] = "unreadable"
    return found




@dataclass(frozen=True)
class Judged:
    reasons: tuple[str, ...]
    changes: PlanChanges = PlanChanges()
    notes: NotesChanges = NotesChanges()
    map_changed: bool = False


def judge(ctx: TickContext, snap: ArchitectSnapshot) -> Judged:
    """What the architect did, and every rule it broke (git's state is put back on the way)."""
    ws, base = ctx.ws, snap.snap
    reasons = judge_tree(ctx, snap)
    plan_changes, plan_reasons = _judge_plan(ws, base)
    note_changes = compare_notes(base.notes, read_or_none(ws.notes_path) or b"", persons_notes(ws))
    reasons += plan_reasons + list(note_changes.violations)
    return Judged(tuple(reasons), plan_changes, note_changes, read_or_none(ws.map_path) != base.project_map)


def judge_tree(ctx: TickContext, snap: ArchitectSnapshot, *,
               allowed: str = "the plan, the map and the notes") -> list[str]:
    """Every rule broken outside the plan and the notes: links, git's state, commits, other files
    changed, Memento's other documents, the map deleted (git's state is put back on the way)."""
    ws, root, base = ctx.ws, ctx.root, snap.snap
    reasons: list[str] = []
    links = own.unlink_own_links(ws, base, ARCHITECT_ID, ctx.log_path)
    if links:
        reasons.append(f"replaced Memento's own files by symbolic links: {', '.join(links)}")
    reasons += filter(None, [own.hard_links_reason(own.split_own_hard_links(ws, base, ARCHITECT_ID,
                                                                                     ctx.log_path), "")])
    impostors = own.remove_impostors(ws, base)  # a FIFO in a document's place: never read
    if impostors:
        reasons.append(f"made Memento's own files (now not regular files): {', '.join(impostors)} (removed)")
    reasons += filter(None, [own.specials_reason(own.remove_specials(ws))])
    found = git_state.put_back(root, base.git, rollback_folder(ws, f"{ARCHITECT_ID}-git"))  # a decoy .git goes there
    damage = guards.git_damage(base.git, found) if found is not None else ""
    if damage:
        reasons.append(f"changed git's own state: {damage}")
    folded = fold_commits(root, base.base)
    if folded:
        reasons.append(f"made {folded} commit(s) of its own (Memento makes the commit)")
    changes = changes_since(root, base.base, set(base.untracked))
    in_docs = _docs_changed(ws, snap)
    outside = sorted({c.path for c in changes if c.path not in OWN_DOCS and not guards.is_own_temp(c.path)}
                     | set(in_docs))
    if outside:
        shown = ", ".join(outside[:10]) + (f" and {len(outside) - 10} more" if len(outside) > 10 else "")
        reasons.append(f"changed files other than {allowed}: {shown}")
    reasons += [f"changed {rel} (only Memento writes it)" for rel in NOT_ITS
                if read_or_none(root / rel) != snap.docs.get(rel)]
    if base.project_map is not None and read_or_none(ws.map_path) is None:
        reasons.append(f"deleted {MAP_REL} (update the map, never delete it)")
    return reasons


def _docs_changed(ws: Workspace, snap: ArchitectSnapshot) -> list[str]:
    """Files under docs/ (but Memento's documents) created, changed or removed since the snapshot."""
    if snap.docs_tree is None:
        return []
    now = docs_tree(ws)
    return sorted(rel for rel in {*now, *snap.docs_tree}
                  if now.get(rel) != snap.docs_tree.get(rel) and not guards.is_own_temp(rel))


def remove_new_in_docs(ws: Workspace, snap: ArchitectSnapshot, dest: Path) -> None:
    """What a rollback does not know (git ignores it): a file new under docs/ goes, saved to ``dest`` first."""
    for rel in docs_tree(ws).keys() - (snap.docs_tree or {}).keys():
        path = ws.root / rel
        data = None if path.is_symlink() else read_or_none(path)
        if data is not None:
            atomic_write_bytes(dest / rel, data)
        path.unlink(missing_ok=True)


def _judge_plan(ws: Workspace, base: guards.Snapshot) -> tuple[PlanChanges, list[str]]:
    now = read_or_none(ws.plan_path)
    if now is None:
        return PlanChanges(), ["deleted docs/MASTER_PLAN.md"]
    try:
        old = parse_plan_text(decode_text(base.plan, PLAN_REL), PLAN_REL)
        new = parse_plan_text(decode_text(now, PLAN_REL), PLAN_REL)
    except MementoError as exc:
        return PlanChanges(), [f"left a plan that cannot be read: {exc}"]
    changes = compare_plans(old, new)
    return changes, list(changes.violations) + archive_escapes(ws, old, new)


def archive_escapes(ws: Workspace, old, new) -> list[str]:
    """Meta ``status_archive_dir`` pointed through a link out of the project (SPEC §13; its
    text, `..` or an absolute path, is a lint error the new plan's check reports)."""
    from ...workspace import archive_dir_escape

    value = new.meta.status_archive_dir
    problem = archive_dir_escape(ws.root, value) if value != old.meta.status_archive_dir else ""
    return [f"pointed Meta status_archive_dir outside the project: {problem}"] if problem else []
