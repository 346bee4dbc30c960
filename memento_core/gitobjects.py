"""Git objects read and written in bulk: a commit that changes a few files, made with two git
commands whatever its depth, none of which touches an index, a ref or the work tree.

A fleet's claim (SPEC §12) is made between a fetch and a push, and any push of another host
that lands inside that window loses this host the race; each git command there (a process
started, on a machine where sixteen hosts share two cores) widens it. So the claim's trees,
commits and blob are built here and written by one ``git unpack-objects`` (a pack made in
Python, objects uncompressed by git and checked against the pack's own hash), after one
``git cat-file --batch`` has read what they are made from (:func:`read_at`).

Commits are built the way ``git commit-tree`` builds them for the identity given, dated now in
the local time zone; where git would date them otherwise (``GIT_AUTHOR_DATE`` or
``GIT_COMMITTER_DATE`` set) or an identity holds what git would clean out of it,
:func:`can_build` is False and the caller makes its commit with git's own commands.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import gitops
from .errors import MementoError

_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3}
TREE_MODE = b"40000"


@functools.cache
def _format_of(root: str) -> str:
    fmt = gitops.run_git(Path(root), ["rev-parse", "--show-object-format"]).stdout.decode().strip()
    if fmt not in ("sha1", "sha256"):
        raise MementoError(f"unknown git object format {fmt!r} in {root}")
    return fmt


def object_format(root: Path) -> str:
    """``sha1`` or ``sha256``: the repository's object format (asked once per process)."""
    return _format_of(str(Path(root).resolve()))


def object_id(fmt: str, kind: str, data: bytes) -> str:
    """The id git gives an object of ``kind`` holding ``data``."""
    return hashlib.new(fmt, f"{kind} {len(data)}\0".encode() + data).hexdigest()


def write_objects(root: Path, objects: Sequence[tuple[str, bytes]]) -> list[str]:
    """``objects`` ((kind, content): commit, tree or blob) written to the object store in one
    git command; their ids, in order. Git checks the pack's hash and unpacks each object."""
    fmt = object_format(root)
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    ids = []
    for kind, data in objects:
        size = len(data)
        byte = (_PACK_TYPES[kind] << 4) | (size & 15)
        size >>= 4
        while size:
            pack.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        pack.append(byte)
        pack += zlib.compress(data, 1)
        ids.append(object_id(fmt, kind, data))
    pack += hashlib.new(fmt, pack).digest()
    gitops.run_git(Path(root), ["unpack-objects", "-q"], input=bytes(pack))
    return ids


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class At:
    """A commit as :func:`read_at` read it: its id, its tree's, the trees on the way to the
    files asked for (folder from the top level, '' the root -> entries) and those files
    (path -> (mode, id, bytes), None when the commit has none there)."""

    commit: str
    tree: str
    trees: Mapping[str, list[tuple[bytes, bytes, bytes]]]
    files: Mapping[str, tuple[bytes, str, bytes] | None]


