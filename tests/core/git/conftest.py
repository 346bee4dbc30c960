"""What the tests of the git package share: ``git`` (a git command's output, stripped), a
repository with a few files, and the ``seeded`` fixture."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memento_core.git.changes import FileChange
from memento_core.git.commit import commit_paths


def git(root: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def repo_with_files(tmp_path: Path, fmt: str = "sha1") -> Path:
    root = tmp_path / f"repo-{fmt}"
    git(tmp_path, "init", "-q", "-b", "main", f"--object-format={fmt}", str(root))
    files = {"README.md": "hello\n", "docs/MASTER_PLAN.md": "# plan\n- [ ] `T-1` one\n",
             "docs/guide/deep.md": "deep\n", "docs-extra": "a file that sorts between docs and docs/\n",
             "docs.txt": "sorts before the docs folder's name plus '/'\n", "bin/run.sh": "#!/bin/sh\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "bin/run.sh").chmod(0o755)
    (root / "link").symlink_to("README.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


BINARY = bytes(range(256)) * 4


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
