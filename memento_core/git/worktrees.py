"""The git worktrees of parallel workers (SPEC §12): `.memento/worktrees/<ID>/` on `memento/<ID>`.

Plain git plumbing, run the hardened way (run.run_git): make a task's
worktree from a commit, rebase its one commit onto the main branch's HEAD
(naming the conflicting paths when it cannot), read what that commit changes,
remove a worktree and its branch, and list the ones that are there. Nothing
here edits a plan, a note or the status log: tick/workers.py and
tick/crew_result.py do that, in the main work tree, under the tick's lock.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from ..runlog import rollback_folder
from ..workspace import Workspace
from .commit import Author, identity_env
from .objects import GONE, Blob, hash_blobs
from .repo import head
from .run import git_env, run_git

BRANCH_PREFIX = "memento/"
WORKTREES_REL = ".memento/worktrees"


def worktrees_dir(ws: Workspace) -> Path:
    return ws.memento_dir / "worktrees"


def worktree_path(ws: Workspace, task_id: str) -> Path:
    return worktrees_dir(ws) / task_id


def branch_ref(task_id: str) -> str:
    """The branch a worker of ``task_id`` takes when no branch of that name exists."""
    return f"refs/heads/{BRANCH_PREFIX}{task_id}"


def free_branch(ws: Workspace, task_id: str) -> str:
    """A branch name for a worker of ``task_id`` that no branch has: `memento/<ID>`, else
    `memento/<ID>+2`, `+3`, … ('+' is in no task id): a person's `memento/<ID>` is never touched."""
    taken = refs(ws.root)
    name, n = branch_ref(task_id), 1
    while name in taken:
        n += 1
        name = f"{branch_ref(task_id)}+{n}"
    return name


def task_of(ref: str) -> str:
    """The task id of a worker's branch name (``refs/heads/memento/T-1+2`` -> ``T-1``), '' for another ref."""
    prefix = "refs/heads/" + BRANCH_PREFIX
    return ref[len(prefix):].split("+", 1)[0] if ref.startswith(prefix) else ""


