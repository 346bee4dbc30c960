"""status.py against real git: status parsing on the scrubbed index, ignored, changed from HEAD."""

from __future__ import annotations

import pytest

from memento_core.git.patterns import matches_any
from memento_core.git.run import git_env
from memento_core.git.status import (
    StatusEntry,
    changed_from_head,
    dirty_paths,
    ignored,
    status,
    untracked,
    was_there,
)
from tests.core.git_calls import watch_git

from .conftest import git, write


def test_status_parses_odd_names_and_renames(seeded):
    root, _ = seeded
    write(root, "with space/new file.txt", "x\n")
    write(root, "line\nbreak.txt", "x\n")
    write(root, "ünï código.md", "adiós\n")
    git(root, "mv", "old name.txt", "new name.txt")
    entries = status(root)
    assert StatusEntry("R ", "new name.txt", "old name.txt") in entries
    assert StatusEntry("??", "with space/new file.txt", None) in entries
    assert StatusEntry("??", "line\nbreak.txt", None) in entries
    assert StatusEntry(" M", "ünï código.md", None) in entries
    assert untracked(root) == {"with space/new file.txt", "line\nbreak.txt"}
    assert dirty_paths(root) == sorted(
        [
            "new name.txt",
            "old name.txt",
            "with space/new file.txt",
            "line\nbreak.txt",
            "ünï código.md",
        ]
    )
    assert dirty_paths(root, ignore=lambda p: matches_any(p, ["with space/", "*.md"])) == sorted(
        ["new name.txt", "old name.txt", "line\nbreak.txt"]
    )


def test_clean_tree_has_empty_status(seeded):
    root, _ = seeded
    assert status(root) == []
    assert dirty_paths(root) == []


def test_ignored_names_a_folder_ignored_as_a_whole_but_not_one_that_only_holds_ignored_things(seeded):
    """A ``.venv/`` is one entry; ``calc/`` holding only the ``__pycache__/`` verify left is not the
    person's folder (taken whole, the next attempt could not write calc/__init__.py in the sandbox)."""
    root, _ = seeded
    write(root, ".gitignore", ".venv/\n__pycache__/\n*.log\n")
    for rel in (".venv/lib/site.py", "calc/__pycache__/a.pyc", "deep/er/__pycache__/b.pyc", "logs/x.log",
                "src/__pycache__/app.pyc"):
        write(root, rel, "x\n")
    assert ignored(root) == {".venv/", "calc/__pycache__/", "deep/er/__pycache__/", "logs/x.log",
                             "src/__pycache__/"}


def test_changed_from_head_reads_the_files_not_the_index(repo):
    for rel in ("docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md", "docs/e.md", "keep.md"):
        write(repo, rel, f"{rel}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    paths = ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md", "docs/e.md", "docs/new.md", "keep.md"]
    assert changed_from_head(repo, paths) == []
    write(repo, "docs/a.md", "changed\n")
    git(repo, "update-index", "--assume-unchanged", "docs/a.md")  # hides it from status, not from this
    (repo / "docs" / "b.md").unlink()
    (repo / "docs" / "c.md").unlink()
    (repo / "docs" / "c.md").symlink_to("d.md")  # same bytes behind the link: still a change
    write(repo, "docs/d.md", "docs/d.md\n")  # rewritten with the same bytes: no change
    git(repo, "add", "docs/e.md")
    write(repo, "docs/new.md", "untracked\n")
    assert "docs/a.md" not in {e.path for e in status(repo, env=git_env())}
    assert changed_from_head(repo, paths) == ["docs/a.md", "docs/b.md", "docs/c.md"]
    sub = repo / "docs"  # a project in a sub-folder names its paths from there
    assert changed_from_head(sub, ["a.md", "d.md"]) == ["a.md"]


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_changed_from_head_hashes_unchanged_files_itself_and_asks_git_through_its_filters(tmp_path, monkeypatch, fmt):
    root = tmp_path / fmt
    git(tmp_path, "init", "-q", f"--object-format={fmt}", str(root))
    write(root, "a.md", "one\ntwo\n")
    write(root, "b.md", "same\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "docs")
    ran = []
    watch_git(monkeypatch, ran)
    assert changed_from_head(root, ["a.md", "b.md"]) == []
    assert ran == ["ls-tree"]  # the bytes are the committed blob's: no git command to hash them
    (root / "a.md").write_bytes(b"one\r\ntwo\r\n")  # other bytes, the same text through autocrlf
    git(root, "config", "core.autocrlf", "true")
    assert changed_from_head(root, ["a.md", "b.md"]) == []
    git(root, "config", "core.autocrlf", "false")
    assert changed_from_head(root, ["a.md", "b.md"]) == ["a.md"]
    write(root, "b.md", "other\n")
    assert changed_from_head(root, ["a.md", "b.md"]) == ["a.md", "b.md"]


def test_changed_from_head_on_an_unborn_branch_is_empty(tmp_path):
    git(tmp_path, "init", "-q")
    write(tmp_path, "a.md", "x\n")
    assert changed_from_head(tmp_path, ["a.md"]) == []


def test_was_there_means_the_path_itself_or_inside_a_folder_never_a_longer_name():
    before = frozenset({".env", "draft.txt", "notes/"})
    assert was_there(".env", before) and was_there("notes/today.md", before)
    assert not was_there(".envrc", before)
    assert not was_there("draft.txt~", before)
    assert not was_there("notes", before)  # the folder's name, not something inside it
