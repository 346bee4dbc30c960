"""sandbox/private_git.py (SPEC §13): the confined agent's git gets an index and an object folder
of its own (the real index copied, the real objects as alternates), so `git add`, `mv` and `rm`
work while .git stays read-only and untouched. Judged with real git run with the variables it
returns; the whole confined tick is judged in test_home.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from memento_core.sandbox.private_git import private_git, shared_git_dir


def git(root: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})}).stdout


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def project(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "old.txt").write_text("to be moved\n")
    git(root, "add", "old.txt")
    git(root, "commit", "-qm", "one")
    return root


def test_the_agents_staging_goes_to_its_own_index_and_objects_and_dot_git_is_untouched(tmp_path, git_identity):
    root = project(tmp_path, git_identity)
    before = digest(root / ".git")
    env = private_git(root, root / ".memento" / "worker" / "git")
    assert env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] == str(root / ".git" / "objects")
    (root / "new.txt").write_text("the agent's\n")
    git(root, "add", "new.txt", env=env)
    git(root, "mv", "old.txt", "moved.txt", env=env)
    assert git(root, "status", "--porcelain", env=env).splitlines() == ["R  old.txt -> moved.txt", "A  new.txt",
                                                                        "?? .memento/"]
    assert digest(root / ".git") == before  # no index.lock, no object, no change
    blob = git(root, "hash-object", "new.txt").strip()
    assert (Path(env["GIT_OBJECT_DIRECTORY"]) / blob[:2] / blob[2:]).is_file()
    # The real index never saw it: the move is a deletion and two new files there.
    assert git(root, "status", "--porcelain").splitlines() == [" D old.txt", "?? .memento/", "?? moved.txt",
                                                               "?? new.txt"]


def test_each_run_starts_from_a_fresh_copy_of_the_real_index(tmp_path, git_identity):
    root = project(tmp_path, git_identity)
    scratch = root / ".memento" / "worker" / "git"
    env = private_git(root, scratch)
    (root / "left.txt").write_text("left by the last run\n")
    git(root, "add", "left.txt", env=env)
    env = private_git(root, scratch)  # the next run
    assert "left.txt" not in git(root, "ls-files", "--stage", env=env)
    assert sorted(p.name for p in scratch.iterdir()) == ["index", "objects"]
    assert list((scratch / "objects").iterdir()) == []
    scratch_link = root / ".memento" / "worker" / "linked"
    scratch_link.symlink_to(tmp_path)
    private_git(root, scratch_link)  # a link in the scratch's place is replaced, never written through
    assert scratch_link.is_dir() and not scratch_link.is_symlink() and not (tmp_path / "index").exists()


def test_an_empty_repository_has_no_index_to_copy(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    env = private_git(root, tmp_path / "scratch")
    assert not Path(env["GIT_INDEX_FILE"]).exists()  # git makes the agent's own when it stages
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt", env=env)
    assert Path(env["GIT_INDEX_FILE"]).exists() and not (root / ".git" / "index").exists()


def test_a_worktrees_index_is_its_own_and_its_common_git_folder_is_shared(tmp_path, git_identity):
    root = project(tmp_path, git_identity)
    worktree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "-b", "w", str(worktree))
    (worktree / "w.txt").write_text("w\n")
    git(worktree, "add", "w.txt")  # staged in the worktree's own index only
    env = private_git(worktree, tmp_path / "scratch")
    assert "w.txt" in git(worktree, "ls-files", env=env)
    assert shared_git_dir(worktree) == [root / ".git"]
    assert shared_git_dir(root) == []
