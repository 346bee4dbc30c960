"""A tick log keeps its first and last :data:`KEEP` bytes (SPEC §13).

Memento copies the agent's output into the log from a pipe (logpipe.py), the
file opened with ``O_APPEND``: every write lands at the end of the file as it
is at that moment. So the middle can be cut while the agent runs: :func:`trim` moves the
last ``KEEP`` bytes down behind the first ``KEEP`` and a marker line, and
truncates. :class:`LogCap` does that every :data:`EVERY` seconds in a thread
for as long as a command runs, and once more at its end. Bytes the agent
copied during the cut itself may be lost; they are in the middle anyway.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

KEEP = 10 * 1024 * 1024
EVERY = 0.5
MARKER = "\n[memento] … {n} bytes cut from the middle of this log (it keeps its first and last {keep} bytes) …\n"


def trim(path: Path, keep: int | None = None) -> int:
    """Cut the middle of ``path`` when it is over twice ``keep`` bytes; the bytes cut. Never a file
    with another name (a hard link the agent put there, maybe to a person's file: SPEC §13)."""
    keep = KEEP if keep is None else keep
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return 0
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size <= 2 * keep + 4096 or st.st_nlink > 1 or not stat.S_ISREG(st.st_mode):
            return 0
        os.lseek(fd, size - keep, os.SEEK_SET)
        tail = _read(fd, keep)
        cut = size - keep - len(tail)
        marker = MARKER.format(n=cut, keep=keep).encode()
        os.lseek(fd, keep, os.SEEK_SET)
        os.write(fd, marker + tail)
        os.ftruncate(fd, keep + len(marker) + len(tail))
        return cut
    finally:
        os.close(fd)


def _read(fd: int, n: int) -> bytes:
    chunks = []
    while n > 0:
        data = os.read(fd, min(n, 1 << 20))
        if not data:
            break
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


class LogCap:
    """Trim a log every EVERY seconds while a command writes to it (a context manager)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memento-logcap", daemon=True)

    def __enter__(self) -> LogCap:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        trim(self.path)

    def _run(self) -> None:
        while not self._stop.wait(EVERY):
            try:
                if os.stat(self.path).st_size > 2 * KEEP + 4096:
                    trim(self.path)
            except OSError:
                pass
