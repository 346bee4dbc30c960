"""Red team (SPEC §13 "Either way" and "Without a sandbox"): what git itself does not show.

A repository the agent nests below the work tree (a `.git` folder or `gitdir:` file, anywhere,
in a tracked, untracked or ignored folder), a file it plants in `.git/`, a path too deep for git:
each is a guard failure naming the path, removed by the rollback (saved under logs/rollback/),
never committed; the proof is on disk (a person's `git status` there afterwards runs nothing of
the agent's: its command would write a marker outside the project) and the next tick works.
"""

from __future__ import annotations

import os

import pytest

from memento_core.tick.__main__ import run_tick

from .modes import MODES
from .test_engine import agent, git
from .test_redteam_git import git_owned, honest_tick_works, hostile_ws, work_tree


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# ---------------------------------------------------------------- files planted in .git/


@pytest.mark.parametrize("mode", MODES)
def test_files_planted_in_the_git_folder_are_removed_saved_and_fail_the_task(tmp_path, mode):
    marker = tmp_path / "planted-ran.txt"
    ws = hostile_ws(tmp_path, agent("plants_in_git_dir.py", str(marker)), sandbox=mode)
    root = ws.root
    (root / ".git" / "persons-tool.json").write_text('{"a person\'s": "own file"}\n')  # not git's: kept
    owned, tree = git_owned(root), work_tree(root)
    mine = (root / ".git" / "persons-tool.json").read_bytes()
    outcome = run_tick(root)
    (result,) = outcome.results
    planted = (".git/fsmonitor-watch", ".git/agent/run.sh", ".git/worktrees/helper.sh")
    if mode == "none":
        assert not result.passed
        for rel in planted:
            assert rel in result.reason, result.reason
        saved = [p for p in (root / "logs" / "rollback").rglob("*") if p.name in ("fsmonitor-watch", "run.sh")]
        assert len(saved) == 2 and all(not os.access(p, os.X_OK) for p in saved), saved
    for rel in planted:
        assert not os.path.lexists(root / rel), rel
    assert not (root / ".git" / "agent").exists()
    assert (root / ".git" / "persons-tool.json").read_bytes() == mine
    now, found = work_tree(root), git_owned(root)
    if result.passed:  # confined: .git/ was read-only, nothing was planted, the task is done
        assert now.pop("hello.txt") == b"done\n"
        assert found.pop("flags").replace(b"H hello.txt\n", b"") == owned.pop("flags")
    assert found == owned
    assert now == tree
    if not result.passed:
        honest_tick_works(ws)
    assert not marker.exists()


def test_what_git_and_memento_write_in_the_git_folder_is_not_a_plant(tmp_path):
    """Commits, a merge's and a rebase's leftovers, gc, a stash, a worktree made and removed (a
    parallel worker's), a submodule's fetch: none of it is the agent's."""
    from memento_core.tick import gitstate

    ws = hostile_ws(tmp_path, "true")
    root = ws.root
    before = gitstate.capture(root)
    (root / "hello.txt").write_text("one\n")
    git(root, "add", "hello.txt")
    git(root, "commit", "-qm", "one")  # COMMIT_EDITMSG, logs/, objects/
    git(root, "reset", "-q", "--hard", "HEAD~1")  # ORIG_HEAD
    git(root, "worktree", "add", "-q", str(root / ".memento" / "worktrees" / "T-9"), "-b", "memento/T-9")
    wt = root / ".memento" / "worktrees" / "T-9"
    (wt / "x.txt").write_text("x\n")
    git(wt, "add", "x.txt")
    git(wt, "commit", "-qm", "x")
    git(root, "gc", "-q")
    git(root, "pack-refs", "--all")
    (root / ".git" / "index.lock").write_text("")  # a git command killed mid-way (put back: removed)
    now = gitstate.capture(root)
    assert now.files == before.files  # (the refs are compared on their own: a worker's branch is Memento's)
    assert gitstate.from_bytes(gitstate.to_bytes(now), root) == now
    git(root, "worktree", "remove", "--force", str(wt))
    (root / ".git" / "index.lock").unlink()
    assert gitstate.capture(root).files == before.files
