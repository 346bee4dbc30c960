"""Memento's own files, folders and state, guarded against an unconfined agent (SPEC §13).

Two halves, both looked at after the agent (and after verify) and at a failure. Memento's folders
themselves are mended before the tick takes its lock (workspace.mend_own_folders).

**Files and folders.** A link in place of docs/TICK_STATUS.md, .memento/state.json, logs/cron.log or
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

**State.** Memento's own state an unconfined agent could reach, snapshotted at the claim and restored
(SPEC §13): the usage ledger (`.memento/usage.json`), the notification state
(`.memento/notify.json`), the verify commands the architect changed that wait for a person
(`.memento/verify_changes.json`: only a person's receipted ack may shorten it), what the forge's
import wrote and the comments waiting for GitHub (`.memento/forge_import.json`,
`.memento/forge_comments.json`: a forged entry would post text on an issue with the person's
token; `.memento/forge_trouble.json`: removing it would hide a refused token from the person), the journal
the tick wrote into memory/ and has not committed yet (`.memento/memory_journal.json`: a forged one would
commit an agent's edit of the journal as Memento's), the claims (`.memento/claims/`) and the workers' open
questions (`.memento/questions/`, SPEC §18).

Memento writes some of them while the agent runs (the heartbeat rewrites the claim, a parallel
worker records its usage), so the snapshot is kept per file by owned.py, which every writer of
them goes through: :func:`take_state` at the claim, :func:`state_reason` in the guards and at a failure.
An agent that reset today's spend, marked "blocked" as already told, or forged a claim finds
the file put back, and its attempt fails with a reason naming the file; what it wrote is kept
under ``logs/rollback/<stamp>-<task>-state/``. (`.memento/state.json` is the tick's own in
memory and written over at the end of the tick; people change it through `memento pause`.)

In a parallel phase the files are shared: a change is charged to every worker whose attempt was
under way between the last time the file was seen right and the moment it was found changed
(one of them made it; with a sandbox, none can).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

from .. import owned, verify_changes
from ..agents.process import running_groups
from ..lines import file_kind
from ..locks import atomic_write_bytes, split_hard_link
from ..memory.store import JOURNAL_PENDING
from ..notify import notify_path
from ..spending import ledger_path
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
    The files owned.py watches (the ledger, the claims, the notification state) are the state half's (below):
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
    from .context import append_log
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
        # Not git's objects, nor the parallel workers' worktrees (another attempt's, and big).
        found += _specials_in(ws, os.path.join(ws.root, top), deep=True, skip=(".git", "worktrees"))
    for top in SPECIAL_SHALLOW:
        found += _specials_in(ws, os.path.join(ws.root, top), deep=False, skip=())
    return tuple(sorted(found))


def _specials_in(ws: Workspace, top: str, *, deep: bool, skip: tuple[str, ...]) -> list[tuple[str, str]]:
    """What ``top`` (and, ``deep``, every folder below it but those named in ``skip`` directly
    under ``top`` and any ``.git``) holds that is neither a regular file, a folder nor a link,
    removed. The kind of each entry comes from its folder's listing (no lstat, no Path per file:
    .memento/objects/ holds a copy of every loose object); only what is left is looked at again."""
    out, folders, root = [], [(top, skip)], str(ws.root)
    while folders:
        folder, skipped = folders.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if deep and entry.name not in skipped:
                        folders.append((entry.path, (".git",)))
                    continue
                if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            try:
                os.unlink(entry.path)
            except OSError:
                pass
            out.append((os.path.relpath(entry.path, root).replace(os.sep, "/"), file_kind(mode)))
    return out


def specials_reason(found: tuple[tuple[str, str], ...]) -> str:
    """The failure reason for what remove_specials removed ('' for nothing)."""
    if not found:
        return ""
    return "the agent left what Memento would block on reading: " + ", ".join(
        f"{rel} ({kind})" for rel, kind in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "") \
        + " (removed unread)"


# ---------------------------------------------------------------- Memento's state files

_SINCE: dict[tuple[str, str], float] = {}  # (project, task) -> when its attempt's snapshot was taken


def _project(ws: Workspace) -> Workspace:
    """The project's workspace (a parallel worker's is its worktree's: the state is the project's)."""
    main = getattr(ws, "main", None)
    return Workspace(main) if main else ws


def _state_files(ws: Workspace) -> tuple[list[Path], list[Path]]:
    m = _project(ws)
    return [ledger_path(m), notify_path(m), verify_changes.path_of(m), m.memento_dir / "forge_import.json",
            m.memento_dir / "forge_comments.json", m.memento_dir / "forge_pulls.json",
            m.memento_dir / "forge_trouble.json", m.memento_dir / JOURNAL_PENDING], [m.claims_dir, m.questions_dir]


def _acked_only(ws: Workspace) -> Callable[[bytes, bytes], bool]:
    """The list's change is a person's: entries only removed, each by an acknowledgement the
    running tick holds a receipt for (tick/receipts.py); an agent's own ack has none."""
    def same(before: bytes, after: bytes) -> bool:
        from .receipts import held

        was, now = set(verify_changes.decode(before)), set(verify_changes.decode(after))
        acked_was, acked_now = set(verify_changes.decode_acked(before)), set(verify_changes.decode_acked(after))
        acks = held(ws).acks
        return (now <= was and acked_was <= acked_now and acked_now - acked_was <= was - now
                and all(c.task in acks for c in was - now))

    return same


