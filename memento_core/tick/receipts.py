"""The tick's side of a person's receipts (SPEC §13): listen, refuse the agent's, remember the rest.

:func:`listening` opens the workspace's abstract socket (memento_core/receipts.py) for the
length of a tick. For each connection the kernel says who is calling (``SO_PEERCRED``):
another user, or a process whose parent chain reaches this tick (a daemon the agent
double-forked or ``setsid`` away is re-parented to its run's guard, a child subreaper and
the tick's child, or to the tick, a subreaper too: still found), or one in the session of a
group the tick is running, is refused at once,
before a byte of it is read. Anyone else is a person: their receipt is kept in memory (never
in a file the agent could write) and acknowledged. :func:`held` gives the guards what was
accepted, as a :class:`~memento_core.receipts.Receipts` value.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..agents.process import running_groups
from ..agents.reaper import read_proc
from ..receipts import NO_RECEIPTS, Receipts, from_records, read_line, socket_name

OPS = ("hello", "reset", "skip", "mode", "note", "memory", "verify_ack", "answer")
READ_TIMEOUT = 2.0  # a person's receipt arrives in one write; a silent caller is dropped after this
INSIDE = ("this process runs inside the running tick's own process tree (the agent's): "
          "only a person outside the run can change the plan, the notes or memory now")

_BOOKS: dict[bytes, Book] = {}
_BOOKS_LOCK = threading.Lock()


class Book:
    """The receipts one running tick accepted, and the thread that accepts them."""

    def __init__(self, root, sessions: Callable[[], Iterable[int]] = running_groups):
        self.name = socket_name(root)
        self.pid = os.getpid()
        self.sessions = sessions
        self.records: list[dict] = []
        self.refused = 0
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.thread: threading.Thread | None = None
        self.stopping = False

    def open(self) -> bool:
        """Bind the name and start answering; False when it cannot be bound (the guards then take
        no change for a person's)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            sock.bind(self.name)
            sock.listen(16)
        except OSError:
            sock.close()
            return False
        self.sock = sock
        self.thread = threading.Thread(target=self._serve, name="memento-receipts", daemon=True)
        self.thread.start()
        return True

    def close(self) -> None:
        self.stopping = True
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes accept()
            except OSError:
                pass
        if self.thread is not None:
            self.thread.join(5)
        if self.sock is not None:
            self.sock.close()

    def receipts(self) -> Receipts:
        with self.lock:
            return from_records(list(self.records))

    def _serve(self) -> None:
        assert self.sock is not None
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # shut down (the loop ends), or a caller gone before it was accepted
                pass
            else:
                with conn, contextlib.suppress(OSError):
                    self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                            struct.calcsize("3i")))
        why = "another user's process" if uid != os.getuid() else inside_the_tick(pid, self.pid, self.sessions())
        if why:
            with self.lock:
                self.refused += 1
            _reply(conn, {"ok": False, "why": why})
            return
        conn.settimeout(READ_TIMEOUT)
        try:
            record = json.loads(read_line(conn))
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("op") not in OPS:
            _reply(conn, {"ok": False, "why": "not a receipt"})
            return
        if record["op"] != "hello":
            with self.lock:
                self.records.append(record)
        _reply(conn, {"ok": True})


def _reply(conn: socket.socket, answer: dict) -> None:
    conn.sendall(json.dumps(answer).encode("ascii") + b"\n")


def inside_the_tick(pid: int, tick: int, sessions: Iterable[int] = ()) -> str:
    """Why the process ``pid`` is the tick's own ('' = it is not): its parent chain reaches
    ``tick``, or it is in the session or group of one the tick runs. The tick itself (the
    dashboard's own thread, say) is not refused. A process that cannot be looked at is."""
    if pid == tick:
        return ""
    groups = set(sessions)
    for _ in range(5):  # a parent exiting mid-walk re-parents the chain: walk again
        me = read_proc(pid)
        if me is None:
            return "the calling process is gone"
        if me.sid in groups or me.pgid in groups:
            return INSIDE
        seen, cur, broken = {pid}, me.ppid, False
        while cur > 1 and cur not in seen:
            if cur == tick:
                return INSIDE
            seen.add(cur)
            parent = read_proc(cur)
            if parent is None:
                broken = True
                break
            cur = parent.ppid
        if cur == tick:
            return INSIDE
        if not broken:
            return ""
    return "the calling process's parents could not be followed"


