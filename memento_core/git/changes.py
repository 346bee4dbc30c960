"""Every change below root since the snapshot (SPEC §4 steps 8 and 11, §13): the work tree
against the base commit, and the files made since, with their line counts
(:class:`FileChange`), and the bytes they add (the diff-size guard).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .. import scratch
from .index import scrubbed_index
from .objects import show_file
from .repo import empty_tree, repo_dirs
from .run import batches, output, run_git, split_z
from .status import untracked, was_there


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
    change (tick/guards.task_change), still undone by a rollback. (An "added" one
    comes only from the agent's own commits, a guard failure before verify.)
    """

    path: str
    added: int
    removed: int
    kind: str
    was_untracked: bool = False
    scratch: bool = False


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
    data = output(
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
    fields = split_z(data)
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


_KIND = {"M": "modified", "T": "modified", "A": "added", "D": "deleted"}


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
        old = show_file(root, tree, repo_dirs(root).prefix + path) if now is None else None
        if _looks_binary(now if now is not None else old):
            continue
        patch = run_git(root, ["diff", "--text", "--no-textconv", "--no-ext-diff", "--no-color", "-U0",
                               "--relative", tree, "--", path], env=env).stdout
        body = patch.split(b"\n@@", 1)[1] if b"\n@@" in patch else b""
        lines = body.split(b"\n")
        counts[path] = (sum(1 for ln in lines if ln.startswith(b"+")),
                        sum(1 for ln in lines if ln.startswith(b"-")))
    return counts


def added_bytes(root: Path, base: str | None, changes: Iterable[FileChange]) -> int:
    """Bytes the changes add, binary files included: a new file's size; for a changed
    file, what it grew by, or its whole size when git counts no lines (a binary file)."""
    root = Path(root)
    changes = [c for c in changes if c.kind != "deleted"]
    old: dict[str, int] = {}
    tracked = [c.path for c in changes if c.kind == "modified"]
    if base and tracked:
        for batch in batches(tracked):
            out = output(root, ["ls-tree", "-l", "-z", base, "--", *batch])
            for item in split_z(out):
                info, _, path = item.partition("\t")
                size = info.split()[-1]
                old[path] = int(size) if size.isdigit() else 0
    total = 0
    for c in changes:
        try:
            now = tree_size(root / c.path)
        except OSError:
            continue
        if c.kind == "modified" and (c.added or c.removed):
            total += max(0, now - old.get(c.path, 0))
        else:
            total += now
    return total


def tree_size(path: Path) -> int:
    """Bytes of a file, or of every file below a folder (links not followed)."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _dirs, files in os.walk(path) for f in files)
