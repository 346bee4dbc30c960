"""A branch per phase (SPEC §19 "Pull requests out", ``land = "pr"``): its name, and moving the work
tree between the base branch and the phases' branches.

A phase is worked on ``memento/<slug of its title>``: lower-case ASCII letters, digits and ``-``,
never shaped like a task id (``memento/T-101`` is a parallel worker's branch, SPEC §12, and the
doctor prunes those), never a name another branch already has. Every git command goes through
run_git; a checkout is git's plain one, which refuses to overwrite a change or an
untracked file (the tick has refused a dirty tree before this, so nothing is there to lose).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from ..errors import MementoError
from ..git.run import run_git

PREFIX = "memento/"
MAX_SLUG = 60
_ID_SHAPED = re.compile(r"[a-z][a-z0-9]*-\d+", re.I)


def slug(title: str) -> str:
    """``Phase 2: Integration`` -> ``phase-2-integration``; ASCII only, never empty, never a task id."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii").lower()
    words = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    words = words[:MAX_SLUG].rstrip("-") or "phase"
    if _ID_SHAPED.fullmatch(words):
        words += "-work"  # "phase-2" reads like the task id PHASE-2
    return words


def branch_name(title: str, taken: set[str]) -> str:
    """``memento/<slug>``, else ``memento/<slug>-2``, ``-3``… when a branch of that name exists."""
    base = PREFIX + slug(title)
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def local_branches(root: Path) -> set[str]:
    out = run_git(root, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"]).stdout
    return set(out.decode("utf-8", "surrogateescape").splitlines())


def current(root: Path) -> str | None:
    """The branch the work tree is on, None when HEAD is detached."""
    proc = run_git(root, ["symbolic-ref", "-q", "--short", "HEAD"], check=False)
    return proc.stdout.decode("utf-8", "surrogateescape").strip() or None


def tip(root: Path, ref: str) -> str:
    """The commit ``ref`` names, '' when there is none."""
    proc = run_git(root, ["rev-parse", "-q", "--verify", f"{ref}^{{commit}}"], check=False)
    return proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else ""


def switch(root: Path, branch: str, *, start: str = "") -> None:
    """The work tree onto ``branch`` (made at ``start`` when given). Git's own checkout, which
    refuses rather than overwrite anything; its words in the MementoError."""
    args = ["checkout", "-q", "--no-guess", *(("-b", branch, start) if start else (branch,))]
    proc = run_git(root, ["-c", "advice.detachedHead=false", *args], check=False)
    if proc.returncode != 0:
        said = " ".join(proc.stderr.decode("utf-8", "replace").split())[:400]
        raise MementoError(f"git could not move the work tree onto {branch}: {said or 'no reason given'}")


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    return run_git(root, ["merge-base", "--is-ancestor", older, newer], check=False).returncode == 0


def fetch_base(root: Path, remote: str, base: str) -> str:
    """The remote's ``base`` fetched into ``refs/remotes/<remote>/<base>``; its commit."""
    ref = f"refs/remotes/{remote}/{base}"
    proc = run_git(root, ["fetch", "-q", "--no-tags", "--no-auto-maintenance", remote,
                          f"+refs/heads/{base}:{ref}"], check=False)
    if proc.returncode != 0:
        said = " ".join(proc.stderr.decode("utf-8", "replace").split())[-400:]
        raise MementoError(f"git fetch {remote} {base} failed: {said or 'no reason given'}")
    return tip(root, ref)


def bring_base_up(root: Path, remote: str, base: str) -> str:
    """The local ``base`` fast-forwarded to the remote's and checked out; '' when done, else why
    not (the local base has commits the remote's has not: nothing is moved)."""
    theirs = fetch_base(root, remote, base)
    if not theirs:
        return f"the remote {remote!r} has no branch {base}"
    ours = tip(root, f"refs/heads/{base}")
    if ours and is_ancestor(root, theirs, ours):  # holds the merge already (and commits of its own to land)
        if current(root) != base:
            switch(root, base)
        return ""
    if ours and not is_ancestor(root, ours, theirs):
        return (f"the local branch {base} has commits that {remote}/{base} does not have, so it cannot be "
                f"brought forward to the merged pull request; push them or move them aside "
                f"(`git branch -f {base} {remote}/{base}` drops them from {base})")
    if current(root) == base:
        run_git(root, ["merge", "-q", "--ff-only", "--no-edit", theirs])
    else:
        run_git(root, ["update-ref", f"refs/heads/{base}", theirs, *((ours,) if ours else ("",))])
        switch(root, base)
    return ""
