"""What git says of the work tree (SPEC §4, §13): ``git status`` parsed, the untracked and ignored
paths a person has, the tracked ones, what changed from HEAD.

Every status is run on a private copy of the index (index.scrubbed_index): no stat data or
index flag the agent set can hide a change.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular
from .index import entry_paths, scrubbed_index
from .objects import object_id
from .repo import head, repo_dirs
from .run import batches, output, run_git, split_z


@dataclass(frozen=True)
class StatusEntry:
    """One line of ``git status --porcelain``: XY code, path, and the source of a rename."""

    xy: str
    path: str
    orig: str | None = None


def status(root: Path, env: dict[str, str] | None = None) -> list[StatusEntry]:
    """``git status --porcelain=v1 -z --untracked-files=all`` below root, parsed.

    Run on a scrubbed copy of the index (:func:`scrubbed_index`) unless ``env`` names one.
    """
    root = Path(root)
    if env is None:  # one command: git status hashes what the copy's stat data cannot vouch for
        with scrubbed_index(root, refresh=False) as env:
            return status(root, env)
    prefix = repo_dirs(root).prefix
    data = output(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", "."], env=env)
    fields = split_z(data)
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
    data = output(root, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", "."],
                  env=env)
    found = sorted(set(split_z(data)))  # what a folder holds sorts right after it
    # --directory also names each folder that holds only ignored things (``calc/`` for its
    # ``calc/__pycache__/``) beside those things: such a folder is not ignored itself, and taking
    # it whole would make a package the person's after verify left a cache in it.
    return {p for i, p in enumerate(found)
            if not (p.endswith("/") and i + 1 < len(found) and found[i + 1].startswith(p))}


def persons_paths(root: Path, untracked_now: Iterable[str] | None = None) -> set[str]:
    """What a person has here that git does not track: the untracked files and the ignored paths
    (SPEC §13: a ``.env``, a ``.venv/``), all kept as they are by the tick (see ``was_there``).
    ``untracked_now``: the untracked files as a :func:`status` just read them (not read again)."""
    root = Path(root)
    with scrubbed_index(root, refresh=False) as env:  # what is not tracked: no stat data is read
        found = untracked(root, env) if untracked_now is None else set(untracked_now)
        return found | ignored(root, env)


def tracked(root: Path) -> list[str]:
    """``git ls-files -z -- .`` in ``root``: the tracked paths below it (from root). Read from a
    plain index here, with no process (index.entry_paths); any other index is left to git."""
    root = Path(root)
    try:
        dirs = repo_dirs(root)
        found = entry_paths(read_regular(dirs.git_dir / "index"), dirs.object_format)
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


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


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
    for batch in batches(present):
        shas = output(root, ["hash-object", "--", *batch]).split()
        changed += [p for p, sha in zip(batch, shas, strict=True) if sha != committed[p]]
    return sorted(changed)


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


def matches_head(root: Path, path: str) -> bool:
    """The file in the work tree is exactly as in HEAD (whatever the index says)."""
    if head(root) is None or not (Path(root) / path).is_file():
        return False
    # Not `git diff HEAD`: it only sees files the index knows, and the index is the suspect.
    in_head = run_git(Path(root), ["rev-parse", "-q", "--verify", f"HEAD:{repo_dirs(Path(root)).prefix}{path}"], check=False)
    if in_head.returncode != 0:
        return False
    on_disk = output(Path(root), ["hash-object", "--no-filters", "--", path]).strip()
    return on_disk == in_head.stdout.decode().strip()
