"""Git objects read and written in bulk: a commit that changes a few files, made with two git
commands whatever its depth, none of which touches an index, a ref or the work tree.

A fleet's claim (SPEC §12) is made between a fetch and a push, and any push of another host
that lands inside that window loses this host the race; each git command there (a process
started, on a machine where sixteen hosts share two cores) widens it. So the claim's trees,
commits and blob are built here and written by one ``git unpack-objects`` (a pack made in
Python, objects uncompressed by git and checked against the pack's own hash), after one
``git cat-file --batch`` has read what they are made from (:func:`read_at`).

The same pieces replay a host's unpushed commits onto the remote's (:func:`replay`), as
``git rebase`` would, in a handful of commands where the rebase starts a few dozen.

Commits are built the way ``git commit-tree`` builds them for the identity given, dated now in
the local time zone; where git would date them otherwise (``GIT_AUTHOR_DATE`` or
``GIT_COMMITTER_DATE`` set) or an identity holds what git would clean out of it,
:func:`can_build` is False and the caller makes its commit with git's own commands.
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import stat
import struct
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import gitops
from .errors import MementoError
from .lines import read_regular

_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3}
TREE_MODE = b"40000"


def object_format(root: Path) -> str:
    """``sha1`` or ``sha256``: the repository's object format (gitops.repo_dirs: asked of git
    once per process, with where the repository is)."""
    return gitops.repo_dirs(Path(root)).object_format


object_id = gitops.object_id


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


def _folders(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


read_objects = gitops.read_objects


def read_at(root: Path, rev: str, paths: Sequence[str], *, within: Sequence[str] = (),
            also: Sequence[str] = ()) -> At:
    """``rev``'s commit, its tree, the trees leading to ``paths`` and to ``within`` (from the top
    level), the files at ``paths`` and the objects ``also`` names, in one ``git cat-file --batch``.
    Each object is checked to be the one its parent names, so a ``rev`` such as HEAD that moves
    during the read raises MementoError."""
    # The top level always: the offsets below count it (a range of empty commits asks for no path).
    folders = sorted({""} | {f for p in [*paths, *within] for f in _folders(p)}, key=lambda f: (f.count("/"), f))
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
        entry = _entry(trees.get(parent), leaf)
        if entry is None or entry[0] != TREE_MODE:
            continue  # no such folder in this commit (a file there, or nothing)
        if found is None or found[1] != "tree" or bytes.fromhex(found[0]) != entry[2]:
            raise MementoError(f"{rev} moved while it was read")
        trees[folder] = _entries(found[2], width)
    files: dict[str, tuple[bytes, str, bytes] | None] = {}
    for path, found in zip(paths, got[1 + len(folders):len(names) - len(also)], strict=True):
        parent, _, leaf = path.rpartition("/")
        entry = _entry(trees.get(parent), leaf)
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
    files (gitops.head_from_files) or an object is not a loose one of the kind expected."""
    sha = gitops.head_from_files(root)
    if sha is None:
        return None
    dirs = gitops.repo_dirs(root)
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
        entry = _entry(trees.get(parent), leaf)
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


def _entry(entries, name: str) -> tuple[bytes, bytes, bytes] | None:
    wanted = os.fsencode(name)
    return next((e for e in entries or () if e[1] == wanted), None)


# ---------------------------------------------------------------- building


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
        entry = _entry(self.folders.get(parent), leaf)
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
        if _entry(self.folders[parent], leaf) is not None:
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


def _signature(name: str, email: str) -> str:
    """An author or committer line's value as git writes it, dated now in the local time zone."""
    now = int(time.time())
    return f"{name} <{email}> {now} {time.strftime('%z', time.localtime(now))}"


def commit_bytes(tree: str, parents: Sequence[str], message: str, ident: Mapping[str, str]) -> bytes:
    """A commit object as ``git commit-tree`` writes it for ``ident``, dated now."""
    author = _signature(ident["GIT_AUTHOR_NAME"], ident["GIT_AUTHOR_EMAIL"])
    committer = _signature(ident["GIT_COMMITTER_NAME"], ident["GIT_COMMITTER_EMAIL"])
    head = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {author}", f"committer {committer}"]
    body = message if message.endswith("\n") else message + "\n"
    return ("\n".join(head) + "\n\n" + body).encode("utf-8")



