"""Git's own state, which no guard on the work tree sees (SPEC §13): captured at step 8, restored after.

An agent running unconfined can write `.git/config` (hooks path, fsmonitor,
filters), `.git/info/exclude` (hide a file), `.git/hooks/`, and move or delete
any ref: branches, tags, the stash, HEAD itself. :func:`capture` records all
of that as values before the agent runs; after it (and after verify)
:func:`restore` puts back whatever differs. tick/guards.git_damage says what
changed (any change is a failure); this module only reads and writes.

Beyond those, whatever else stands in a git folder that git itself did not write
(SPEC §13: a file planted in `.git/`, a script an fsmonitor or a hook would name, a
`hooks/` of a submodule's or a worktree's git folder) is captured the same way and
compared and put back: a new one is removed, saved first under `logs/rollback/`.
What git and Memento write there during a tick (:data:`GIT_WRITES`: objects, refs, logs,
the index, ORIG_HEAD, a worktree's own folder, locks, Memento's private index
copies) is not looked at.

The real index is captured too but is not compared: an agent's `git add` is
harmless, yet the index is put back as it was so no `assume-unchanged` or
`skip-worktree` flag, nor anything the agent staged, stays behind.

The repository itself is captured by identity (where its `.git` is, and the
device and inode of its git folders): an agent that moves the real `.git` away
and puts a decoy in its place (a copy with a hook planted, or a gitfile naming
one) would have every later git command, Memento's commits included, work in
the decoy. :func:`put_back` sees the swap before it asks git anything, moves the
decoy aside and the real folder back (found by its inode below the top level),
or, when the real one is nowhere there, leaves no repository at all for git to
find and raises :class:`RepositoryGone`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular_or_none
from .repo import repo_dirs
from .run import run_git

# Below the common git directory: what configures git, and what hides files from it.
WATCHED = ("config", "info", "hooks", "objects/info/alternates")
# Written by git itself (`update-server-info`, which `git gc` and `repack` run): not the agent's.
GENERATED = frozenset({"info/refs"})
# What git (or Memento's own git commands) writes at the top of a git folder during a tick: never
# captured. Everything else there is (:func:`_strays`), a person's own files included.
GIT_WRITES = frozenset({
    "objects", "refs", "logs", "reftable", "packed-refs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD",
    "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD",
    "REBASE_HEAD", "COMMIT_EDITMSG", "SQUASH_MSG", "TAG_EDITMSG", "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF",
    "rebase-merge", "rebase-apply", "sequencer", "rr-cache", "shallow", "gc.pid", "gc.log", "gitk.cache",
    "commondir", "gitdir", "locked", "fsmonitor--daemon", "fsmonitor--daemon.ipc",
    "lfs", "annex", "svn",  # the stores of git-lfs, git-annex and git-svn: large, and theirs
})
# Names git writes by their beginning: a bisection's files, a split index's shared part, the index
# `git commit --only` builds, Memento's own private index copies (index.scrubbed_index, commit.make_commit).
GIT_WRITES_PREFIXES = ("BISECT_", "sharedindex.", "next-index-", "memento-index.", "memento-scrubbed-index.")
# Git folders inside the common one (a worktree's, a submodule's): their own strays are captured.
NESTED_GIT_DIRS = ("worktrees", "modules")
STORES = frozenset({"objects", "refs", "logs", "reftable"})
# Not compared, only put back: the stash's list of entries lives in its reflog.
STASH_LOG = "logs/refs/stash"
# A lock file the agent leaves behind would make every later git command fail.
LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")

# One file system entry: (st_mode, bytes) for a file, (S_IFLNK, target) for a link.
Entry = tuple[int, bytes]


@dataclass(frozen=True)
class GitState:
    """HEAD, every ref, and the files of `.git/` an agent could use against Memento."""

    head: str  # "ref: refs/heads/main", or a commit id when detached
    refs: Mapping[str, str]  # refname -> object id (branches, tags, stash, notes; not refs/remotes/)
    files: Mapping[str, Entry]  # path below the common git dir -> entry (WATCHED)
    git_dir: str = field(default="", compare=False)
    common_dir: str = field(default="", compare=False)
    index: bytes | None = field(default=None, compare=False)
    stash_log: bytes | None = field(default=None, compare=False)
    # Where the repository is: the top level (its `.git` entry), and the (device, inode) of the
    # git folder and of the common one; () when unknown (an older record).
    where: tuple = field(default=(), compare=False)
    replaced: str = field(default="", compare=False)  # put_back found the repository swapped: what it did
    # Refs left to others, neither put back nor judged: the other parallel workers' branches, which
    # their agents move at any moment and their own guards fold (tick/crew.py: Crew.refresh).
    loose: frozenset[str] = field(default=frozenset(), compare=False)
    # The refs as for-each-ref read them, with the files it read them from as they were before and
    # after (:func:`_ref_files`); None when those files moved meanwhile or could not all be read.
    read_refs: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def branch(self) -> str | None:
        """The branch HEAD names (its moves are the agent's commits, folded by the guards)."""
        return self.head[5:] if self.head.startswith("ref: ") else None


def capture(root: Path, like: GitState | None = None) -> GitState:
    """Read HEAD, the refs, the watched files, the index and the stash's reflog.

    ``like``: an earlier capture of this repository. When every file the refs are read from is
    as it was then, byte for byte (:func:`_ref_files`), its refs as git read them are taken again
    and git is not asked (issue 42: two of a tick's git processes)."""
    root = Path(root)
    dirs = repo_dirs(root)
    git_dir, common = dirs.git_dir, dirs.common_dir
    read = _read_refs(root, git_dir, common, like)
    return GitState(
        head=_head(root, git_dir), refs=dict(read[1]), files=_files(common),
        git_dir=str(git_dir), common_dir=str(common),
        index=read_plain(git_dir / "index"), stash_log=read_plain(common / STASH_LOG),
        where=(str(dirs.top), _ident(git_dir), _ident(common)),
        read_refs=read if read[0] is not None else None,
    )


def _read_refs(root: Path, git_dir: Path, common: Path, like: GitState | None) -> tuple:
    """(the files the refs are read from, the refs): ``like``'s when those files are the same now,
    else the refs as git reads them now, with the files as they were both before and after the
    read (None when they moved meanwhile: nothing to take again)."""
    before = _ref_files(git_dir, common)
    known = like.read_refs if like is not None and like.git_dir == str(git_dir) else None
    if before is not None and known is not None and known[0] == before:
        return known
    refs = _refs(root)
    after = _ref_files(git_dir, common) if before is not None else None
    return (before if after == before else None), refs


def restore(root: Path, snap: GitState, now: GitState | None = None, save_to: Path | None = None) -> None:
    """Make `.git/` agree with ``snap`` again: files, refs (but HEAD's branch), HEAD, index, stash.
    ``save_to``: a folder under logs/rollback/ that gets, first, a copy of every file of `.git/`
    about to be removed or overwritten (made when there is one)."""
    root = Path(root)
    now = now or capture(root)
    common, git_dir = Path(snap.common_dir), Path(snap.git_dir)
    for name in LOCKS:
        for folder in {git_dir, common}:
            _remove(folder / name)
    if save_to is not None:
        _save_found(snap.files, now.files, save_to)
    _restore_files(common, snap.files, now.files)
    _restore_refs(root, snap, now)
    if now.head != snap.head:
        if snap.branch:
            run_git(root, ["symbolic-ref", "HEAD", snap.branch])
        else:
            run_git(root, ["update-ref", "--no-deref", "HEAD", snap.head])
    if read_plain(common / STASH_LOG) != snap.stash_log:
        _put(common / STASH_LOG, snap.stash_log, 0o100644)
    if read_plain(git_dir / "index") != snap.index:
        _put(git_dir / "index", snap.index, 0o100644)


def put_back(root: Path, snap: GitState | None, aside: Path) -> GitState | None:
    """Capture what is there now, restore ``snap`` over it; returns what was found (None without a snapshot).

    A repository swapped meanwhile is put back first (:func:`bring_back`; a decoy goes to
    ``aside``, a folder under logs/rollback/ made when needed) and what was found says so
    (``replaced``)."""
    if snap is None:
        return None
    replaced = bring_back(snap, aside)
    cleared = clear_specials(Path(snap.git_dir), Path(snap.common_dir), snap.head)  # before git opens one
    now = capture(root, like=snap)
    restore(root, snap, now, save_to=aside)
    said = "; ".join(part for part in (replaced, cleared) if part)
    return replace(now, replaced=said) if said else now


# Where git opens files to read the refs, their logs and a worktree's HEAD: a FIFO there holds
# git's open() for ever (for-each-ref, update-ref's log, every command that reads HEAD), and a
# socket or a device is no ref either. A worktree's own git folder under worktrees/ likewise.
REF_READS = ("HEAD", "ORIG_HEAD", "FETCH_HEAD", "packed-refs", "refs", "logs", "reftable")
WORKTREE_REF_READS = ("HEAD", "ORIG_HEAD", "refs", "logs")


def clear_specials(git_dir: Path, common: Path, head: str) -> str:
    """Remove every FIFO, socket or device where git reads refs (:data:`REF_READS`, in the common
    git folder and each worktree's under ``worktrees/``, ``git_dir`` being one), before any git command
    opens one; '' when there was none, else the clause that names them for the guards' reason.
    Links are followed as git follows them; one that leads to such a thing (or to a folder that
    holds one) is removed itself, never what it leads to. Nothing is kept: a FIFO holds no bytes.
    What git takes no folder for a repository without is made again: ``git_dir``'s HEAD (as
    ``head`` says: ``ref: refs/heads/main`` or a commit) and ``refs/``."""
    places: list[tuple[Path, Path | None]] = [(common / name, None) for name in REF_READS]
    for child in _listdir(common / "worktrees"):  # this worktree's own git folder among them
        places += [(common / "worktrees" / child / name, None) for name in WORKTREE_REF_READS]
    found: set[Path] = set()
    folders: set[tuple[int, int]] = set()
    while places:
        path, via = places.pop()  # via: the link on the way, what is removed for what lies behind it
        try:
            st = os.stat(path)  # followed, as git's open() follows
            via = via or (path if os.path.islink(path) else None)
        except OSError:
            continue  # nothing there, or a dangling link: git fails to read it, it does not wait
        if stat.S_ISDIR(st.st_mode):
            if (st.st_dev, st.st_ino) not in folders:
                folders.add((st.st_dev, st.st_ino))
                places += [(path / name, via) for name in _listdir(path)]
        elif not stat.S_ISREG(st.st_mode):
            found.add(via or path)
    for path in found:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    if not found:
        return ""
    if not os.path.lexists(git_dir / "HEAD"):
        _put(git_dir / "HEAD", f"{head}\n".encode(), 0o100644)
    if not os.path.lexists(common / "refs"):
        os.mkdir(common / "refs")
    shown = sorted(f".git/{p.relative_to(common)}" if p.is_relative_to(common) else str(p) for p in found)
    return (f"made {', '.join(shown[:10])}{f' and {len(shown) - 10} more' if len(shown) > 10 else ''} "
            "a FIFO, a socket or a device where git reads its refs, or a link to one (removed: git "
            "would wait on it for ever)")


class RepositoryGone(MementoError):
    """The repository's `.git` was moved where Memento does not look: nothing may run git now."""


def bring_back(snap: GitState, aside: Path) -> str:
    """'' when the top level's `.git` still leads to the git folders of ``snap`` (the same
    inodes); else the swap undone, without asking git anything (a decoy's config and hooks
    would be the ones read): whatever stands at `.git` now is moved into ``aside``, and the
    real git folder, found by its inode below the top level, is renamed back (a gitfile
    layout, a worktree's, gets its gitfile written again). Returns what it did, for the
    guards' reason. :class:`RepositoryGone` when the real folder is nowhere below the top level:
    the decoy is moved aside all the same, so no later git command reaches it."""
    if not snap.where:
        return ""
    top, git_id, common_id = Path(snap.where[0]), tuple(snap.where[1]), tuple(snap.where[2])
    entry, git_dir = top / ".git", Path(snap.git_dir)
    in_place = _ident(git_dir) == git_id and _ident(Path(snap.common_dir)) == common_id
    if in_place and _leads_to(entry, git_dir, top):
        return ""
    aside.mkdir(parents=True, exist_ok=True)
    found = git_dir if _ident(git_dir) == git_id else _find_folder(top, git_id)
    decoy = ""
    if os.path.lexists(entry) and not (found is not None and _ident(entry) == git_id and entry == git_dir):
        os.rename(entry, aside / "git")
        decoy = f"what stood at .git is in {_shown(aside / 'git', top)}"
    if found is not None and found != git_dir:
        os.rename(found, git_dir)
    if found is None or _ident(Path(snap.common_dir)) != common_id:  # a worktree's main repository moved too
        raise RepositoryGone(f"the repository's .git was moved away during the run, not below {top}: put it "
                             f"back at {git_dir} (no git command runs here until then); "
                             f"{decoy or 'nothing stood at .git'}")
    if git_dir != entry:  # a gitfile layout (a worktree): its gitfile names the git folder again
        _put(entry, f"gitdir: {git_dir}\n".encode(), 0o100644)
    moved = "" if found == git_dir else f" from {_shown(found, top)}"
    return (f"replaced the repository's .git (the real git folder put back{moved}; "
            f"{decoy or 'the gitfile written again'})")


def _shown(path: Path, top: Path) -> str:
    return str(path.relative_to(top)) if path.is_relative_to(top) else str(path)


def _ident(path: Path) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` leads to, None when nothing does."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _leads_to(entry: Path, git_dir: Path, top: Path) -> bool:
    """The `.git` entry is ``git_dir`` (or a link to it), or a gitfile naming it."""
    try:
        st = os.lstat(entry)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return _ident(entry) == _ident(git_dir)
    data = read_plain(entry) or b""
    if not data.startswith(b"gitdir: "):
        return False
    named = Path(os.fsdecode(data[len(b"gitdir: "):].strip()))
    return _ident(named if named.is_absolute() else top / named) == _ident(git_dir)


def _find_folder(top: Path, ident: tuple[int, int]) -> Path | None:
    """The folder below ``top`` whose (device, inode) is ``ident`` (links not followed; the
    top level's own entries looked at before any folder below them)."""
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for item in it:
                    try:
                        if not item.is_dir(follow_symlinks=False):
                            continue
                        st = item.stat(follow_symlinks=False)  # readdir's inode may not be stat's (overlayfs)
                        if (st.st_dev, st.st_ino) == ident:
                            return Path(item.path)
                    except OSError:
                        continue
                    stack.append(Path(item.path))
        except OSError:
            continue
    return None


# ---------------------------------------------------------------- on disk (for the stale recovery)


def to_bytes(snap: GitState) -> bytes:
    """``snap`` as JSON (bytes in base64): the tick keeps it under `.memento/records/` so the
    recovery after a killed tick restores git from the tick's copy, not from `.git/` (SPEC §13)."""
    def b64(data: bytes | None) -> str | None:
        return None if data is None else base64.b64encode(data).decode("ascii")

    body = {"head": snap.head, "refs": dict(snap.refs), "index": b64(snap.index), "stash_log": b64(snap.stash_log),
            "files": {rel: [mode, b64(data)] for rel, (mode, data) in snap.files.items()}}
    return json.dumps(body, sort_keys=True).encode("ascii")  # ensure_ascii keeps odd names as \udcXX escapes


def from_bytes(data: bytes, root: Path) -> GitState | None:
    """The snapshot :func:`to_bytes` wrote, for the repository at ``root`` as it is now
    (its git folders are asked of git, not taken from the file); None when unreadable."""
    def unb64(text: str | None) -> bytes | None:
        return None if text is None else base64.b64decode(text, validate=True)

    try:
        body = json.loads(data.decode("ascii"))
        files = {str(rel): (int(mode), unb64(blob) or b"") for rel, (mode, blob) in body["files"].items()}
        refs = {str(k): str(v) for k, v in body["refs"].items()}
        head, index, stash_log = str(body["head"]), unb64(body["index"]), unb64(body["stash_log"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not all(_watched(rel) for rel in files):
        return None
    git_dir, common = _dirs(Path(root))
    return GitState(head=head, refs=refs, files=files, git_dir=str(git_dir), common_dir=str(common),
                    index=index, stash_log=stash_log)


def _watched(rel: str) -> bool:
    """Whether ``rel`` names a path :func:`capture` could have captured: a WATCHED one or one below
    it, or a stray; never one in git's stores (objects, refs, logs), whatever folder holds it, nor
    a `..` or an absolute path (a tampered record must not make :func:`restore` write there)."""
    parts = rel.split("/")
    if ".." in parts or "" in parts or "." in parts:
        return False
    if any(rel == w or rel.startswith(w + "/") for w in WATCHED):
        return True
    return not git_writes(parts[0]) and not any(part in STORES for part in parts)


# ---------------------------------------------------------------- reading


def _dirs(root: Path) -> tuple[Path, Path]:
    dirs = repo_dirs(root)
    return dirs.git_dir, dirs.common_dir


# What a branch's HEAD file holds, as git itself writes it: nothing else is read here.
_BRANCH_HEAD = re.compile(rb"ref: (refs/heads/[A-Za-z0-9_][A-Za-z0-9._/-]*)\n")


def _head(root: Path, git_dir: Path | None = None) -> str:
    """``ref: <branch>``, or the commit of a detached HEAD. A HEAD file that names a branch the
    way git writes it is read here (three times a task: a git command each, saved); anything
    else (a detached HEAD, a link, another ref store's placeholder, an odd name) is asked of git."""
    if git_dir is not None:
        named = _branch_named(git_dir / "HEAD")
        if named:
            return "ref: " + named
    proc = run_git(root, ["symbolic-ref", "-q", "HEAD"], check=False)
    if proc.returncode == 0:
        return "ref: " + proc.stdout.decode("utf-8", "surrogateescape").strip()
    proc = run_git(root, ["rev-parse", "-q", "--verify", "HEAD"], check=False)
    return proc.stdout.decode().strip()


def _branch_named(path: Path) -> str:
    """The branch a HEAD file names ('' when it is not a plain ``ref: refs/heads/…`` line)."""
    data = read_regular_or_none(path, limit=4097) or b""
    m = _BRANCH_HEAD.fullmatch(data) if len(data) <= 4096 else None  # the whole file, or git's word
    name = m.group(1).decode() if m else ""
    bad = (not name or ".." in name or "//" in name or name.endswith(("/", "."))
           or "/." in name or any(part.endswith(".lock") for part in name.split("/")))
    return "" if bad else name


# Remote-tracking refs move whenever something fetches (an editor's auto-fetch, say) and
# are fetched again at will: neither compared nor restored.
UNWATCHED_REFS = ("refs/remotes/",)


def watched_refs(root: Path) -> dict[str, str]:
    """Every ref the guards watch (not refs/remotes/) and its object, as they are now."""
    return _refs(root)


def _refs(root: Path) -> dict[str, str]:
    out = run_git(root, ["for-each-ref", "--format=%(objectname) %(refname)"]).stdout
    refs = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        sha, _, name = line.partition(" ")
        if not name.startswith(UNWATCHED_REFS):
            refs[name] = sha
    return refs


def _files(common: Path) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for name in WATCHED:
        _walk(common, name, found)
    _strays(common, "", found, top=True)
    return found


def git_writes(name: str) -> bool:
    """Whether ``name``, at the top of a git folder, is one git itself writes (or a lock of one)."""
    stem = name[:-5] if name.endswith(".lock") else name
    return stem in GIT_WRITES or stem == "config" and name != stem or name.startswith(GIT_WRITES_PREFIXES)


def _strays(common: Path, rel: str, found: dict[str, Entry], *, top: bool = False) -> None:
    """Capture what git did not write in the git folder at ``rel`` below ``common`` (``top``: the
    common folder itself, whose WATCHED entries are captured already): a worktree's and a
    submodule's git folders inside it are looked at the same way, never captured as folders (git
    makes and removes them: a parallel worker's worktree)."""
    try:
        names = sorted(os.listdir(common / rel if rel else common))
    except OSError:
        return
    for name in names:
        sub = f"{rel}/{name}" if rel else name
        if git_writes(name) or (top and name in WATCHED):
            continue
        if name in NESTED_GIT_DIRS and _is_folder(common / sub):
            for child in sorted(_listdir(common / sub)):
                _git_dirs(common, f"{sub}/{child}", found)
            continue
        _walk(common, sub, found)


def _git_dirs(common: Path, rel: str, found: dict[str, Entry]) -> None:
    """``rel`` below `worktrees/` or `modules/`: a git folder (it has a HEAD) looked at for strays,
    a folder of submodules' names (`modules/lib/a`) gone through, anything else captured."""
    path = common / rel
    if not _is_folder(path):
        _walk(common, rel, found)
    elif os.path.lexists(path / "HEAD"):
        _strays(common, rel, found)
    else:
        for child in sorted(_listdir(path)):
            _git_dirs(common, f"{rel}/{child}", found)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


# What for-each-ref reads the refs from, besides the objects they name: the loose refs, the packed
# ones, a reftable's tables, and the config that says which of these the repository uses; a
# worktree's own refs (refs/bisect, refs/worktree) in its git folder.
REF_FILES = ("refs", "packed-refs", "reftable", "config", "config.worktree")
WORKTREE_REF_FILES = ("refs", "config.worktree")


def _ref_files(git_dir: Path, common: Path) -> tuple | None:
    """Every file and folder the refs are read from, with its mode and bytes, sorted; None when any
    cannot be read, or is a link: git reads through one, and what it leads to is nothing this
    print would see change (a branch moved in the folder a link names)."""
    todo = [common / name for name in REF_FILES]
    if git_dir != common:
        todo += [git_dir / name for name in WORKTREE_REF_FILES]
    found = []
    while todo:
        path = todo.pop()
        try:
            st = os.lstat(path)
        except FileNotFoundError:  # absent: one that appears is an entry more
            continue
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            try:
                todo += [path / name for name in os.listdir(path)]
            except OSError:
                return None
            data = b""
        elif stat.S_ISREG(st.st_mode):
            try:
                data = read_plain(path)
            except OSError:
                return None
            if data is None:
                return None
        else:  # a link, a fifo, a socket, a device: git's to read
            return None
        found.append((str(path), st.st_mode, data))
    return tuple(sorted(found))


def _walk(base: Path, rel: str, found: dict[str, Entry]) -> None:
    if rel in GENERATED:
        return
    path = base / rel
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        found[rel] = (stat.S_IFLNK, os.fsencode(os.readlink(path)))
    elif stat.S_ISDIR(st.st_mode):
        found[rel] = (stat.S_IFDIR, b"")
        for child in sorted(os.listdir(path)):
            _walk(base, f"{rel}/{child}", found)
    elif stat.S_ISREG(st.st_mode):
        data = read_plain(path)
        if data is not None:
            found[rel] = (st.st_mode & 0o100777, data)


def read_plain(path: Path) -> bytes | None:
    """The file's bytes, never through a symbolic link; None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


# ---------------------------------------------------------------- writing


def _restore_files(common: Path, want: Mapping[str, Entry], have: Mapping[str, Entry]) -> None:
    # Deepest first, so a folder is emptied before it goes; then what must exist, shallowest first.
    for rel in sorted(set(have) - set(want), key=lambda p: p.count("/"), reverse=True):
        _remove(common / rel)
    for rel in sorted(want, key=lambda p: p.count("/")):
        if have.get(rel) == want[rel]:
            continue
        mode, data = want[rel]
        target = common / rel
        if mode == stat.S_IFDIR:
            if not (target.is_dir() and not target.is_symlink()):
                _remove(target)
                target.mkdir()
        elif mode == stat.S_IFLNK:
            _remove(target)
            os.symlink(os.fsdecode(data), target)
        else:
            _put(target, data, mode)


_SAVED_README = """\
Files Memento found in the repository's git folder (.git/) after an attempt and removed or put
back as they were at the snapshot; each is in found/ under its path below .git/, as found, never
executable. Nothing here is read by git.
"""


def _save_found(want: Mapping[str, Entry], have: Mapping[str, Entry], dest: Path) -> None:
    """A copy of each file or link of ``have`` that :func:`_restore_files` will remove or overwrite
    (a link as a text file naming its target), under ``dest``; nothing when there is none."""
    doomed = sorted(rel for rel, entry in have.items() if want.get(rel) != entry and entry[0] != stat.S_IFDIR)
    if not doomed:
        return
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "README.txt").write_text(_SAVED_README, encoding="utf-8")
    for rel in doomed:
        mode, data = have[rel]
        target = dest / "found" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        body = b"symbolic link to " + data + b"\n" if mode == stat.S_IFLNK else data
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)


def _restore_refs(root: Path, snap: GitState, now: GitState) -> None:
    mine = {snap.branch} | snap.loose  # HEAD's branch: the guards fold the agent's commits on it
    for name in sorted(set(now.refs) - set(snap.refs) - mine):
        run_git(root, ["update-ref", "--no-deref", "-d", name])
    for name, sha in sorted(snap.refs.items()):
        if name not in mine and now.refs.get(name) != sha:
            run_git(root, ["update-ref", "--no-deref", name, sha])


def _remove(path: Path) -> None:
    """Remove a file, a link (never what it points to) or a folder; nothing if absent."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _put(path: Path, data: bytes | None, mode: int) -> None:
    """Write ``data`` at ``path`` by rename (whatever stands there, a link included, is
    replaced, never written through); None removes it."""
    if data is None:
        _remove(path)
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".memento", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        _remove(Path(tmp))
        raise