def _folders(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def read_at(root: Path, rev: str, paths: Sequence[str]) -> At:
    """``rev``'s commit, its tree, the trees leading to ``paths`` (from the top level) and the
    files there, in one ``git cat-file --batch``. Each object is checked to be the one its parent
    names, so a ``rev`` such as HEAD that moves during the read raises MementoError."""
    folders = sorted({f for p in paths for f in _folders(p)}, key=lambda f: (f.count("/"), f))
    names = [rev, f"{rev}^{{tree}}", *(f"{rev}:{f}" for f in folders if f), *(f"{rev}:{p}" for p in paths)]
    if any("\n" in n for n in names):
        raise MementoError("a path with a line break cannot be read in a batch")
    out = gitops.run_git(Path(root), ["cat-file", "--batch"], input="".join(n + "\n" for n in names).encode()).stdout
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
        entry = _entry(trees.get(parent), leaf)
        if entry is None or entry[0] != TREE_MODE:
            continue  # no such folder in this commit (a file there, or nothing)
        if found is None or found[1] != "tree" or bytes.fromhex(found[0]) != entry[2]:
            raise MementoError(f"{rev} moved while it was read")
        trees[folder] = _entries(found[2], width)
    files: dict[str, tuple[bytes, str, bytes] | None] = {}
    for path, found in zip(paths, got[1 + len(folders):], strict=True):
        parent, _, leaf = path.rpartition("/")
        entry = _entry(trees.get(parent), leaf)
        if entry is None or entry[0] == TREE_MODE:
            files[path] = None
        elif found is None or bytes.fromhex(found[0]) != entry[2]:
            raise MementoError(f"{rev} moved while it was read")
        else:
            files[path] = (entry[0], found[0], found[2])
    return At(commit[0], tree[0], trees, files)


def _entries(data: bytes, width: int) -> list[tuple[bytes, bytes, bytes]]:
    """A raw tree's entries: (mode, name, raw id)."""
    entries, at = [], 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        entries.append((data[at:space], data[space + 1:nul], data[nul + 1:nul + 1 + width]))
        at = nul + 1 + width
    return entries


def _entry(entries, name: str) -> tuple[bytes, bytes, bytes] | None:
    wanted = os.fsencode(name)
    return next((e for e in entries or () if e[1] == wanted), None)


# ---------------------------------------------------------------- building


def with_files(at: At, changes: Mapping[str, tuple[bytes, bytes]], fmt: str) -> tuple[str, list[tuple[str, bytes]]]:
    """The tree of ``at`` with each path of ``changes`` (from the top level -> (mode, bytes)) a
    file holding those bytes: the new root tree's id and the objects to write (blobs, trees).
    Every folder on the way must be one ``at`` read (:func:`read_at` with those paths)."""
    objects: list[tuple[str, bytes]] = []
    trees = {folder: list(entries) for folder, entries in at.trees.items()}
    for path, (mode, data) in changes.items():
        objects.append(("blob", data))
        parent, _, leaf = path.rpartition("/")
        if parent not in trees:
            raise MementoError(f"{path}: its folder is not a folder of {at.commit}")
        _put(trees[parent], leaf, mode, bytes.fromhex(object_id(fmt, "blob", data)))
    for folder in sorted(trees, key=lambda f: (-f.count("/") if f else 1, f)):
        if not folder:
            continue
        data = _tree_bytes(trees[folder])
        objects.append(("tree", data))
        parent, _, leaf = folder.rpartition("/")
        _put(trees[parent], leaf, TREE_MODE, bytes.fromhex(object_id(fmt, "tree", data)))
    data = _tree_bytes(trees[""])
    objects.append(("tree", data))
    return object_id(fmt, "tree", data), objects


def _put(entries: list, name: str, mode: bytes, raw: bytes) -> None:
    wanted = os.fsencode(name)
    entries[:] = [e for e in entries if e[1] != wanted] + [(mode, wanted, raw)]


def _tree_bytes(entries) -> bytes:
    """Entries in git's order (a folder sorts as if its name ended in '/')."""
    ordered = sorted(entries, key=lambda e: e[1] + (b"/" if e[0] == TREE_MODE else b""))
    return b"".join(mode + b" " + name + b"\0" + raw for mode, name, raw in ordered)


_UNCLEAN = set("<>\n\0")
_CRUD = set(".,:;<>\"\\'")  # what git strips from the ends of a name or an address


def can_build(ident: Mapping[str, str]) -> bool:
    """Whether :func:`commit_bytes` makes what ``git commit-tree`` would for this identity
    (from gitops.identity_env): no date of git's own from the environment, nothing in a name
    or an e-mail address git would clean."""
    if os.environ.get("GIT_AUTHOR_DATE") or os.environ.get("GIT_COMMITTER_DATE"):
        return False
    return all(value and value[0] > " " and value[-1] > " " and value[0] not in _CRUD and value[-1] not in _CRUD
               and not _UNCLEAN & set(value) for value in ident.values())


def commit_bytes(tree: str, parents: Sequence[str], message: str, ident: Mapping[str, str]) -> bytes:
    """A commit object as ``git commit-tree`` writes it for ``ident``, dated now."""
    now = int(time.time())
    zone = time.strftime("%z", time.localtime(now))
    author = f"{ident['GIT_AUTHOR_NAME']} <{ident['GIT_AUTHOR_EMAIL']}> {now} {zone}"
    committer = f"{ident['GIT_COMMITTER_NAME']} <{ident['GIT_COMMITTER_EMAIL']}> {now} {zone}"
    head = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {author}", f"committer {committer}"]
    body = message if message.endswith("\n") else message + "\n"
    return ("\n".join(head) + "\n\n" + body).encode("utf-8")
