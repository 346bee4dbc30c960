"""objects.py against real git: objects read in bulk, blob ids computed here, a pack written
and checked by git."""

from __future__ import annotations

import os
import subprocess

import pytest

from memento_core.errors import MementoError
from memento_core.git.objects import hash_blobs, pack_loose, read_blobs, write_objects
from memento_core.git.repo import repo_dirs
from tests.core.git_calls import stop_watching_git, watch_git

from .conftest import BINARY, git, repo_with_files, write


def test_a_pack_whose_bytes_changed_is_refused(tmp_path, git_identity, monkeypatch):
    """The pack's own hash is git's check: a bit changed after it was made fails the write (a
    loose object git unpacked before it reached the end may stay, unreferenced)."""
    root = repo_with_files(tmp_path)
    for at in (-1, 12):  # the trailer, then the object's header

        def corrupting(args, kw, at=at):
            if args[:1] == ["unpack-objects"]:
                data = bytearray(kw["input"])
                data[at] ^= 1
                kw["input"] = bytes(data)

        watch_git(monkeypatch, [], change=corrupting)
        with pytest.raises(MementoError, match="unpack-objects"):
            write_objects(root, [("blob", b"checked\n")])
    stop_watching_git(monkeypatch)
    assert write_objects(root, [("blob", b"checked\n")]) == [git(root, "hash-object", "--stdin",
                                                                 input=b"checked\n")]


def test_read_blobs_reads_many_in_one_command_and_names_a_missing_one(repo):
    write(repo, "a.bin", BINARY)
    write(repo, "b.txt", "line\nwith\n\nnewlines\n")
    git(repo, "add", "-A")
    shas = sorted(git(repo, "rev-parse", f":{p}").strip().encode() for p in ("a.bin", "b.txt"))
    blobs = read_blobs(repo, shas)
    assert sorted(blobs.values()) == sorted([BINARY, b"line\nwith\n\nnewlines\n"])
    with pytest.raises(MementoError, match="could not read 0{40}"):
        read_blobs(repo, [shas[0], b"0" * 40])


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


def _all_objects(root) -> set[str]:
    """Every object of the repository, packed or loose: "id type size" lines."""
    return set(git(root, "cat-file", "--batch-all-objects", "--batch-check").splitlines())


def _loose(root) -> list[str]:
    return [p.parent.name + p.name for p in (root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*")]


def _more_history(root, n: int, tag: str) -> None:
    for i in range(n):
        write(root, f"notes/{tag}-{i}.txt", f"{tag} {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"{tag} {i}")


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_pack_loose_packs_every_loose_object_and_loses_none(tmp_path, git_identity, fmt):
    """Judged in git: each object before is there after (unreachable ones too), none is loose,
    fsck finds nothing, the history reads the same; one pack of them, named as git names one."""
    root = repo_with_files(tmp_path, fmt)
    _more_history(root, 6, "a")
    write(root, "stray.txt", "a blob no commit holds\n")
    git(root, "hash-object", "-w", "stray.txt")
    before, log = _all_objects(root), git(root, "log", "--format=%H %T %s")
    assert len(_loose(root)) == len(before)
    assert pack_loose(root) == ""
    assert _loose(root) == [] and _all_objects(root) == before
    assert git(root, "log", "--format=%H %T %s") == log
    subprocess.run(["git", "-C", str(root), "fsck", "--full", "--strict"], check=True, capture_output=True)
    (pack,) = (root / ".git" / "objects" / "pack").glob("*.pack")
    assert pack.with_suffix(".idx").is_file() and not (root / ".git" / "objects" / "info" / "packs").exists()


def test_pack_loose_rolls_the_small_packs_up(tmp_path, git_identity):
    """Packed again and again, as ticks would: the packs stay few (their sizes grow geometrically)."""
    root = repo_with_files(tmp_path)
    counts = []
    for round_ in range(8):
        _more_history(root, 4, f"r{round_}")
        before = _all_objects(root)
        assert pack_loose(root) == ""
        assert _loose(root) == [] and _all_objects(root) == before
        counts.append(len(list((root / ".git" / "objects" / "pack").glob("*.pack"))))
    assert max(counts) <= 3, counts


def test_pack_loose_leaves_a_repository_whose_person_turned_packing_off(tmp_path, git_identity):
    """gc.auto = 0 only: a threshold of the person's own is git's porcelain's business, not this."""
    root = repo_with_files(tmp_path)
    git(root, "config", "gc.auto", "6700")
    assert pack_loose(root) == "" and _loose(root) == []
    _more_history(root, 2, "later")
    git(root, "config", "gc.auto", "0")
    loose = sorted(_loose(root))
    assert pack_loose(root) == "gc.auto = 0 in git's configuration"
    assert sorted(_loose(root)) == loose and len(list((root / ".git" / "objects" / "pack").glob("*.pack"))) == 1


def test_pack_loose_says_what_git_said_when_it_cannot(tmp_path, git_identity):
    """A file where git's pack folder goes: git cannot pack, nothing is lost, the answer is git's words."""
    root = repo_with_files(tmp_path)
    pack_dir = root / ".git" / "objects" / "pack"
    pack_dir.rmdir()
    pack_dir.write_text("not a folder\n")
    loose = sorted(_loose(root))
    why = pack_loose(root)
    assert why.startswith("fatal: Unable to create temporary file") and "Not a directory" in why, why
    assert sorted(_loose(root)) == loose


@pytest.mark.parametrize("value", ["0", "00", "0x0", "0k", "-0", "+0", " 0", "1", "6700", "0x10", "10k", "-1"])
def test_a_gc_auto_of_zero_is_read_as_git_reads_it(tmp_path, git_identity, value):
    """Differential: git's own reading of the value (``--type=int``) against the one here."""
    from memento_core.git.objects import _zero

    root = repo_with_files(tmp_path)
    git(root, "config", "gc.auto", value)
    assert _zero(value) == (git(root, "config", "--type=int", "--get", "gc.auto") == "0")
    assert (pack_loose(root) == "gc.auto = 0 in git's configuration") == _zero(value)


def test_pack_loose_leaves_a_partial_clone(tmp_path, git_identity):
    root = repo_with_files(tmp_path)
    git(root, "config", "extensions.partialClone", "origin")
    loose = sorted(_loose(root))
    assert pack_loose(root) == "a partial clone (extensions.partialClone)"
    assert sorted(_loose(root)) == loose
