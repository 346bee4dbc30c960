"""A command's output reaches its log through a pipe Memento copies (SPEC §13).

The command's stdout and stderr are the write end of a pipe, never the log file
itself: what it does to its descriptors 1 and 2 (``ftruncate``, a seek and an
overwrite, reopening ``/proc/self/fd/1`` with ``O_TRUNC``) reaches a pipe, so it
can neither erase Memento's lines nor the usage it printed. A thread copies the
pipe into the log (opened ``O_APPEND | O_NOFOLLOW``: logcap.py can still cut
the middle of a flood) and into every :class:`Capture` listening on that log:
the usage and rate-limit parsers (tick/limits.py) read what the command
printed from there, not from a file it could reach by its path.

A CLI that streams JSON events (SPEC §20) is given a :class:`stream.StreamLog`:
the log then gets its readable lines (a line per tool call, as each event
arrives) instead of the events, while every Capture still gets the bytes as
printed.

The copy ends at end of file, when every process holding the write end is gone
(run_in_group kills the group and its strays first), or at most
:data:`DRAIN_SECONDS` after :meth:`LogPipe.finish`: a process that escaped with
the write end open (one not ours to kill) never hangs the tick.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..locks import open_append
from .stream import StreamLog

CHUNK = 1 << 20
PIPE_SIZE = 1 << 20  # fewer, larger reads of a flood (the kernel may grant less: then its default)
DRAIN_SECONDS = 2.0  # how long the copy goes on after the command's processes are gone
POLL_MS = 200
KEEP = 10 * 1024 * 1024  # a Capture keeps the first and last KEEP bytes, like the log (logcap.py)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


class Capture:
    """What commands printed into one log while the capture was open (first and last KEEP bytes)."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._head = bytearray()
        self._tail = bytearray()
        self._cut = 0
        self._lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self._lock:
            room = self.keep - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            if not data:
                return
            self._tail += data
            over = len(self._tail) - self.keep
            if over > 0:
                del self._tail[:over]
                self._cut += over

    @property
    def size(self) -> int:
        with self._lock:
            return len(self._head) + len(self._tail) + self._cut

    def text(self) -> str:
        with self._lock:
            marker = f"\n[memento] … {self._cut} bytes cut …\n".encode() if self._cut else b""
            return bytes(self._head + marker + self._tail).decode("utf-8", "replace")


class LineTap:
    """The lines holding ``marker`` of what commands print into one log, picked as they come: what a
    usage parser reads while the agent runs (the budget watch) without the whole capture each
    time. A line longer than :data:`TAP_LINE` is not held (no usage line is that long)."""

    def __init__(self, marker: bytes):
        self.marker = marker
        self._lines: list[bytes] = []
        self._partial = b""
        self._lock = threading.Lock()
        self.picked = 0  # lines picked so far: what a reader compares to know there is more

    def add(self, data: bytes) -> None:
        with self._lock:
            if self._partial:
                data = self._partial + data
            end = data.rfind(b"\n")
            self._partial = data[end + 1:] if len(data) - end - 1 <= TAP_LINE else b""
            if end >= 0 and data.find(self.marker, 0, end) >= 0:
                picked = [line for line in data[:end].split(b"\n") if self.marker in line]
                self._lines += picked
                self.picked += len(picked)
                del self._lines[:-TAP_LINES]

    def text(self) -> str:
        with self._lock:
            return b"\n".join(self._lines).decode("utf-8", "replace")


TAP_LINE = 1 << 20
TAP_LINES = 100_000
_LISTENING: dict[str, list] = {}
_LISTENING_LOCK = threading.Lock()


def _key(path: Path | str) -> str:
    return os.path.abspath(path)


@contextmanager
def capture(log_path: Path | str):
    """A :class:`Capture` of what every command run into ``log_path`` prints while it is open."""
    with listening(log_path, Capture()) as cap:
        yield cap


@contextmanager
def listening(log_path: Path | str, cap):
    """``cap`` (a Capture, a LineTap: anything with ``add(bytes)``) gets what every command run into
    ``log_path`` prints while it is open."""
    key = _key(log_path)
    with _LISTENING_LOCK:
        _LISTENING.setdefault(key, []).append(cap)
    try:
        yield cap
    finally:
        with _LISTENING_LOCK:
            caps = _LISTENING.get(key, [])
            if cap in caps:
                caps.remove(cap)
            if not caps:
                _LISTENING.pop(key, None)


class LogPipe:
    """The pipe a command writes into and the thread that copies it to ``log_path``.

    Give :attr:`write_fd` to the child as its stdout and stderr, then call :meth:`started`
    (our copy of the write end closes); :meth:`finish` once the command's processes are gone.
    Raises SymlinkRefused/OSError like open_append when the log cannot be opened.
    """

    def __init__(self, log_path: Path | str, stream: StreamLog | None = None):
        self.key = _key(log_path)
        self.stream = stream
        self._log = open_append(Path(log_path), "ab")
        self.read_fd, self.write_fd = os.pipe()  # both close-on-exec: no other child inherits them
        try:
            fcntl.fcntl(self.write_fd, _F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            pass
        self._deadline: float | None = None
        self._closing = threading.Lock()
        self._orphaned = False
        self._log_broken = False
        self._thread = threading.Thread(target=self._run, name="memento-logpipe", daemon=True)
        self.copied = 0

    def started(self) -> None:
        """The child has its copy of the write end: close ours and start copying."""
        self._close_write()
        self._thread.start()

    def abandon(self) -> None:
        """The child never started: close everything."""
        self._close_write()
        self._close_rest()

    def finish(self, within: float = DRAIN_SECONDS) -> None:
        """Copy until end of file, or at most ``within`` seconds more; then close the pipe."""
        self._deadline = time.monotonic() + within
        self._thread.join(within + 1.0)
        with self._closing:
            if self._thread.is_alive():
                self._orphaned = True  # a write still stuck in the kernel: the thread closes at its end
                return
        self._close_rest()

    def _close_write(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def _close_rest(self) -> None:
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1
        self._log.close()

    def _run(self) -> None:
        try:
            self._copy()
            if self.stream is not None:  # a last line the CLI never ended (killed mid-write)
                self._append(self.stream.end())
        finally:
            with self._closing:
                if self._orphaned:
                    self._close_rest()

    def _copy(self) -> None:
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while True:
            if self._deadline is not None and time.monotonic() >= self._deadline:
                self._drain()
                return
            try:
                if not poller.poll(POLL_MS):
                    continue
                data = os.read(self.read_fd, CHUNK)
            except InterruptedError:
                continue
            if not data:
                return  # every writer is gone
            self._write(data)

    def _drain(self) -> None:
        """What is in the pipe now, without waiting for more (bounded: a writer may never stop)."""
        os.set_blocking(self.read_fd, False)
        for _ in range(64):
            try:
                data = os.read(self.read_fd, CHUNK)
            except BlockingIOError:
                return
            except OSError:
                return
            if not data:
                return
            self._write(data)

    def _write(self, data: bytes) -> None:
        self.copied += len(data)
        with _LISTENING_LOCK:
            caps = list(_LISTENING.get(self.key, ()))
        for cap in caps:
            cap.add(data)
        self._append(self.stream.feed(data) if self.stream is not None else data)

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        fd = self._log.fileno()
        while view and not self._log_broken:
            try:
                view = view[os.write(fd, view):]
            except InterruptedError:
                continue
            except OSError as exc:  # a full disk: the pipe is still drained, the command never blocks
                self._log_broken = exc.errno not in (errno.ENOSPC, errno.EDQUOT)
                return