def commit_here(root: Path, paths: Sequence[str], message: str, ident: Mapping[str, str],
                blobs: Mapping[str, tuple[str, str]], *, amend: bool = False) -> gitops.MadeCommit | None:
    """The commit :func:`gitops.make_commit` makes (``paths`` from root, as in the work tree, and
    ``blobs``: path -> (mode, id) or gitops.GONE), in three git commands where it starts five to
    seven: HEAD's trees along the paths read by one ``cat-file --batch``, the files' blobs
    written by one ``hash-object -w --stdin-paths`` (git's filters applied, as ``update-index
    --add`` applies them), the trees and the commit by one ``unpack-objects``. None, nothing
    written, where git must make it: an identity or a date of git's own (:func:`can_build`),
    an unborn branch, a path that is a folder or something other than a file or a link, a file
    whose executable bit ``core.fileMode`` would read otherwise, a file where a folder must go.
    ``amend``: the commit :func:`gitops.amend_paths` makes instead, HEAD's own replaced (its
    parents and message kept, ``message`` unused); its ``parent`` is then the HEAD it replaces."""
    if not can_build(ident):
        return None
    prefix = gitops.repo_path(root, "")
    changes: dict[str, tuple[bytes, bytes] | None] = {}
    links: list[tuple[str, bytes]] = []
    files: list[str] = []
    modes: dict[str, bytes] = {}
    for path in paths:
        if path in blobs:
            mode, oid = blobs[path]
            changes[path] = None if (mode, oid) == gitops.GONE else (mode.encode(), bytes.fromhex(oid))
            continue
        if gitops.symlinked_parent(root, path) is not None:
            return None  # git refuses a path beyond a symbolic link; hash-object would follow it
        kind, st = gitops.entry_kind(root / path)
        if kind == "gone":
            changes[path] = None
        elif kind == "link":
            links.append((path, os.fsencode(os.readlink(root / path))))
        elif kind == "file":
            files.append(path)
            modes[path] = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
        else:
            return None
    if not all(_plain(prefix + p) for p in paths):
        return None  # git checks what a path may be (and unquotes --stdin-paths): its own way
    within = [prefix + p for p in paths]
    try:
        at = _made_here(root, within) or read_at(root, "HEAD", [], within=within)
    except MementoError:
        return None  # an unborn branch, or HEAD moving: git's way
    fmt = object_format(root)
    trees, objects = Trees(at, fmt), []
    for path in files:
        found = trees.get(prefix + path)
        committed = found[0] if found else None
        if committed not in (None, b"100644", b"100755"):
            return None  # a link or a submodule there in HEAD, a file here: git's way
        # With core.fileMode false git keeps the committed mode (a new file's is 100644): only
        # what both settings read alike is taken here.
        if modes[path] != (committed or b"100644"):
            return None
    for path, target in links:
        objects.append(("blob", target))
        changes[path] = (b"120000", bytes.fromhex(object_id(fmt, "blob", target)))
    pending = bytes(len(bytes.fromhex(at.tree)))  # a file's id until hash-object gives it
    try:  # a file where a folder must go, or the other way round (git's --replace): seen before writing
        for path, entry in [*changes.items(), *((p, (modes[p], pending)) for p in files)]:
            trees.set(prefix + path, entry)
    except MementoError:
        return None
    if files:  # from the top level, where git reads --stdin-paths (and the attributes' paths)
        out = gitops.run_git(gitops.repo_dirs(root).top, ["hash-object", "-w", "--stdin-paths"],
                             input=b"".join(os.fsencode(prefix + p) + b"\n" for p in files)).stdout.split()
        if len(out) != len(files):
            return None
        for path, oid in zip(files, out, strict=True):
            trees.set(prefix + path, (modes[path], bytes.fromhex(oid.decode())))
    tree, made = trees.objects()
    if not amend and tree == at.tree:
        raise MementoError(f"nothing to commit for {message.splitlines()[0] if message else 'commit'!r}")
    parents, message = _parents_and_message(at.raw) if amend else ([at.commit], message)
    commit = commit_bytes(tree, parents, message, ident)
    ids = write_objects(root, [*objects, *made, ("commit", commit)])
    _MADE[str(gitops.repo_dirs(root).git_dir)] = At(ids[-1], tree, trees.built(), {}, (), commit)
    return gitops.MadeCommit(ids[-1], at.commit, message.splitlines()[0] if message else "", tuple(paths))


# The last commit commit_here made in each repository (by git folder), with the trees it built:
# what the tick folds into it next is built on them without reading HEAD again (issue 42).
_MADE: dict[str, At] = {}


