"""worktrees.py against real git: a worker's worktree on a branch no person has, removed with only
Memento's branch; a rebase that conflicts names the paths and leaves the branch as it was; a
commit's changes brought into the main work tree only where it is as the base has it. (Workers
through whole ticks: tests/core/tick/test_workers.py and the crew's test files beside it.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.git import worktrees
from memento_core.git.objects import GONE
from memento_core.workspace import Workspace

from .conftest import git


@pytest.fixture
def ws(tmp_path: Path, git_identity) -> Workspace:
    root = tmp_path / "proj"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("b\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return Workspace(root)


def _no_record(task_id: str) -> str:
    return ""


def test_a_workers_branch_is_never_a_persons_and_only_memento_s_is_removed(ws):
    git(ws.root, "branch", "memento/T-1")  # a person's, named like a worker's
    base = git(ws.root, "rev-parse", "HEAD")
    branch = worktrees.free_branch(ws, "T-1")
    assert branch == "refs/heads/memento/T-1+2" and worktrees.task_of(branch) == "T-1"
    path = worktrees.add(ws, "T-1", base, branch)
    assert path == ws.root / ".memento" / "worktrees" / "T-1"
    assert git(path, "symbolic-ref", "HEAD") == branch
    assert worktrees.head_ref(ws.root) == "refs/heads/main"
    assert worktrees.ours_of(ws, "T-1") == {branch}  # the one its worktree has checked out
    assert worktrees.ours_of(ws, "T-1", recorded="refs/heads/memento/T-1+3") == {branch, "refs/heads/memento/T-1+3"}
    assert worktrees.present(ws, _no_record) == ["T-1"]
    # A record that names another task's branch, or main, removes no branch (a forged one).
    assert worktrees.remove(ws, "T-9", recorded="refs/heads/memento/T-1") == []
    assert worktrees.remove(ws, "T-9", branch="refs/heads/main") == []
    removed = worktrees.remove(ws, "T-1")
    assert removed == [".memento/worktrees/T-1", "branch memento/T-1+2"]
    assert not path.exists() and set(worktrees.refs(ws.root)) == {"refs/heads/main", "refs/heads/memento/T-1"}
    assert worktrees.present(ws, _no_record) == []  # the person's memento/T-1 is no worker's
    assert worktrees.present(ws, lambda task: "refs/heads/memento/T-1" if task == "T-1" else "") == ["T-1"]


def test_a_rebase_that_conflicts_names_the_paths_and_leaves_the_branch_as_it_was(ws):
    base = git(ws.root, "rev-parse", "HEAD")
    path = worktrees.add(ws, "T-1", base, worktrees.free_branch(ws, "T-1"))
    (path / "a.txt").write_text("one\nTWO by the worker\nthree\n")
    git(path, "commit", "-qam", "worker")
    tip = git(path, "rev-parse", "HEAD")
    (ws.root / "a.txt").write_text("one\ntwo by the person\nthree\n")
    git(ws.root, "commit", "-qam", "person")
    onto = git(ws.root, "rev-parse", "HEAD")
    new, conflicts, said = worktrees.rebase(path, onto)
    assert (new, conflicts) == (None, ["a.txt"]) and "could not apply" in said
    assert git(path, "rev-parse", "HEAD") == tip and git(path, "status", "--porcelain") == ""
    git(ws.root, "reset", "-q", "--hard", base)
    (ws.root / "b.txt").write_text("b by the person\n")
    git(ws.root, "commit", "-qam", "person, elsewhere")
    onto = git(ws.root, "rev-parse", "HEAD")
    new, conflicts, _ = worktrees.rebase(path, onto, ("A Person", "person@example.invalid"))
    assert conflicts == [] and git(path, "rev-parse", f"{new}^") == onto
    assert git(path, "log", "-1", "--format=%cn", new) == "A Person"  # the rebase committed as the author given


def test_a_commit_s_changes_come_into_the_main_tree_only_where_it_is_as_the_base_has_it(ws):
    base = git(ws.root, "rev-parse", "HEAD")
    path = worktrees.add(ws, "T-1", base, worktrees.free_branch(ws, "T-1"))
    (path / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    (path / "new.txt").write_text("new\n")
    (path / "b.txt").unlink()
    git(path, "add", "-A")
    git(path, "commit", "-qm", "worker")
    blobs = worktrees.changes_of(path, "HEAD")
    assert blobs == {"a.txt": ("100644", git(path, "rev-parse", "HEAD:a.txt")), "b.txt": GONE,
                     "new.txt": ("100644", git(path, "rev-parse", "HEAD:new.txt"))}
    (ws.root / "new.txt").write_text("a person's own\n")  # untracked, where the commit puts a file
    assert worktrees.bring_into(ws.root, base, blobs) == ["new.txt"]
    assert (ws.root / "a.txt").read_text() == "one\ntwo\nthree\n" and (ws.root / "b.txt").exists()
    assert (ws.root / "new.txt").read_text() == "a person's own\n"
    (ws.root / "new.txt").unlink()
    assert worktrees.bring_into(ws.root, base, blobs) == []
    assert (ws.root / "a.txt").read_text() == "one\ntwo\nthree\nfour\n" and not (ws.root / "b.txt").exists()
    assert (ws.root / "new.txt").read_text() == "new\n"
