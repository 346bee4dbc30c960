"""commit.py against real git: exactly the given paths committed, the identity, the agent's
commits folded back."""

from __future__ import annotations

import pytest

from memento_core.errors import MementoError
from memento_core.git.changes import FileChange, changes_since
from memento_core.git.commit import commit_paths, fold_commits, identity_env
from memento_core.git.repo import head
from memento_core.git.status import StatusEntry, dirty_paths, status, untracked

from .conftest import by_path, git, write


def test_commit_paths_commits_only_the_given_paths(seeded):
    root, base = seeded
    write(root, "keep.txt", "person's staged work\n")
    git(root, "add", "keep.txt")
    write(root, "src/app.py", "person's unstaged work\n")
    write(root, "task.py", "print('task')\n")
    write(root, "docs/PLAN.md", "- [x] T-1\n")
    (root / "gone.txt").unlink()
    sha = commit_paths(
        root,
        ["task.py", "docs/PLAN.md", "gone.txt", "ünï código.md"],
        "memento: complete T-1 Do it",
    )
    assert head(root) == sha
    assert git(root, "rev-parse", f"{sha}^").strip() == base
    assert sorted(
        git(root, "show", "--name-status", "--format=", "-z", sha).split("\0")[:-1]
    ) == sorted(["A", "docs/PLAN.md", "D", "gone.txt", "A", "task.py"])
    assert git(root, "log", "-1", "--format=%s", sha).strip() == "memento: complete T-1 Do it"
    # The person's work is untouched: still staged, still unstaged.
    assert StatusEntry("M ", "keep.txt", None) in status(root)
    assert StatusEntry(" M", "src/app.py", None) in status(root)
    assert (root / "src/app.py").read_text() == "person's unstaged work\n"
    # The committed paths are clean in the index too.
    assert not {"task.py", "docs/PLAN.md", "gone.txt"} & set(dirty_paths(root))


def test_commit_paths_on_an_unborn_branch_and_nothing_to_commit(repo):
    write(repo, "a.txt", "a\n")
    write(repo, "b.txt", "b\n")
    sha = commit_paths(repo, ["a.txt"], "first")
    assert head(repo) == sha
    assert git(repo, "ls-tree", "--name-only", sha).split() == ["a.txt"]
    assert untracked(repo) == {"b.txt"}
    with pytest.raises(MementoError, match="nothing to commit"):
        commit_paths(repo, ["a.txt"], "again")
    assert head(repo) == sha


@pytest.mark.parametrize("fast", [False, True], ids=["git's index", "commit_here"])
def test_commit_paths_onto_a_head_that_moved_commits_nothing_and_moves_nothing(seeded, fast):
    """A parallel worker's documents are committed on the crew's HEAD or not at all: never on a
    commit an agent pointed the branch at."""
    from memento_core.git.commit_fast import commit_here

    root, base = seeded
    moved = git(root, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "agent: on main").strip()
    git(root, "update-ref", "refs/heads/main", moved)
    write(root, "task.py", "print('task')\n")
    build = commit_here if fast else None
    with pytest.raises(MementoError, match="HEAD moved"):
        commit_paths(root, ["task.py"], "memento: complete T-1", build=build, onto=base)
    assert head(root) == moved
    sha = commit_paths(root, ["task.py"], "memento: complete T-1", build=build, onto=moved)
    assert head(root) == sha and git(root, "rev-parse", f"{sha}^").strip() == moved


def test_commit_paths_handles_names_that_look_like_globs(repo):
    write(repo, "*.py", "literal star\n")
    write(repo, "real.py", "not me\n")
    sha = commit_paths(repo, ["*.py"], "literal")
    assert git(repo, "ls-tree", "--name-only", sha).split() == ["*.py"]


def test_commit_paths_expands_a_folder_honouring_gitignore(seeded):
    root, _ = seeded
    write(root, ".gitignore", "*.pyc\n")
    commit_paths(root, [".gitignore"], "ignore")
    write(root, "pkg/a.py", "a\n")
    write(root, "pkg/sub/b.py", "b\n")
    write(root, "pkg/a.pyc", b"\0")
    write(root, "other.py", "o\n")
    sha = commit_paths(root, ["pkg/"], "folder")
    assert git(root, "show", "--name-only", "--format=", sha).split() == [
        "pkg/a.py",
        "pkg/sub/b.py",
    ]
    assert untracked(root) == {"other.py"}


def test_commit_without_any_identity_uses_memento(repo, no_git_identity):
    write(repo, "a.txt", "a\n")
    assert identity_env(repo)["GIT_AUTHOR_NAME"] == "Memento"
    sha = commit_paths(repo, ["a.txt"], "first")
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha).strip() == (
        "Memento <memento@localhost>|Memento <memento@localhost>"
    )


def test_identity_order_configured_then_user_then_memento(repo, no_git_identity, monkeypatch):
    assert identity_env(repo, ("Ada", "ada@example.org")) == {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
    }
    git(repo, "config", "user.name", "Repo User")
    assert identity_env(repo)["GIT_AUTHOR_EMAIL"] == "memento@localhost"  # half an identity
    git(repo, "config", "user.email", "repo@example.org")
    assert identity_env(repo)["GIT_COMMITTER_NAME"] == "Repo User"
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.org")
    env = identity_env(repo)
    assert (env["GIT_AUTHOR_NAME"], env["GIT_COMMITTER_NAME"]) == ("Env Author", "Repo User")

    write(repo, "a.txt", "a\n")
    sha = commit_paths(repo, ["a.txt"], "first", author=("Ada", "ada@example.org"))
    assert git(repo, "log", "-1", "--format=%an|%cn", sha).strip() == "Ada|Ada"


def test_fold_commits_puts_agent_commits_back_in_the_work_tree(seeded, git_identity):
    root, base = seeded
    write(root, "src/app.py", "agent edit\n")
    write(root, "agent.txt", "new\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent 1")
    write(root, "agent.txt", "new\nmore\n")
    git(root, "commit", "-q", "-am", "agent 2")
    assert fold_commits(root, base) == 2
    assert head(root) == base
    assert (root / "agent.txt").read_text() == "new\nmore\n"
    changes = by_path(changes_since(root, base, set()))
    assert changes["agent.txt"] == FileChange("agent.txt", 2, 0, "created")
    assert changes["src/app.py"].kind == "modified"
    assert fold_commits(root, base) == 0


def test_fold_commits_back_to_an_unborn_branch(repo, git_identity):
    write(repo, "a.txt", "a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "agent")
    assert fold_commits(repo, None) == 1
    assert head(repo) is None
    assert untracked(repo) == {"a.txt"}