def _made_here(root: Path, within: Sequence[str]) -> At | None:
    """The last commit made here, when HEAD is still it (read from .git's files: gitops.head) and
    its trees hold every folder on the way to ``within`` that the commit has; else None."""
    made = _MADE.get(str(gitops.repo_dirs(root).git_dir))
    if made is None or gitops.head(root) != made.commit:
        return None
    for folder in sorted({f for p in within for f in _folders(p)}, key=lambda f: f.count("/")):
        if folder in made.trees:
            continue
        parent, _, leaf = folder.rpartition("/")
        if parent not in made.trees or _entry(made.trees[parent], leaf) is not None:
            return None  # a folder it did not build (or a file there): read as git has it
    return made


def _parents_and_message(raw: bytes) -> tuple[list[str], str]:
    """A commit object's parents and message (what ``git commit --amend`` keeps)."""
    text = raw.decode("utf-8", "surrogateescape")
    header, _, message = text.partition("\n\n")
    return [line[7:] for line in header.split("\n") if line.startswith("parent ")], message


def changed_from_made(root: Path, paths: Sequence[str]) -> list[str] | None:
    """Those of ``paths`` (files, from root) that differ from the last commit made here, by their
    bytes and executable bit, sorted, with no process (the tick's documents written after its
    commit, issue 42); None, for ``git status`` to answer, when that commit is not HEAD any more,
    its trees do not reach a path, or a path it lacks is on disk (staged or untracked: git tells)."""
    prefix = gitops.repo_path(root, "")
    at = _made_here(root, [prefix + p for p in paths])
    if at is None:
        return None
    fmt = object_format(root)
    changed = []
    for path in paths:
        parent, _, leaf = (prefix + path).rpartition("/")
        entry = _entry(at.trees.get(parent), leaf)
        kind, st = gitops.entry_kind(root / path)
        if entry is None or entry[0] == TREE_MODE:
            if kind == "gone":
                continue
            return None
        if kind == "gone":
            changed.append(path)
            continue
        if kind != "file" or entry[0] not in (b"100644", b"100755"):
            return None
        try:
            data = read_regular(root / path)
        except OSError:
            return None
        mode = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
        if mode != entry[0] or object_id(fmt, "blob", data) != entry[2].hex():
            changed.append(path)
    return sorted(changed)


_PLAIN_PART = re.compile(r"[A-Za-z0-9_+,=@%-][A-Za-z0-9 ._+,=@%-]*")


def _plain(path: str) -> bool:
    """A path of ASCII letters, digits and ``._+,=@%-`` (spaces inside a name), no part ``.``,
    ``..``, ending in a dot or a space, or beginning with ``.git`` (whatever its case): one git
    takes as it is everywhere. Anything else (``GIT~1``, ``.git.``, a ``.gitmodules``, a name
    with a quote, a line break, a carriage return or letters of other scripts, which git
    checks against NTFS and HFS aliases of ``.git`` or unquotes on ``--stdin-paths``) is left to
    git's own commands."""
    return all((_PLAIN_PART.fullmatch(part) or part.startswith(".") and _PLAIN_PART.fullmatch(part[1:]))
               and part not in (".", "..") and not part.endswith((".", " "))
               and not part.lower().startswith(".git") for part in path.split("/"))


# ---------------------------------------------------------------- replaying commits


@dataclass(frozen=True)
class Change:
    """One path a commit changed: (mode, id) before and after; None where there was no file."""

    path: str
    old: tuple[bytes, str] | None
    new: tuple[bytes, str] | None


@dataclass(frozen=True)
class Picked:
    """A commit of a range: its id, its parents' and the paths it changed from its first parent."""

    sha: str
    parents: tuple[str, ...]
    changes: tuple[Change, ...]


