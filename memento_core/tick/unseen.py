"""Below the work tree, what git does not show (SPEC §13 "No nested repositories"; paths too deep for git).

Two things an agent can leave that no guard built on git's view sees, in both modes:

* **A repository of its own**: a `.git` folder or `gitdir:` file anywhere below the work
  tree (git's own status never lists a `.git`, and shows a nested repository as one folder
  at most), or a bare repository's folder (HEAD, objects/, refs/). Its config, hooks and
  `core.worktree` would run in a person's `git status` there after the tick, outside any
  sandbox: a `core.fsmonitor` command is enough.
* **A path too deep for git**: a file below a path longer than the system's PATH_MAX
  (4,096 bytes). git, `os.walk` and every check by full path fail on it silently, so it
  stays on disk, untracked and unseen.

:func:`look` walks the tree at the snapshot (by full paths, which stay shorter than PATH_MAX:
a too-long entry is recorded, never entered) and again after the agent and after verify.
Those two walks list only the folders that changed: a folder whose (device, inode, change
time) is what the snapshot found has the same entries (adding, removing or renaming one
changes its folder's ctime, which no process can set back), so what the snapshot found in it
holds and only its subfolders are looked at in turn. That is trusted for a folder on the work
tree's own file system, a local one (:data:`LOCAL_FILE_SYSTEMS`; a network one may answer a stat
from a cache), whose ctime was older than the snapshot by :data:`RACY_NS` (a timestamp is as
coarse as the kernel's clock tick, two seconds on FAT): any other folder is listed every time.
A `.venv/` of 10,000 folders was 240 ms of CPU a walk, three walks a tick;
:func:`settle` names and removes every repository and too-long path that was not there at
the snapshot, saving it first into a tar archive under `logs/rollback/` (no git reads a
repository there, and a tar holds any depth). The removal goes through folder descriptors
(``openat``), one folder at a time, climbing back with ``..`` checked against the inode it
came from, so no path over PATH_MAX is ever used and no more than three descriptors are open,
whatever the depth. Nothing is followed: a symbolic link is removed as a link.

What was there at the snapshot (a person's own nested clone, a submodule's checkout, the
`memory/` repository) stays, as do the repository's own `.git` and the parallel workers'
worktrees under `.memento/worktrees/` (each judged in its own attempt). Memento's saved
rollbacks (`logs/rollback/`) are not walked. :func:`gitlink_reason` keeps a nested repository
a person had from being committed as a gitlink unless the task names that exact path.
"""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
import re
import stat
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .context import append_log

# A path of this many bytes or more cannot be given to a system call (PATH_MAX, its NUL included).
PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096
# Not walked: the repository's own git folder, the workers' worktrees, Memento's saved rollbacks.
NOT_WALKED = (".git", ".memento/worktrees", "logs/rollback")
MEMENTOS_REPOSITORY = "memory/.git"  # Memento's memory (SPEC §9): made by Memento whenever it needs it
SAVE_LIMIT = 50 * 1024 * 1024  # the copies of one rollback (SPEC §13); past it, only named
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


# The file systems whose folders' change times a walk trusts (see the module): local ones, where a
# stat reads the inode itself (a network file system may answer from its attribute cache).
LOCAL_FILE_SYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs",
                                "bcachefs", "jfs", "reiserfs", "nilfs2"})
RACY_NS = 2_000_000_000  # a folder changed this recently before a walk is listed again by the next


@dataclass(frozen=True)
class Seen:
    """What :func:`look` found below the work tree (paths relative to it, '/'-separated)."""

    repos: frozenset[str] = frozenset()  # `.git` entries and bare repositories' folders
    deep: frozenset[str] = frozenset()  # the shallowest entries whose full path is too long
    folders: frozenset[str] = frozenset()  # every folder walked: what a new deep path's removal stops at
    # The folders whose entries a later walk may take from here, by path as bytes ('' the work tree
    # itself): ((device, inode, ctime), subfolders, repositories, too-long entries found directly in
    # it). In memory only, never kept beside the record (to_bytes).
    marks: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Settled:
    """What :func:`settle` removed, and where it saved it."""

    repos: tuple[str, ...] = ()
    deep: tuple[str, ...] = ()
    saved: str = ""  # the archive, relative to the work tree ('' when nothing was removed)
    failed: tuple[str, ...] = field(default=())  # could not be removed (named in the reason)

    def reason(self, who: str = "the agent") -> str:
        """The guard failure ('' = none), each path named (a too-long one shortened)."""
        parts = []
        where = f"; saved in {self.saved}" if self.saved else ""
        if self.repos:
            parts.append(f"{who} left git repositories of its own below the work tree: {_listed(self.repos)} "
                         f"(removed: their config and hooks would run in a person's git command there{where})")
        if self.deep:
            parts.append(f"{who} left paths too long for git or any check to see (over {PATH_MAX} bytes from /): "
                         f"{_listed(shorten(p) for p in self.deep)} (removed{where})")
        if self.failed:
            parts.append(f"could not remove {_listed(shorten(p) for p in self.failed)}: remove them by hand")
        return "; ".join(parts)


