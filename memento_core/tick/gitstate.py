"""Git's own state, which no guard on the work tree sees (SPEC §13): captured at step 8, restored after.

An agent running unconfined can write `.git/config` (hooks path, fsmonitor,
filters), `.git/info/exclude` (hide a file), `.git/hooks/`, and move or delete
any ref: branches, tags, the stash, HEAD itself. :func:`capture` records all
of that as values before the agent runs; after it (and after verify)
:func:`restore` puts back whatever differs. guards.git_damage says what
changed (any change is a failure); this module only reads and writes.

The real index is captured too but is not compared: an agent's `git add` is
harmless, yet the index is put back as it was so no `assume-unchanged` or
`skip-worktree` flag, nor anything the agent staged, stays behind.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import gitops

# Below the common git directory: what configures git, and what hides files from it.
WATCHED = ("config", "info", "hooks", "objects/info/alternates")
# Written by git itself (`update-server-info`, which `git gc` and `repack` run): not the agent's.
GENERATED = frozenset({"info/refs"})
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

    @property
    def branch(self) -> str | None:
        """The branch HEAD names (its moves are the agent's commits, folded by the guards)."""
        return self.head[5:] if self.head.startswith("ref: ") else None


def capture(root: Path) -> GitState:
    """Read HEAD, the refs, the watched files, the index and the stash's reflog."""
    root = Path(root)
    git_dir, common = _dirs(root)
    return GitState(
        head=_head(root), refs=_refs(root), files=_files(common),
        git_dir=str(git_dir), common_dir=str(common),
        index=_read(git_dir / "index"), stash_log=_read(common / STASH_LOG),
    )


def restore(root: Path, snap: GitState, now: GitState | None = None) -> None:
    """Make `.git/` agree with ``snap`` again: files, refs (but HEAD's branch), HEAD, index, stash."""
    root = Path(root)
    now = now or capture(root)
    common, git_dir = Path(snap.common_dir), Path(snap.git_dir)
    for name in LOCKS:
        for folder in {git_dir, common}:
            _remove(folder / name)
    _restore_files(common, snap.files, now.files)
    _restore_refs(root, snap, now)
    if now.head != snap.head:
        if snap.branch:
            gitops.run_git(root, ["symbolic-ref", "HEAD", snap.branch])
        else:
            gitops.run_git(root, ["update-ref", "--no-deref", "HEAD", snap.head])
    if _read(common / STASH_LOG) != snap.stash_log:
        _put(common / STASH_LOG, snap.stash_log, 0o100644)
    if _read(git_dir / "index") != snap.index:
        _put(git_dir / "index", snap.index, 0o100644)


def put_back(root: Path, snap: GitState | None) -> GitState | None:
    """Capture what is there now, restore ``snap`` over it; returns what was found (None without a snapshot)."""
    if snap is None:
        return None
    now = capture(root)
    restore(root, snap, now)
    return now


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
    """Whether ``rel`` names a WATCHED path or one below it (no `..`, nothing absolute)."""
    parts = rel.split("/")
    return ".." not in parts and "" not in parts and any(rel == w or rel.startswith(w + "/") for w in WATCHED)


# ---------------------------------------------------------------- reading


def _dirs(root: Path) -> tuple[Path, Path]:
    dirs = gitops.repo_dirs(root)
    return dirs.git_dir, dirs.common_dir


def _head(root: Path) -> str:
    proc = gitops.run_git(root, ["symbolic-ref", "-q", "HEAD"], check=False)
    if proc.returncode == 0:
        return "ref: " + proc.stdout.decode("utf-8", "surrogateescape").strip()
    proc = gitops.run_git(root, ["rev-parse", "-q", "--verify", "HEAD"], check=False)
    return proc.stdout.decode().strip()


# Remote-tracking refs move whenever something fetches (an editor's auto-fetch, say) and
# are fetched again at will: neither compared nor restored.
UNWATCHED_REFS = ("refs/remotes/",)


def watched_refs(root: Path) -> dict[str, str]:
    """Every ref the guards watch (not refs/remotes/) and its object, as they are now."""
    return _refs(root)


def _refs(root: Path) -> dict[str, str]:
    out = gitops.run_git(root, ["for-each-ref", "--format=%(objectname) %(refname)"]).stdout
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
    return found


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
        data = _read(path)
        if data is not None:
            found[rel] = (st.st_mode & 0o100777, data)


def _read(path: Path) -> bytes | None:
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


def _restore_refs(root: Path, snap: GitState, now: GitState) -> None:
    mine = {snap.branch}  # HEAD's branch: the guards fold the agent's commits on it
    for name in sorted(set(now.refs) - set(snap.refs) - mine):
        gitops.run_git(root, ["update-ref", "--no-deref", "-d", name])
    for name, sha in sorted(snap.refs.items()):
        if name not in mine and now.refs.get(name) != sha:
            gitops.run_git(root, ["update-ref", "--no-deref", name, sha])


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
