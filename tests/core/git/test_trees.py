"""trees.py against real git: a commit's trees read in one command (or from loose objects),
edited in memory into the trees git's index makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.git import trees as trees_module
from memento_core.git.commit import identity_env
from memento_core.git.commit_fast import can_build, commit_bytes
from memento_core.git.objects import write_objects
from memento_core.git.repo import repo_dirs
from memento_core.git.run import git_env
from memento_core.git.trees import read_at, with_files
from tests.core.git_calls import watch_git

from .conftest import git, repo_with_files


def git_tree_with(root: Path, changes: dict[str, bytes]) -> str:
    """The tree git itself makes from HEAD with ``changes`` (path -> bytes) in a private index."""
    index = root / ".git" / "test-index"
    env = {**git_env(), "GIT_INDEX_FILE": str(index)}
    git(root, "read-tree", "HEAD", env=env)
    for path, data in changes.items():
        oid = git(root, "hash-object", "-w", "--stdin", input=data)
        git(root, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", env=env)
    tree = git(root, "write-tree", env=env)
    index.unlink()
    return tree


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_commit_built_here_is_the_one_git_makes(tmp_path, git_identity, fmt):
    root = repo_with_files(tmp_path, fmt)
    paths = ["docs/MASTER_PLAN.md", "docs/guide/deep.md", "README.md"]
    at = read_at(root, "HEAD", paths)
    assert at.commit == git(root, "rev-parse", "HEAD") and at.tree == git(root, "rev-parse", "HEAD^{tree}")
    assert at.files["docs/MASTER_PLAN.md"][2] == b"# plan\n- [ ] `T-1` one\n"
    assert at.files["docs/MASTER_PLAN.md"][1] == git(root, "rev-parse", "HEAD:docs/MASTER_PLAN.md")

    changes = {"docs/MASTER_PLAN.md": b"# plan\n- [~] `T-1` one\n", "docs/guide/deep.md": b"deeper\n"}
    tree, objects = with_files(at, {p: (b"100644", d) for p, d in changes.items()}, fmt)
    assert tree == git_tree_with(root, changes)  # the same bytes git writes, so the same id

    ident = identity_env(root)
    assert can_build(ident)
    data = commit_bytes(tree, [at.commit], "memento: claim T-1 on h1\n\nnonce\n", ident)
    ids = write_objects(root, [*objects, ("commit", data)])
    sha = ids[-1]
    assert git(root, "cat-file", "-t", sha) == "commit"
    assert git(root, "rev-parse", f"{sha}^{{tree}}") == tree and git(root, "rev-parse", f"{sha}^") == at.commit
    assert git(root, "show", f"{sha}:docs/MASTER_PLAN.md") == "# plan\n- [~] `T-1` one"
    assert git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", sha) == \
        "Test Person <test@example.invalid>|Test Person <test@example.invalid>|memento: claim T-1 on h1"
    # Unchanged entries keep their modes: the executable script, the link, the other folders.
    assert git(root, "diff-tree", "-r", "--name-only", at.commit, sha).split() == \
        ["docs/MASTER_PLAN.md", "docs/guide/deep.md"]
    git(root, "update-ref", "refs/heads/claimed", sha)  # reachable, so fsck checks it
    git(root, "fsck", "--strict", "--no-dangling")


def test_reading_a_path_the_commit_lacks_or_a_rev_that_is_not_a_commit(tmp_path, git_identity):
    root = repo_with_files(tmp_path)
    at = read_at(root, "HEAD", ["docs/none.md", "nowhere/file.md", "README.md/inside"])
    assert at.files == {"docs/none.md": None, "nowhere/file.md": None, "README.md/inside": None}
    with pytest.raises(MementoError):
        read_at(root, "HEAD^{tree}", ["README.md"])
    with pytest.raises(MementoError):
        with_files(at, {"nowhere/file.md": (b"100644", b"x")}, "sha1")


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_head_read_from_loose_objects_is_what_cat_file_reads(tmp_path, git_identity, monkeypatch, fmt):
    """read_at of HEAD for a commit (issue 42): from loose objects, each checked against its id,
    with no process; the same commit, trees and bytes as git cat-file --batch gives, folders
    absent or a file where a folder was asked for included; packed objects go to git."""
    root = repo_with_files(tmp_path, fmt)
    within = ["docs/guide/deep.md", "docs/none/x.md", "README.md/under", "new/a/b.md", "bin/run.sh"]
    started: list[str] = []
    repo_dirs(root)
    watch_git(monkeypatch, started)
    here = read_at(root, "HEAD", [], within=within)
    assert started == []
    monkeypatch.setattr(trees_module, "_head_loose", lambda *a: None)
    by_git = read_at(root, "HEAD", [], within=within)
    assert started == ["cat-file"]
    assert here == by_git and here.raw == by_git.raw and set(here.trees) == {"", "docs", "docs/guide", "bin"}
    monkeypatch.undo()
    git(root, "repack", "-adq")
    git(root, "prune-packed")
    repo_dirs(root)
    started.clear()
    watch_git(monkeypatch, started)
    assert read_at(root, "HEAD", [], within=within) == by_git
    assert started == ["cat-file"]