def _same_notify(before: bytes, after: bytes) -> bool:
    """What a notification depends on is the same: the states told and the messages pending
    (`memento notify test`, a person's, rewrites only the last send's time and error)."""
    a, b = (json.loads(x.decode("utf-8")) for x in (before, after))
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return a == b
    return all(a.get(k) == b.get(k) for k in ("states", "pending"))


def take_state(ws: Workspace, task_id: str) -> None:
    """At the claim: what is there now is expected when no agent of this tick runs (else the
    files are put right first: another worker's agent runs, and its changes are its own)."""
    files, dirs = _state_files(ws)
    with owned.LOCK:
        if running_groups():
            settle_state(ws)
        else:
            owned.baseline(files, dirs, same={str(notify_path(_project(ws))): _same_notify,
                                              str(verify_changes.path_of(_project(ws))): _acked_only(_project(ws))})
        _SINCE[(str(_project(ws).root), task_id)] = time.monotonic()


def settle_state(ws: Workspace) -> list[owned.Change]:
    """Every watched file and claim as Memento left it; the changes found."""
    files, dirs = _state_files(ws)
    with owned.LOCK:
        found = [c for c in map(owned.settle, files) if c is not None]
        for d in dirs:
            found += owned.settle_dir(d)
        return found


def state_after_tick(ws: Workspace) -> None:
    """Once the tick's attempts are over, before the notifications are sent: the watched files as
    Memento left them (an attempt that ended without its guards looking, say). Only after a tick
    that ran an attempt: otherwise nothing here knows what is right."""
    root = str(_project(ws).root)
    ran = [key for key in _SINCE if key[0] == root]
    if ran:
        settle_state(ws)
    for key in ran:
        del _SINCE[key]


def state_reason(ws: Workspace, task_id: str, who: str = "the agent") -> str:
    """'' unless a watched file changed during this attempt: then the files were put back, and
    the reason names them (and where the agent's versions are kept)."""
    key = (str(_project(ws).root), task_id)
    if key not in _SINCE:
        return ""
    settle_state(ws)
    files, dirs = _state_files(ws)
    found = owned.changes([*files, *dirs], _SINCE[key])
    if not found:
        return ""
    root = _project(ws).root
    rels = sorted({Path(c.path).relative_to(root).as_posix() for c in found})
    kept = _keep_state(_project(ws), task_id, found)
    where = f", the agent's versions in {kept}" if kept else ""
    return f"{who} changed Memento's own state: {', '.join(rels)} (restored{where})"


def with_state_reason(ws: Workspace, task_id: str, why: str) -> str:
    """A failure's reason, with the change of Memento's state said too (once)."""
    if "Memento's own state" in why:
        return why
    extra = state_reason(ws, task_id)
    return f"{why}; {extra}" if why and extra else why or extra


def _keep_state(ws: Workspace, task_id: str, found: list[owned.Change]) -> str:
    from .rollback import rollback_folder

    kept = [c for c in found if c.found is not None and c.found != owned.NOT_A_FILE]
    if not kept:
        return ""
    dest = rollback_folder(ws, f"{task_id}-state")
    for c in kept:
        rel = Path(c.path).relative_to(ws.root).as_posix()
        try:
            atomic_write_bytes(dest / rel.replace("/", "__"), c.found)
        except OSError:
            return ""
    return ws.rel(dest)
