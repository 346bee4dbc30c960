"""A person's untracked and ignored files, kept byte for byte around an attempt (SPEC §13).

git's view of the change (git.changes.changes_since) leaves out what git ignores, so
without a sandbox an agent could change a person's `.env`, plant a `.pth` in the
project's `.venv/` or a `.pyc` in `src/__pycache__/` that makes verify import
code other than the committed source, and nothing would see it. In the sandbox a
person's files are read-only already, but what the agent *creates* among ignored
paths is not; so both ways:

* :func:`take` at the snapshot records a stat print (type and mode, size,
  mtime_ns, ctime_ns, inode) of every file below the person's paths
  (git.status.persons_paths: untracked files and ignored entries, a `.venv/` being
  one entry), and a copy of each loose file of at most :data:`COPY_LIMIT`
  bytes while the copies stay under :data:`COPY_BUDGET` in all. A print is a
  stat, never a read: a `.venv/` of 10,000 files costs a directory walk.
  ctime cannot be set back by a process, so a file rewritten with its old mtime
  and size is still seen. In the sandbox every one of those paths is bound
  read-only but scratch (scratch.py: bytecode, the test runners' caches), so
  only scratch is printed there (``confined``), and nothing is copied.
  The permission bits of the tracked files are recorded too (:func:`restore_modes`).
* :func:`put_back`, after the agent (before the guards, so before verify) and
  again at the rollback: every ignored path that was not there at the snapshot
  is removed (a new `src/__pycache__/`, a `.pth` in the `.venv/`, a
  `conftest.py` in an ignored folder: the agent's, or the caches its own test
  runs left); scratch that changed is removed too (a tool rebuilds it: a
  `.pyc` the agent rewrote would be imported instead of the source), never
  saved nor restored; a person's other file that changed or went away is
  restored from the copy, and is a guard failure either way (a file that was
  not copied is named as not restorable). New scratch that git does not
  ignore (`x.pyc.123`, a `__pycache__/` where `.gitignore` says nothing) is a
  change the guards set aside (FileChange.scratch, attempt.py).

Nothing is followed: a folder of the snapshot that the agent replaced by a
symbolic link is walked as the link (removed, never what it leads to), and a
path below such a link is gone, never read or removed through it.

What verify itself leaves among ignored paths after a pass (its caches, a
`.coverage`) stays: it is the project's ordinary state, and the next snapshot
counts it as the person's (scratch among it printed again). Memento's own folders (`.memento/`, `logs/`,
`memory/`) are never touched here. A new path that `.memento_cleanignore` names
(a `.venv/` the task made) stays like at the rollback; that file does not
shelter what the agent did inside a person's folder, pre-existing `.venv/`
included (it is in the default `.memento_cleanignore`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .. import scratch
from ..git.changes import FileChange
from ..git.objects import symlinked_parent
from ..git.patterns import matches_any
from ..git.rollback import save_rollback
from ..git.run import git_env
from ..git.state import _remove as _unlink  # a file, a link (never its target) or a folder
from ..git.status import ignored, tracked, was_there
from ..locks import split_hard_link
from ..workspace import own_file
from .context import append_log, read_or_none

COPY_LIMIT = 20 * 1024 * 1024  # a file larger than this is printed, not copied (SPEC §13)
COPY_BUDGET = 64 * 1024 * 1024  # the copies of one snapshot, in all

Print = tuple[int, int, int, int, int]  # st_mode, size, mtime_ns, ctime_ns, inode


@dataclass(frozen=True)
class Kept:
    """A person's files at the snapshot: what was there, its prints, the copies taken."""

    entries: frozenset[str]  # git.status.persons_paths (folders end in /), Memento's own left out
    prints: dict[str, Print] = field(default_factory=dict)  # every file and link below them
    copies: dict[str, bytes] = field(default_factory=dict)  # loose files (a link: its target)
    keep: tuple[str, ...] = ()  # .memento_cleanignore at the snapshot: never removed
    modes: dict[str, int] = field(default_factory=dict)  # every tracked file and folder: its permission bits
    walked: bool = True  # False in the sandbox, where the person's files are read-only: scratch only
    tools: tuple[str, ...] = ()  # not walked: the scratch entries printed (scratch.py), folders end in /