def commits_between(root: Path, base: str, tip: str, upstream: str | None = None) -> list[Picked] | None:
    """The commits of ``base..tip``, oldest first, each with the files it changed (one ``git log``;
    a merge's changes are not listed). With ``upstream``: None when one of them has its patch in
    ``base..upstream`` already (git's rebase drops such a commit, even where it would not be
    empty: the upstream may have changed it back since)."""
    spec = [f"{base}..{tip}"] if upstream is None else \
        ["--cherry-mark", "--right-only", f"{upstream}...{tip}", f"^{base}"]
    out = gitops.run_git(Path(root), ["log", "--reverse", "--no-renames", "--raw", "-z", "--no-abbrev",
                                      "--no-color", "--no-show-signature", "--format=%x01%m%H %P",
                                      *spec]).stdout
    tokens, picked, i = out.split(b"\0"), [], 0
    while i < len(tokens):
        token = tokens[i].lstrip(b"\n")
        i += 1
        if not token:
            continue
        if token.startswith(b"\x01"):
            if token[1:2] == b"=":  # its patch is upstream's already
                return None
            sha, *parents = token[2:].decode().split()
            picked.append(Picked(sha, tuple(parents), ()))
        elif token.startswith(b":") and picked and i < len(tokens):
            fields, path = token[1:].split(), os.fsdecode(tokens[i])
            i += 1
            if len(fields) != 5:
                raise MementoError(f"git log --raw gave {token!r}")
            old = None if set(fields[2].decode()) == {"0"} else (fields[0], fields[2].decode())
            new = None if set(fields[3].decode()) == {"0"} else (fields[1], fields[3].decode())
            last = picked[-1]
            picked[-1] = Picked(last.sha, last.parents, (*last.changes, Change(path, old, new)))
        else:
            raise MementoError(f"git log --raw gave {token[:120]!r}")
    return picked


# A three-way merge of one file's bytes (base, the side replayed onto, the replayed commit's),
# None when it cannot merge them.
Merge = Callable[[bytes, bytes, bytes], "bytes | None"]
_REGULAR = (b"100644", b"100755")


def replay(root: Path, onto: str, base: str, tip: str, ident: Mapping[str, str],
           resolvers: Mapping[str, Merge]) -> tuple[str, dict[str, str]] | None:
    """``git rebase onto`` of the linear history ``base..tip``, in memory and written with one git
    command: each commit applied onto the last, a file both sides changed merged as git merges it
    (``git merge-file``) or, where that conflicts, by the resolver of its path (from the top
    level). Author and message are kept, the committer is ``ident`` now; a commit that becomes
    empty is dropped, one that was empty kept. Returns the new tip and old id -> new id of the
    commits kept; None, having written nothing, when git's own rebase must do it (a merge in the
    range, a submodule, a conflict no resolver settles, an unusual commit header or identity, a
    commit whose patch the upstream has: git's rebase drops it)."""
    if not can_build(ident):
        return None
    picked = commits_between(root, base, tip, onto)
    if picked is None:
        return None
    prev = base
    for p in picked:
        if p.parents != (prev,) or any(side and side[0] == b"160000" for c in p.changes for side in (c.old, c.new)):
            return None
        prev = p.sha
    if not picked or prev != tip:
        return None
    fmt = object_format(root)
    docs = sorted({c.path for p in picked for c in p.changes if c.path in resolvers})
    blobs = sorted({side[1] for p in picked for c in p.changes if c.path in resolvers
                    for side in (c.old, c.new) if side})
    try:
        at = read_at(root, onto, docs, within=sorted({c.path for p in picked for c in p.changes}),
                     also=[p.sha for p in picked] + blobs)
    except MementoError:  # a folder whose name has a line break cannot be asked for in a batch
        return None
    raw = {p.sha: got[2] for p, got in zip(picked, at.also, strict=False) if got and got[1] == "commit"}
    data = {got[0]: got[2] for got in at.also[len(picked):] if got}
    data.update({found[1]: found[2] for found in at.files.values() if found})
    try:
        return _replayed(root, at, fmt, picked, raw, data, ident, resolvers)
    except _NotHere:
        return None


class _NotHere(Exception):
    """The replay cannot do what git's rebase would: it leaves it to git."""


def _replayed(root, at, fmt, picked, raw, data, ident, resolvers) -> tuple[str, dict[str, str]]:
    trees, objects, moved = Trees(at, fmt), [], {}
    parent, parent_tree = at.commit, at.tree
    for p in picked:
        for c in p.changes:
            _apply(root, trees, c, fmt, data, objects, resolvers)
        try:
            tree, made = trees.objects()
        except MementoError:
            raise _NotHere() from None
        if tree == parent_tree and p.changes:
            continue  # it became empty: its changes are there already
        objects += made
        commit = _rewritten(raw.get(p.sha), tree, parent, ident)
        objects.append(("commit", commit))
        parent, parent_tree = object_id(fmt, "commit", commit), tree
        moved[p.sha] = parent
    write_objects(root, objects)
    return parent, moved