def refs(root: Path) -> dict[str, str]:
    """Every ref under refs/heads/ and its commit."""
    out = run_git(root, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"]).stdout
    found = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        sha, _, name = line.partition(" ")
        found[name] = sha
    return found


def head_ref(root: Path) -> str | None:
    """The branch the main work tree is on (``refs/heads/main``), None when detached."""
    proc = run_git(root, ["symbolic-ref", "-q", "HEAD"], check=False)
    return proc.stdout.decode("utf-8", "surrogateescape").strip() or None


def add(ws: Workspace, task_id: str, base: str, branch: str) -> Path:
    """A fresh worktree for ``task_id`` on the new branch ``branch`` (free_branch) at ``base``
    (a leftover worktree of the task is removed first, and only a branch of Memento's with it)."""
    remove(ws, task_id)
    path = worktree_path(ws, task_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    run_git(ws.root, ["worktree", "add", "--quiet", "-b", branch[len("refs/heads/"):], str(path), base])
    return path


def remove(ws: Workspace, task_id: str, branch: str | None = None, recorded: str = "") -> list[str]:
    """Remove the task's worktree and its branch: ``branch`` when the caller knows it, else the
    one the task's record names (``recorded``) or its worktree has checked out (ours_of); never
    another branch. What was removed (nothing when neither was there)."""
    removed = []
    path = worktree_path(ws, task_id)
    for ref in sorted({branch} if branch else ours_of(ws, task_id, recorded)):
        if task_of(ref) != task_id:
            continue  # a name that is no worker's of this task (a forged record, a person's checkout)
        if run_git(ws.root, ["rev-parse", "-q", "--verify", ref], check=False).returncode == 0:
            run_git(ws.root, ["update-ref", "-d", ref], check=False)
            removed.append(f"branch {ref[len('refs/heads/'):]}")
    if path.exists() or path.is_symlink():
        run_git(ws.root, ["worktree", "remove", "--force", "--force", str(path)], check=False)
        if path.exists() or path.is_symlink():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        removed.insert(0, f"{WORKTREES_REL}/{task_id}")
    run_git(ws.root, ["worktree", "prune"], check=False)
    return removed


def ours_of(ws: Workspace, task_id: str, recorded: str = "", linked: dict[str, str] | None = None) -> set[str]:
    """The branches of Memento's for ``task_id``: ``recorded``, the one its record names ('' when
    none: tick/record.py reads it), the one its worktree under `.memento/worktrees/` has checked
    out (``linked``: _linked_branches, when known)."""
    found = {recorded} if recorded else set()
    where = str(worktree_path(ws, task_id).resolve())
    found.update(ref for ref, at in (_linked_branches(ws) if linked is None else linked).items() if at == where)
    return found


def save_work(ws: Workspace, task_id: str, base: str | None) -> list[str]:
    """Before a dead worker's worktree goes: its changes since ``base`` (`git diff`) and its
    commits (`format-patch`) saved under logs/rollback/, as every rollback saves first; what was saved."""
    path = worktree_path(ws, task_id)
    if not base or not (path / ".git").exists():
        return []
    run_git(path, ["add", "-A", "-N", "--", "."], check=False)  # untracked files show in the diff
    diff = run_git(path, ["diff", "--binary", base, "--"], check=False).stdout
    commits = run_git(path, ["format-patch", "--stdout", "--binary", f"{base}..HEAD"], check=False).stdout
    if not diff and not commits:
        return []
    dest = rollback_folder(ws, f"stale-{task_id}-worktree")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "worktree.diff").write_bytes(diff)
    (dest / "commits.patch").write_bytes(commits)
    return [f"its work saved in {ws.rel(dest)}"]


def present(ws: Workspace, recorded: Callable[[str], str]) -> list[str]:
    """The task ids that have a worktree folder or a branch of Memento's now (ours_of: the one its
    record names, ``recorded(task_id)``, one a worktree under `.memento/worktrees/` has checked
    out). A person's own `memento/<name>` branch is none of these and stays, even one named like
    a task."""
    ids = set()
    folder = worktrees_dir(ws)
    if folder.is_dir():
        ids.update(p.name for p in folder.iterdir())
    linked = _linked_branches(ws)
    for name in refs(ws.root):
        task_id = task_of(name)
        if task_id and task_id not in ids and name in ours_of(ws, task_id, recorded(task_id), linked):
            ids.add(task_id)
    return sorted(ids)


def _linked_branches(ws: Workspace) -> dict[str, str]:
    """The branches checked out by a worktree under `.memento/worktrees/` (`git worktree list`):
    branch -> the worktree's resolved path."""
    out = run_git(ws.root, ["worktree", "list", "--porcelain", "-z"], check=False).stdout
    folder, found, where = str(worktrees_dir(ws).resolve()), {}, ""
    for field in out.decode("utf-8", "surrogateescape").split("\0"):
        if field.startswith("worktree "):
            where = str(Path(field[len("worktree "):]).resolve())
        elif field.startswith("branch ") and where.startswith(folder + "/"):
            found[field[len("branch "):]] = where
    return found


def rebase(worktree: Path, onto: str, author: Author | None = None) -> tuple[str | None, list[str], str]:
    """Rebase the worktree's branch onto ``onto``: (the new tip or None, the conflicting paths, git's
    message). On a conflict the rebase is aborted and the branch is as it was."""
    env = git_env(identity_env(worktree, author))
    proc = run_git(worktree, ["rebase", "--quiet", "--no-autostash", onto], env=env, check=False)
    if proc.returncode == 0:
        return head(worktree), [], ""
    said = proc.stderr.decode("utf-8", "replace").strip() or proc.stdout.decode("utf-8", "replace").strip()
    listed = run_git(worktree, ["diff", "--name-only", "-z", "--diff-filter=U"], check=False).stdout
    conflicts = sorted(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p)
    run_git(worktree, ["rebase", "--abort"], env=env, check=False)
    return None, conflicts, said


def changes_of(root: Path, commit: str) -> dict[str, Blob]:
    """What ``commit`` changes against its parent: path -> (mode, blob id), GONE when deleted."""
    out = run_git(root, ["diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--root", commit]).stdout
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, Blob] = {}
    for i in range(0, len(parts) - 1, 2):
        meta, path = parts[i], parts[i + 1]
        fields = meta.lstrip(":").split()
        if len(fields) < 5:
            continue
        mode, oid, kind = fields[1], fields[3], fields[4]
        found[path] = GONE if kind.startswith("D") else (mode, oid)
    return found