@dataclass(frozen=True)
class PutBack:
    """What :func:`put_back` did: the person's files the agent changed (restored or not), what it removed."""

    restored: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()  # changed or gone, and no copy to restore from
    removed: tuple[str, ...] = ()  # new ignored paths, changed caches

    def reason(self, who: str = "the agent") -> str:
        """The guard failure ('' = none): a person's file changed, whatever became of it."""
        parts = []
        if self.restored:
            parts.append(f"{_listed(self.restored)} (restored from the snapshot's copy)")
        if self.lost:
            parts.append(f"{_listed(self.lost)} (not copied at the snapshot: could not be restored)")
        return f"{who} changed a person's untracked or ignored file(s): " + "; ".join(parts) if parts else ""

    def said(self) -> str:
        """One line for the tick log ('' = nothing done)."""
        parts = [f"restored {_listed(self.restored)}"] if self.restored else []
        parts += [f"could not restore {_listed(self.lost)}"] if self.lost else []
        parts += [f"removed {len(self.removed)} new ignored path(s): {_listed(self.removed)}"] if self.removed else []
        return "; ".join(parts)


def take(root: Path, entries, keep=(), archive_dir: str | None = None, *, confined: bool = False) -> Kept:
    """Prints of everything below ``entries`` and copies of the loose files (see the module).
    ``confined``: the agent runs in the sandbox, which binds every one of ``entries`` read-only,
    so neither prints nor copies are needed (nor paid for): only new paths are removed."""
    root = Path(root)
    mine = frozenset(e for e in entries if not own_file(e, archive_dir))
    if confined:  # the sandbox leaves scratch writable (sandbox.protected_paths): it alone is printed
        tools = scratch_entries(root, mine)
        return Kept(mine, _prints(root, tools), keep=tuple(keep), modes=tracked_modes(root), walked=False,
                    tools=tools)
    prints: dict[str, Print] = {}
    copies: dict[str, bytes] = {}
    budget = COPY_BUDGET
    for entry in sorted(mine):
        if entry.endswith("/"):
            prints.update(_walk(root, entry.rstrip("/")))
            continue
        st = _lstat(root, entry)
        if st is None:
            continue
        prints[entry] = _print(st)
        if stat.S_ISLNK(st.st_mode):
            copies[entry] = os.fsencode(os.readlink(root / entry))
        elif stat.S_ISREG(st.st_mode) and st.st_size <= min(COPY_LIMIT, budget):
            data = read_or_none(root / entry)
            if data is not None:
                copies[entry] = data
                budget -= len(data)
    return Kept(mine, prints, copies, tuple(keep), tracked_modes(root))


def scratch_entries(root: Path, entries) -> tuple[str, ...]:
    """Those of ``entries`` that are scratch (scratch.is_scratch), and the nested cache folders
    of the person's folders among them (``node_modules/.cache/``): what the sandbox leaves writable."""
    found = {e for e in entries if scratch.is_scratch(root, e)}
    found |= set(scratch.nested_folders(root, entries))
    return tuple(sorted(found))


def tracked_modes(root: Path) -> dict[str, int]:
    """The permission bits of every tracked file (not a link) and of the folders holding them:
    git records only a file's x bit, so a `chmod 000` or `chmod g+w` is in no diff."""
    paths = tracked(root)
    folders = {p.rsplit("/", 1)[0] for p in paths if "/" in p}
    folders |= {f.rsplit("/", i)[0] for f in folders for i in range(f.count("/"), 0, -1)}  # every one above
    modes, top, lstat, is_link = {}, os.fspath(root), os.lstat, stat.S_ISLNK
    for path in (*sorted(folders, key=lambda f: f.count("/")), *paths):  # a folder before what it holds
        try:
            mode = lstat(f"{top}/{path}").st_mode
        except OSError:
            continue
        if not is_link(mode):
            modes[path] = mode
    return modes