def look(root: Path, since: Seen | None = None) -> Seen:
    """Every nested repository and too-long path below ``root``, and its folders (see the module);
    ``since``: an earlier look of the same ``root``, whose unchanged folders are not listed again."""
    top = os.fsencode(os.path.abspath(root))
    started = time.time_ns()
    trusted = _local(top)
    known = since.marks if trusted and since is not None else {}
    repos, deep, folders, marks = set(), set(), set(), {}
    todo = [b""]
    while todo:
        rel = todo.pop()
        path = top + b"/" + rel if rel else top
        mark = None
        if trusted:
            try:
                st = os.lstat(path)
            except OSError:
                continue
            mark = (st.st_dev, st.st_ino, st.st_ctime_ns)
            was = known.get(rel)
            if was is not None and was[0] == mark:  # its entries are the ones `since` found
                marks[rel] = was
                _mark, subfolders, its_repos, its_deep = was
                repos.update(its_repos)
                deep.update(its_deep)
                folders.update(subfolders)
                todo.extend(subfolders)
                continue
            if st.st_dev != trusted or st.st_ctime_ns >= started - RACY_NS:
                mark = None  # listed again by the next look
        try:
            with os.scandir(path) as it:
                items = list(it)
        except OSError:
            continue
        names = {item.name for item in items}
        if mark is not None and (b"HEAD" in names or _encrypted(path)):
            mark = None  # what it answers may change with no change of its entries (_bare, _encrypted)
        if rel and b"HEAD" in names and _bare(items):
            repos.add(rel)
            continue
        subfolders, its_repos, its_deep = [], [], []
        for item in items:
            sub = rel + b"/" + item.name if rel else item.name
            if len(top) + 1 + len(sub) >= PATH_MAX:  # no system call takes it
                its_deep.append(sub)
            elif item.name == b".git":
                if sub != b".git":
                    its_repos.append(sub)
            elif _folder(item) and os.fsdecode(sub) not in NOT_WALKED:
                subfolders.append(sub)
        repos.update(its_repos)
        deep.update(its_deep)
        folders.update(subfolders)
        todo.extend(subfolders)
        if mark is not None:
            marks[rel] = (mark, subfolders, its_repos, its_deep)
    repos.discard(os.fsencode(MEMENTOS_REPOSITORY))
    return Seen(_decoded(repos), _decoded(deep), _decoded(folders), marks)


def _local(top: bytes) -> int:
    """The device of ``top`` when it is on a local file system (LOCAL_FILE_SYSTEMS), else 0."""
    try:
        real = os.path.realpath(top)
        device = os.stat(real).st_dev
        with open("/proc/self/mountinfo", "rb") as fh:
            mounts = fh.read()
    except OSError:
        return 0
    return device if mount_type(real, mounts) in LOCAL_FILE_SYSTEMS else 0


def mount_type(path: bytes, mountinfo: bytes) -> str:
    """The file system type of the mount ``path`` (absolute, resolved) is on, from the text of
    /proc/self/mountinfo: the mount whose point is the longest prefix of it, the last one listed
    of those on the same point (mounted over the others); '' when no line says."""
    best, kind = b"", b""
    for line in mountinfo.split(b"\n"):  # a line ends at \n only (a \r in a mount point is left as it is)
        left, _, right = line.partition(b" - ")
        fields = left.split(b" ")
        if len(fields) < 6 or not right:  # ID, parent, device, root, mount point, options (then optional ones)
            continue
        point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4])
        if (path == point or path.startswith(point.rstrip(b"/") + b"/")) and len(point) >= len(best):
            best, kind = point, right.split(b" ")[0]
    return os.fsdecode(kind)


def to_bytes(seen: Seen) -> bytes:
    """``seen`` as JSON, kept next to the tick's record so the stale recovery after a killed tick
    removes what the agent nested by the snapshot's own list (record.save_unseen)."""
    return json.dumps({"repos": sorted(seen.repos), "deep": sorted(seen.deep), "folders": sorted(seen.folders)},
                      ensure_ascii=True).encode("ascii")


