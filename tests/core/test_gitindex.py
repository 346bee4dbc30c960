"""The scrubbed index made in Python (memento_core.gitindex) against the one git makes itself
(``ls-files --stage`` into ``update-index --index-info``), on real indexes written by git:
versions 2, 3 and 4, flags, conflicts, long and odd names, SHA-256; and the indexes it must
leave to git (split, sparse, forged)."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
from pathlib import Path

import pytest

from memento_core import gitindex, gitops
from memento_core.gitops import scrubbed_index


def git(root: Path, *args: str, env: dict | None = None, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, input=input,
                          env={**os.environ, **(env or {})}, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def write(root: Path, rel: str, data: bytes = b"x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def by_git(root: Path, tmp: Path) -> bytes:
    """The entries (``ls-files --stage``) of the index git makes from root's real one."""
    index = tmp / "by-git.index"
    index.unlink(missing_ok=True)
    entries = git(root, "ls-files", "--stage", "-z")
    git(root, "update-index", "-z", "--index-info", env={"GIT_INDEX_FILE": str(index)}, input=entries)
    return git(root, "ls-files", "--stage", "-z", env={"GIT_INDEX_FILE": str(index)})


def by_python(root: Path, tmp: Path, fmt: str = "sha1") -> bytes:
    """The entries of the index gitindex.scrubbed makes from root's real one, read by git."""
    copied = gitindex.scrubbed((root / ".git" / "index").read_bytes(), fmt)
    assert copied is not None, "a plain index was left to git"
    index = tmp / "by-python.index"
    index.write_bytes(copied)
    return git(root, "ls-files", "--stage", "-z", env={"GIT_INDEX_FILE": str(index)})


def flags_and_stat(index: bytes) -> list[tuple[bytes, int]]:
    """(stat data, flags) of each entry of a version 2 index."""
    count = struct.unpack_from(">I", index, 8)[0]
    pos, found = 12, []
    for _ in range(count):
        flags = struct.unpack_from(">H", index, pos + 60)[0]
        stop = index.index(b"\0", pos + 62)
        found.append((index[pos:pos + 24] + index[pos + 28:pos + 40], flags))
        pos += (stop - pos + 8) & ~7
    return found


@pytest.fixture
def many(repo: Path) -> Path:
    """A repository whose index holds files, a symlink, an executable, odd and long names."""
    write(repo, "a.txt")
    write(repo, "a-b/c.txt")
    write(repo, "a/b.txt")
    write(repo, "ünï código/ñ.md", b"hola\n")
    write(repo, "tab\there.txt")
    write(repo, "run.sh", b"#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("a.txt", repo / "link")
    git(repo, "add", "-A")
    # A name longer than the 12 bits its length has in the flags (in the index only: too long a
    # path for this file system).
    blob = git(repo, "hash-object", "-w", "a.txt").decode().strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{'/'.join(['d' * 200] * 21)}/f.txt")
    git(repo, "commit", "-qm", "seed")
    git(repo, "update-index", "--assume-unchanged", "a.txt")
    git(repo, "update-index", "--skip-worktree", "a/b.txt")
    write(repo, "new.txt")
    git(repo, "add", "--intent-to-add", "new.txt")
    return repo


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_same_entries_as_git_makes(many, tmp_path, version):
    git(many, "update-index", "--index-version", version)
    assert by_python(many, tmp_path) == by_git(many, tmp_path)
    copied = gitindex.scrubbed((many / ".git" / "index").read_bytes())
    assert copied[:12] == b"DIRC" + struct.pack(">II", 2, 9)
    assert any(len(path) > 0xFFF for path in by_git(many, tmp_path).split(b"\0"))
    # No stat data and no flag but the name's length: assume-unchanged, skip-worktree and
    # intent-to-add are all gone, so git hashes every file again.
    for stat_data, flags in flags_and_stat(copied):
        assert stat_data == bytes(36)
        assert flags & 0xF000 == 0


def test_a_conflict_keeps_its_stages(repo, tmp_path):
    write(repo, "f.txt", b"base\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "other")
    write(repo, "f.txt", b"other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    write(repo, "f.txt", b"main\n")
    git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "other"], capture_output=True)
    stages = git(repo, "ls-files", "--stage", "-z")
    assert b" 1\tf.txt" in stages and b" 3\tf.txt" in stages
    assert by_python(repo, tmp_path) == by_git(repo, tmp_path) == stages


def test_a_sha256_repository(tmp_path):
    root = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(root))
    write(root, "a.txt")
    git(root, "add", "a.txt")
    assert len(git(root, "ls-files", "--stage").split()[1]) == 64
    assert by_python(root, tmp_path, "sha256") == by_git(root, tmp_path)
    # The object format is the repository's, not what the checksum would fit.
    assert gitindex.scrubbed((root / ".git" / "index").read_bytes(), "sha1") is None


