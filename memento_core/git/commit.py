"""Memento's commits, made with plumbing (SPEC §4 step 13): exactly the given paths are committed,
whatever else is staged, and the project's commit hooks do not run; and the agent's own
commits folded back into the work tree (:func:`fold_commits`).

HEAD's trees are edited in memory and written with the commit by one ``unpack-objects``
(commit_fast.commit_here, which the tick and memory pass in as ``build``); else a temporary
index, ``write-tree``, ``commit-tree``; then ``update-ref``. The identity is Memento's
configured author, else the user's, else Memento's own (:func:`identity_env`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..crashpoints import crash_point
from ..errors import MementoError
from .index import remove_index
from .objects import GONE, Blob
from .repo import empty_tree, head, repo_dirs
from .run import batches, git_env, nul_paths, output, run_git, split_z

# (name, email) of a commit's author, as memento.toml's [git] author gives it.
Author = tuple[str, str]

MEMENTO_NAME = "Memento"

MEMENTO_EMAIL = "memento@localhost"


def _user_config(root: Path) -> tuple[str, str]:
    """user.name and user.email from git config ('' when unset)."""
    proc = run_git(root, ["config", "-z", "--get-regexp", r"^user\.(name|email)$"], check=False)
    values: dict[str, str] = {}
    for item in split_z(proc.stdout.decode("utf-8", "replace")):
        key, _, value = item.partition("\n")
        values[key] = value.strip()
    return values.get("user.name", ""), values.get("user.email", "")


def identity_env(root: Path, author: Author | None = None) -> dict[str, str]:
    """GIT_AUTHOR_*/GIT_COMMITTER_* for Memento's commits.

    ``author`` ((name, email): memento.toml's ``[git] author``, parsed where the config is
    read) wins; else the user's identity (GIT_AUTHOR_* / GIT_COMMITTER_* variables, then git
    config user.name and user.email); else Memento <memento@localhost>.
    """
    if author:
        name, email = author
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
    for batch in batches(dirs):
        data = output(
            root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *batch]
        )
        files.update(split_z(data))
    return sorted(files)


def _index_info(prefix: str, blobs: dict[str, Blob], width: int = 40) -> bytes:
    """``update-index --index-info`` lines (their paths are from the top level, hence ``prefix``;
    ``width``: the repository's ids' length, which a removal's zero id must have)."""
    return b"".join(f"{mode} {'0' * width if (mode, oid) == GONE else oid} 0\t".encode()
                    + os.fsencode(prefix + path) + b"\0" for path, (mode, oid) in sorted(blobs.items()))


class HeadMoved(MementoError):
    """A commit refused because HEAD was not the commit it was to be made on (``onto``), or moved
    while it was being made: nothing moved."""


def commit_paths(root: Path, paths: Iterable[str], message: str, author: Author | None = None,
                 blobs: dict[str, Blob] | None = None, build: Callable | None = None,
                 onto: str | None = None) -> str:
    """Commit exactly ``paths`` as they are in the work tree; returns the new commit's sha.

    New, modified and deleted files are all recorded; other staged or dirty
    files are neither committed nor unstaged; listed paths that did not
    change are fine; a folder stands for the files below it that git
    tracks or would add (.gitignore applies). Works on an unborn branch.
    Commit hooks do not run. ``blobs`` (from :func:`hash_blobs`): those paths are
    committed as they were when hashed, not as they are now.
    Raises MementoError (with git's message) on failure, including when
    the commit would change nothing. ``build``: see :func:`make_commit`. ``onto``: the commit
    HEAD must be (else nothing moves and MementoError says so): never a HEAD moved meanwhile.
    """
    made = make_commit(root, paths, message, author, blobs, build)
    crash_point("commit:before-ref")
    if onto is not None and made.parent != onto:
        raise HeadMoved(f"HEAD moved in {root} (to {(made.parent or '')[:7]}, expected {onto[:7]}) "
                           f"before {made.subject!r} was committed")
    if not adopt_commit(root, made):
        raise HeadMoved(f"HEAD moved in {root} while {made.subject!r} was being committed")
    return made.sha


@dataclass(frozen=True)
class MadeCommit:
    """A commit on HEAD's parent made but not yet HEAD (:func:`make_commit`): its sha, the HEAD it
    was made on (None on an unborn branch), its subject and the paths it committed."""

    sha: str
    parent: str | None
    subject: str
    paths: tuple[str, ...]


def make_commit(root: Path, paths: Iterable[str], message: str, author: Author | None = None,
                blobs: dict[str, Blob] | None = None, build: Callable | None = None) -> MadeCommit:
    """The commit :func:`commit_paths` makes, written to the object store only: no ref moves and
    the index is untouched, so a commit that must first win a push (a fleet's claim) has nothing
    to undo when it loses. :func:`adopt_commit` makes it HEAD. ``build`` (commit_fast.commit_here,
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
                input=nul_paths(from_disk),
                env=env,
            )
        if blobs:
            run_git(root, ["update-index", "--replace", "-z", "--index-info"],
                    input=_index_info(repo_dirs(root).prefix, blobs, len(empty_tree(root))), env=env)
        tree = output(root, ["write-tree"], env=env).strip()
    finally:
        remove_index(tmp_index)
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
    sha = output(root, args, input=body.encode("utf-8"), env=git_env(ident)).strip()
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
            input=nul_paths(made.paths),
        )
    return True


def amend_paths(root: Path, paths: Iterable[str], author: Author | None = None, *, onto: str | None = None,
                build: Callable | None = None) -> str | None:
    """Fold ``paths`` as they are in the work tree into HEAD's commit (the same parents and
    message): the new commit's sha. Only for a commit nothing else has seen yet (the tick's own,
    under its lock, before any push). Raises MementoError when HEAD has no commit. ``onto``:
    only when HEAD is that commit (None, nothing changed, when it is not). ``build``
    (commit_fast.commit_here) makes the commit in fewer git commands, as for make_commit."""
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
                    input=nul_paths(paths))
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
                input=nul_paths(paths), env=env)
        tree = output(root, ["write-tree"], env=env).strip()
    finally:
        remove_index(tmp_index)
    parents = output(root, ["rev-list", "--parents", "-n", "1", old]).split()[1:]
    raw = output(root, ["cat-file", "commit", old])
    message = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
    args = ["commit-tree", tree, "-F", "-"]
    for parent in reversed(parents):
        args[2:2] = ["-p", parent]
    sha = output(root, args, input=message.encode("utf-8", "surrogateescape"),
                 env=git_env(identity_env(root, author))).strip()
    run_git(root, ["update-ref", "-m", "amend: the tick's documents", "HEAD", sha, old])
    if paths:
        run_git(root, ["reset", "-q", sha, "--pathspec-from-file=-", "--pathspec-file-nul"], input=nul_paths(paths))
    return sha


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
        count = int(output(root, ["rev-list", "--count", current]).strip() or 0)
        ref = output(root, ["symbolic-ref", "-q", "HEAD"]).strip()
        run_git(root, ["update-ref", "-d", ref or "HEAD"])
        run_git(root, ["read-tree", "--empty"])
        return count
    count = int(output(root, ["rev-list", "--count", f"{base}..{current}"]).strip() or 0)
    run_git(root, ["reset", "-q", "--mixed", base])
    return max(count, 1)
