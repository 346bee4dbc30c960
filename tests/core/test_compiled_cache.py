"""compiled_cache.py: the files of compiled code beside the package's bytecode (dataclass_code.py's
methods, regex_code.py's patterns): read only when they can be trusted as bytecode is, written
atomically, never through a link, bounded. (Each cache's own save is judged in its test file.)"""

from __future__ import annotations

import marshal
import os
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

from memento_core import compiled_cache, dataclass_code


def _read(path: str, magic: bytes) -> dict:
    return compiled_cache.read(path, magic, dataclass_code._is_key)


def _valid(path: Path) -> None:
    path.write_bytes(MAGIC_NUMBER + marshal.dumps({(0, "def a():\n pass"): b"x"}))


@pytest.mark.parametrize("kind", ["missing", "empty", "truncated", "other-magic", "not-a-dict", "keys",
                                  "link", "fifo", "folder", "too-big"])
def test_a_file_it_cannot_trust_is_not_used(tmp_path, monkeypatch, kind):
    _valid(tmp_path / "good.pyc")
    assert _read(str(tmp_path / "good.pyc"), MAGIC_NUMBER) == {(0, "def a():\n pass"): b"x"}
    path = tmp_path / "cache.pyc"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        _valid(path)
        path.write_bytes(path.read_bytes()[:-3])
    elif kind == "other-magic":
        _valid(path)
        path.write_bytes(b"\x00\x00\r\n" + path.read_bytes()[4:])
    elif kind == "not-a-dict":
        path.write_bytes(MAGIC_NUMBER + marshal.dumps([1, 2]))
    elif kind == "keys":  # the old format, a text alone, or values that are no code's bytes
        path.write_bytes(MAGIC_NUMBER + marshal.dumps({"def a():\n pass": b"x", (0, "t"): "str", (0, 1): b"x"}))
    elif kind == "link":
        _valid(tmp_path / "real.pyc")
        path.symlink_to(tmp_path / "real.pyc")
    elif kind == "fifo":
        os.mkfifo(path)  # opened without blocking, and refused: not a regular file
    elif kind == "folder":
        path.mkdir()
    elif kind == "too-big":
        _valid(path)
        monkeypatch.setattr(compiled_cache, "MAX_BYTES", path.stat().st_size - 1)
    fds = sorted(os.listdir("/proc/self/fd"))
    assert _read(str(path), MAGIC_NUMBER) == {}
    assert sorted(os.listdir("/proc/self/fd")) == fds  # nothing left open


def test_a_file_that_cannot_be_read_is_not_used():
    assert _read("/proc/self/mem", MAGIC_NUMBER) == {}  # a regular file whose read fails (EIO)


def test_a_file_at_the_size_limit_is_used(tmp_path, monkeypatch):
    _valid(tmp_path / "cache.pyc")
    monkeypatch.setattr(compiled_cache, "MAX_BYTES", (tmp_path / "cache.pyc").stat().st_size)
    assert _read(str(tmp_path / "cache.pyc"), MAGIC_NUMBER) == {(0, "def a():\n pass"): b"x"}


def test_past_most_entries_only_those_used_are_written_and_at_most_all_of_them(tmp_path):
    path = str(tmp_path / "cache.pyc")
    entries = {(0, "a"): b"1", (0, "b"): b"2", (0, "c"): b"3"}
    assert compiled_cache.write(path, MAGIC_NUMBER, entries, {(0, "a")}, 3)  # three, the most: all
    assert _read(path, MAGIC_NUMBER) == entries
    assert compiled_cache.write(path, MAGIC_NUMBER, entries, {(0, "a"), (0, "gone")}, 2)
    assert _read(path, MAGIC_NUMBER) == {(0, "a"): b"1"}  # past two: what this process used
    assert entries == {(0, "a"): b"1", (0, "b"): b"2", (0, "c"): b"3"}  # the process's own left whole


def test_a_file_it_cannot_write_is_said_false_and_leaves_nothing(tmp_path):
    (tmp_path / "file").write_text("a file where the folder would be\n")
    assert not compiled_cache.write(str(tmp_path / "file" / "cache.pyc"), MAGIC_NUMBER, {(0, "a"): b"1"}, set(), 9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert (tmp_path / "file").read_text() == "a file where the folder would be\n"
