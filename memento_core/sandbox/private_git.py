"""Git inside the sandbox without touching ``.git`` (SPEC §13).

``.git`` is read-only to the confined agent, so ``git add``, ``git mv`` and
``git rm`` would fail on ``index.lock``. :func:`private_git` gives the agent
its own index (a copy of the work tree's: the main one's, or a parallel
worker's worktree's) and its own object folder, both in the worker's scratch
``.memento/worker/git/``, with the repository's real objects as alternates:
staging works, and nothing the agent stages reaches ``.git``. Memento's own
git commands never see them: they run outside the sandbox, with these
variables removed (git.run.git_env), and the commit is built from the blobs
verify checked. Verify gets the repository as it is (its suite may make git
repositories of its own, which these variables would aim at the agent's index).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..git.run import run_git


def _git_paths(root: Path, *names: str) -> list[Path]:
    """``git rev-parse --git-path`` of each name, absolute (a worktree's index is its own)."""
    args = ["rev-parse", "--path-format=absolute", *(a for n in names for a in ("--git-path", n))]
    out = run_git(root, args).stdout.decode("utf-8", "surrogateescape")
    return [Path(line) for line in out.splitlines()]


def private_git(root: Path, scratch: Path) -> dict[str, str]:
    """A fresh private index and object folder in ``scratch`` (emptied first) for the repository
    at ``root``: the variables that aim the agent's git at them."""
    if scratch.is_symlink() or scratch.is_file():
        scratch.unlink()
    elif scratch.exists():
        shutil.rmtree(scratch)
    objects = scratch / "objects"
    objects.mkdir(parents=True)
    index = scratch / "index"
    real_index, real_objects = _git_paths(root, "index", "objects")
    try:
        fd = os.open(real_index, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:  # no index yet (nothing staged): git makes the agent's own
        fd = None
    if fd is not None:
        with os.fdopen(fd, "rb") as src, open(index, "xb") as dst:
            shutil.copyfileobj(src, dst)
    return {"GIT_INDEX_FILE": str(index), "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(real_objects)}


def shared_git_dir(root: Path) -> list[Path]:
    """A worktree's (``.git`` is a file) common git folder, which holds its git folder and the
    objects: bound read-only so git works in the sandbox even where the main project is not
    visible (under the private /tmp). [] for a plain work tree."""
    if not (root / ".git").is_file() or (root / ".git").is_symlink():
        return []
    out = run_git(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"], check=False)
    path = out.stdout.decode("utf-8", "surrogateescape").strip()
    return [Path(path)] if out.returncode == 0 and path else []
