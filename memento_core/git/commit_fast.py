"""The fast path of commit.py (issue 42): a commit that changes a few files, built in Python on
HEAD's trees and written by one ``git unpack-objects``, with no index, ref or work tree touched.

A fleet's claim (SPEC §12) is made between a fetch and a push, and any push of another host
that lands inside that window loses this host the race; each git command there widens it. So
the claim's and the tick's commits are built here in three git commands where git's own way
starts five to seven.

Commits are built the way ``git commit-tree`` builds them for the identity given, dated now in
the local time zone; where git would date them otherwise (``GIT_AUTHOR_DATE`` or
``GIT_COMMITTER_DATE`` set) or an identity holds what git would clean out of it,
:func:`can_build` is False and the caller makes its commit with git's own commands.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular
from .commit import MadeCommit
from .objects import GONE, entry_kind, object_format, object_id, symlinked_parent, write_objects
from .repo import head, repo_dirs, repo_path
from .run import run_git
from .trees import TREE_MODE, At, Trees, entry_of, folders_above, read_at

_UNCLEAN = set("<>\n\0")

_CRUD = set(".,:;<>\"\\'")  # what git strips from the ends of a name or an address


def can_build(ident: Mapping[str, str]) -> bool:
    """Whether :func:`commit_bytes` makes what ``git commit-tree`` would for this identity
    (from identity_env): no date of git's own from the environment, nothing in a name
    or an e-mail address git would clean."""
    if os.environ.get("GIT_AUTHOR_DATE") or os.environ.get("GIT_COMMITTER_DATE"):
        return False
    return all(value and value[0] > " " and value[-1] > " " and value[0] not in _CRUD and value[-1] not in _CRUD
               and not _UNCLEAN & set(value) for value in ident.values())


def signature(name: str, email: str) -> str:
    """An author or committer line's value as git writes it, dated now in the local time zone."""
    now = int(time.time())
    return f"{name} <{email}> {now} {time.strftime('%z', time.localtime(now))}"


def commit_bytes(tree: str, parents: Sequence[str], message: str, ident: Mapping[str, str]) -> bytes:
    """A commit object as ``git commit-tree`` writes it for ``ident``, dated now."""
    author = signature(ident["GIT_AUTHOR_NAME"], ident["GIT_AUTHOR_EMAIL"])
    committer = signature(ident["GIT_COMMITTER_NAME"], ident["GIT_COMMITTER_EMAIL"])
    head = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {author}", f"committer {committer}"]
    body = message if message.endswith("\n") else message + "\n"
    return ("\n".join(head) + "\n\n" + body).encode("utf-8")


def commit_here(root: Path, paths: Sequence[str], message: str, ident: Mapping[str, str],
                blobs: Mapping[str, tuple[str, str]], *, amend: bool = False) -> MadeCommit | None:
    """The commit :func:`make_commit` makes (``paths`` from root, as in the work tree, and
    ``blobs``: path -> (mode, id) or GONE), in three git commands where it starts five to
    seven: HEAD's trees along the paths read by one ``cat-file --batch``, the files' blobs
    written by one ``hash-object -w --stdin-paths`` (git's filters applied, as ``update-index
    --add`` applies them), the trees and the commit by one ``unpack-objects``. None, nothing
    written, where git must make it: an identity or a date of git's own (:func:`can_build`),
    an unborn branch, a path that is a folder or something other than a file or a link, a file
    whose executable bit ``core.fileMode`` would read otherwise, a file where a folder must go.
    ``amend``: the commit :func:`amend_paths` makes instead, HEAD's own replaced (its
    parents and message kept, ``message`` unused); its ``parent`` is then the HEAD it replaces."""
    if not can_build(ident):
        return None
    prefix = repo_path(root, "")
    changes: dict[str, tuple[bytes, bytes] | None] = {}
    links: list[tuple[str, bytes]] = []
    files: list[str] = []
    modes: dict[str, bytes] = {}
    for path in paths:
        if path in blobs:
            mode, oid = blobs[path]
            changes[path] = None if (mode, oid) == GONE else (mode.encode(), bytes.fromhex(oid))
            continue
        if symlinked_parent(root, path) is not None:
            return None  # git refuses a path beyond a symbolic link; hash-object would follow it
        kind, st = entry_kind(root / path)
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
        out = run_git(repo_dirs(root).top, ["hash-object", "-w", "--stdin-paths"],
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
    _MADE[str(repo_dirs(root).git_dir)] = At(ids[-1], tree, trees.built(), {}, (), commit)
    return MadeCommit(ids[-1], at.commit, message.splitlines()[0] if message else "", tuple(paths))


# The last commit commit_here made in each repository (by git folder), with the trees it built:
# what the tick folds into it next is built on them without reading HEAD again (issue 42).
_MADE: dict[str, At] = {}


def _made_here(root: Path, within: Sequence[str]) -> At | None:
    """The last commit made here, when HEAD is still it (read from .git's files: head) and
    its trees hold every folder on the way to ``within`` that the commit has; else None."""
    made = _MADE.get(str(repo_dirs(root).git_dir))
    if made is None or head(root) != made.commit:
        return None
    for folder in sorted({f for p in within for f in folders_above(p)}, key=lambda f: f.count("/")):
        if folder in made.trees:
            continue
        parent, _, leaf = folder.rpartition("/")
        if parent not in made.trees or entry_of(made.trees[parent], leaf) is not None:
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
    prefix = repo_path(root, "")
    at = _made_here(root, [prefix + p for p in paths])
    if at is None:
        return None
    fmt = object_format(root)
    changed = []
    for path in paths:
        parent, _, leaf = (prefix + path).rpartition("/")
        entry = entry_of(at.trees.get(parent), leaf)
        kind, st = entry_kind(root / path)
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
