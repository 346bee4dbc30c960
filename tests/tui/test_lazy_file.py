"""A 1 GB tick log: indexed without reading it into memory, first lines at once, no hang."""

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
