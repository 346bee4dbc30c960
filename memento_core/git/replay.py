"""A host's unpushed commits replayed onto the remote's (SPEC §12), as ``git rebase`` would, in a
handful of git commands where the rebase starts a few dozen: each commit applied in memory
(trees.py), a file both sides changed merged as git merges it (merge.py) or by its document's
resolver, everything written by one ``unpack-objects``. Where the replay cannot do what the
rebase would, it returns None and the caller runs git's own rebase.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import MementoError
from .commit_fast import can_build, signature
from .merge import both_appended, changes_meet, merge_file
from .objects import object_format, object_id, write_objects
from .run import run_git
from .trees import Trees, read_at


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
    out = run_git(Path(root), ["log", "--reverse", "--no-renames", "--raw", "-z", "--no-abbrev",
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
    merged = None if both_appended(*sides) or changes_meet(*sides) else merge_file(root, *sides)
    if merged is None:
        merged = merge(*sides)
    if merged is None:
        raise _NotHere()
    blob = object_id(fmt, "blob", merged)
    data[blob] = merged
    objects.append(("blob", merged))
    trees.set(c.path, (mine[0], bytes.fromhex(blob)))


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
    committer = signature(ident["GIT_COMMITTER_NAME"], ident["GIT_COMMITTER_EMAIL"]).encode()
    return b"\n".join([f"tree {tree}".encode(), f"parent {parent}".encode(), author[0],
                       b"committer " + committer, *extra]) + b"\n\n" + message
