"""state.py against real git: HEAD read from its file only where git would read the same, and a
worktree's gitfile rewritten to name a decoy written back before git is asked. (The hostile
agents that plant hooks, move refs and swap the repository during a tick: test_redteam_git.py.)"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from memento_core.git.state import _branch_named, _head, bring_back, capture

from .conftest import git


def test_a_worktrees_gitfile_rewritten_to_name_a_decoy_is_written_again(tmp_path):
    # A worker's worktree (.memento/worktrees/<ID>/) has a gitfile for .git: an agent there that
    # rewrites it to name a copy with a hook gets the gitfile written back, before git is asked.
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "a.txt").write_text("a\n")
    git(main, "add", "a.txt")
    git(main, "commit", "-qm", "a")
    tree = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "memento/T-1", str(tree))
    snap = capture(tree)
    assert (tree / ".git").read_bytes().startswith(b"gitdir: ")  # the worktree has a gitfile to begin with
    decoy = tmp_path / "decoy"
    shutil.copytree(main / ".git", decoy, symlinks=True)
    (tree / ".git").write_text(f"gitdir: {decoy}\n")
    said = bring_back(snap, tmp_path / "aside")
    assert said.startswith("replaced the repository's .git"), said
    assert (tree / ".git").read_text().strip() == f"gitdir: {snap.git_dir}"
    assert (tmp_path / "aside" / "git").read_text() == f"gitdir: {decoy}\n"  # the forged gitfile, kept
    assert git(tree, "rev-parse", "--absolute-git-dir").strip() == snap.git_dir
    assert bring_back(snap, tmp_path / "aside-again") == ""  # in place again: nothing to do
    assert not (tmp_path / "aside-again").exists()


@pytest.mark.parametrize("head", [
    "ref: refs/heads/main\n",
    "ref: refs/heads/feature/one-2.x\n",
    "ref: refs/heads/unborn\n",
    "ref: refs/heads/main",  # no newline: git's reading, not this one's
    "ref:  refs/heads/main\n",
    "ref: refs/heads/../../config\n",
    "ref: refs/heads/.invalid\n",  # another ref store's placeholder
    "ref: refs/heads/a.lock/b\n",
    "ref: refs/heads/" + "n" * 490 + "\n" + "junk" * 10,
    "ref: refs/tags/v1\n",
    "DETACHED\n",
    "LINK",
], ids=lambda h: h.strip().replace("/", "_") or "empty")
def test_head_read_from_its_file_is_what_git_says(tmp_path, head):
    """The snapshot reads HEAD's file itself only when it names a branch the way git writes
    it; for anything else it asks git, so both always agree."""
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "f").write_text("x\n")
    subprocess.run(["git", "-C", str(root), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "one"], check=True)
    sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "-C", str(root), "tag", "v1"], check=True)
    head_file = root / ".git" / "HEAD"
    if head == "LINK":
        (root / ".git" / "HEAD.real").write_text("ref: refs/heads/main\n")
        head_file.unlink()
        head_file.symlink_to("HEAD.real")
    else:
        head_file.write_text(head.replace("DETACHED", sha))
    by_git = _head(root)
    assert _head(root, root / ".git") == by_git
    assert _branch_named(head_file) == (by_git[5:] if head in (
        "ref: refs/heads/main\n", "ref: refs/heads/feature/one-2.x\n", "ref: refs/heads/unborn\n") else "")


def test_refs_left_loose_are_neither_put_back_nor_deleted_while_the_others_are(tmp_path):
    """A snapshot's loose refs (the other parallel workers' branches) stay as their agents left
    them; every other ref is put back, a new one deleted."""
    from dataclasses import replace

    from memento_core.git.state import restore

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "a")
    base = git(root, "rev-parse", "HEAD").strip()
    for name in ("memento/T-2", "memento/T-3", "person"):
        git(root, "branch", name)
    snap = replace(capture(root), loose=frozenset({"refs/heads/memento/T-2", "refs/heads/memento/T-9"}))
    other = git(root, "commit-tree", "-m", "elsewhere", git(root, "rev-parse", "HEAD^{tree}").strip()).strip()
    for name in ("memento/T-2", "memento/T-3", "person"):
        git(root, "update-ref", f"refs/heads/{name}", other)
    git(root, "update-ref", "refs/heads/memento/T-9", other)  # made meanwhile, loose too
    git(root, "update-ref", "refs/heads/stray", other)
    restore(root, snap)
    now = capture(root).refs
    assert now["refs/heads/memento/T-2"] == now["refs/heads/memento/T-9"] == other
    assert now["refs/heads/memento/T-3"] == now["refs/heads/person"] == base
    assert "refs/heads/stray" not in now
