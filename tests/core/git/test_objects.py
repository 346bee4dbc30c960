"""objects.py against real git: objects read in bulk, blob ids computed here, a pack written
and checked by git."""

from __future__ import annotations

import os

import pytest

from memento_core.errors import MementoError
from memento_core.git.objects import hash_blobs, read_blobs, write_objects
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
