"""Line offsets of a (possibly huge, possibly growing) log file, found without reading it whole.

The dashboard's log viewer asks for the lines it shows and nothing else. The
index is built in a worker thread by scanning for ``\\n`` a chunk at a time,
so a 100 MB log shows its first screen at once and its length moments later.
``extend`` picks up bytes appended since (``tail -f``).
"""

from __future__ import annotations

import os
import stat
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

CHUNK = 4 * 1024 * 1024
MAX_LINE_BYTES = 4096  # a longer line is shown cut (a log line is not a document)


class LineIndex:
    """Start offsets of every complete or trailing line of ``path``."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._starts = array("q", [0])
        self._size = 0  # bytes indexed so far
        self._lock = threading.Lock()

    @property
    def line_count(self) -> int:
        with self._lock:
            if self._size == 0:
                return 0
            # A file that ends with a newline has no trailing partial line.
            return len(self._starts) - (1 if self._ends_with_newline else 0)

    @property
    def size(self) -> int:
        return self._size

    def scan(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[int]:
        """Index the bytes not yet indexed, yielding the line count after each chunk."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO: never waited on
        except OSError:
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return  # a FIFO, socket or device in a log's place has no lines to show
            size = os.fstat(fd).st_size
            if size < self._size:  # truncated or replaced: start again
                with self._lock:
                    self._starts = array("q", [0])
                    self._size = 0
            if size == self._size:
                return
            # Chunked reads rather than one mmap of the whole file: mapped pages count
            # as the dashboard's own memory while they are resident (1 GB for a 1 GB log).
            pos = self._size
            while pos < size:
                if cancelled():
                    return
                chunk = os.pread(fd, min(CHUNK, size - pos), pos)
                if not chunk:
                    break
                found = array("q")
                find = chunk.find
                at = find(b"\n")
                while at != -1:
                    found.append(pos + at + 1)
                    at = find(b"\n", at + 1)
                end = pos + len(chunk)
                with self._lock:
                    self._starts.extend(found)
                    self._size = end
                    self._ends_with_newline = chunk[-1] == 0x0A
                pos = end
                yield self.line_count
        finally:
            os.close(fd)

    _ends_with_newline = False

    def read_lines(self, first: int, count: int) -> list[str]:
        """Lines ``first`` … ``first+count-1`` (fewer at the end), decoded leniently."""
        with self._lock:
            total = len(self._starts) - (1 if self._ends_with_newline else 0)
            if self._size == 0 or first >= total or count <= 0:
                return []
            last = min(first + count, total)
            spans = [(self._starts[i], (self._starts[i + 1] if i + 1 < len(self._starts) else self._size))
                     for i in range(first, last)]
        out = []
        try:
            with open(self.path, "rb") as fh:
                for start, end in spans:
                    fh.seek(start)
                    data = fh.read(min(end - start, MAX_LINE_BYTES))
                    out.append(data.rstrip(b"\r\n").decode("utf-8", "replace"))
        except OSError:
            return []
        return out
