"""A commit's trees read in one command and edited in memory (SPEC §12, issue 42).

:func:`read_at` reads a commit, its tree, the trees on the way to some files and those files
with one ``git cat-file --batch`` (HEAD's from its loose objects with no process at all), each
checked against the id its parent names. :class:`Trees` edits them (a file set or removed) and
gives back the new trees' objects for :func:`objects.write_objects`: what commit_fast.py and
replay.py build their commits from.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular
from .objects import object_id, read_objects
from .repo import head_from_files, repo_dirs

TREE_MODE = b"40000"


@dataclass(frozen=True)
class At:
    """A commit as :func:`read_at` read it: its id, its tree's, the trees on the way to the
    files asked for (folder from the top level, '' the root -> entries), those files
    (path -> (mode, id, bytes), None when the commit has none there) and the other objects
    asked for (``also``: (id, kind, bytes), None when missing), in their order; the commit
    object's own bytes (``raw``)."""

    commit: str
    tree: str
    trees: Mapping[str, list[tuple[bytes, bytes, bytes]]]
    files: Mapping[str, tuple[bytes, str, bytes] | None]
    also: tuple[tuple[str, str, bytes] | None, ...] = ()
    raw: bytes = b""


def folders_above(path: str) -> list[str]:
    """The folders on the way to ``path``, from the top level ('') down."""
    parts = path.split("/")[:-1]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def read_at(root: Path, rev: str, paths: Sequence[str], *, within: Sequence[str] = (),
            also: Sequence[str] = ()) -> At:
    """``rev``'s commit, its tree, the trees leading to ``paths`` and to ``within`` (from the top
    level), the files at ``paths`` and the objects ``also`` names, in one ``git cat-file --batch``.
    Each object is checked to be the one its parent names, so a ``rev`` such as HEAD that moves
    during the read raises MementoError."""
    # The top level always: the offsets below count it (a range of empty commits asks for no path).
    folders = sorted({""} | {f for p in [*paths, *within] for f in folders_above(p)}, key=lambda f: (f.count("/"), f))
    if rev == "HEAD" and not paths and not also:
        loose = _head_loose(root, folders)
        if loose is not None:
            return loose
    names = [rev, f"{rev}^{{tree}}", *(f"{rev}:{f}" for f in folders if f), *(f"{rev}:{p}" for p in paths), *also]
    got = read_objects(root, names)
    commit, tree = got[0], got[1]
    if commit is None or commit[1] != "commit" or tree is None or tree[1] != "tree":
        raise MementoError(f"{rev} is not a commit here")
    if not commit[2].startswith(b"tree " + tree[0].encode() + b"\n"):
        raise MementoError(f"{rev} moved while it was read")
    width = len(bytes.fromhex(tree[0]))
    trees = {"": _entries(tree[2], width)}
    by_folder = dict(zip([f for f in folders if f], got[2:2 + len(folders) - 1], strict=True))
    for folder in folders[1:]:
        parent, _, leaf = folder.rpartition("/")
        found = by_folder[folder]
        entry = entry_of(trees.get(parent), leaf)
        if entry is None or entry[0] != TREE_MODE:
            continue  # no such folder in this commit (a file there, or nothing)
        if found is None or found[1] != "tree" or bytes.fromhex(found[0]) != entry[2]:
            raise MementoError(f"{rev} moved while it was read")
        trees[folder] = _entries(found[2], width)
    files: dict[str, tuple[bytes, str, bytes] | None] = {}
    for path, found in zip(paths, got[1 + len(folders):len(names) - len(also)], strict=True):
        parent, _, leaf = path.rpartition("/")
        entry = entry_of(trees.get(parent), leaf)
        if entry is None or entry[0] == TREE_MODE:
            files[path] = None
        elif found is None or bytes.fromhex(found[0]) != entry[2]:
            raise MementoError(f"{rev} moved while it was read")
        else:
            files[path] = (entry[0], found[0], found[2])
    return At(commit[0], tree[0], trees, files, tuple(got[len(names) - len(also):]), commit[2])


def _head_loose(root: Path, folders: Sequence[str]) -> At | None:
    """:func:`read_at` of HEAD and the trees on the way to ``folders`` (depth first), read from
    loose objects with no process (issue 42: the tick's commit reads HEAD's trees each time),
    each checked against its id; None, for ``cat-file`` to read, when HEAD is not read from
    files (head_from_files) or an object is not a loose one of the kind expected."""
    sha = head_from_files(root)
    if sha is None:
        return None
    dirs = repo_dirs(root)
    commit = _loose(dirs.common_dir, sha, "commit", dirs.object_format)
    if commit is None or not commit.startswith(b"tree ") or commit[5 + len(sha):6 + len(sha)] != b"\n":
        return None
    tree = commit[5:5 + len(sha)].decode("ascii", "replace")
    data = _loose(dirs.common_dir, tree, "tree", dirs.object_format)
    if data is None:
        return None
    width = len(sha) // 2
    trees = {"": _entries(data, width)}
    for folder in folders:
        if not folder:
            continue
        parent, _, leaf = folder.rpartition("/")
        entry = entry_of(trees.get(parent), leaf)
        if entry is None or entry[0] != TREE_MODE:
            continue  # no such folder in this commit (a file there, or nothing)
        data = _loose(dirs.common_dir, entry[2].hex(), "tree", dirs.object_format)
        if data is None:
            return None
        trees[folder] = _entries(data, width)
    return At(sha, tree, trees, {}, (), commit)