@contextmanager
def listening(ws) -> Iterator[Book | None]:
    """Accept a person's receipts for the workspace ``ws`` while the block runs (a tick)."""
    root = getattr(ws, "main", None) or ws.root
    book = Book(root)
    if not book.open():
        yield None
        return
    with _BOOKS_LOCK:
        _BOOKS[book.name] = book
    try:
        yield book
    finally:
        with _BOOKS_LOCK:
            _BOOKS.pop(book.name, None)
        book.close()


def is_listening(ws) -> bool:
    """A tick or architect run of ``ws`` is listening in this process."""
    root = getattr(ws, "main", None) or ws.root
    with _BOOKS_LOCK:
        return socket_name(root) in _BOOKS


def held(ws) -> Receipts:
    """The receipts the running tick of ``ws`` accepted so far (none when it is not listening)."""
    root = getattr(ws, "main", None) or ws.root
    with _BOOKS_LOCK:
        book = _BOOKS.get(socket_name(root))
    return book.receipts() if book is not None else NO_RECEIPTS


SETTLE_TIMEOUT = 10.0  # seconds the snapshot waits for a person's write in progress


def settled(path) -> bytes:
    """The document at ``path`` (b"" when missing) read under its edit lock, so a person's
    edit that began before the tick listened (its receipt went nowhere) is in the snapshot."""
    from ..locks import LockBusy, file_lock, lock_path_for
    from .context import read_or_none

    lock = lock_path_for(path)
    if lock.parent.name != "locks":  # a worker's worktree: no person edits its copy, and no lock file there
        return read_or_none(path) or b""
    try:
        with file_lock(lock, timeout=SETTLE_TIMEOUT):
            return read_or_none(path) or b""
    except LockBusy:
        return read_or_none(path) or b""


def memory_head(ws) -> str | None:
    """memory/'s HEAD at the snapshot (None: no store yet), read under the memory lock for the
    same reason as :func:`settled`: a person's write that began unheard is before it."""
    from ..git.repo import head
    from ..locks import LockBusy, file_lock
    from ..memory.store import is_store, lock_path, memory_root

    root = memory_root(ws)
    if not is_store(root):
        return None
    try:
        with file_lock(lock_path(ws), timeout=SETTLE_TIMEOUT):
            return head(root)
    except LockBusy:
        return head(root)


def forged_memory(ws, since: str | None, persons: Receipts, task_id: str) -> tuple[str, ...]:
    """The commits made in memory/ since the snapshot that say they are a person's but carry
    files no person announced (a raw `git commit` in memory/.git, a forged trailer): each is
    taken out of memory/'s history and replaced by the task's unattributed write of the same
    files (memory/store.py reject_forged), so no commit there claims a person who made none;
    their short shas (as the agent made them)."""
    from ..errors import MementoError
    from ..memory.store import person_commits_since, record_forged, reject_forged

    try:
        commits = person_commits_since(ws, since)
    except (MementoError, OSError):
        return ()
    forged = {sha: [path for path, _blob in files] for sha, files in commits
              if not all(blob in persons.memory for _path, blob in files)}
    if not forged:
        return ()
    try:
        reject_forged(ws, since, forged, task_id)
    except (MementoError, OSError):
        for sha, paths in forged.items():  # still never shown as a person's (store.history)
            record_forged(ws, task_id, sha, paths)
    return tuple(sha[:7] for sha in forged)
