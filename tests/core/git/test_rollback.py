"""rollback.py against real git: a failed attempt put back, what it undid saved and re-applicable."""

from __future__ import annotations

import shutil
from pathlib import Path

from memento_core.git.changes import changes_since
from memento_core.git.commit import fold_commits
from memento_core.git.patterns import matches_any
from memento_core.git.repo import head
from memento_core.git.rollback import rollback, save_rollback
from memento_core.git.status import StatusEntry, status, untracked

from .conftest import BINARY, git, tree_state, write


def make_mess(root: Path) -> set[str]:
    """What a failed task leaves behind; returns the untracked set of the snapshot."""
    write(root, "person/untracked.txt", "a person's work\n")
    before = untracked(root)
    write(root, "src/app.py", "broken\n")
    (root / "gone.txt").unlink()
    write(root, "ünï código.md", "cambiado\n")
    (root / "moved").mkdir()
    git(root, "mv", "old name.txt", "moved/new name.txt")
    write(root, "new/deep/dir/file.txt", "created\n")
    write(root, "new/blob.dat", b"\0\1")
    write(root, "scratch/keep-me.txt", "cleanignored\n")
    write(root, "space dir/a b.txt", "x\n")
    write(root, "person/untracked.txt", "agent scribbled here\n")
    return before


def test_rollback_restores_tracked_removes_created_and_keeps_the_rest(seeded):
    root, base = seeded
    before = make_mess(root)
    changes = changes_since(root, base, before)
    assert "person/untracked.txt" not in {c.path for c in changes}
    rollback(root, base, changes, keep=lambda p: matches_any(p, ["scratch/"]))
    state = tree_state(root)
    assert state["src/app.py"] == b"one\ntwo\nthree\n"
    assert state["gone.txt"] == b"a\nb\n"
    assert state["old name.txt"] == b"moving\n"
    assert state["ünï código.md"] == b"hola\n"
    assert "moved/new name.txt" not in state
    assert "new/deep/dir/file.txt" not in state and not (root / "new").exists()
    assert not (root / "space dir").exists() and not (root / "moved").exists()
    assert state["scratch/keep-me.txt"] == b"cleanignored\n"
    assert state["person/untracked.txt"] == b"agent scribbled here\n"
    # Index and work tree equal base for every path except the kept ones.
    assert status(root) == [
        StatusEntry("??", "person/untracked.txt"),
        StatusEntry("??", "scratch/keep-me.txt"),
    ]


def test_rollback_unstages_but_keeps_a_persons_file_the_agent_staged(seeded):
    root, base = seeded
    write(root, "notes.txt", "mine\n")
    before = untracked(root)
    git(root, "add", "notes.txt")
    rollback(root, base, changes_since(root, base, before))
    assert (root / "notes.txt").read_text() == "mine\n"
    assert status(root) == [StatusEntry("??", "notes.txt")]


def test_rollback_after_fold_removes_files_from_agent_commits(seeded, git_identity):
    root, base = seeded
    write(root, "agent.txt", "x\n")
    write(root, "src/app.py", "agent\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent")
    fold_commits(root, base)
    rollback(root, base, changes_since(root, base, set()))
    assert head(root) == base
    assert status(root) == []
    assert not (root / "agent.txt").exists()


def test_save_rollback_patch_and_files_reapply_exactly(seeded, tmp_path):
    root, base = seeded
    before = make_mess(root)
    changes = changes_since(root, base, before)
    messy = tree_state(root)
    dest = save_rollback(root, base, changes, tmp_path / "rollback" / "stamp")
    assert (dest / "README.txt").read_text().count("git") >= 1
    assert (dest / "files" / "new/deep/dir/file.txt").read_text() == "created\n"
    assert (dest / "files" / "new/blob.dat").read_bytes() == b"\0\1"
    rollback(root, base, changes)
    assert tree_state(root) != messy
    git(root, "apply", "--binary", str(dest / "changes.patch"))
    shutil.copytree(dest / "files", root, dirs_exist_ok=True)
    assert tree_state(root) == messy


def test_save_rollback_with_binary_modification(seeded, tmp_path):
    root, base = seeded
    write(root, "image.bin", BINARY[::-1])
    changes = changes_since(root, base, set())
    dest = save_rollback(root, base, changes, tmp_path / "rb")
    rollback(root, base, changes)
    assert (root / "image.bin").read_bytes() == BINARY
    git(root, "apply", "--binary", str(dest / "changes.patch"))
    assert (root / "image.bin").read_bytes() == BINARY[::-1]
