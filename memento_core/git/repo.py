"""Where a work tree's repository is, and its HEAD (SPEC §4): asked of git once per process and
folder, read from the disk with no process where git would find the same.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular
from .run import output, run_git


def is_repo(root: Path) -> bool:
    """True if ``root`` is inside a git work tree (asked with :func:`repo_dirs`, whose answer the
    tick's git commands then take without asking again)."""
    if not Path(root).is_dir():
        return False
    try:
        repo_dirs(Path(root))
    except MementoError:
        return False
    return True


def ensure_repo(root: Path) -> bool:
    """Make ``root`` a git repository (branch main) unless it is in one; True if one was made."""
    root = Path(root)
    if is_repo(root):
        return False
    root.mkdir(parents=True, exist_ok=True)
    run_git(root, ["init", "-q", "-b", "main"])
    return True


def head(root: Path) -> str | None:
    """The commit HEAD points to, or None on an unborn branch."""
    known = head_from_files(Path(root))
    if known is not None:
        return known
    proc = run_git(Path(root), ["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False)
    if proc.returncode != 0:
        if not is_repo(Path(root)):
            raise MementoError(f"{root} is not a git repository")
        return None
    return proc.stdout.decode().strip()


def repo_path(root: Path, path: str) -> str:
    """``path`` (from root) as a path from the repository's top level, as trees name it."""
    return repo_dirs(root).prefix + path


def empty_tree(root: Path) -> str:
    """The empty tree's id, the object written to the store (a heartbeat commit points to it; a
    diff from an unborn branch starts at it): one git command per repository and process."""
    root = Path(root).resolve()
    try:  # a repository made again at the same path (another object format, say) is asked again
        config = os.stat(root / ".git" / "config")
        made = (config.st_ino, config.st_ctime_ns)
    except OSError:
        made = (0, 0)
    return _empty_tree_written(str(root), made)


@functools.cache
def _empty_tree_written(root: str, made: tuple[int, int]) -> str:
    return output(Path(root), ["hash-object", "-t", "tree", "-w", "--stdin"], input=b"").strip()


# A branch name git takes as it is: no part starting with a dot, no "..", no ".lock" ending.
_PLAIN_BRANCH = re.compile(r"ref: (refs/heads/(?:[A-Za-z0-9_+=@%-][A-Za-z0-9._+=@%-]*/)*"
                           r"[A-Za-z0-9_+=@%-][A-Za-z0-9._+=@%-]*)\n")


def head_from_files(root: Path) -> str | None:
    """HEAD's commit read as git reads it, with no process, in the common case only: HEAD a
    regular file naming a plain branch (or a commit id), the branch a loose ref (a regular file
    holding one id), the commit a loose object whose header says ``commit``. None for anything
    else (a packed ref, a reftable, a symbolic ref to a symbolic ref, an unborn branch, a
    packed or missing object, an odd name): ``rev-parse --verify HEAD^{commit}`` answers."""
    try:
        dirs = repo_dirs(root)
        data = read_regular(dirs.git_dir / "HEAD", limit=4096)
        width = 64 if dirs.object_format == "sha256" else 40
        named = _PLAIN_BRANCH.fullmatch(data.decode("ascii"))
        if named is not None:
            if named[1].endswith(".lock"):
                return None
            data = read_regular(dirs.common_dir / named[1], limit=4096)
        sha = data.decode("ascii").removesuffix("\n")
        if len(sha) != width or not _HEX.fullmatch(sha):
            return None
        start = zlib.decompressobj().decompress(read_regular(dirs.common_dir / "objects" / sha[:2] / sha[2:],
                                                             limit=64), 16)
    except (OSError, MementoError, UnicodeDecodeError, zlib.error, ValueError):
        return None
    return sha if start.startswith(b"commit ") else None


_HEX = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class RepoDirs:
    """Where a work tree's repository is: its git folder, the common one (they differ in a
    linked worktree) and the top level, all absolute; the folder's path below the top level
    ('' or 'sub/dir/') and the repository's object format (sha1 or sha256)."""

    git_dir: Path
    common_dir: Path
    top: Path
    prefix: str = ""
    object_format: str = "sha1"


_DIRS: dict[str, tuple[RepoDirs, tuple]] = {}


def repo_dirs(root: Path) -> RepoDirs:
    """:class:`RepoDirs` of ``root``: asked of git once per process and folder (one command for
    all of it), then taken again while the disk still shows the same repository there (the same
    git folders and config file, and the same ``.git`` entries from ``root`` up to the top level:
    none made, removed or replaced). MementoError outside a work tree."""
    key = str(Path(root).resolve())
    known = _DIRS.get(key)
    if known is not None and _marks(Path(key), known[0]) == known[1]:
        return known[0]
    plain = _plain_dirs(Path(key))
    if plain is not None:
        _DIRS[key] = (plain, _marks(Path(key), plain))
        return plain
    lines = output(Path(root), ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
                                "--show-toplevel", "--show-object-format", "--show-prefix"]).split("\n")
    if len(lines) < 5 or lines[3] not in ("sha1", "sha256"):
        raise MementoError(f"git rev-parse in {root} answered {lines[:5]!r}")
    dirs = RepoDirs(Path(lines[0]), Path(lines[1]), Path(lines[2]), "\n".join(lines[4:]).removesuffix("\n"),
                    lines[3])
    _DIRS[key] = (dirs, _marks(Path(key), dirs))
    return dirs


# In a repository's config, what could make git find or read it otherwise than _plain_dirs assumes.
_CONFIG_ASIDE = re.compile(rb"include|extensions|worktree|\bbare[ \t]*+(?:=[ \t]*+(?!(?:false|no|off|0)[ \t]*\r?$)|\r?$)"
                           rb"|repositoryformatversion[ \t]*+=[ \t]*+(?!0[ \t]*\r?$)", re.I | re.M)


def _plain_dirs(top: Path) -> RepoDirs | None:
    """:class:`RepoDirs` of ``top`` read from the disk, with no process, in the plainest case
    only (issue 42: each repository was a rev-parse per tick): ``top/.git`` a folder (not a link
    nor a gitfile) owned, as ``top`` is, by this user (git's safe.directory check), holding a
    HEAD that names a branch or a commit, ``objects/`` and ``refs/``, no ``commondir``, and a
    config that sets no include, extension, worktree, bare or repository format version but 0:
    git's own discovery finds it there, the top level, as a sha1 repository. None: git is asked."""
    dot = top / ".git"
    try:
        st, st_top, uid = os.lstat(dot), os.stat(top), os.geteuid()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st_top.st_uid != uid:
            return None
        if os.path.lexists(dot / "commondir") or not (os.path.isdir(dot / "objects") and os.path.isdir(dot / "refs")):
            return None
        head_text = read_regular(dot / "HEAD", limit=4096)
        if not (head_text.startswith(b"ref: refs/") or re.fullmatch(rb"[0-9a-f]{40}\n?", head_text)):
            return None
        if _CONFIG_ASIDE.search(read_regular(dot / "config", limit=1 << 16)):
            return None
    except (OSError, ValueError):
        return None
    return RepoDirs(dot, dot, top, "", "sha1")


def _marks(root: Path, dirs: RepoDirs) -> tuple:
    """What must stay as it is for ``dirs`` to hold: the git folders' identities and every
    ``.git`` entry from ``root`` up to the top level (its identity, and a gitfile's contents)."""
    marks: list = []
    for folder in (dirs.git_dir, dirs.common_dir):
        try:
            st = os.stat(folder)
            marks.append((st.st_dev, st.st_ino))
        except OSError:
            marks.append(None)
    try:  # a repository made again in the same place (another object format) has a new config
        st = os.stat(dirs.common_dir / "config")
        marks.append((st.st_ino, st.st_ctime_ns))
    except OSError:
        marks.append(None)
    at = root
    while True:
        entry = at / ".git"
        try:
            st = os.lstat(entry)
            marks.append((st.st_dev, st.st_ino, st.st_mode,
                          entry.read_bytes() if stat.S_ISREG(st.st_mode) and st.st_size < 4096 else b""))
        except OSError:
            marks.append(None)
        if at == dirs.top or at.parent == at:
            break
        at = at.parent
    return tuple(marks)
