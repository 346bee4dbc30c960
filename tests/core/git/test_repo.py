"""repo.py against real git: where the repository is and HEAD, read from the disk with no
process only where git would find the same, asked of git everywhere else."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.git import repo as repo_module
from memento_core.git.repo import _DIRS, empty_tree, ensure_repo, head, is_repo, repo_dirs
from tests.core.git_calls import watch_git

from .conftest import git, write


def _git_head(root: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD^{commit}"],
                          capture_output=True, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def test_ensure_repo_head_and_is_repo(tmp_path):
    root = tmp_path / "p"
    assert not is_repo(root)
    assert ensure_repo(root) is True
    assert is_repo(root)
    assert ensure_repo(root) is False
    assert head(root) is None
    assert git(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_head_outside_a_repo_is_an_error(tmp_path):
    with pytest.raises(MementoError, match="not a git repository"):
        head(tmp_path)


def test_empty_tree_is_written_and_asked_again_for_a_repository_made_again(tmp_path):
    root = tmp_path / "p"
    git(tmp_path, "init", "-q", str(root))
    sha1_tree = empty_tree(root)
    assert git(root, "cat-file", "-t", sha1_tree).strip() == "tree"  # in the store, not only known to git
    shutil.rmtree(root / ".git")
    proc = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(root)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"this git has no sha256 repositories: {proc.stderr.decode().strip()}")
    assert len(empty_tree(root)) == 64


def test_where_the_repository_is_asked_once_and_asked_again_when_its_git_entries_change(tmp_path, monkeypatch):
    # An agent that swaps the repository under the tick (a new .git, a gitfile pointing at
    # another, a repository made in the project's own folder) must not leave Memento working on
    # the old one's folders: each change of a .git entry is seen.
    top = tmp_path / "top"
    git(tmp_path, "init", "-q", str(top))
    sub = top / "project"
    sub.mkdir()
    ran = []
    watch_git(monkeypatch, ran)
    first = repo_dirs(sub)
    assert (first.git_dir, first.common_dir, first.top) == (top / ".git", top / ".git", top)
    assert repo_dirs(sub) == first and ran == ["rev-parse"]  # the second time from the disk's marks

    git(tmp_path, "init", "-q", str(sub))  # the project's folder made a repository of its own
    assert repo_dirs(sub).top == sub and repo_dirs(sub).git_dir == sub / ".git"
    (sub / ".git").rename(tmp_path / "moved.git")
    assert repo_dirs(sub).top == top  # gone again: the top level's
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    (top / ".git").rename(tmp_path / "top.git")
    git(tmp_path, "init", "-q", str(top))  # a new .git folder where the old one was
    assert repo_dirs(sub).git_dir == top / ".git"
    assert os.stat(repo_dirs(sub).git_dir).st_ino == os.stat(top / ".git").st_ino
    shutil.rmtree(top / ".git")
    (top / ".git").write_text(f"gitdir: {other / '.git'}\n")  # a gitfile to another repository
    assert repo_dirs(sub).git_dir == other / ".git"
    (top / ".git").write_text(f"gitdir: {tmp_path / 'top.git'}\n")  # the same gitfile, new contents
    assert repo_dirs(sub).git_dir == tmp_path / "top.git"


@pytest.mark.parametrize("case", ["branch", "detached", "packed", "unborn", "ref-a-link", "head-a-link",
                                  "missing-object", "ref-to-a-blob", "packed-object", "odd-branch", "worktree",
                                  "junk-in-ref", "sha256"])
def test_head_read_from_files_is_what_git_says_and_costs_no_process_in_the_common_case(tmp_path, git_identity,
                                                                                       monkeypatch, case):
    """head reads HEAD, a loose branch and a loose commit's header itself (issue 42: no git
    process for what is on disk); whatever it does not take on (packed refs and objects, links, an
    odd name, a worktree's HEAD aside, junk) it leaves to rev-parse: the answer is git's in every case."""
    root = tmp_path / "p"
    fmt = "sha256" if case == "sha256" else "sha1"
    subprocess.run(["git", "init", "-q", "-b", "main", f"--object-format={fmt}", str(root)], check=True)
    if case != "unborn":
        write(root, "a.txt", "one\n")
        git(root, "add", "a.txt")
        git(root, "commit", "-qm", "one")
    sha = _git_head(root)
    dot_git = root / ".git"
    common = case in ("branch", "sha256")
    if case == "detached":
        git(root, "checkout", "-q", "--detach")
        common = True
    elif case == "packed":
        git(root, "pack-refs", "--all")
    elif case == "ref-a-link":
        (dot_git / "refs/heads/other").write_text(sha + "\n")
        (dot_git / "refs/heads/main").unlink()
        (dot_git / "refs/heads/main").symlink_to("other")
    elif case == "head-a-link":
        (dot_git / "HEAD").unlink()
        (dot_git / "HEAD").symlink_to("refs/heads/main")
    elif case == "missing-object":
        obj = dot_git / "objects" / sha[:2] / sha[2:]
        obj.chmod(0o644)
        obj.unlink()
    elif case == "ref-to-a-blob":
        blob = git(root, "hash-object", "-w", "a.txt").strip()
        (dot_git / "refs/heads/main").write_text(blob + "\n")
    elif case == "packed-object":
        git(root, "repack", "-adq")
        git(root, "prune-packed")
    elif case == "odd-branch":
        git(root, "checkout", "-q", "-b", "x/ünï")  # valid to git, left to it here
    elif case == "worktree":
        git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
        root = tmp_path / "wt"
        common = True
    elif case == "junk-in-ref":
        (dot_git / "refs/heads/main").write_text(sha + "\nmore\n")
    started: list[list[str]] = []
    repo_dirs(root)
    watch_git(monkeypatch, started, full=True)
    assert head(root) == _git_head(root)
    if common:
        assert started == [] and head(root) == sha


@pytest.mark.parametrize("case", ["plain", "subfolder", "gitfile", "bare", "sha256", "include", "worktree",
                                  "empty-git-folder", "junk-head", "format-1", "not-mine", "git-a-link"])
def test_where_the_repository_is_read_from_the_disk_only_where_git_would_find_the_same(tmp_path, monkeypatch, case):
    """repo_dirs without rev-parse (issue 42), for a plain repository at its top level only: the
    same answer as git's wherever it is taken, git asked for everything else."""
    root = tmp_path / "p"
    subprocess.run(["git", "init", "-q", *(["--object-format=sha256"] if case == "sha256" else []), str(root)],
                   check=True)
    asked = root
    if case == "subfolder":
        asked = root / "sub"
        asked.mkdir()
    elif case == "gitfile":
        (root / ".git").rename(tmp_path / "elsewhere.git")
        (root / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git'}\n")
    elif case == "bare":
        git(root, "config", "core.bare", "true")
    elif case == "include":
        git(root, "config", "include.path", str(tmp_path / "more.config"))
    elif case == "worktree":
        write(root, "a.txt", "a\n")
        git(root, "add", "a.txt")
        git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "a")
        git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
        asked = tmp_path / "wt"
    elif case == "empty-git-folder":
        shutil.rmtree(root / ".git")
        (root / ".git").mkdir()
    elif case == "junk-head":
        (root / ".git" / "HEAD").write_text("junk\n")
    elif case == "format-1":
        git(root, "config", "core.repositoryformatversion", "1")
    elif case == "not-mine":
        if os.geteuid() != 0:
            pytest.skip("only root can give the folder to another user here")
        os.chown(root / ".git", 65534, 65534)
    elif case == "git-a-link":
        (root / ".git").rename(tmp_path / "real.git")
        (root / ".git").symlink_to(tmp_path / "real.git")
    ran: list[str] = []
    watch_git(monkeypatch, ran)
    try:
        here = repo_dirs(asked)
    except MementoError:
        here = None
    taken = ran == []
    monkeypatch.setattr(repo_module, "_plain_dirs", lambda top: None)
    _DIRS.clear()
    try:
        by_git = repo_dirs(asked)
    except MementoError:
        by_git = None
    assert here == by_git
    assert taken == (case == "plain")
