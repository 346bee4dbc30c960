"""Restoring the work tree (SPEC §4 step 14, §13): every change of a failed attempt put back as it
was at the snapshot, after what it undoes has been saved under ``logs/rollback/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from ..runlog import utc_stamp
from .changes import FileChange, tree_size
from .objects import symlinked_parent
from .repo import empty_tree
from .run import batches, nul_paths, run_git

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
    for batch in batches(tracked):
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
            size = tree_size(src)
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
            input=nul_paths(restore),
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
            input=nul_paths(unstage),
        )
    for c in todo:
        if c.path in unlinked:
            continue  # that symlink is gone and the folder it hid has been restored in its place
        if c.kind == "created" or (c.kind == "added" and not c.was_untracked):
            _remove_created(root, c.path)


def reset_index(root: Path, paths: Iterable[str]) -> None:
    """Make the index agree with HEAD for ``paths``; the work tree is not touched."""
    paths = list(paths)
    if paths:
        run_git(Path(root), ["reset", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"],
                input=nul_paths(paths))