def _apply(root, trees: Trees, c: Change, fmt: str, data: dict, objects: list, resolvers) -> None:
    """One change of a replayed commit onto ``trees``: taken where that side still has what the
    commit changed, merged where both changed it."""
    here = trees.get(c.path)
    mine = (c.new[0], bytes.fromhex(c.new[1])) if c.new else None
    before = (c.old[0], bytes.fromhex(c.old[1])) if c.old else None
    if here == mine:
        return
    try:
        if here == before:
            trees.set(c.path, mine)
            return
    except MementoError:
        raise _NotHere() from None
    merge = resolvers.get(c.path)
    if merge is None or here is None or mine is None or here[0] != mine[0] or here[0] not in _REGULAR:
        raise _NotHere()
    sides = [data.get(c.old[1]) if c.old else b"", data.get(here[1].hex()), data.get(c.new[1])]
    if any(side is None for side in sides):
        raise _NotHere()
    merged = None if _both_appended(*sides) or changes_meet(*sides) else merge_file(root, *sides)
    if merged is None:
        merged = merge(*sides)
    if merged is None:
        raise _NotHere()
    blob = object_id(fmt, "blob", merged)
    data[blob] = merged
    objects.append(("blob", merged))
    trees.set(c.path, (mine[0], bytes.fromhex(blob)))