def restore_modes(root: Path, kept: Kept | None, log_path: Path) -> tuple[str, ...]:
    """After a rollback: each tracked file and folder with its permission bits of the snapshot again."""
    if kept is None:
        return ()
    root, put = Path(root), []
    for path, was in kept.modes.items():
        try:
            st = os.lstat(root / path)
        except OSError:
            continue
        if stat.S_IFMT(st.st_mode) == stat.S_IFMT(was) and st.st_mode != was:
            # A hard link the agent put there (maybe to a person's file outside the project): a file
            # of its own takes the name, never a chmod of the linked inode (SPEC §13). A folder, or a
            # file with one name, split_hard_link leaves alone.
            split_hard_link(root / path)
            os.chmod(root / path, stat.S_IMODE(was))
            put.append(path)
    if put:
        append_log(log_path, f"[memento] rollback: the modes of {_listed(put)} restored\n")
    return tuple(put)


def put_back(root: Path, kept: Kept | None, archive_dir: str | None = None, save=None) -> PutBack:
    """Remove the new ignored paths and the changed caches, restore the person's changed files.
    ``save(paths)``, when given, is called first with every path about to be removed or overwritten
    (folders end in /), so that even a wrong removal loses nothing (a person's file made meanwhile)."""
    if kept is None:
        return PutBack()
    root = Path(root)
    doomed: list[str] = []
    # The real index (git.state.put_back has restored it): only which paths it names matters here,
    # so the scrubbed copy's rehash of every tracked file (git.index.scrubbed_index) is not paid.
    for entry in sorted(ignored(root, git_env()) - kept.entries):
        if (own_file(entry, archive_dir) or matches_any(entry.rstrip("/"), kept.keep)
                or was_there(entry, kept.entries)):
            continue
        doomed += _new_below(root, entry.rstrip("/"), kept)
    looked_at = sorted(kept.entries) if kept.walked else kept.tools
    now = _prints(root, looked_at)
    doomed += sorted(set(now) - set(kept.prints))  # new files inside a person's or a scratch folder
    doomed += _swapped_caches(root, looked_at)
    changed = []
    for path, was in sorted(kept.prints.items()):
        if now.get(path) == was:
            continue
        if scratch.is_scratch_name(path):  # a tool rebuilds it; a changed one is the agent's
            doomed += [path] if path in now else []
        else:
            changed.append(path)
    # Scratch is no one's work (a .mypy_cache of hundreds of MB): not saved, only named in the log.
    saved = [p for p in doomed if not scratch.is_scratch_name(p)] + [p for p in changed if p in now]
    if save is not None and saved:
        save(saved)
    for path in doomed:
        _remove(root, path)
    restored = [p for p in changed if p in kept.copies and _restore(root, p, kept.prints[p], kept.copies[p])]
    lost = [p for p in changed if p not in restored]
    for path in changed:  # said once: the next put_back (at the rollback) compares with what is there now
        try:
            kept.prints[path] = _print(os.lstat(root / path))
        except OSError:
            kept.prints.pop(path, None)
    return PutBack(tuple(restored), tuple(lost), tuple(doomed))


def remove_scratch(root: Path, changes, log_path: Path) -> None:
    """Remove the new scratch among ``changes`` (FileChange.scratch: what git does not
    ignore, so :func:`put_back` does not see it), before verify: a `.pyc` the agent made would be
    imported instead of the source. Said in the tick log."""
    gone = tuple(c.path for c in changes if c.scratch)
    for path in gone:
        _remove(Path(root), path)
    if gone:
        append_log(log_path, f"[memento] scratch the agent made, removed before verify: {_listed(gone)}\n")


