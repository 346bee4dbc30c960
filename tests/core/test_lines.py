"""lines.py: lists a person reads are never cut silently (issue 25, item 7): a cut list of ids ends
in "… and N more", a long reason in "…"; and the one reader of files refuses what is not a regular
file (a FIFO, a device, a directory, a symbolic link where it must not follow one), SPEC §13."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.lines import (
    NotAFile,
    clipped,
    listed,
    read_bytes,
    read_regular,
    read_regular_or_none,
    read_text_file,
)


def test_listed_and_clipped_say_what_they_cut():
    ids = [f"T-{n}" for n in range(1, 13)]
    assert listed(ids[:5]) == "T-1, T-2, T-3, T-4, T-5"
    assert listed(ids) == "T-1, T-2, T-3, T-4, T-5, … and 7 more"
    assert clipped("x" * 10, 10) == "x" * 10 and clipped("x" * 11, 10) == "x" * 9 + "…"


def test_the_one_reader_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "file")
    (tmp_path / "file").write_bytes(b"text")
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path)
    with pytest.raises(MementoError, match="is a directory"):
        read_bytes(tmp_path)
    assert read_regular_or_none(tmp_path) is None
    for path, said in ((fifo, "is a FIFO"), (Path("/dev/zero"), "is a character device")):
        with pytest.raises(NotAFile, match=said):
            read_regular(path)
        with pytest.raises(NotAFile, match=said):
            read_bytes(path)  # the documents' reader (the plan, the notes, the status log)
        with pytest.raises(OSError):
            read_text_file(path)  # Memento's state files: unreadable, like a missing one
        assert read_regular_or_none(path) is None
    with pytest.raises(NotAFile, match="symbolic link"):
        read_regular(link)
    assert read_bytes(link) == b"text"  # a person may link a document; it is still a regular file
    assert read_regular(tmp_path / "file", limit=2) == b"te"
