"""lazy_file.py: the line index finds lines and reads a window, follows growth and truncation, survives bad
UTF-8 and huge lines; a 1 GB tick log is indexed without reading it into memory (slow tier)."""

from __future__ import annotations

import os
import resource

import pytest

from memento_tui.lazy_file import MAX_LINE_BYTES, LineIndex


@pytest.mark.slow
def test_one_gigabyte_log_is_indexed_lazily(tmp_path):
    log = tmp_path / "tick_huge.log"
    with open(log, "wb") as fh:
        fh.write(b"[memento] first line\n" + b"x" * 100 + b"\n")
        fh.truncate(1024 ** 3)  # a sparse gigabyte: one enormous last "line" of NUL bytes
    index = LineIndex(log)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    counts = list(index.scan())
    assert counts and index.size == os.path.getsize(log) == 1024 ** 3
    assert index.line_count == 3
    first, second, third = index.read_lines(0, 10)
    assert first == "[memento] first line" and second == "x" * 100
    assert len(third) == MAX_LINE_BYTES  # the giant line is shown cut, never read whole
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200 * 1024  # mmap pages are not the heap: far below the file's size


def scan_all(index: LineIndex) -> int:
    count = index.line_count
    for seen in index.scan():
        count = seen
    return count


def test_index_finds_lines_and_reads_a_window(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"".join(f"line {i}\n".encode() for i in range(10_000)))
    index = LineIndex(path)
    assert scan_all(index) == 10_000
    assert index.read_lines(5000, 3) == ["line 5000", "line 5001", "line 5002"]
    assert index.read_lines(9999, 10) == ["line 9999"]
    assert index.read_lines(10_000, 1) == []


def test_partial_last_line_growth_and_truncation(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\nthr")
    index = LineIndex(path)
    assert scan_all(index) == 3
    assert index.read_lines(0, 5) == ["one", "two", "thr"]
    with path.open("ab") as fh:
        fh.write(b"ee\nfour\n")
    assert scan_all(index) == 4
    assert index.read_lines(2, 5) == ["three", "four"]
    path.write_bytes(b"new\r\n")  # replaced by a shorter file
    assert scan_all(index) == 1
    assert index.read_lines(0, 5) == ["new"]


def test_bad_utf8_and_huge_lines_do_not_break_reading(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"\xff\xfe bad\n" + b"x" * 100_000 + b"\nend\n")
    index = LineIndex(path)
    assert scan_all(index) == 3
    lines = index.read_lines(0, 3)
    assert lines[0].endswith(" bad") and len(lines[1]) <= 4096 and lines[2] == "end"
