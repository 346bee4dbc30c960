"""The scrubbed index made in Python (memento_core.git.index) against the one git makes itself
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.git.index import _scrubbed_copy, scrubbed, scrubbed_index
from memento_core.git.repo import empty_tree, repo_dirs
from memento_core.git.run import run_git
from memento_core.git.status import persons_paths, status, tracked
from tests.core.git_calls import watch_git


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
    """The entries of the index scrubbed makes from root's real one, read by git."""
    copied = scrubbed((root / ".git" / "index").read_bytes(), fmt)
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
    copied = scrubbed((many / ".git" / "index").read_bytes())
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
    assert scrubbed((root / ".git" / "index").read_bytes(), "sha1") is None


def test_split_and_sparse_indexes_are_left_to_git(repo, tmp_path):
    write(repo, "a.txt")
    write(repo, "sub/b.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    git(repo, "update-index", "--split-index")
    assert scrubbed((repo / ".git" / "index").read_bytes()) is None
    git(repo, "update-index", "--no-split-index")
    assert scrubbed((repo / ".git" / "index").read_bytes()) is not None
    git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo, "sparse-checkout", "set", "nothing")
    assert b"sdir" in (repo / ".git" / "index").read_bytes()
    assert scrubbed((repo / ".git" / "index").read_bytes()) is None


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
    assert scrubbed(forged(entries)) is None


def test_a_forged_index_that_is_plain_is_taken():
    assert scrubbed(forged([(b"a", 0), (b"b/c", 0)])) is not None  # the control of the above
    assert scrubbed(forged([(b"a", 0)], fix_sum=False)) is None  # a wrong checksum
    assert scrubbed(forged([(b"a", 0)])[:-25] + forged([(b"a", 0)])[-20:]) is None  # cut short
    assert scrubbed(b"") is None and scrubbed(b"DIRC") is None
    for mode in (0, 0o010644, 0o040000, 0o100600):  # git's diff would stop on these ("unsupported ce_mode")
        assert scrubbed(forged([(b"a", 0)], mode=mode)) is None
    assert scrubbed(forged([(b".github/workflows/ci.yml", 0)])) is not None


def test_scrubbed_index_runs_one_git_command_for_a_plain_index(many, monkeypatch):
    """The point of it: the copy costs no process (only the refresh does); a split index
    still gets its copy, from git."""
    started: list[str] = []
    real = run_git
    repo_dirs(many)  # asked of git once per process and folder, not per copy
    empty_tree(many)  # so is the object format
    watch_git(monkeypatch, started)
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


def test_one_status_is_one_git_command_and_still_sees_what_the_flags_and_a_forged_stat_hid(many, monkeypatch):
    """status runs git status alone on the copy, no refresh before it (issue 42: a tick
    pays one process per status read): what the copy's empty stat data cannot vouch for, git
    status hashes itself, so an assume-unchanged or skip-worktree file that changed, and one
    changed with its size and mtime put back, are seen; the files that did not change are not."""
    repo_dirs(many)
    started: list[str] = []
    watch_git(monkeypatch, started)
    assert {e.path for e in status(many)} == {"new.txt"}  # its intent-to-add only
    assert started == ["status"]
    write(many, "a.txt", b"Y\n")  # assume-unchanged, the same size
    write(many, "a/b.txt", b"changed under skip-worktree\n")
    st = os.stat(many / "run.sh")
    write(many, "run.sh", b"#!/bin/X\n")  # the same size and times (the copy has neither)
    os.utime(many / "run.sh", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert {e.path for e in status(many)} == {"new.txt", "a.txt", "a/b.txt", "run.sh"}
    started.clear()
    assert persons_paths(many) == set()
    assert started == ["status", "ls-files"]


def test_an_index_that_is_a_fifo_is_never_waited_on(repo):
    write(repo, "a.txt")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "seed")
    index = repo / ".git" / "index"
    index.unlink()
    os.mkfifo(index)
    assert _scrubbed_copy(index, repo) is None  # opened without blocking, then refused


# -- Forged lengths: the copy and git must never disagree about what is staged ------------------

def _entry(path: bytes, oid: bytes, name_length: int, *, ctime: bytes = bytes(8)) -> bytes:
    return ctime + bytes(16) + struct.pack(">I", 0o100644) + bytes(12) + oid + struct.pack(">H", name_length) + path