def remove_bytecode(root: Path, kept: Kept | None, changes, log_path: Path, archive_dir: str | None = None,
                    who: str = "verify") -> None:
    """Remove the bytecode made or rewritten since the snapshot (scratch.is_bytecode), after verify and
    whatever else ran the task's code, so on a pass too: Python imports a `.pyc` instead of its source
    when the stamp in its header matches, and the code verify runs is the task's (a module that writes
    a forged `.pyc` of itself when imported). Left there, a person's next run would import code that is
    in no commit; removed, Python compiles the source again. The bytecode of the snapshot stays."""
    if kept is None:
        return
    root, gone = Path(root), []
    for entry in sorted(ignored(root, git_env()) - kept.entries):
        if not (own_file(entry, archive_dir) or was_there(entry, kept.entries)):
            gone += [p for p in (_walk(root, entry.rstrip("/")) if entry.endswith("/") else [entry])
                     if scratch.is_bytecode(p)]
    now = _prints(root, sorted(kept.entries) if kept.walked else kept.tools)
    gone += [p for p, seen in now.items() if scratch.is_bytecode(p) and kept.prints.get(p) != seen]
    gone += [c.path for c in changes if c.scratch and scratch.is_bytecode(c.path)]
    for path in gone:
        _remove(root, path)
    if gone:
        append_log(log_path, f"[memento] bytecode {who} made or rewrote, removed: {_listed(gone)}\n")


def after_a_killed_tick(root: Path, entries, keep, archive_dir: str | None = None,
                        save_to: Path | None = None) -> PutBack:
    """The stale recovery's part (the tick that took the prints and copies is dead): the ignored
    paths that are not among ``entries`` (the person's paths its record names) are removed."""
    return put_back(root, Kept(frozenset(e for e in entries if not own_file(e, archive_dir)), keep=tuple(keep),
                               walked=False), archive_dir, _saver(root, save_to))


def settle(root: Path, kept: Kept | None, log_path: Path, archive_dir: str | None = None,
           save_to: Path | None = None) -> PutBack:
    """:func:`put_back`, and what it did in the tick log; ``save_to``: a rollback folder (logs/rollback/…)
    that gets a copy of what is removed or overwritten first (save_rollback, its 50 MB limit)."""
    done = put_back(root, kept, archive_dir, _saver(root, save_to))
    if done.said():
        append_log(log_path, f"[memento] untracked and ignored files: {done.said()}\n")
    return done


def link_reason(root: Path, touched, guard_files, kept: Kept | None, archive_dir: str | None = None,
                who: str = "the agent") -> str:
    """'' unless the change adds or changes a symbolic link that leads out of the work tree, into
    `.git/`, to one of Memento's files, a ``guard_files`` path or a person's untracked or ignored file."""
    root = Path(root)
    top = os.path.realpath(root)
    bad = []
    for change in touched:
        link = root / change.path
        if change.kind == "deleted" or not link.is_symlink():
            continue
        real = os.path.realpath(link)
        rel = os.path.relpath(real, top) if real == top or real.startswith(top + os.sep) else None
        if rel is None:
            bad.append(f"{change.path} -> {os.readlink(link)} (outside the work tree)")
        elif rel == "." or own_file(rel, archive_dir):  # .git/ is one of Memento's folders there
            bad.append(f"{change.path} -> {os.readlink(link)} (Memento's or git's own)")
        elif guard_files and matches_any(rel, guard_files):
            bad.append(f"{change.path} -> {os.readlink(link)} (a guard file)")
        elif kept is not None and was_there(rel, kept.entries):
            bad.append(f"{change.path} -> {os.readlink(link)} (a person's untracked or ignored file)")
    return f"{who} added symbolic link(s) that may not be committed: {_listed(bad)}" if bad else ""


# ---------------------------------------------------------------- helpers


def _saver(root: Path, save_to: Path | None):
    if save_to is None:
        return None
    return lambda paths: save_rollback(root, None, [FileChange(p, 0, 0, "created") for p in paths],
                                       save_to)