def from_bytes(data: bytes) -> Seen | None:
    """What :func:`to_bytes` wrote; None when it is not that."""
    try:
        body = json.loads(data.decode("ascii"))
        return Seen(*(frozenset(str(p) for p in body[key]) for key in ("repos", "deep", "folders")))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def settle(root: Path, before: Seen | None, save_to: Path, log_path: Path | None = None,
           who: str = "the agent") -> Settled:
    """Remove what :func:`look` finds now that ``before`` did not have, saved first into
    ``save_to``/removed.tar (made only when something is removed). None ``before``: nothing done."""
    if before is None:
        return Settled()
    now = look(root, before)
    repos = sorted(now.repos - before.repos)
    deep = sorted(p for p in now.deep - before.deep if not _inside(p, before.deep))
    if not repos and not deep:
        return Settled()
    doomed = sorted({*repos, *(_first_new(p, before.folders) for p in deep)}, key=lambda p: (p.count("/"), p))
    doomed = [p for i, p in enumerate(doomed) if not _inside(p, doomed[:i])]  # once, from the top
    save_to.mkdir(parents=True, exist_ok=True)
    failed = []
    with _Archive(save_to) as archive:
        for rel in doomed:
            try:
                remove(Path(root), rel, archive)
            except OSError as exc:
                failed.append(rel)
                archive.note(f"{shorten(rel)}: not removed ({exc.strerror or exc})")
    saved = os.path.relpath(save_to / "removed.tar", root)
    done = Settled(tuple(repos), tuple(deep), saved, tuple(failed))
    if log_path is not None:
        append_log(log_path, f"[memento] below the work tree: {done.reason(who)}\n")
    return done


def gitlink_reason(root: Path, touched, context_files, who: str = "the agent") -> str:
    """'' unless the change would commit a folder as a gitlink (mode 160000: a nested repository
    staged with `git add`) at a path the task's ``context_files`` do not name exactly."""
    named = {str(p).rstrip("/") for p in context_files}
    bad = []
    for change in touched:
        path = change.path.rstrip("/")
        try:
            mode = os.lstat(Path(root) / path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) and path not in named:
            bad.append(path)
    if not bad:
        return ""
    return (f"{who} would commit nested repositories as gitlinks the task does not name: {_listed(bad)} "
            "(a task adds a submodule only where its context_files name that exact path)")


def shorten(rel: str, keep: int = 40) -> str:
    """``rel`` as a person can read it: its beginning and end around an ellipsis, and its length."""
    if len(rel) <= 2 * keep + 10:
        return rel
    return f"{rel[:keep]}…{rel[-keep:]} ({len(rel):,} characters)"


# ---------------------------------------------------------------- removing, by folder descriptors


def remove(root: Path, rel: str, archive: _Archive | None = None) -> None:
    """Remove ``rel`` (a file, a link or a folder of any depth) below ``root``, each entry added to
    ``archive`` first; the folders on its way are opened one by one, never followed."""
    *parents, name = rel.split("/")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parents:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        _remove_at(fd, name, "/".join(parents), archive)
    finally:
        os.close(fd)