def bring_into(root: Path, onto: str, blobs: dict[str, Blob]) -> list[str]:
    """Make the main work tree's files ``blobs`` (a commit's changes on top of ``onto``: written,
    or removed when gone), each only while it is exactly as ``onto`` has it; the paths found
    otherwise (a person's edit, an untracked file of theirs). When there are any, the files
    already written are put back and none is left changed.

    Checked twice: all of them by git (``hash-object``, as ``git add`` would see them) before
    the first is written, then each one's bytes against the bytes read at that check just
    before its rename, so an edit that lands in between is kept byte for byte, not replaced.
    """
    root = Path(root)
    paths = sorted(blobs)
    seen = {p: _read(root / p) for p in paths}
    before = _tree_blobs(root, onto, paths)
    now = hash_blobs(root, paths)
    busy = [p for p in paths if now.get(p) != before.get(p, GONE)]
    if busy:
        return busy
    new = {p: _blob_data(root, blob) for p, blob in blobs.items()}
    done: list[str] = []
    for path in paths:
        if not _replace_if(root / path, seen[path], new[path]):
            for back in reversed(done):
                _replace_if(root / back, new[back], seen[back])
            return [path]
        done.append(path)
    return []


_Content = tuple[str, bytes] | None  # ("file" | "exec" | "link", bytes), None when absent


def _read(path: Path) -> _Content:
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return "link", os.fsencode(os.readlink(path))
        if stat.S_ISREG(st.st_mode):
            return ("exec" if st.st_mode & 0o111 else "file"), path.read_bytes()
        return "other", b""
    except (FileNotFoundError, NotADirectoryError):
        return None


def _blob_data(root: Path, blob: Blob) -> _Content:
    if blob == GONE:
        return None
    mode, oid = blob
    data = run_git(root, ["cat-file", "blob", oid]).stdout
    return ("link" if mode == "120000" else "exec" if mode == "100755" else "file"), data


def _tree_blobs(root: Path, commit: str, paths: list[str]) -> dict[str, Blob]:
    """What ``commit`` has at ``paths`` (relative to ``root``): path -> (mode, blob id); absent ones left out."""
    found: dict[str, Blob] = {}
    for batch in range(0, len(paths), 200):
        out = run_git(root, ["ls-tree", "-z", commit, "--", *paths[batch:batch + 200]]).stdout
        for entry in out.decode("utf-8", "surrogateescape").split("\0"):
            meta, _, name = entry.partition("\t")
            fields = meta.split()
            if len(fields) == 3 and fields[1] == "blob":
                found[name] = (fields[0], fields[2])
    return found


def _replace_if(path: Path, expected: _Content, new: _Content) -> bool:
    """``path`` becomes ``new`` (removed when None) if it is ``expected`` at this moment."""
    if new is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.memento-{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)
        kind, data = new
        if kind == "link":
            os.symlink(os.fsdecode(data), tmp)
        else:
            tmp.write_bytes(data)
            tmp.chmod(0o755 if kind == "exec" else 0o644)
    if _read(path) != expected:  # the last look, just before the rename
        if new is not None:
            tmp.unlink(missing_ok=True)
        return False
    if new is None:
        path.unlink(missing_ok=True)
    else:
        os.replace(tmp, path)
    return True