def _loose(common: Path, sha: str, kind: str, fmt: str) -> bytes | None:
    """The content of the loose object ``sha`` when it is one of ``kind`` whose bytes hash to its
    id; None otherwise (packed, missing, another kind, damaged)."""
    try:
        raw = zlib.decompress(read_regular(common / "objects" / sha[:2] / sha[2:], limit=16 << 20))
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if header != f"{kind} {len(body)}".encode() or object_id(fmt, kind, body) != sha:
        return None
    return body


def _entries(data: bytes, width: int) -> list[tuple[bytes, bytes, bytes]]:
    """A raw tree's entries: (mode, name, raw id)."""
    entries, at = [], 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        entries.append((data[at:space], data[space + 1:nul], data[nul + 1:nul + 1 + width]))
        at = nul + 1 + width
    return entries


def entry_of(entries, name: str) -> tuple[bytes, bytes, bytes] | None:
    """The entry called ``name`` among a tree's ``entries`` (None for none, or no tree)."""
    wanted = os.fsencode(name)
    return next((e for e in entries or () if e[1] == wanted), None)


class Trees:
    """The trees :func:`read_at` read, edited in memory: a file set or removed at a path whose
    folders it read (a missing folder is made, one left empty goes), then written back as the
    new trees' objects (:meth:`objects`)."""

    def __init__(self, at: At, fmt: str):
        self.fmt = fmt
        self.folders = {folder: list(entries) for folder, entries in at.trees.items()}
        # trees the store has, not written again
        self.known = {at.tree} | {e[2].hex() for entries in at.trees.values() for e in entries if e[0] == TREE_MODE}

    def get(self, path: str) -> tuple[bytes, bytes] | None:
        """(mode, raw id) of the file at ``path``; None when there is none (a folder counts as none)."""
        parent, _, leaf = path.rpartition("/")
        entry = entry_of(self.folders.get(parent), leaf)
        return None if entry is None or entry[0] == TREE_MODE else (entry[0], entry[2])

    def set(self, path: str, entry: tuple[bytes, bytes] | None) -> None:
        """The file at ``path`` becomes ``entry`` ((mode, raw id); None removes it). MementoError
        when a folder on the way is a file, or was not read."""
        parent, _, leaf = path.rpartition("/")
        if parent not in self.folders:
            if entry is None:
                return
            self._make(parent)
        entries = self.folders[parent]
        wanted = os.fsencode(leaf)
        if any(e[1] == wanted and e[0] == TREE_MODE for e in entries):
            raise MementoError(f"{path}: a folder is there")
        entries[:] = [e for e in entries if e[1] != wanted] + ([(entry[0], wanted, entry[1])] if entry else [])

    def _make(self, folder: str) -> None:
        """An empty ``folder`` (and the ones above it) where the trees have none."""
        parent, _, leaf = folder.rpartition("/")
        if parent not in self.folders:
            self._make(parent)
        if entry_of(self.folders[parent], leaf) is not None:
            raise MementoError(f"{folder}: a file is there, or a folder that was not read")
        self.folders[folder] = []

    def built(self) -> dict[str, list[tuple[bytes, bytes, bytes]]]:
        """After :meth:`objects`: every folder's entries as written (a folder left empty is gone)."""
        return {folder: list(entries) for folder, entries in self.folders.items() if entries or not folder}

    def objects(self) -> tuple[str, list[tuple[str, bytes]]]:
        """The root tree's id and the trees to write that the store may not have."""
        objects: list[tuple[str, bytes]] = []
        for folder in sorted(self.folders, key=lambda f: (-f.count("/") if f else 1, f)):
            if not folder:
                continue
            parent, _, leaf = folder.rpartition("/")
            wanted = os.fsencode(leaf)
            siblings = self.folders[parent]
            siblings[:] = [e for e in siblings if e[1] != wanted]
            if self.folders[folder]:
                raw = self._tree(folder, objects)
                siblings.append((TREE_MODE, wanted, raw))
        return bytes.hex(self._tree("", objects)), objects

    def _tree(self, folder: str, objects: list) -> bytes:
        data = _tree_bytes(self.folders[folder])
        tid = object_id(self.fmt, "tree", data)
        if tid not in self.known:
            self.known.add(tid)
            objects.append(("tree", data))
        return bytes.fromhex(tid)


def with_files(at: At, changes: Mapping[str, tuple[bytes, bytes]], fmt: str) -> tuple[str, list[tuple[str, bytes]]]:
    """The tree of ``at`` with each path of ``changes`` (from the top level -> (mode, bytes)) a
    file holding those bytes: the new root tree's id and the objects to write (blobs, trees).
    Every folder on the way must be one ``at`` read (:func:`read_at` with those paths)."""
    trees, blobs = Trees(at, fmt), []
    for path, (mode, data) in changes.items():
        if path.rpartition("/")[0] not in at.trees:
            raise MementoError(f"{path}: its folder is not a folder of {at.commit}")
        blobs.append(("blob", data))
        trees.set(path, (mode, bytes.fromhex(object_id(fmt, "blob", data))))
    tree, objects = trees.objects()
    return tree, blobs + objects


def _tree_bytes(entries) -> bytes:
    """Entries in git's order (a folder sorts as if its name ended in '/')."""
    ordered = sorted(entries, key=lambda e: e[1] + (b"/" if e[0] == TREE_MODE else b""))
    return b"".join(mode + b" " + name + b"\0" + raw for mode, name, raw in ordered)