def _both_appended(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether both sides only added different lines at the end of ``base`` (a log both wrote
    to): git's merge conflicts there, so it is not asked."""
    if base and not base.endswith(b"\n"):
        return False
    return (ours.startswith(base) and theirs.startswith(base) and len(ours) > len(base) < len(theirs)
            and not ours.startswith(theirs) and not theirs.startswith(ours))


def merge_file(root: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """Git's own three-way merge of one file's bytes (``git merge-file -p``); None when it
    conflicts (or git could not merge them: binary data). Changes every diff pairs alike, with
    an unchanged line between every one of one side and every one of the other, are merged here
    (:func:`merge_apart`), as git merges them: a fleet's replay merges the plan once a replayed
    commit, and a process started for each, on hosts that race, was five a task. Anything else
    (a status log's entries put in among its repeated lines, a block moved) is git's."""
    merged = merge_apart(base, ours, theirs)
    if merged is not None:
        return merged
    with tempfile.TemporaryDirectory(prefix="memento-merge-") as tmp:
        files = []
        for name, content in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(content)
            files.append(str(Path(tmp) / name))
        proc = gitops.run_git(Path(root), ["merge-file", "-p", "-q", *files], check=False)
    return proc.stdout if proc.returncode == 0 else None


_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def _lines(data: bytes) -> list[bytes]:
    """``data`` cut after each newline, as git's merge cuts it (the last line may lack one)."""
    return _LINE.findall(data)


def changes_meet(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether git's merge must conflict: git's diff of each side can only be one
    (:func:`_forced_hunks`), and changes of the two sides that overlap or touch (no unchanged
    line of base between them) leave that stretch of base two different ways. Git is then not
    asked, and the document's resolver, which merges any two versions, merges them (a fleet's
    results all change the plan's Meta counters; their replay goes to the plan's resolver
    straight away). False where git might merge them (it is asked)."""
    if b"\0" in base or b"\0" in ours or b"\0" in theirs:
        return False
    lines = _lines(base)
    mine, other = _forced_hunks(lines, _lines(ours)), _forced_hunks(lines, _lines(theirs))
    if not mine or not other:
        return False
    hunks = sorted([(start, end, put, 0) for start, end, put in mine] +
                   [(start, end, put, 1) for start, end, put in other], key=lambda hunk: (hunk[0], hunk[1]))
    group: list[tuple[int, int, list[bytes], int]] = []
    for hunk in [*hunks, None]:
        if hunk is not None and group and hunk[0] <= max(h[1] for h in group):
            group.append(hunk)  # touches the stretch so far: git's merge joins them
            continue
        if len({h[3] for h in group}) == 2:
            start, end = group[0][0], max(h[1] for h in group)
            versions = []
            for side in (0, 1):
                out, at = [], start
                for h_start, h_end, put, _ in (h for h in group if h[3] == side):
                    out += lines[at:h_start] + put
                    at = h_end
                versions.append(out + lines[at:end])
            if versions[0] != versions[1]:
                return True
        group = [hunk] if hunk is not None else []
    return False


def merge_apart(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The two sides' changes of ``base`` both applied, as ``git merge-file`` applies them, when
    git's diff of each side can only be one (:func:`_forced_hunks`) and a line neither side
    changed stands between every change of one side and every change of the other; None for
    any other case (changes that meet, touch or are the same, a block moved, a repeated line
    put in or taken out, binary data), which git's merge decides.

    Why it is git's merge: with each side's changes known as git's diff finds them, git's
    merge takes both sides' changes where an unchanged line of base stands between them
    (``xdl_merge``), and puts in each change's lines as that side has them."""
    if b"\0" in base or b"\0" in ours or b"\0" in theirs:
        return None
    lines = _lines(base)
    mine, other = _forced_hunks(lines, _lines(ours)), _forced_hunks(lines, _lines(theirs))
    if mine is None or other is None:
        return None
    if any(not (a2 < b1 or b2 < a1) for a1, a2, _ in mine for b1, b2, _ in other):
        return None
    out, at = [], 0
    for start, end, put in sorted(mine + other, key=lambda hunk: (hunk[0], hunk[1])):
        out += lines[at:start] + put
        at = end
    return b"".join(out + lines[at:])


def _forced_hunks(base: list[bytes], side: list[bytes]) -> list[tuple[int, int, list[bytes]]] | None:
    """What ``side`` changed of ``base`` ((start, end, the lines put there) in base's lines) when
    every diff, git's among them, must find just that; else None.

    Take out of each the lines the other has nowhere (no diff can pair them): when what is left
    is the same sequence in both, pairing all of it is the one longest common subsequence, so
    git's diff (Myers, on the lines its preprocessing keeps) pairs it, and the lines taken out
    are the changes. Git's preprocessing also sets aside a line the other side has many times
    when it lies between unpaired lines both ways (``xdl_clean_mmatch``): where that may happen
    (a line the other has twice or more, reaching unpaired lines above and below through such
    lines) it is left to git. Git slides a change only past a line equal to the change's other
    end, and a change here holds no line the other side has: none slides."""
    in_side, in_base = collections.Counter(side), collections.Counter(base)
    kept_base = [at for at, line in enumerate(base) if line in in_side]
    kept_side = [at for at, line in enumerate(side) if line in in_base]
    if [base[at] for at in kept_base] != [side[at] for at in kept_side]:
        return None  # a line moved, or one the other has put in or taken out: git pairs them its way
    if _may_set_aside(base, in_side) or _may_set_aside(side, in_base):
        return None
    hunks, was_base, was_side = [], 0, 0
    for at_base, at_side in [*zip(kept_base, kept_side, strict=True), (len(base), len(side))]:
        if at_base > was_base or at_side > was_side:
            hunks.append((was_base, at_base, side[was_side:at_side]))
        was_base, was_side = at_base + 1, at_side + 1
    return hunks


def _may_set_aside(lines: list[bytes], other: collections.Counter) -> bool:
    """Whether git's diff could set aside one of ``lines`` as a line ``other`` has many times
    (``xdl_cleanup_records``): one ``other`` has twice or more (git's threshold is at least
    that) from which, through such lines, an unpaired line is reached both above and below."""
    many = [other[line] >= 2 for line in lines]
    unpaired = [other[line] == 0 for line in lines]
    reach_up, seen = [], False
    for at in range(len(lines)):
        reach_up.append(seen)
        seen = unpaired[at] or (seen and many[at])
    seen = False
    for at in range(len(lines) - 1, -1, -1):
        if many[at] and reach_up[at] and seen:
            return True
        seen = unpaired[at] or (seen and many[at])
    return False


_HEADERS = (b"tree", b"parent", b"author", b"committer", b"encoding")


def _rewritten(original: bytes | None, tree: str, parent: str, ident: Mapping[str, str]) -> bytes:
    """``original`` (a commit's bytes) on ``tree`` and ``parent``, committed by ``ident`` now, as
    a rebase rewrites it; _NotHere when it has headers a rebase would treat otherwise (a signature)."""
    if original is None or b"\n\n" not in original:
        raise _NotHere()
    head, _, message = original.partition(b"\n\n")
    lines = head.split(b"\n")
    if any(line.split(b" ", 1)[0] not in _HEADERS for line in lines):
        raise _NotHere()
    author = [line for line in lines if line.startswith(b"author ")]
    extra = [line for line in lines if line.startswith(b"encoding ")]
    if len(author) != 1:
        raise _NotHere()
    committer = _signature(ident["GIT_COMMITTER_NAME"], ident["GIT_COMMITTER_EMAIL"]).encode()
    return b"\n".join([f"tree {tree}".encode(), f"parent {parent}".encode(), author[0],
                       b"committer " + committer, *extra]) + b"\n\n" + message
