"""Git operations of a tick: snapshot, changes, commit, fold, rollback (SPEC §4).

Plain ``git`` subprocesses, no GitPython: nothing stays alive after a call.
The git binary is resolved to an absolute path once (cron's PATH is minimal),
prompts are disabled, output is parsed from ``-z`` formats so any file name
(spaces, newlines, unicode) round-trips, and pathspecs are literal so a file
named ``*.py`` is that file and not a glob.

All paths are relative to ``root`` with forward slashes. ``root`` is usually
the repository's top level; a workspace in a subdirectory of a larger
repository works too (its paths are relative to that subdirectory).

Memento's commits are made with plumbing (HEAD's trees edited in memory and written with the
commit by one ``unpack-objects``, gitobjects.commit_here, which the tick and memory pass in;
else a temporary index,
``write-tree``, ``commit-tree``; then ``update-ref``): exactly the given paths are committed,
whatever else is staged, and the project's commit hooks do not run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import gitindex, scratch
from .config.model import parse_author
from .crashpoints import crash_point
from .errors import MementoError
from .lines import read_regular
from .runlog import utc_stamp

MEMENTO_NAME = "Memento"
MEMENTO_EMAIL = "memento@localhost"

# Pathspec argument lists are cut into batches so no command line gets near ARG_MAX.
_BATCH = 500

# Variables that would point git at another repository or index than root's.
# Variables that aim git at another repository, index or object store (the confined agent's
# private index and objects among them: sandbox/gitindex.py): never in Memento's own git.
_REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
             "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")

# Every git command Memento runs, whatever the repository's config says (SPEC §13): no
# hook (commit-tree, update-ref's reference-transaction, checkout's post-checkout), no
# fsmonitor daemon, no untracked cache or ignoreStat that could hide a file, no signing
# program. The agent could have set any of these with `git config`.
HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.ignoreStat=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
)


@dataclass(frozen=True)
class StatusEntry:
    """One line of ``git status --porcelain``: XY code, path, and the source of a rename."""

    xy: str
    path: str
    orig: str | None = None


@dataclass(frozen=True)
class FileChange:
    """A path the work changed since the snapshot.

    kind: "modified" (tracked, content differs from base), "added" (tracked
    now, absent at base), "deleted" (present at base, gone now), "created"
    (untracked, not there at the snapshot). ``was_untracked`` marks an
    "added" file that existed untracked at the snapshot (the agent staged a
    person's file): rollback unstages it but never deletes it. ``scratch``
    marks a "created" file that a tool regenerates (scratch.py: ``x.pyc.123``,
    a ``__pycache__/`` the ``.gitignore`` says nothing of): never a task's
    change (guards.task_change), still undone by a rollback. (An "added" one
    comes only from the agent's own commits, a guard failure before verify.)
    """

    path: str
    added: int
    removed: int
    kind: str
    was_untracked: bool = False
    scratch: bool = False


@functools.cache
def git_binary() -> str:
    """Absolute path of git, resolved once; MementoError if git is not installed."""
    found = shutil.which("git")
    if not found:
        for candidate in (
            "/usr/bin/git",
            "/usr/local/bin/git",
            "/opt/homebrew/bin/git",
            "/bin/git",
        ):
            if os.access(candidate, os.X_OK):
                found = candidate
                break
    if not found:
        raise MementoError(
            "git is not installed (not found on PATH nor in /usr/bin, /usr/local/bin)"
        )
    return os.path.abspath(found)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment git runs with: never prompts, C locale, literal pathspecs, no optional locks."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LITERAL_PATHSPECS"] = "1"
    env["GIT_OPTIONAL_LOCKS"] = "0"  # status never takes index.lock from under an agent
    env["LC_ALL"] = "C"
    env.setdefault("GIT_ASKPASS", "")
    if extra:
        env.update(extra)
    return env


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command in ``root`` the way all of Memento's are run (hardened, no prompt)."""
    try:
        proc = subprocess.run(
            [git_binary(), *HARDENING, "-C", str(root), *args],
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=env or git_env(),
        )
    except OSError as exc:
        raise MementoError(f"could not run git: {exc}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise MementoError(f"git {args[0]} failed in {root}: {err}")
    return proc


def _out(root: Path, args: Sequence[str], **kw) -> str:
    return run_git(root, args, **kw).stdout.decode("utf-8", "surrogateescape")


def _batches(paths: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(paths), _BATCH):
        yield list(paths[i : i + _BATCH])


def _nul_paths(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _split_z(data: str) -> list[str]:
    parts = data.split("\0")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


# ---------------------------------------------------------------- repository


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


def remote_said(out: str, *, any_rejection: bool = False) -> str:
    """What a remote said when it refused a push (``out``: git push's stdout and stderr): its
    ``remote:`` lines, then git's reason for each ``[remote rejected]`` ref (``any_rejection``: also
    git's own ``[rejected]``, a lease or fast-forward check), joined with "; "; '' when it said nothing."""
    said = [line[len("remote:"):].strip() for line in out.splitlines() if line.startswith("remote:")]
    said = [s for s in said if s]
    pattern = r"\[(?:remote )?rejected\] \(([^)]*)\)" if any_rejection else r"\[remote rejected\] \(([^)]*)\)"
    reasons = sorted(set(re.findall(pattern, out)))
    return "; ".join(said + [f"({r})" for r in reasons])


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


def _prefix(root: Path) -> str:
    """Path of root below the repository top level ('' at the top level, else 'sub/dir/')."""
    return repo_dirs(root).prefix


def repo_path(root: Path, path: str) -> str:
    """``path`` (from root) as a path from the repository's top level, as trees name it."""
    return _prefix(root) + path


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
    return _out(Path(root), ["hash-object", "-t", "tree", "-w", "--stdin"], input=b"").strip()


# -------------------------------------------------------------------- status


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
    lines = _out(Path(root), ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
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


@contextmanager
def scrubbed_index(root: Path, refresh: bool = True) -> Iterator[dict[str, str]]:
    """The environment of a private index holding the real index's entries and nothing else.

    Every entry (path, mode, blob, stage) is copied, so what is staged stays staged;
    their stat data and flags are not, so ``update-index --assume-unchanged`` or
    ``--skip-worktree`` and a forged stat hide no change: every tracked file is
    hashed again. The real index is only read: by :func:`_scrubbed_copy` when it is a plain
    one, else by git (``ls-files --stage`` into ``update-index --index-info``).
    ``refresh``: the copy's stat data is filled in first (``update-index --refresh``), for
    several commands in a row; without it one ``git status``, which refreshes what it reads
    itself, or an ``ls-files`` of what is not tracked (no stat data read) costs one process.
    """
    dirs = repo_dirs(root)
    git_dir, top = str(dirs.git_dir), dirs.top
    fd, tmp_index = tempfile.mkstemp(prefix="memento-scrubbed-index.", dir=git_dir)
    os.close(fd)
    os.unlink(tmp_index)  # a missing index file is an empty index; an empty file is not
    try:
        env = git_env({"GIT_INDEX_FILE": tmp_index, "GIT_OPTIONAL_LOCKS": "1"})
        copied = _scrubbed_copy(dirs.git_dir / "index", dirs.object_format)
        if copied is None:  # not a plain index (split, sparse, odd): git copies the entries itself
            entries = run_git(top, ["ls-files", "--stage", "-z"], check=False).stdout
            run_git(top, ["update-index", "-z", "--index-info"], input=entries, env=env)
        elif copied:
            with open(tmp_index, "xb") as fh:  # private: the name mkstemp chose (and unlinked) above
                fh.write(copied)
        if refresh:
            run_git(top, ["update-index", "-q", "--refresh"], env=env, check=False)
        env["GIT_OPTIONAL_LOCKS"] = "0"
        yield env
    finally:
        _remove_index(tmp_index)


def _scrubbed_copy(index: Path, fmt: str) -> bytes | None:
    """The private index's bytes made from the real ``index`` of a repository of object format
    ``fmt`` (gitindex.scrubbed; b'' when there is none: the copy
    stays missing, an empty index); None when git must make it: not a plain index, or not a
    regular file (a link, a FIFO: never followed nor waited on here)."""
    try:
        data = read_regular(index)
    except FileNotFoundError:
        return b""
    except OSError:  # NotAFile among them
        return None
    return gitindex.scrubbed(data, fmt)


def _remove_index(tmp_index: str) -> None:
    """A private index file and its lock, gone (either may be missing)."""
    for leftover in (tmp_index, tmp_index + ".lock"):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass



def status(root: Path, env: dict[str, str] | None = None) -> list[StatusEntry]:
    """``git status --porcelain=v1 -z --untracked-files=all`` below root, parsed.

    Run on a scrubbed copy of the index (:func:`scrubbed_index`) unless ``env`` names one.
    """
    root = Path(root)
    if env is None:  # one command: git status hashes what the copy's stat data cannot vouch for
        with scrubbed_index(root, refresh=False) as env:
            return status(root, env)
    prefix = _prefix(root)
    data = _out(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", "."], env=env)
    fields = _split_z(data)
    entries: list[StatusEntry] = []
    i = 0
    while i < len(fields):
        item = fields[i]
        xy, path = item[:2], item[3:]
        orig = None
        if "R" in xy or "C" in xy:
            i += 1
            orig = _strip_prefix(fields[i], prefix)
        entries.append(StatusEntry(xy, _strip_prefix(path, prefix), orig))
        i += 1
    return entries


def changed_from_head(root: Path, paths: Sequence[str]) -> list[str]:
    """Those of ``paths`` (files, from root) that HEAD has and the work tree changed, lost or
    made something other than a regular file, sorted; a path HEAD lacks is left out, as an
    untracked one. One or two git commands for a few paths: HEAD's blobs from ``ls-tree``, and
    for a file whose bytes are not the committed blob's, ``hash-object`` (with the filters status
    would apply; a file whose bytes are the blob's did not change, whatever a filter would say). No
    index is read, so no stat data or index flag hides a change; the executable bit is not
    compared (``core.fileMode``)."""
    root = Path(root)
    proc = run_git(root, ["ls-tree", "-z", "HEAD", "--", *paths], check=False)
    if proc.returncode != 0:
        return []  # an unborn branch: nothing is committed to differ from
    committed: dict[str, str] = {}
    for item in proc.stdout.split(b"\0"):
        info, _, name = item.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[1] == b"blob":
            committed[os.fsdecode(name)] = fields[2].decode()
    changed, present = [], []
    for path in committed:
        try:
            st = os.lstat(root / path)
        except (FileNotFoundError, NotADirectoryError):
            changed.append(path)
            continue
        if not stat.S_ISREG(st.st_mode):
            changed.append(path)
        elif not _same_bytes(root / path, st.st_size, committed[path]):
            present.append(path)
    for batch in _batches(present):
        shas = _out(root, ["hash-object", "--", *batch]).split()
        changed += [p for p, sha in zip(batch, shas, strict=True) if sha != committed[p]]
    return sorted(changed)


def object_id(fmt: str, kind: str, data: bytes) -> str:
    """The id git gives an object of ``kind`` holding ``data`` (``fmt``: sha1 or sha256)."""
    return hashlib.new(fmt, f"{kind} {len(data)}\0".encode() + data).hexdigest()


_FORMATS = {40: "sha1", 64: "sha256"}  # an id's length in hex -> its repository's object format


def _same_bytes(path: Path, size: int, blob: str) -> bool:
    """Whether the file holds the very bytes of the committed ``blob`` (hashed here, as git
    hashes a blob: no process for a file that did not change). A file that differs is left to
    ``hash-object``, whose filters may still find it the same."""
    if size > 1 << 20 or len(blob) not in _FORMATS:
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return object_id(_FORMATS[len(blob)], "blob", data) == blob


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def untracked(root: Path, env: dict[str, str] | None = None) -> set[str]:
    """Untracked (not ignored) files below root, one by one."""
    return {e.path for e in status(root, env) if e.xy == "??"}


def ignored(root: Path, env: dict[str, str] | None = None) -> set[str]:
    """Ignored paths below root, a folder ignored as a whole as one entry ending in / (a ``.venv/``
    is one path, never its thousands of files)."""
    root = Path(root)
    if env is None:
        with scrubbed_index(root, refresh=False) as env:
            return ignored(root, env)
    data = _out(root, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", "."],
                env=env)
    found = sorted(set(_split_z(data)))  # what a folder holds sorts right after it
    # --directory also names each folder that holds only ignored things (``calc/`` for its
    # ``calc/__pycache__/``) beside those things: such a folder is not ignored itself, and taking
    # it whole would make a package the person's after verify left a cache in it.
    return {p for i, p in enumerate(found)
            if not (p.endswith("/") and i + 1 < len(found) and found[i + 1].startswith(p))}


def persons_paths(root: Path) -> set[str]:
    """What a person has here that git does not track: the untracked files and the ignored paths
    (SPEC §13: a ``.env``, a ``.venv/``), all kept as they are by the tick (see ``was_there``)."""
    root = Path(root)
    with scrubbed_index(root, refresh=False) as env:  # what is not tracked: no stat data is read
        return untracked(root, env) | ignored(root, env)


def tracked(root: Path) -> list[str]:
    """``git ls-files -z -- .`` in ``root``: the tracked paths below it (from root). Read from a
    plain index here, with no process (gitindex.paths); any other index is left to git."""
    root = Path(root)
    try:
        dirs = repo_dirs(root)
        found = gitindex.paths(read_regular(dirs.git_dir / "index"), dirs.object_format)
    except FileNotFoundError:
        found = []
    except (OSError, MementoError):
        found = None
    if found is None:
        proc = run_git(root, ["ls-files", "-z", "--", "."], check=False)
        return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    prefix = os.fsencode(dirs.prefix)
    return [os.fsdecode(p[len(prefix):]) for p in found if p.startswith(prefix)]


def was_there(path: str, before: set[str] | frozenset[str]) -> bool:
    """Whether ``path`` is one of ``before`` or inside one of its folders (entries ending in /)."""
    if path in before:
        return True
    return any(path.startswith(p) for p in before if p.endswith("/"))


def dirty_paths(root: Path, ignore: Callable[[str], bool] | None = None) -> list[str]:
    """Paths with any change (staged, unstaged, untracked), minus those ``ignore`` accepts; sorted."""
    paths: set[str] = set()
    for e in status(root):
        paths.add(e.path)
        if e.orig:
            paths.add(e.orig)
    return sorted(p for p in paths if not (ignore and ignore(p)))


# ------------------------------------------------------------------- changes


def _count_lines(path: Path) -> tuple[int, int]:
    """Lines of a new file as (added, 0); binary files count 0."""
    try:
        if path.is_symlink():
            return 1, 0
        lines = 0
        last = b"\n"
        with open(path, "rb") as fh:
            first = True
            while chunk := fh.read(1 << 16):
                if first and b"\0" in chunk[:8000]:
                    return 0, 0
                first = False
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        return lines + (0 if last == b"\n" else 1), 0
    except OSError:
        return 0, 0


_KIND = {"M": "modified", "T": "modified", "A": "added", "D": "deleted"}


def changes_since(root: Path, base: str | None, untracked_before: set[str]) -> list[FileChange]:
    """Every change below root since the snapshot (``base`` commit + untracked set).

    Tracked: the work tree against ``base`` (commits made since base count,
    as does the index). Untracked: files not in ``untracked_before`` (nor in
    one of its folders, entries ending in /: ``persons_paths``), as
    "created" with all their lines added (binary files 0/0). Sorted by path.
    """
    root = Path(root)
    with scrubbed_index(root, refresh=False) as env:
        return _changes_since(root, base, untracked_before, env)


def _changes_since(root: Path, base: str | None, untracked_before: set[str], env: dict[str, str]) -> list[FileChange]:
    # The status first, allowed to write the copy's stat data it refreshed (the copy is private:
    # no one else's lock): the diff after it then hashes nothing again, and no update-index
    # --refresh runs before them.
    now_untracked = untracked(root, {**env, "GIT_OPTIONAL_LOCKS": "1"})
    tree = base or empty_tree(root)
    data = _out(
        root,
        [
            "diff",
            "--raw",
            "--numstat",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--relative",
            "--ignore-submodules=none",
            tree,
            "--",
        ],
        env=env,
    )
    kinds: dict[str, str] = {}
    counts: dict[str, tuple[int, int]] = {}
    unsure: list[str] = []  # counted as binary by git: by their bytes, or by an attribute (``*.py binary``)
    fields = _split_z(data)
    i = 0
    while i < len(fields):
        item = fields[i]
        if item.startswith(":"):
            letter = item.split()[-1][:1]
            kinds[fields[i + 1]] = _KIND.get(letter, "modified")
            i += 2
            continue
        added, removed, path = item.split("\t", 2)
        counts[path] = (
            int(added) if added.isdigit() else 0,
            int(removed) if removed.isdigit() else 0,
        )
        if added == "-":
            unsure.append(path)
        i += 1
    counts.update(_text_counts(root, tree, unsure, env))
    result = [
        FileChange(
            path,
            *counts.get(path, (0, 0)),
            kind,
            was_untracked=kind == "added" and was_there(path, untracked_before),
        )
        for path, kind in kinds.items()
    ]
    folders = tuple(p for p in untracked_before if p.endswith("/"))
    for path in now_untracked - untracked_before - kinds.keys():
        if not path.startswith(folders):  # a folder a person had ignored (a .venv/) that is not any more
            made = scratch.is_scratch(root, path)
            result.append(FileChange(path, *((0, 0) if made else _count_lines(root / path)), "created",
                                     scratch=made))
    return sorted(result, key=lambda c: c.path)


def _looks_binary(data: bytes | None) -> bool:
    """git's own test of a file's bytes: a NUL among the first 8,000."""
    return data is not None and b"\0" in data[:8000]


def _head_bytes(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, 8000) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


def _text_counts(root: Path, tree: str, paths: list[str], env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Real line counts of the files numstat called binary whose bytes are text: the project's
    ``.gitattributes`` (``binary``, ``-diff``) must not make a 600-line rewrite "0 lines" (SPEC §13).
    numstat ignores ``--text``; the patch does not, so its lines are counted."""
    counts: dict[str, tuple[int, int]] = {}
    for path in paths:
        now = _head_bytes(root / path)
        old = show_file(root, tree, _prefix(root) + path) if now is None else None
        if _looks_binary(now if now is not None else old):
            continue
        patch = run_git(root, ["diff", "--text", "--no-textconv", "--no-ext-diff", "--no-color", "-U0",
                               "--relative", tree, "--", path], env=env).stdout
        body = patch.split(b"\n@@", 1)[1] if b"\n@@" in patch else b""
        lines = body.split(b"\n")
        counts[path] = (sum(1 for ln in lines if ln.startswith(b"+")),
                        sum(1 for ln in lines if ln.startswith(b"-")))
    return counts


# ------------------------------------------------------------------ identity


def _user_config(root: Path) -> tuple[str, str]:
    """user.name and user.email from git config ('' when unset)."""
    proc = run_git(root, ["config", "-z", "--get-regexp", r"^user\.(name|email)$"], check=False)
    values: dict[str, str] = {}
    for item in _split_z(proc.stdout.decode("utf-8", "replace")):
        key, _, value = item.partition("\n")
        values[key] = value.strip()
    return values.get("user.name", ""), values.get("user.email", "")


def identity_env(root: Path, configured: str = "") -> dict[str, str]:
    """GIT_AUTHOR_*/GIT_COMMITTER_* for Memento's commits.

    ``configured`` ("Name <email>", from memento.toml) wins; else the user's
    identity (GIT_AUTHOR_* / GIT_COMMITTER_* variables, then git config
    user.name and user.email); else Memento <memento@localhost>.
    """
    if configured.strip():
        parsed = parse_author(configured)
        if parsed is None:
            raise MementoError(f'git author must look like "Name <email>", got {configured!r}')
        name, email = parsed
        return {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }
    root = Path(root)
    cfg_name: str | None = None
    cfg_email: str | None = None

    def from_config() -> tuple[str, str]:
        nonlocal cfg_name, cfg_email
        if cfg_name is None:
            cfg_name, cfg_email = _user_config(root)
        return cfg_name, cfg_email or ""

    def who(role: str) -> tuple[str, str]:
        name = os.environ.get(f"GIT_{role}_NAME", "").strip()
        email = os.environ.get(f"GIT_{role}_EMAIL", "").strip()
        if not name or not email:
            c_name, c_email = from_config()
            name = name or c_name
            email = email or c_email or os.environ.get("EMAIL", "").strip()
        if name and email:
            return name, email
        return MEMENTO_NAME, MEMENTO_EMAIL

    a_name, a_email = who("AUTHOR")
    c_name, c_email = who("COMMITTER")
    return {
        "GIT_AUTHOR_NAME": a_name,
        "GIT_AUTHOR_EMAIL": a_email,
        "GIT_COMMITTER_NAME": c_name,
        "GIT_COMMITTER_EMAIL": c_email,
    }


# -------------------------------------------------------------------- commit


def _commit_base(root: Path) -> tuple[Path, str | None, str | None]:
    """(git dir, HEAD commit, HEAD tree) in one call; None, None on an unborn branch."""
    proc = run_git(
        root, ["rev-parse", "--absolute-git-dir", "HEAD^{commit}", "HEAD^{tree}"], check=False
    )
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode == 0 and len(lines) == 3:
        return Path(lines[0]), lines[1], lines[2]
    if lines and os.path.isabs(lines[0]) and head(root) is None:
        return Path(lines[0]), None, None
    err = proc.stderr.decode("utf-8", "replace").strip()
    raise MementoError(f"git rev-parse failed in {root}: {err}")


def _expand_dirs(root: Path, paths: list[str]) -> list[str]:
    """Folders in ``paths`` replaced by the files git knows or would add below them."""
    dirs = [p for p in paths if (root / p).is_dir() and not (root / p).is_symlink()]
    if not dirs:
        return paths
    files = set(paths) - set(dirs)
    for batch in _batches(dirs):
        data = _out(
            root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *batch]
        )
        files.update(_split_z(data))
    return sorted(files)


ZERO_OID = "0" * 40
# (mode, blob id) of a file as it was hashed; GONE for a path that was not there.
Blob = tuple[str, str]
GONE: Blob = ("0", ZERO_OID)


def entry_kind(path: Path) -> tuple[str, os.stat_result | None]:
    """What stands at ``path``, never followed: ``gone``, ``link``, ``file`` (regular) or ``other``
    (a folder, a FIFO…), with its lstat (None when gone)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "gone", None
    return ("link" if stat.S_ISLNK(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"), st


def hash_blobs(root: Path, paths: Iterable[str], *, write: bool = True) -> dict[str, Blob]:
    """Each path's (mode, blob id) as it is now, the blob written into the object store
    (``git hash-object -w``), so a commit can be made of exactly these contents later
    whatever happens to the files meanwhile. A path that is gone is GONE; a folder is left out.
    ``write=False``: only the ids, to compare (the raw bytes hashed here as git hashes them
    with ``--no-filters``: no process), git's way for a file too big to read at once.
    """
    root = Path(root)
    if not write:
        known = _blob_ids(root, paths)
        if known is not None:
            return known
    blobs: dict[str, Blob] = {}
    files: list[str] = []
    modes: dict[str, str] = {}
    for path in sorted(set(paths)):
        kind, st = entry_kind(root / path)
        if kind == "gone":
            blobs[path] = GONE
        elif kind == "link":
            target = os.fsencode(os.readlink(root / path))
            blobs[path] = ("120000", _out(root, ["hash-object", "-w", "--no-filters", "--stdin"],
                                          input=target).strip())
        elif kind == "file":
            files.append(path)
            modes[path] = "100755" if st.st_mode & stat.S_IXUSR else "100644"
    for batch in _batches(files):
        # --no-filters: the bytes verify ran, whatever the agent's .gitattributes says (SPEC §13:
        # a working-tree-encoding or an eol conversion would commit something else).
        oids = _out(root, ["hash-object", "-w", "--no-filters", "--", *batch]).split()
        blobs.update({path: (modes[path], oid) for path, oid in zip(batch, oids, strict=True)})
    return blobs


def _blob_ids(root: Path, paths: Iterable[str]) -> dict[str, Blob] | None:
    """:func:`hash_blobs`' answer without writing, computed here; None when git must (a file
    over 64 MiB, one that is not a regular file any more when read)."""
    fmt = repo_dirs(root).object_format
    blobs: dict[str, Blob] = {}
    for path in sorted(set(paths)):
        kind, st = entry_kind(root / path)
        try:
            if kind == "gone":
                blobs[path] = GONE
            elif kind == "link":
                blobs[path] = ("120000", object_id(fmt, "blob", os.fsencode(os.readlink(root / path))))
            elif kind == "file":
                if st.st_size > 64 << 20:
                    return None
                mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
                blobs[path] = (mode, object_id(fmt, "blob", read_regular(root / path)))
        except OSError:
            return None
    return blobs


def _index_info(prefix: str, blobs: dict[str, Blob], width: int = 40) -> bytes:
    """``update-index --index-info`` lines (their paths are from the top level, hence ``prefix``;
    ``width``: the repository's ids' length, which a removal's zero id must have)."""
    return b"".join(f"{mode} {'0' * width if (mode, oid) == GONE else oid} 0\t".encode()
                    + os.fsencode(prefix + path) + b"\0" for path, (mode, oid) in sorted(blobs.items()))


def commit_paths(root: Path, paths: Iterable[str], message: str, author: str = "",
                 blobs: dict[str, Blob] | None = None, build: Callable | None = None) -> str:
    """Commit exactly ``paths`` as they are in the work tree; returns the new commit's sha.

    New, modified and deleted files are all recorded; other staged or dirty
    files are neither committed nor unstaged; listed paths that did not
    change are fine; a folder stands for the files below it that git
    tracks or would add (.gitignore applies). Works on an unborn branch.
    Commit hooks do not run. ``blobs`` (from :func:`hash_blobs`): those paths are
    committed as they were when hashed, not as they are now.
    Raises MementoError (with git's message) on failure, including when
    the commit would change nothing. ``build``: see :func:`make_commit`.
    """
    made = make_commit(root, paths, message, author, blobs, build)
    crash_point("commit:before-ref")
    if not adopt_commit(root, made):
        raise MementoError(f"HEAD moved in {root} while {made.subject!r} was being committed")
    return made.sha


@dataclass(frozen=True)
class MadeCommit:
    """A commit on HEAD's parent made but not yet HEAD (:func:`make_commit`): its sha, the HEAD it
    was made on (None on an unborn branch), its subject and the paths it committed."""

    sha: str
    parent: str | None
    subject: str
    paths: tuple[str, ...]


def make_commit(root: Path, paths: Iterable[str], message: str, author: str = "",
                blobs: dict[str, Blob] | None = None, build: Callable | None = None) -> MadeCommit:
    """The commit :func:`commit_paths` makes, written to the object store only: no ref moves and
    the index is untouched, so a commit that must first win a push (a fleet's claim) has nothing
    to undo when it loses. :func:`adopt_commit` makes it HEAD. ``build`` (gitobjects.commit_here,
    which the callers above this module pass: it builds on this one) makes the commit first,
    in fewer git commands; when it declines (None), git's own temporary index does."""
    root = Path(root)
    blobs = blobs or {}
    paths = _expand_dirs(root, sorted({p.rstrip("/") for p in [*paths, *blobs] if p}))
    ident = identity_env(root, author)
    made = build(root, paths, message, ident, blobs) if build is not None else None
    if made is not None:  # the common case, in three git commands (objects built here)
        return made
    git_dir, parent, parent_tree = _commit_base(root)
    fd, tmp_index = tempfile.mkstemp(prefix="memento-index.", dir=git_dir)
    os.close(fd)
    try:
        env = git_env({"GIT_INDEX_FILE": tmp_index})
        if parent:
            run_git(root, ["read-tree", parent], env=env)
        else:
            run_git(root, ["read-tree", "--empty"], env=env)
        from_disk = [p for p in paths if p not in blobs]
        if from_disk:
            run_git(
                root,
                ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
                input=_nul_paths(from_disk),
                env=env,
            )
        if blobs:
            run_git(root, ["update-index", "--replace", "-z", "--index-info"],
                    input=_index_info(_prefix(root), blobs, len(empty_tree(root))), env=env)
        tree = _out(root, ["write-tree"], env=env).strip()
    finally:
        _remove_index(tmp_index)
    if parent_tree is None:
        parent_tree = empty_tree(root)
    if tree == parent_tree:
        raise MementoError(
            f"nothing to commit for {message.splitlines()[0] if message else 'commit'!r}"
        )
    body = message if message.endswith("\n") else message + "\n"
    args = ["commit-tree", tree, "-F", "-"]
    if parent:
        args[2:2] = ["-p", parent]
    sha = _out(root, args, input=body.encode("utf-8"), env=git_env(ident)).strip()
    return MadeCommit(sha, parent, message.splitlines()[0] if message else "", tuple(paths))


def adopt_commit(root: Path, made: MadeCommit) -> bool:
    """HEAD moved to ``made`` (compared: only from the HEAD it was made on) and the real index made
    to agree with it for its paths only; False, and nothing changed, when HEAD has moved since."""
    root = Path(root)
    if run_git(root, ["update-ref", "-m", f"commit: {made.subject}", "HEAD", made.sha, made.parent or ""],
               check=False).returncode != 0:
        if head(root) != made.parent:
            return False
        raise MementoError(f"git update-ref HEAD {made.sha} failed in {root}")
    crash_point("commit:before-index")
    if made.paths:
        run_git(
            root,
            ["reset", "-q", made.sha, "--pathspec-from-file=-", "--pathspec-file-nul"],
            input=_nul_paths(made.paths),
        )
    return True


def amend_paths(root: Path, paths: Iterable[str], author: str = "", *, onto: str | None = None,
                build: Callable | None = None) -> str | None:
    """Fold ``paths`` as they are in the work tree into HEAD's commit (the same parents and
    message): the new commit's sha. Only for a commit nothing else has seen yet (the tick's own,
    under its lock, before any push). Raises MementoError when HEAD has no commit. ``onto``:
    only when HEAD is that commit (None, nothing changed, when it is not). ``build``
    (gitobjects.commit_here) makes the commit in fewer git commands, as for make_commit."""
    root = Path(root)
    paths = _expand_dirs(root, sorted({p.rstrip("/") for p in paths if p}))
    made = build(root, paths, "", identity_env(root, author), {}, amend=True) if build is not None else None
    if made is not None:
        if onto is not None and made.parent != onto:
            return None
        # HEAD compared as it moves: a HEAD moved since it was read is never replaced.
        if run_git(root, ["update-ref", "-m", "amend: the tick's documents", "HEAD", made.sha, made.parent],
                   check=False).returncode != 0:
            if onto is not None and head(root) != onto:
                return None
            raise MementoError(f"git update-ref HEAD {made.sha} failed in {root}")
        if paths:
            run_git(root, ["reset", "-q", made.sha, "--pathspec-from-file=-", "--pathspec-file-nul"],
                    input=_nul_paths(paths))
        return made.sha
    git_dir, old, _ = _commit_base(root)
    if old is None:
        raise MementoError("nothing to amend: the branch has no commit yet")
    if onto is not None and old != onto:
        return None
    fd, tmp_index = tempfile.mkstemp(prefix="memento-index.", dir=git_dir)
    os.close(fd)
    try:
        env = git_env({"GIT_INDEX_FILE": tmp_index})
        run_git(root, ["read-tree", old], env=env)
        run_git(root, ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
                input=_nul_paths(paths), env=env)
        tree = _out(root, ["write-tree"], env=env).strip()
    finally:
        _remove_index(tmp_index)
    parents = _out(root, ["rev-list", "--parents", "-n", "1", old]).split()[1:]
    raw = _out(root, ["cat-file", "commit", old])
    message = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
    args = ["commit-tree", tree, "-F", "-"]
    for parent in reversed(parents):
        args[2:2] = ["-p", parent]
    sha = _out(root, args, input=message.encode("utf-8", "surrogateescape"),
               env=git_env(identity_env(root, author))).strip()
    run_git(root, ["update-ref", "-m", "amend: the tick's documents", "HEAD", sha, old])
    if paths:
        run_git(root, ["reset", "-q", sha, "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul_paths(paths))
    return sha


TICK_TRAILER = "Memento-Tick"  # `Memento-Tick: 14 T-101`: the commit a status entry belongs to


def tick_commits(root: Path, limit: int = 20000) -> dict[tuple[int, str], str]:
    """{(tick number, task id): short sha} of the commits carrying a ``Memento-Tick`` trailer,
    the newest winning; one `git log` over commit messages only. Empty when git cannot say."""
    proc = run_git(Path(root), ["log", f"-n{limit}", f"--grep=^{TICK_TRAILER}: ",
                                f"--format=%h%x09%(trailers:key={TICK_TRAILER},valueonly,separator=%x2C)"],
                   check=False)
    found: dict[tuple[int, str], str] = {}
    if proc.returncode != 0:
        return found
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, value = line.partition("\t")
        for item in value.split(","):
            number, _, task = item.strip().partition(" ")
            if number.isdigit() and task:
                found.setdefault((int(number), task.strip()), sha)
    return found


def entries_with_commits(root: Path, entries: Iterable) -> list:
    """Status entries whose Git Commit names "the commit that adds this entry", resolved to its
    sha (status_log.with_commits); no git process when no entry needs one."""
    from .status_log import SELF_COMMIT, with_commits

    entries = list(entries)
    if not any((e.field("Git Commit") or "").startswith(SELF_COMMIT) for e in entries):
        return entries
    return with_commits(entries, tick_commits(root))


def fold_commits(root: Path, base: str | None) -> int:
    """Undo commits made since ``base``, keeping their changes in the work tree.

    ``git reset --mixed base``: files those commits added become untracked.
    Returns how many commits were folded: 0 if HEAD had not moved, at least
    1 if it had (also when it moved somewhere that is not a descendant of base).
    """
    root = Path(root)
    current = head(root)
    if current == base:
        return 0
    if current is None:
        # The branch was deleted under us: point it at base again, index = base.
        run_git(root, ["update-ref", "HEAD", base])
        run_git(root, ["read-tree", base])
        return 1
    if base is None:
        count = int(_out(root, ["rev-list", "--count", current]).strip() or 0)
        ref = _out(root, ["symbolic-ref", "-q", "HEAD"]).strip()
        run_git(root, ["update-ref", "-d", ref or "HEAD"])
        run_git(root, ["read-tree", "--empty"])
        return count
    count = int(_out(root, ["rev-list", "--count", f"{base}..{current}"]).strip() or 0)
    run_git(root, ["reset", "-q", "--mixed", base])
    return max(count, 1)


# ------------------------------------------------------------------ rollback


_ROLLBACK_README = """\
What Memento undid here, saved before undoing it ({when}).

changes.patch  changes to tracked files, against commit {base}
files/         copies of the files the work created (they were deleted)

To re-apply everything, from the project directory ({root}):

    git -C "$(git rev-parse --show-toplevel)" apply --binary {patch}
    cp -a {files}/. .

Paths in the patch are relative to the repository's top level.
"""


ROLLBACK_COPY_LIMIT = 50 * 1024 * 1024


def save_rollback(root: Path, base: str | None, changes: list[FileChange], dest: Path) -> Path:
    """Save what a rollback of ``changes`` would undo under ``dest``; returns dest.

    ``dest/changes.patch`` (``git diff --binary base -- tracked paths``), a copy
    of every created file under ``dest/files/<path>``, and ``dest/README.txt``.
    """

    root = Path(root)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tree = base or empty_tree(root)
    tracked = [c.path for c in changes if c.kind != "created"]
    patch = b""
    for batch in _batches(tracked):
        patch += run_git(
            root,
            [
                "diff",
                "--binary",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-renames",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                tree,
                "--",
                *batch,
            ],
        ).stdout
    (dest / "changes.patch").write_bytes(patch)
    files = dest / "files"
    budget, not_copied = ROLLBACK_COPY_LIMIT, []
    for c in changes:
        if c.kind != "created":
            continue
        src = root / c.path.rstrip("/")
        target = files / c.path.rstrip("/")
        try:
            size = _tree_size(src)
        except OSError:
            continue
        if size > budget:
            not_copied.append(f"{c.path}\t{size} bytes")
            continue
        budget -= size
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if src.is_dir() and not src.is_symlink():
                shutil.copytree(src, target, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy2(src, target, follow_symlinks=False)
        except FileNotFoundError:
            continue
    if not_copied:
        # The copies stop at ROLLBACK_COPY_LIMIT (SPEC §13): a flood must not fill the disk twice.
        (dest / "NOT_COPIED.txt").write_bytes(
            ("Not copied (the copies of one rollback stop at 50 MB); these files were deleted:\n"
             + "\n".join(not_copied) + "\n").encode("utf-8", "surrogateescape"))
    when = utc_stamp()
    (dest / "README.txt").write_text(
        _ROLLBACK_README.format(
            when=when,
            base=base or "(none: the branch had no commit yet)",
            root=root,
            patch=dest.resolve() / "changes.patch",
            files=dest.resolve() / "files",
        ),
        encoding="utf-8",
    )
    return dest


def symlinked_parent(root: Path, rel: str) -> Path | None:
    """The first folder on ``rel``'s way below ``root`` that is a symbolic link (None when none
    is: the way ends at a real folder, a file or nothing)."""
    current = Path(root)
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return current
        if not current.is_dir():
            return None
    return None


def _unlink_symlinked_parents(root: Path, rel: str) -> str | None:
    """Remove a symlink standing where a folder of ``rel`` should be (the link only, never
    its target); returns its path relative to ``root``."""
    link = symlinked_parent(root, rel)
    if link is None:
        return None
    link.unlink()
    return link.relative_to(root).as_posix()


def _remove_created(root: Path, rel: str) -> None:
    target = root / rel.rstrip("/")
    try:
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    except (FileNotFoundError, NotADirectoryError):
        pass  # already gone, or under a path that is no longer a folder
    root_resolved = root.resolve()
    parent = target.parent
    while parent.resolve() != root_resolved and root_resolved in parent.resolve().parents:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def rollback(
    root: Path,
    base: str | None,
    changes: list[FileChange],
    keep: Callable[[str], bool] | None = None,
) -> None:
    """Put every path in ``changes`` back as it was at the snapshot, except those ``keep`` accepts.

    Tracked paths get their content at ``base`` in the index and work tree;
    paths absent at base are unstaged and deleted; created files are deleted,
    then the directories they leave empty. Paths not in ``changes`` (such as
    a pre-existing untracked file) are never touched. Call ``fold_commits``
    first if HEAD moved.
    """
    root = Path(root)
    todo = [c for c in changes if not (keep and keep(c.path))]
    restore = [c.path for c in todo if c.kind in ("modified", "deleted")]
    unstage = [c.path for c in todo if c.kind == "added"]
    unlinked: set[str] = set()
    if restore and base:
        for path in restore:
            # A directory where the file was would stop checkout, and a symlink the agent
            # put in place of a folder would send the restored files somewhere else.
            link = _unlink_symlinked_parents(root, path)
            if link:
                unlinked.add(link)
            target = root / path
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.is_symlink() or target.exists():
                # checkout trusts the real index's stat data, which has whole seconds: an edit of the
                # same size within the second of the last index write would be "up to date" and stay.
                target.unlink()
        run_git(
            root,
            ["checkout", "-q", base, "--pathspec-from-file=-", "--pathspec-file-nul"],
            input=_nul_paths(restore),
        )
    if unstage:
        run_git(
            root,
            [
                "rm",
                "-q",
                "--cached",
                "--ignore-unmatch",
                "-r",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ],
            input=_nul_paths(unstage),
        )
    for c in todo:
        if c.path in unlinked:
            continue  # that symlink is gone and the folder it hid has been restored in its place
        if c.kind == "created" or (c.kind == "added" and not c.was_untracked):
            _remove_created(root, c.path)


# --------------------------------------------------------------- dashboard


def diff(root: Path, sha: str) -> str:
    """``git show --stat --patch sha``, for the dashboard."""
    return run_git(
        Path(root),
        ["show", "--stat", "--patch", "--no-color", "--no-ext-diff", "--end-of-options", sha],
    ).stdout.decode("utf-8", "replace")


def matches_head(root: Path, path: str) -> bool:
    """The file in the work tree is exactly as in HEAD (whatever the index says)."""
    if head(root) is None or not (Path(root) / path).is_file():
        return False
    # Not `git diff HEAD`: it only sees files the index knows, and the index is the suspect.
    in_head = run_git(Path(root), ["rev-parse", "-q", "--verify", f"HEAD:{_prefix(Path(root))}{path}"], check=False)
    if in_head.returncode != 0:
        return False
    on_disk = _out(Path(root), ["hash-object", "--no-filters", "--", path]).strip()
    return on_disk == in_head.stdout.decode().strip()


def hash_files(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """Blob ids of work-tree files (``git hash-object --no-filters``, as hash_blobs); missing files left out."""
    present = [p for p in paths if (Path(root) / p).is_file()]
    if not present:
        return {}
    out = _out(Path(root), ["hash-object", "--no-filters", "--stdin-paths"], input="\n".join(present).encode() + b"\n")
    return dict(zip(present, out.split(), strict=False))


def reset_index(root: Path, paths: Iterable[str]) -> None:
    """Make the index agree with HEAD for ``paths``; the work tree is not touched."""
    paths = list(paths)
    if paths:
        run_git(Path(root), ["reset", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"],
             input=_nul_paths(paths))


def log_subjects(root: Path, n: int) -> list[tuple[str, str]]:
    """The last ``n`` commits as (sha, subject), newest first; [] on an unborn branch."""
    if n <= 0 or head(root) is None:
        return []
    data = _out(Path(root), ["log", f"-n{n}", "-z", "--format=%H%x00%s"])
    fields = _split_z(data)
    return [(fields[i].strip("\n"), fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


# ------------------------------------------------------------------ patterns


@functools.lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with ``**`` to a regex: ``*``/``?`` stay inside one path component."""
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            if j < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : j]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                if body.startswith("^"):
                    body = "\\" + body
                out.append("[" + ("^" if negate else "") + body + "]")
                i = j + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Does ``path`` match one of ``patterns``?

    A pattern is an exact path (a folder name also covers what is inside
    it), a folder with a trailing ``/`` (everything below it), or a glob
    (``*``, ``?``, ``[…]`` within a component, ``**`` across folders). A
    glob without a ``/`` matches the file name at any depth, as in
    .gitignore; a leading ``/`` anchors a pattern to the root.
    """
    path = _norm(path).rstrip("/")
    parts = path.split("/")
    for raw in patterns:
        pattern = _norm(raw.strip())
        if not pattern:
            continue
        anchored = pattern.startswith("/")
        pattern = pattern.lstrip("/")
        folder = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if not pattern:
            return True  # "/" or "./": the whole tree
        if not any(c in pattern for c in "*?["):
            if path == pattern and not folder:
                return True
            if path.startswith(pattern + "/"):
                return True
            continue
        rx = _glob_regex(pattern)
        if "/" in pattern or anchored:
            candidates = ["/".join(parts[: k + 1]) for k in range(len(parts))]
        else:
            candidates = parts
        last = len(candidates) - 1
        for k, candidate in enumerate(candidates):
            # A folder pattern must match a folder, i.e. not the path itself.
            if folder and k == last:
                continue
            if rx.match(candidate):
                return True
    return False


def read_pattern_file(path: Path) -> list[str]:
    """Patterns from a gitignore-like file: one a line, blank lines and ``#`` comments skipped.

    A missing file has no patterns. ``!`` negation is not supported.
    """
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append(line)
    return patterns


def commits_since(root: Path, base: str, tip: str) -> list[tuple[str, int]] | None:
    """The commits in ``base..tip`` with their committer times (epoch seconds), newest first;
    None when ``base`` is not an ancestor of ``tip``."""
    root = Path(root)
    if run_git(root, ["merge-base", "--is-ancestor", base, tip], check=False).returncode != 0:
        return None
    out = []
    for line in _out(root, ["log", "--format=%H %ct", f"{base}..{tip}", "--"]).splitlines():
        sha, _, when = line.partition(" ")
        out.append((sha, int(when or 0)))
    return out


def added_bytes(root: Path, base: str | None, changes: Iterable[FileChange]) -> int:
    """Bytes the changes add, binary files included: a new file's size; for a changed
    file, what it grew by, or its whole size when git counts no lines (a binary file)."""
    root = Path(root)
    changes = [c for c in changes if c.kind != "deleted"]
    old: dict[str, int] = {}
    tracked = [c.path for c in changes if c.kind == "modified"]
    if base and tracked:
        for batch in _batches(tracked):
            out = _out(root, ["ls-tree", "-l", "-z", base, "--", *batch])
            for item in _split_z(out):
                info, _, path = item.partition("\t")
                size = info.split()[-1]
                old[path] = int(size) if size.isdigit() else 0
    total = 0
    for c in changes:
        try:
            now = _tree_size(root / c.path)
        except OSError:
            continue
        if c.kind == "modified" and (c.added or c.removed):
            total += max(0, now - old.get(c.path, 0))
        else:
            total += now
    return total


def _tree_size(path: Path) -> int:
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _dirs, files in os.walk(path) for f in files)


def read_objects(root: Path, names: Sequence[str]) -> list[tuple[str, str, bytes] | None]:
    """Each object ``names`` name (an id or anything ``rev-parse`` takes) as (id, kind, bytes),
    None when there is none, all from one ``git cat-file --batch``."""
    if any("\n" in n for n in names):
        raise MementoError("a path with a line break cannot be read in a batch")
    if not names:
        return []
    out = run_git(Path(root), ["cat-file", "--batch"], input="".join(n + "\n" for n in names).encode()).stdout
    got, at = [], 0
    for name in names:
        end = out.find(b"\n", at)
        header = out[at:end].split() if end >= 0 else []
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            got.append((header[0].decode(), header[1].decode(), out[end + 1:end + 1 + size]))
            at = end + 1 + size + 1
        elif header[-1:] == [b"missing"]:
            got.append(None)
            at = end + 1
        else:
            raise MementoError(f"git cat-file --batch could not read {name}: {out[at:at + 120]!r}")
    return got


def read_blobs(root: Path, shas: Sequence[bytes]) -> dict[bytes, bytes]:
    """Each object's bytes by its id (hex, as bytes), all from one ``git cat-file --batch``;
    MementoError naming the first one the store does not have."""
    found = {}
    for sha, got in zip(shas, read_objects(root, [s.decode() for s in shas]), strict=True):
        if got is None or got[0] != sha.decode():
            raise MementoError(f"git cat-file --batch could not read {sha.decode()}")
        found[sha] = got[2]
    return found


def show_file(root: Path, rev: str, path: str) -> bytes | None:
    """The bytes of ``path`` at commit ``rev``, or None when it has no such file."""
    proc = run_git(Path(root), ["cat-file", "blob", f"{rev}:{path}"], check=False)
    return proc.stdout if proc.returncode == 0 else None


def object_path(root: Path, sha: str) -> Path | None:
    """Where the loose object ``sha`` is stored, or None (packed, or not a repository here)."""
    git_dir = _out(Path(root), ["rev-parse", "--git-common-dir"]).strip()
    path = (Path(root) / git_dir / "objects" / sha[:2] / sha[2:]) if git_dir else None
    return path if path is not None and path.is_file() else None


__all__ = [
    "FileChange",
    "added_bytes",
    "commits_since",
    "object_path",
    "show_file",
    "read_blobs",
    "StatusEntry",
    "changed_from_head",
    "changes_since",
    "MadeCommit",
    "adopt_commit",
    "commit_paths",
    "make_commit",
    "diff",
    "dirty_paths",
    "empty_tree",
    "ensure_repo",
    "fold_commits",
    "git_binary",
    "git_env",
    "hash_blobs",
    "head",
    "identity_env",
    "is_repo",
    "log_subjects",
    "matches_any",
    "read_pattern_file",
    "rollback",
    "run_git",
    "save_rollback",
    "scrubbed_index",
    "status",
    "untracked",
]