def _blob_id(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()


def git_view(root: Path, index: bytes, tmp: Path) -> subprocess.CompletedProcess:
    """``git ls-files --stage`` of ``index`` (its bytes), as git reads them."""
    path = tmp / "view.index"
    path.write_bytes(index)
    return subprocess.run(["git", "-C", str(root), "ls-files", "--stage", "-z"], capture_output=True,
                          env={**os.environ, "GIT_INDEX_FILE": str(path)}, check=False)


def assert_same_as_git(root: Path, index: bytes, tmp: Path, fmt: str = "sha1") -> None:
    """The copy is refused, or git reads the same entries in it as in the original."""
    copied = scrubbed(index, fmt)
    if copied is None:
        return
    original = git_view(root, index, tmp)
    assert original.returncode == 0, f"the copy took an index git refuses: {original.stderr!r}"
    assert git_view(root, copied, tmp).stdout == original.stdout


def test_a_forged_name_length_is_read_as_git_reads_it(repo, tmp_path):
    """An entry whose flags say its name is 65 bytes long, where its NUL comes after one: git
    reads the next 64 bytes as the rest of its name and stages `a` and `c`; read up to the NUL,
    the same bytes stage `a` and `b` (and `c` becomes an extension). The copy must not be the
    second reading."""
    agent, person = _blob_id(b"agent\n"), _blob_id(b"person\n")
    a = _entry(b"a", _blob_id(b"a\n"), 65) + b"\0"
    b = _entry(b"b", agent, 1) + b"\0"
    c = _entry(b"c", person, 1) + b"\0"
    c = b"ZZZZ" + struct.pack(">I", len(c) - 8) + c[8:]  # its ctime, read as an extension's header
    body = b"DIRC" + struct.pack(">II", 2, 2) + a + b + c
    index = body + hashlib.sha1(body).digest()
    (repo / ".git" / "index").write_bytes(index)
    staged = git(repo, "ls-files", "--stage")
    assert person.hex().encode() in staged and agent.hex().encode() not in staged
    assert_same_as_git(repo, index, tmp_path)
    assert scrubbed(index) is None
    with scrubbed_index(repo) as env:  # the guards' copy, made by git instead
        assert git(repo, "ls-files", "--stage", env=env) == staged


def _varint(value: int) -> bytes:
    """Git's offset varint (index version 4), as encode_varint writes it."""
    out = [value & 0x7F]
    value >>= 7
    while value:
        value -= 1
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(out))


_NAMES = st.lists(st.text(alphabet="ab/.-", min_size=1, max_size=5).map(str.encode), max_size=5).map(
    lambda names: sorted(set(names)))
_SIGNATURES = [b"TREE", b"REUC", b"UNTR", b"ZZZZ", b"link", b"sdir", b"EOIE", b"IEOT", b"FSMN", b"abcd", b"\x00bcd"]


@st.composite
def hostile_indexes(draw) -> bytes:
    """Index bytes with a valid checksum, mostly as git writes them, each part possibly forged:
    a name's length in its flags, its NUL, its padding, a v4 prefix to strip, stages, modes,
    extended flags, the entry count, extensions and bytes that follow them."""
    version = draw(st.sampled_from([2, 3, 4]))
    names = draw(_NAMES)
    body, previous = bytearray(), b""
    for name in names:
        stage = draw(st.sampled_from([0, 0, 0, 1, 2, 3]))
        mode = draw(st.sampled_from([0o100644, 0o100644, 0o100755, 0o120000, 0o040000]))
        length = draw(st.one_of(st.just(len(name)), st.just(0xFFF), st.integers(0, len(name) + 80)))
        extended = draw(st.sampled_from([None, None, 0x2000, 0x4000, 0x0001, 0x8000]))
        flags = stage << 12 | min(length, 0xFFF) | (0x4000 if extended is not None else 0)
        entry = bytearray(draw(st.binary(min_size=8, max_size=8)) + bytes(16) + struct.pack(">I", mode) + bytes(12)
                          + _blob_id(name) + struct.pack(">H", flags))
        if extended is not None:
            entry += struct.pack(">H", extended)
        if version == 4:
            common = len(os.path.commonprefix([previous, name]))
            strip = len(previous) - common + draw(st.sampled_from([0, 0, 0, 1, -1]))
            entry += _varint(max(strip, 0)) + name[common:] + b"\0"
        else:
            entry += name + b"\0"
            pad = (-len(entry)) % 8
            entry += draw(st.one_of(st.just(bytes(pad)), st.binary(min_size=pad, max_size=pad + 16)))
        body += entry
        previous = name
    count = max(0, len(names) + draw(st.sampled_from([0, 0, 0, 1, -1])))
    for _ in range(draw(st.integers(0, 2))):
        payload = draw(st.binary(max_size=24))
        body += draw(st.sampled_from(_SIGNATURES)) + struct.pack(">I", len(payload)) + payload
    body += draw(st.sampled_from([b"", b"", b"EOIE" + struct.pack(">I", 24) + bytes(24), b"\x01\x02"]))
    data = bytearray(b"DIRC" + struct.pack(">II", version, count) + body)
    if draw(st.booleans()):  # one byte anywhere changed, the checksum made again
        at = draw(st.integers(12, max(12, len(data) - 1)))
        if at < len(data):
            data[at] = draw(st.integers(0, 255))
    return bytes(data) + hashlib.sha1(bytes(data)).digest()


@pytest.fixture(scope="module")
def bare_repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("index-view")
    git(root, "init", "-q")
    return root


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=hostile_indexes())
def test_the_copy_never_sees_other_entries_than_git(bare_repo, tmp_path, index):
    assert_same_as_git(bare_repo, index, tmp_path)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=hostile_indexes())
def test_the_copy_never_sees_other_entries_than_git_heavy(bare_repo, tmp_path, index):
    assert_same_as_git(bare_repo, index, tmp_path)


def test_tracked_paths_read_here_are_the_ones_git_lists(many, monkeypatch):
    """tracked (issue 42: the snapshot's tracked files with no process): what `git ls-files
    -z -- .` lists, from the top level and from a folder below it, a long name, an odd one, an
    intent-to-add and a skip-worktree entry among them; a split index is left to git."""
    def listed(root):
        return [p for p in git(root, "ls-files", "-z", "--", ".").decode("utf-8", "surrogateescape").split("\0") if p]

    started: list[str] = []
    repo_dirs(many)
    repo_dirs(many / "a")
    watch_git(monkeypatch, started)
    assert tracked(many) == listed(many)
    assert tracked(many / "a") == listed(many / "a") == ["b.txt"]
    assert started == []
    git(many, "update-index", "--split-index")
    assert tracked(many) == listed(many)
    assert started == ["ls-files"]
