"""Memento's own files and folders, which an unconfined agent could replace by symbolic links (SPEC §13).

A link in place of docs/TICK_STATUS.md, .memento/state.json, logs/cron.log or
logs/rollback/ would send Memento's next write into a file of the link's
choosing, outside the project perhaps. The writers refuse links themselves
(locks.py, O_NOFOLLOW); this module finds the links after the agent (and after
verify), removes them (never what they point to) and puts the files back as
they were at the snapshot, so the guard failure can be written down at all.

A hard link is the same attack O_NOFOLLOW does not see: the agent removes
docs/TICK_STATUS.md and gives a person's file that name too (``ln``), and an
append, an in-place write or a chmod of the status log would change the
person's file. :func:`split_own_hard_links` finds every such file of Memento's
(a regular file with more than one name, whatever the other is) and puts a
file of its own in its place, written anew and renamed there: the snapshot's
bytes where the snapshot has them, else the bytes it holds. The other names
keep the inode, its bytes and its mode.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .. import owned
from ..lines import file_kind
from ..locks import atomic_write_bytes, split_hard_link
from ..workspace import OWN_DOCS, OWN_PROMPTS, Workspace
from .guards import MAP_REL, PLAN_REL, Snapshot

FOLDERS = ("docs", ".memento", ".memento/claims", ".memento/locks", ".memento/prompts", "logs",
           "logs/rollback", "logs/status_archive")
# Copied at the snapshot (the documents are in the Snapshot already).
RUNTIME = (".memento/state.json", "logs/cron.log")
STATUS_REL = "docs/TICK_STATUS.md"
NOTES_REL = "docs/HUMAN_NOTES.md"
# Memento's files the agent may neither make nor swap for a FIFO, a socket or a folder (the
# sandbox binds those that exist read-only; a missing one could be made in their writable folder).
WATCHED = (*OWN_DOCS, *OWN_PROMPTS, ".memento_ignore", ".memento_cleanignore")
# A copy bigger than this is not kept: the file then comes back empty.
COPY_LIMIT = 16 * 1024 * 1024


def runtime_copy(ws: Workspace) -> tuple[tuple[str, bytes | None], ...]:
    """The bytes of Memento's runtime files (RUNTIME), read without following a link."""
    return tuple((rel, _read(ws.root / rel)) for rel in RUNTIME)


def own_paths(ws: Workspace, task_id: str, log_path: Path) -> list[str]:
    """Every folder and file of Memento's that the tick writes after the agent has run."""
    paths = [*FOLDERS, *OWN_DOCS, *RUNTIME, ".memento_alert", f".memento/claims/{task_id}.json"]
    try:
        paths.append(Path(log_path).relative_to(ws.root).as_posix())
    except ValueError:
        pass
    return paths


def links_among(ws: Workspace, rels: list[str]) -> tuple[str, ...]:
    """Those of ``rels`` that are symbolic links now."""
    return tuple(sorted(r for r in rels if os.path.islink(ws.root / r)))


def unlink_own_links(ws: Workspace, snap: Snapshot, task_id: str, log_path: Path) -> tuple[str, ...]:
    """Remove every link standing for one of Memento's files or folders and put back what
    the snapshot had there; returns the links found (shallowest first)."""
    found = links_among(ws, own_paths(ws, task_id, log_path))
    if not found:
        return ()
    content = {PLAN_REL: snap.plan, STATUS_REL: snap.status, NOTES_REL: snap.notes, MAP_REL: snap.project_map,
               **dict(snap.runtime)}
    for rel in sorted(found, key=lambda r: r.count("/")):
        path = ws.root / rel
        if os.path.islink(path):
            os.unlink(path)  # the link only: what it points to is never touched
        if rel in FOLDERS:
            path.mkdir(parents=True, exist_ok=True)
            below = [r for r in content if r.startswith(rel + "/")]
        else:
            below = [rel]
        for doc in below:
            data = content.get(doc)
            if data is not None and not os.path.lexists(ws.root / doc):
                atomic_write_bytes(ws.root / doc, data)
    return found