def test_split_and_sparse_indexes_are_left_to_git(repo, tmp_path):
    write(repo, "a.txt")
    write(repo, "sub/b.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    git(repo, "update-index", "--split-index")
    assert gitindex.scrubbed((repo / ".git" / "index").read_bytes()) is None
    git(repo, "update-index", "--no-split-index")
    assert gitindex.scrubbed((repo / ".git" / "index").read_bytes()) is not None
    git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo, "sparse-checkout", "set", "nothing")
    assert b"sdir" in (repo / ".git" / "index").read_bytes()
    assert gitindex.scrubbed((repo / ".git" / "index").read_bytes()) is None


def forged(entries: list[tuple[bytes, int]], *, fix_sum: bool = True, mode: int = 0o100644) -> bytes:
    """A version 2 index of (path, stage) entries of one blob, in the order given."""
    oid = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    body = bytearray(b"DIRC" + struct.pack(">II", 2, len(entries)))
    for path, stage in entries:
        size = 62 + len(path)
        body += bytes(24) + struct.pack(">I", mode) + bytes(12) + oid + struct.pack(">H", stage << 12 | len(path))
        body += path + bytes(((size + 8) & ~7) - size)
    return bytes(body) + (hashlib.sha1(body).digest() if fix_sum else bytes(20))


@pytest.mark.parametrize("entries", [
    [(b"b", 0), (b"a", 0)],  # unsorted: git's lookups would miss entries
    [(b"a", 0), (b"a", 0)],  # twice
    [(b"a", 0), (b"a", 2)],  # merged and unmerged at once
    [(b"a", 0), (b"a/b", 0)],  # a file where another entry needs a folder
    [(b".git/config", 0)],
    [(b"x/../y", 0)],
    [(b"/abs", 0)],
    [(b"sub/.GIT/hooks/pre-commit", 0)],
    [(b"GIT~1/config", 0)],
    [(b"sub/.git./hooks/x", 0)],
], ids=["unsorted", "twice", "merged-and-not", "file-and-folder", "dot-git", "dot-dot", "absolute", "dot-git-case",
        "ntfs-short-name", "ntfs-trailing-dot"])
def test_a_forged_index_is_left_to_git(entries):
    assert gitindex.scrubbed(forged(entries)) is None


def test_a_forged_index_that_is_plain_is_taken():
    assert gitindex.scrubbed(forged([(b"a", 0), (b"b/c", 0)])) is not None  # the control of the above
    assert gitindex.scrubbed(forged([(b"a", 0)], fix_sum=False)) is None  # a wrong checksum
    assert gitindex.scrubbed(forged([(b"a", 0)])[:-25] + forged([(b"a", 0)])[-20:]) is None  # cut short
    assert gitindex.scrubbed(b"") is None and gitindex.scrubbed(b"DIRC") is None
    for mode in (0, 0o010644, 0o040000, 0o100600):  # git's diff would stop on these ("unsupported ce_mode")
        assert gitindex.scrubbed(forged([(b"a", 0)], mode=mode)) is None
    assert gitindex.scrubbed(forged([(b".github/workflows/ci.yml", 0)])) is not None


def test_scrubbed_index_runs_one_git_command_for_a_plain_index(many, monkeypatch):
    """The point of it: the copy costs no process (only the refresh does); a split index
    still gets its copy, from git."""
    started: list[str] = []
    real = gitops.run_git

    def counted(root, args, **kw):
        started.append(args[0])
        return real(root, args, **kw)

    gitops.repo_dirs(many)  # asked of git once per process and folder, not per copy
    gitops.empty_tree(many)  # so is the object format
    monkeypatch.setattr(gitops, "run_git", counted)
    write(many, "a.txt", b"changed under assume-unchanged\n")
    with scrubbed_index(many) as env:
        assert started == ["update-index"]
        diff = real(many, ["diff", "--name-only", "HEAD"], env=env).stdout.decode()
    assert "a.txt" in diff.split("\n")  # the flag that hid it from `git status` is gone
    git(many, "update-index", "--split-index")
    started.clear()
    with scrubbed_index(many) as env:
        assert started == ["ls-files", "update-index", "update-index"]
        diff = real(many, ["diff", "--name-only", "HEAD"], env=env).stdout.decode()
    assert "a.txt" in diff.split("\n")


def test_an_index_that_is_a_fifo_is_never_waited_on(repo):
    write(repo, "a.txt")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "seed")
    index = repo / ".git" / "index"
    index.unlink()
    os.mkfifo(index)
    assert gitops._scrubbed_copy(index, repo) is None  # opened without blocking, then refused
