"""gitops against real git: status parsing, changes, commits, folding, rollback, patterns."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.git import repo as repo_module
from memento_core.git.changes import FileChange, changes_since
from memento_core.git.commit import commit_paths, fold_commits, identity_env
from memento_core.git.history import diff, log_subjects
from memento_core.git.objects import hash_blobs, read_blobs
from memento_core.git.patterns import matches_any, read_pattern_file
from memento_core.git.repo import _DIRS, empty_tree, ensure_repo, head, is_repo, repo_dirs
from memento_core.git.rollback import rollback, save_rollback
from memento_core.git.run import git_binary, git_env
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

BINARY = bytes(range(256)) * 4


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", "surrogateescape")


def write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under root except .git, with its bytes."""
    state = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/") or path.is_dir():
            continue
        state[rel] = path.read_bytes()
    return state


def by_path(changes: list[FileChange]) -> dict[str, FileChange]:
    return {c.path: c for c in changes}


@pytest.fixture
def seeded(repo: Path) -> tuple[Path, str]:
    """A repository with one commit holding a few files; returns (root, sha)."""
    write(repo, "src/app.py", "one\ntwo\nthree\n")
    write(repo, "old name.txt", "moving\n")
    write(repo, "gone.txt", "a\nb\n")
    write(repo, "keep.txt", "unchanged\n")
    write(repo, "ünï código.md", "hola\n")
    write(repo, "image.bin", BINARY)
    sha = commit_paths(repo, tree_state(repo), "seed")
    return repo, sha


# ---------------------------------------------------------------- repository


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


def test_missing_git_is_a_clear_error(monkeypatch):
    git_binary.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    try:
        with pytest.raises(MementoError, match="git is not installed"):
            git_binary()
    finally:
        monkeypatch.undo()
        git_binary.cache_clear()
    assert os.path.isabs(git_binary())


def test_git_env_never_prompts():
    env = git_env()
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["LC_ALL"] == "C"


# -------------------------------------------------------------------- status


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


# ------------------------------------------------------------------- changes


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


# -------------------------------------------------------------------- commit


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


# ---------------------------------------------------------------------- fold


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


# ------------------------------------------------------------------ rollback


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


# ---------------------------------------------------------------- dashboard


def test_diff_and_log_subjects(seeded):
    root, base = seeded
    assert log_subjects(root, 5) == [(base, "seed")]
    write(root, "task.py", "print(1)\n")
    sha = commit_paths(root, ["task.py"], "memento: complete T-1 Thing\n\nbody")
    assert log_subjects(root, 1) == [(sha, "memento: complete T-1 Thing")]
    assert [s for _, s in log_subjects(root, 10)] == ["memento: complete T-1 Thing", "seed"]
    text = diff(root, sha)
    assert "task.py | 1 +" in text
    assert "+print(1)" in text


def test_log_subjects_on_unborn_branch(repo):
    assert log_subjects(repo, 3) == []


# ------------------------------------------------------------------ patterns


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("src/db/schema.py", ["src/db/schema.py"], True),
        ("src/db/schema.py", ["src/db/"], True),
        ("src/db/schema.py", ["src/db"], True),
        ("src/dbx/schema.py", ["src/db/"], False),
        ("src/db", ["src/db/"], False),
        ("src/db/schema.py", ["./src/db/schema.py"], True),
        ("src/db/schema.py", ["src/*.py"], False),
        ("src/db/schema.py", ["src/*/*.py"], True),
        ("src/db/schema.py", ["src/**/*.py"], True),
        ("src/schema.py", ["src/**/*.py"], True),
        ("src/db/schema.py", ["**/schema.py"], True),
        ("src/db/schema.py", ["*.py"], True),
        ("src/db/schema.py", ["/*.py"], False),
        ("setup.py", ["/*.py"], True),
        ("build/out/x.o", ["build*/"], True),
        ("src/a1.py", ["src/a[0-9].py"], True),
        ("src/ab.py", ["src/a[!0-9].py"], True),
        ("src/a1.py", ["src/a[!0-9].py"], False),
        ("tests/test_x.py", ["src/", "tests/test_?.py"], True),
        ("other.txt", ["src/", "*.py"], False),
        ("anything", [], False),
        ("anything", ["", "  "], False),
    ],
)
def test_matches_any(path, patterns, expected):
    assert matches_any(path, patterns) is expected


def test_read_pattern_file(tmp_path):
    path = tmp_path / ".memento_cleanignore"
    assert read_pattern_file(path) == []
    path.write_text("# comment\n\nscratch/\n  *.log  \n# another\ndata/raw.csv\n")
    assert read_pattern_file(path) == ["scratch/", "*.log", "data/raw.csv"]


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


def test_read_blobs_reads_many_in_one_command_and_names_a_missing_one(repo):
    write(repo, "a.bin", BINARY)
    write(repo, "b.txt", "line\nwith\n\nnewlines\n")
    git(repo, "add", "-A")
    shas = sorted(git(repo, "rev-parse", f":{p}").strip().encode() for p in ("a.bin", "b.txt"))
    blobs = read_blobs(repo, shas)
    assert sorted(blobs.values()) == sorted([BINARY, b"line\nwith\n\nnewlines\n"])
    with pytest.raises(MementoError, match="could not read 0{40}"):
        read_blobs(repo, [shas[0], b"0" * 40])


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


def test_was_there_means_the_path_itself_or_inside_a_folder_never_a_longer_name():
    before = frozenset({".env", "draft.txt", "notes/"})
    assert was_there(".env", before) and was_there("notes/today.md", before)
    assert not was_there(".envrc", before)
    assert not was_there("draft.txt~", before)
    assert not was_there("notes", before)  # the folder's name, not something inside it


def _git_head(root: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD^{commit}"],
                          capture_output=True, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


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


def test_blob_ids_computed_here_are_the_ones_git_writes(seeded, monkeypatch):
    """hash_blobs(write=False) (issue 42: the ids before verify, only compared, with no process):
    files, an executable, a link, a removed file, CRLF and a NUL, whatever .gitattributes says."""
    root, _ = seeded
    write(root, ".gitattributes", "*.txt text eol=crlf\n*.bin filter=nothing\n")
    write(root, "keep.txt", "line\r\nother\n")
    write(root, "data.bin", BINARY)
    write(root, "run.sh", "#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("keep.txt", root / "link")
    (root / "gone.txt").unlink()
    paths = ["keep.txt", "data.bin", "run.sh", "link", "gone.txt", "src", "src/app.py"]
    started: list[str] = []
    repo_dirs(root)
    watch_git(monkeypatch, started)
    here = hash_blobs(root, paths, write=False)
    assert started == []
    assert here == hash_blobs(root, paths)


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