def hard_linked(path: Path) -> int:
    """How many names the regular file ``path`` has when it is a hard link (0: it is not one: a
    single name, missing, a symbolic link, a folder), never past a symbolic link on the way."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 else 0


def split_own_hard_links(ws: Workspace, snap: Snapshot | None, task_id: str, log_path: Path) -> tuple[str, ...]:
    """Every file of Memento's that is a hard link made a file of its own (see the module); the
    paths it did that to. After :func:`unlink_own_links` (no folder on the way is a link then).
    The files owned.py watches (the ledger, the claims, the notification state) are ownstate's:
    put back by rename, and named, there. ``snap`` None: before the snapshot, each keeps its bytes.
    Where each was linked is listed under logs/rollback/ (its inode, never the other file's bytes:
    that file is a person's, and untouched) and said in the tick log."""
    content = {} if snap is None else {PLAN_REL: snap.plan, STATUS_REL: snap.status, NOTES_REL: snap.notes,
                                       MAP_REL: snap.project_map, **dict(snap.runtime)}
    found: dict[str, os.stat_result] = {}
    for rel in own_paths(ws, task_id, log_path):
        path = ws.root / rel
        if rel in FOLDERS or not hard_linked(path) or owned.watched(path) or _beyond_link(ws, rel):
            continue
        st = os.lstat(path)
        if split_hard_link(path, content.get(rel)):
            found[rel] = st
    if found:
        _list_hard_links(ws, task_id, log_path, found)
    return tuple(sorted(found))


def _list_hard_links(ws: Workspace, task_id: str, log_path: Path, found: dict[str, os.stat_result]) -> None:
    from .files import append_log
    from .rollback import rollback_folder

    dest = rollback_folder(ws, f"{task_id or 'tick'}-hard-links") / "HARD_LINKS.txt"
    lines = [f"{rel}: inode {st.st_ino} on device {st.st_dev}, {st.st_nlink} names, {st.st_size} bytes, mode "
             f"{stat.S_IMODE(st.st_mode):o} (its other names: find / -xdev -inum {st.st_ino})\n"
             for rel, st in sorted(found.items())]
    atomic_write_bytes(dest, ("Memento's files found with more than one name; each is a file of its own again, "
                              "the other names untouched:\n" + "".join(lines)).encode("utf-8"))
    append_log(log_path, f"[memento] hard links made files of their own: {', '.join(sorted(found))} "
                         f"(listed in {ws.rel(dest)})\n")


def hard_links_reason(found: tuple[str, ...], who: str = "the agent") -> str:
    """The guard failure for what :func:`split_own_hard_links` found ('' for nothing); ``who`` '':
    the sentence starts at the verb (the architect's reasons)."""
    if not found:
        return ""
    return (f"{who} " if who else "") + (f"replaced Memento's own files by hard links: {', '.join(found)} "
                                         "(each made a file of its own again, written anew; the file it was "
                                         "linked to is untouched, its inode listed under logs/rollback/)")


def _beyond_link(ws: Workspace, rel: str) -> bool:
    here = ws.root
    for part in rel.split("/")[:-1]:
        here = here / part
        if os.path.islink(here):
            return True
    return False


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            if os.fstat(fh.fileno()).st_size > COPY_LIMIT:
                return None
            return fh.read()
        except OSError:
            return None


def _watched(archive_dir: str) -> list[str]:
    archive = archive_dir.strip("/")
    return [*WATCHED, *([archive] if archive not in ("", ".") else [])]


def absent_own(ws: Workspace, archive_dir: str) -> frozenset[str]:
    """Those of Memento's own files (WATCHED, the status archive folder) that are not there now."""
    return frozenset(rel for rel in _watched(archive_dir) if not os.path.lexists(ws.root / rel))


def remove_impostors(ws: Workspace, snap: Snapshot) -> tuple[str, ...]:
    """Remove what stands for one of Memento's own files and is not the file the snapshot saw:
    anything where nothing was (a new file, a FIFO, a folder: the agent made it), and anything
    but a regular file where one was (the status archive: a folder). A document the snapshot
    has is put back. Links are unlink_own_links's. Returns the paths removed."""
    content = {PLAN_REL: snap.plan, STATUS_REL: snap.status, NOTES_REL: snap.notes, MAP_REL: snap.project_map}
    archive = snap.archive_dir.strip("/")
    found = []
    for rel in _watched(snap.archive_dir):
        path = ws.root / rel
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        expected = stat.S_ISDIR(mode) if rel == archive else stat.S_ISREG(mode)
        if rel not in snap.absent and (expected or stat.S_ISLNK(mode)):
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path, ignore_errors=True)  # rmtree never follows a link inside
        else:
            os.unlink(path)
        found.append(rel)
        data = None if rel in snap.absent else content.get(rel)
        if data is not None and not os.path.lexists(path):
            atomic_write_bytes(path, data)
    return tuple(found)


# Where the agent could make a FIFO, socket or device that Memento later reads or appends to:
# Memento's state folder (the worker's scratch .memento/worker/ with the report, the review and
# the memory queue), the top of logs/ (cron.log) and the memory tree. The documents are
# remove_impostors's (they are put back); a project's own FIFO elsewhere is none of Memento's.
SPECIAL_ROOTS = (".memento", "memory")
SPECIAL_SHALLOW = ("logs",)


def remove_specials(ws: Workspace) -> tuple[tuple[str, str], ...]:
    """Remove every FIFO, socket and device in Memento's state folders (never followed, never
    opened): (path, what it was) for each, so the attempt fails naming them (SPEC §13)."""
    found: list[tuple[str, str]] = []
    for top in SPECIAL_ROOTS:
        for folder, dirs, files in os.walk(ws.root / top):
            # Not git's objects, nor the parallel workers' worktrees (another attempt's, and big).
            dirs[:] = [d for d in dirs if d != ".git" and not (d == "worktrees" and folder == str(ws.root / top))]
            found += _specials_in(ws, Path(folder), files)
    for top in SPECIAL_SHALLOW:
        try:
            names = os.listdir(ws.root / top)
        except OSError:
            continue
        found += _specials_in(ws, ws.root / top, names)
    return tuple(sorted(found))


def _specials_in(ws: Workspace, folder: Path, names) -> list[tuple[str, str]]:
    out = []
    for name in names:
        path = folder / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
            continue
        try:
            os.unlink(path)
        except OSError:
            pass
        out.append((path.relative_to(ws.root).as_posix(), file_kind(mode)))
    return out


def specials_reason(found: tuple[tuple[str, str], ...]) -> str:
    """The failure reason for what remove_specials removed ('' for nothing)."""
    if not found:
        return ""
    return "the agent left what Memento would block on reading: " + ", ".join(
        f"{rel} ({kind})" for rel, kind in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "") \
        + " (removed unread)"
