"""changes.py against real git: every kind of change since the snapshot, and its cost."""

from __future__ import annotations

import shutil

from memento_core.git.changes import FileChange, changes_since
from memento_core.git.commit import commit_paths
from memento_core.git.repo import repo_dirs
from memento_core.git.status import dirty_paths, untracked
from tests.core.git_calls import watch_git

from .conftest import BINARY, by_path, git, write


def test_changes_since_covers_every_kind(seeded):
    root, base = seeded
    write(root, "preexisting.log", "was here\n")
    before = untracked(root)
    write(root, "src/app.py", "one\nTWO\nthree\nfour\n")  # modified
    (root / "gone.txt").unlink()  # deleted
    write(root, "staged new.txt", "s1\ns2\n")  # added (staged)
    git(root, "add", "staged new.txt")
    write(root, "dir with space/created.txt", "c1\nc2\nc3")  # created, no final newline
    write(root, "blob.dat", b"\0\1\2")  # created, binary
    write(root, "image.bin", BINARY[::-1])  # modified, binary
    shutil.move(root / "old name.txt", root / "renamed.txt")  # plain mv: delete + create
    write(root, "preexisting.log", "changed by the agent\n")  # untracked before: not ours
    changes = by_path(changes_since(root, base, before))
    assert changes == {
        "src/app.py": FileChange("src/app.py", 2, 1, "modified"),
        "gone.txt": FileChange("gone.txt", 0, 2, "deleted"),
        "staged new.txt": FileChange("staged new.txt", 2, 0, "added"),
        "dir with space/created.txt": FileChange("dir with space/created.txt", 3, 0, "created"),
        "blob.dat": FileChange("blob.dat", 0, 0, "created"),
        "image.bin": FileChange("image.bin", 0, 0, "modified"),
        "old name.txt": FileChange("old name.txt", 0, 1, "deleted"),
        "renamed.txt": FileChange("renamed.txt", 1, 0, "created"),
    }
    assert [c.path for c in changes_since(root, base, before)] == sorted(changes)


def test_changes_since_sees_staged_renames_and_agent_commits(seeded, git_identity):
    root, base = seeded
    (root / "moved").mkdir()
    git(root, "mv", "old name.txt", "moved/new name.txt")
    write(root, "committed.txt", "1\n2\n")
    git(root, "add", "committed.txt")
    git(root, "commit", "-q", "-m", "agent commit")
    changes = by_path(changes_since(root, base, set()))
    assert changes["old name.txt"].kind == "deleted"
    assert changes["moved/new name.txt"] == FileChange("moved/new name.txt", 1, 0, "added")
    assert changes["committed.txt"] == FileChange("committed.txt", 2, 0, "added")


def test_changes_since_on_an_unborn_branch(repo):
    write(repo, "first.txt", "a\n")
    git(repo, "add", "first.txt")
    write(repo, "loose.txt", "b\nc\n")
    changes = by_path(changes_since(repo, None, set()))
    assert changes == {
        "first.txt": FileChange("first.txt", 1, 0, "added"),
        "loose.txt": FileChange("loose.txt", 2, 0, "created"),
    }


def test_agent_staging_a_persons_untracked_file_is_flagged(seeded):
    root, base = seeded
    write(root, "notes.txt", "mine\n")
    before = untracked(root)
    git(root, "add", "notes.txt")
    change = by_path(changes_since(root, base, before))["notes.txt"]
    assert change.kind == "added" and change.was_untracked


def test_workspace_in_a_subdirectory_uses_paths_relative_to_it(repo):
    sub = repo / "services" / "api"
    write(sub, "main.py", "x\n")
    write(repo, "outside.txt", "o\n")
    base = commit_paths(repo, ["services/api/main.py", "outside.txt"], "seed")
    write(sub, "main.py", "y\n")
    write(sub, "new.py", "n\n")
    write(repo, "outside.txt", "changed\n")
    assert untracked(sub) == {"new.py"}
    assert by_path(changes_since(sub, base, set())).keys() == {"main.py", "new.py"}
    sha = commit_paths(sub, ["main.py", "new.py"], "sub commit")
    assert git(repo, "show", "--name-only", "--format=", sha).split() == [
        "services/api/main.py",
        "services/api/new.py",
    ]
    assert dirty_paths(repo) == ["outside.txt"]


def test_changes_since_runs_a_status_and_a_diff_only_and_sees_a_change_a_forged_stat_hid(seeded, monkeypatch):
    """Issue 42: the status refreshes the private copy's stat data and writes it, the diff after
    it reads that; no update-index --refresh before them. A change the real index's flags hide
    is still found, with its line counts."""
    root, sha = seeded
    repo_dirs(root)
    write(root, "keep.txt", "Unchanged\n")  # the same size
    git(root, "update-index", "--assume-unchanged", "keep.txt")
    write(root, "new.txt", "x\ny\n")
    started: list[str] = []
    watch_git(monkeypatch, started)
    found = by_path(changes_since(root, sha, set()))
    assert started == ["status", "diff"]
    assert (found["keep.txt"].kind, found["keep.txt"].added, found["keep.txt"].removed) == ("modified", 1, 1)
    assert (found["new.txt"].kind, found["new.txt"].added) == ("created", 2)
    assert set(found) == {"keep.txt", "new.txt"}