def _remove_at(parent: int, name: str, where: str, archive: _Archive | None) -> None:
    """Remove ``name`` in the folder ``parent``: depth first, one folder open at a time (the way
    back up is ``..``, checked against the (device, inode) it came from)."""
    st = os.lstat(name, dir_fd=parent)
    rel = f"{where}/{name}" if where else name
    if not stat.S_ISDIR(st.st_mode):
        if archive is not None:
            archive.add(parent, name, rel, st)
        os.unlink(name, dir_fd=parent)
        return
    trail = [(name, st.st_dev, st.st_ino)]  # the folders entered below ``parent``
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    names = [rel]
    if archive is not None:
        archive.add(parent, name, rel, st)
    try:
        while True:
            here = "/".join(names)
            sub = None
            with os.scandir(fd) as it:
                for item in it:
                    st = item.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        sub = (item.name, st)
                        break
                    if archive is not None:
                        archive.add(fd, item.name, f"{here}/{item.name}", st)
                    os.unlink(item.name, dir_fd=fd)
            if sub is not None:
                child = os.open(sub[0], _DIR_FLAGS, dir_fd=fd)
                if (os.fstat(child).st_dev, os.fstat(child).st_ino) != (sub[1].st_dev, sub[1].st_ino):
                    os.close(child)
                    raise OSError(f"{here}/{sub[0]} changed while it was being removed")
                if archive is not None:
                    archive.add(fd, sub[0], f"{here}/{sub[0]}", sub[1])
                os.close(fd)
                fd = child
                trail.append((sub[0], sub[1].st_dev, sub[1].st_ino))
                names.append(sub[0])
                continue
            gone, _, _ = trail.pop()
            names.pop()
            if not trail:
                os.close(fd)
                fd = -1
                os.rmdir(gone, dir_fd=parent)
                return
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            want = trail[-1][1:]
            if (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != want:
                raise OSError(f"{'/'.join(names)} moved while it was being removed")
            os.rmdir(gone, dir_fd=fd)
    finally:
        if fd >= 0:
            os.close(fd)


class _Archive:
    """removed.tar and README.txt in a rollback folder: every entry removed, its bytes while the
    copies stay under SAVE_LIMIT (past it, named in the README)."""

    README = ("Memento removed these from below the work tree after an attempt: a git repository\n"
              "made there during it (whose config or hooks would have run in your git commands\n"
              "in that folder) or a path too long for git to see. removed.tar holds them as they\n"
              "were; `tar -tvf removed.tar` lists them. Extract them elsewhere, and only if you\n"
              "trust them.\n")

    def __init__(self, dest: Path) -> None:
        import tarfile  # here: only an attempt that left something to remove pays for it

        self.dest, self.budget, self.notes = dest, SAVE_LIMIT, []
        self.tar = tarfile.open(dest / "removed.tar", "w", format=tarfile.PAX_FORMAT)

    def __enter__(self) -> _Archive:
        return self

    def __exit__(self, *exc) -> None:
        self.tar.close()
        text = self.README + ("".join(f"\n{n}" for n in self.notes) + "\n" if self.notes else "")
        (self.dest / "README.txt").write_text(text, encoding="utf-8", errors="surrogateescape")

    def note(self, line: str) -> None:
        self.notes.append(line)

    def add(self, folder: int, name: str, rel: str, st: os.stat_result) -> None:
        import tarfile

        info = tarfile.TarInfo(rel)
        info.mode, info.mtime = stat.S_IMODE(st.st_mode) & 0o777, int(st.st_mtime)
        if stat.S_ISDIR(st.st_mode):
            info.type = tarfile.DIRTYPE
            self.tar.addfile(info)
        elif stat.S_ISLNK(st.st_mode):
            info.type, info.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=folder)
            self.tar.addfile(info)
        elif stat.S_ISREG(st.st_mode) and st.st_size <= self.budget:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError:
                self.note(f"{shorten(rel)}: could not be read")
                return
            with os.fdopen(fd, "rb") as fh:
                data = fh.read(self.budget + 1)
            self.budget -= len(data)
            info.size = len(data)
            self.tar.addfile(info, io.BytesIO(data))
        else:
            self.note(f"{shorten(rel)}: not copied ({'over the copy limit' if stat.S_ISREG(st.st_mode) else 'not a file'})")


# ---------------------------------------------------------------- helpers


def _bare(items) -> bool:
    """Whether a folder's entries may be a bare repository's, as git's discovery tells one: a HEAD
    that is no folder (a file, or a link as git once wrote it), and objects/ and refs/ folders,
    links to folders included, or a ``commondir`` file naming where they are. Erring towards a
    repository: a folder of the agent's that holds a HEAD and a commondir is one. Whether links
    resolve or a commondir names a repository can change with no change of the folder's own
    entries, so a folder holding a HEAD is listed by every look (never marked)."""
    kinds = {item.name: item for item in items if item.name in (b"HEAD", b"objects", b"refs", b"commondir")}
    try:
        if b"HEAD" not in kinds or kinds[b"HEAD"].is_dir(follow_symlinks=False):
            return False
        return b"commondir" in kinds or all(name in kinds and kinds[name].is_dir() for name in (b"objects", b"refs"))
    except OSError:
        return False


# ioctl FS_IOC_GETFLAGS (_IOR('f', 1, long)) and the inode flag fscrypt sets on an encrypted folder.
FS_IOC_GETFLAGS = (2 << 30) | (struct.calcsize("l") << 16) | (ord("f") << 8) | 1
FS_ENCRYPT_FL = 0x800


def _encrypted(path: bytes) -> bool:
    """Whether the folder at ``path`` is encrypted (fscrypt, ext4 and f2fs): any user can add or
    remove its key, which turns the names it lists from scrambled to real and back with no change
    of its ctime, so its listing is never taken from an earlier one. True when that cannot be
    told; False where the file system keeps no such flags (it encrypts nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        flags = fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8))
    except OSError as exc:
        return exc.errno not in (errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP)
    finally:
        os.close(fd)
    return bool(int.from_bytes(flags[:4], sys.byteorder) & FS_ENCRYPT_FL)


def _folder(item: os.DirEntry) -> bool:
    try:
        return item.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _decoded(paths) -> frozenset[str]:
    return frozenset(os.fsdecode(p) for p in paths)


def _inside(path: str, tops) -> bool:
    return any(path == t or path.startswith(t + "/") for t in tops)


def _first_new(rel: str, folders: frozenset[str]) -> str:
    """The shallowest folder on ``rel``'s way that was not there at the snapshot (all of it is new),
    else ``rel`` itself."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        prefix = "/".join(parts[:i])
        if prefix not in folders:
            return prefix
    return rel


def _listed(names, limit: int = 10) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