def _print(st: os.stat_result) -> Print:
    return st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _prints(root: Path, entries) -> dict[str, Print]:
    """Prints of every file and link below ``entries`` (folders end in /), nothing followed."""
    found: dict[str, Print] = {}
    for entry in entries:
        if entry.endswith("/"):
            found.update(_walk(root, entry.rstrip("/")))
            continue
        st = _lstat(root, entry)
        if st is not None:
            found[entry] = _print(st)
    return found


def _swapped_caches(root: Path, entries) -> list[str]:
    """The scratch folders on the way to ``entries`` that are symbolic links now (git listed the
    entries through real folders at the snapshot: the agent's swap), to be removed, never followed."""
    found = set()
    for entry in entries:
        link = symlinked_parent(root, entry.rstrip("/")) if "/" in entry.strip("/") else None
        if link is not None:
            rel = link.relative_to(root).as_posix()
            if scratch.is_scratch_name(rel):
                found.add(rel)
    return sorted(found)


def _lstat(root: Path, rel: str) -> os.stat_result | None:
    """``rel``'s own stat (a link's, never its target's), None when it is gone or a symbolic link
    stands on its way (a folder the agent swapped for a link: what lies beyond is not the tree's)."""
    if "/" in rel.strip("/") and symlinked_parent(root, rel.strip("/")) is not None:
        return None
    try:
        return os.lstat(root / rel)
    except OSError:
        return None


def _remove(root: Path, rel: str) -> None:
    """Remove ``rel`` (a file, a link never followed, a folder). No path removed here lies beyond a
    link: git lists none there, and the prints stop at one (:func:`_lstat`, :func:`_walk`)."""
    _unlink(root / rel.rstrip("/"))


def _walk(root: Path, folder: str) -> dict[str, Print]:
    """Prints of every file and link below ``folder`` (relative), links never followed: a folder
    that is now a link, a file or something else is printed as itself."""
    top = _lstat(root, folder)
    if top is None:
        return {}
    if not stat.S_ISDIR(top.st_mode):
        return {folder: _print(top)}
    found: dict[str, Print] = {}
    todo = [folder]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(root / rel) as it:
                items = list(it)
        except OSError:
            continue
        for item in items:
            sub = f"{rel}/{item.name}"
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                todo.append(sub)
            else:
                found[sub] = _print(st)
    return found


def _new_below(root: Path, rel: str, kept: Kept) -> list[str]:
    """What goes of a new ignored entry: a file or link whole, a folder whole ("rel/") or, when a
    person has something in it or ``.memento_cleanignore`` names something in it, the rest."""
    target = root / rel
    if target.is_symlink() or not target.is_dir():
        return [rel]
    files = _walk(root, rel)
    spared = {p for p in files if was_there(p, kept.entries) or (kept.keep and matches_any(p, kept.keep))}
    if not spared and not any(e.startswith(rel + "/") for e in kept.entries):
        return [rel + "/"]
    return sorted(set(files) - spared)


def _restore(root: Path, rel: str, was: Print, data: bytes) -> bool:
    """``rel`` as it was: its bytes (a link: its target), mode and mtime; never through a link."""
    target = root / rel
    try:
        parent = _real_parent(root, rel)
        if parent is None:
            return False
        _unlink(target)
        if stat.S_ISLNK(was[0]):
            os.symlink(os.fsdecode(data), target)
            return True
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(was[0]) | 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(target, stat.S_IMODE(was[0]), follow_symlinks=False)
        mtime = was[2]
        os.utime(target, ns=(mtime, mtime), follow_symlinks=False)  # atime too: the print has none
        return True
    except OSError:
        return False


def _real_parent(root: Path, rel: str) -> Path | None:
    """The folder ``rel`` goes in, made when missing; None when a link or a file stands in its way."""
    here = root
    for part in rel.split("/")[:-1]:
        here = here / part
        if here.is_symlink():
            here.unlink()  # a link the agent put in the way: the folder comes back in its place
        if not here.exists():
            here.mkdir()
        elif not here.is_dir():
            return None
    return here


def _listed(names, limit: int = 10) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
