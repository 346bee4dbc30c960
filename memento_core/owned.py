"""Memento's own state files that an unconfined agent could reach (SPEC §13): what this process
expects in each, so that a change nobody here made is found, put back and reported.

The usage ledger, the notification state and the claims are written by the tick alone, often
while an agent runs (a heartbeat every 30 s, another worker's usage). So a copy taken at the
snapshot is not enough: this module remembers, per file, what this process last wrote there
(:func:`write`, :func:`remove`) or read at a :func:`baseline`, and :func:`settle` compares the
file with it: anything else (new bytes, a new file, a link, a FIFO, a folder, a removal) is put
back and recorded as a :class:`Change`. Every writer of a watched file goes through
:func:`write`, which settles first, so Memento never builds on what an agent wrote. All of it
under one lock, shared by the tick's threads (parallel workers, heartbeats).
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .locks import atomic_write_bytes

LOCK = threading.RLock()
LIMIT = 4 * 1024 * 1024  # a watched file is small; a bigger one is not Memento's
NOT_A_FILE = b"\0(not a regular file)"
KEEP_CHANGES = 1000


@dataclass(frozen=True)
class Change:
    """A watched file found other than expected: when it was last seen right (``since``), when
    the difference was found (``at``, both time.monotonic()), and what was there (None: gone)."""

    path: str
    since: float
    at: float
    found: bytes | None


_EXPECTED: dict[str, bytes | None] = {}
_GOOD_AT: dict[str, float] = {}
_SAME: dict[str, Callable[[bytes, bytes], bool]] = {}
_DIRS: set[str] = set()
_CHANGES: list[Change] = []


def _key(path: Path | str) -> str:
    return os.path.abspath(path)


def read(path: Path | str) -> bytes | None:
    """The file's bytes, None when nothing is there, NOT_A_FILE for anything but a regular file
    (a link, a FIFO, a folder; never opened, so a FIFO cannot block) and for a file with another
    name (a hard link: written over by rename, never through, SPEC §13)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return NOT_A_FILE
    if not stat.S_ISREG(st.st_mode) or st.st_size > LIMIT or st.st_nlink > 1:
        return NOT_A_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return NOT_A_FILE
    with os.fdopen(fd, "rb") as fh:
        return fh.read(LIMIT + 1)


def baseline(files: Iterable[Path | str], dirs: Iterable[Path | str] = (), *,
             same: dict[str, Callable[[bytes, bytes], bool]] | None = None) -> None:
    """What is there now is what is expected: ``files``, and every entry of ``dirs`` (call it
    when no agent of this process runs)."""
    now, files = time.monotonic(), list(files)
    with LOCK:
        for d in dirs:
            _DIRS.add(_key(d))
            for p in [k for k in _EXPECTED if os.path.dirname(k) == _key(d)]:
                del _EXPECTED[p]
            try:
                names = os.listdir(d)
            except OSError:
                names = []
            files = [*files, *(os.path.join(d, n) for n in names)]
        for f in files:
            k = _key(f)
            _EXPECTED[k], _GOOD_AT[k] = read(k), now
        for name, fn in (same or {}).items():
            _SAME[_key(name)] = fn


def watched(path: Path | str) -> bool:
    with LOCK:
        return _key(path) in _EXPECTED


def _differs(k: str, now: bytes | None) -> bool:
    want = _EXPECTED.get(k)
    if now == want:
        return False
    same = _SAME.get(k)
    if same is not None and now is not None and want is not None and NOT_A_FILE not in (now, want):
        try:
            return not same(want, now)
        except ValueError:
            return True
    return True


def _put_back(k: str) -> None:
    want = _EXPECTED.get(k)
    try:
        mode = os.lstat(k).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and (want is None or not stat.S_ISREG(mode)):
        if stat.S_ISDIR(mode):
            shutil.rmtree(k, ignore_errors=True)  # never follows a link inside
        else:
            os.unlink(k)  # a link itself, never what it points to
    if want is not None and want != NOT_A_FILE:
        atomic_write_bytes(Path(k), want)


def _note(k: str, found: bytes | None) -> Change:
    change = Change(k, _GOOD_AT.get(k, 0.0), time.monotonic(), found)
    _CHANGES.append(change)
    del _CHANGES[:-KEEP_CHANGES]
    return change


def settle(path: Path | str) -> Change | None:
    """Put a watched file back as expected if it is not; the Change found, else None."""
    k = _key(path)
    with LOCK:
        if k not in _EXPECTED:
            return None
        now = read(k)
        change = None
        if _differs(k, now):
            change = _note(k, now)
            _put_back(k)
        _GOOD_AT[k] = time.monotonic()
        return change


def settle_dir(directory: Path | str) -> list[Change]:
    """Every entry of a watched folder as expected: new ones removed, changed or gone ones put back."""
    d = _key(directory)
    with LOCK:
        if d not in _DIRS:
            return []  # never baselined here: nothing is known to be right or wrong in it
        try:
            names = os.listdir(d)
        except OSError:
            names = []
        found = []
        for name in names:
            k = os.path.join(d, name)
            if k not in _EXPECTED:
                _EXPECTED[k] = None  # made by someone else: expected absent
        for k in [k for k in _EXPECTED if os.path.dirname(k) == d]:
            change = settle(k)
            if change is not None:
                found.append(change)
            if _EXPECTED.get(k) is None:
                _EXPECTED.pop(k, None)
                _GOOD_AT.pop(k, None)
        return found


def write(path: Path | str, data: bytes, *, sync: bool = True) -> None:
    """Memento's own write of a watched file (atomic, never through a link); what was there
    first, if not what Memento left, is recorded as a Change (the write puts it right).
    ``sync=False``: not made durable (locks.atomic_write_bytes), for a rewrite of a file whose
    durable first version a crash may fall back to."""
    k = _key(path)
    with LOCK:
        if k in _EXPECTED or os.path.dirname(k) in _DIRS:
            now = read(k)
            if _differs(k, now):
                _note(k, now)
                if now == NOT_A_FILE:
                    _EXPECTED[k] = None
                    _put_back(k)
        atomic_write_bytes(Path(k), data, sync=sync)
        _EXPECTED[k], _GOOD_AT[k] = data, time.monotonic()


def remove(path: Path | str) -> None:
    """Memento's own removal of a watched file (a link or a FIFO there is removed, not followed)."""
    k = _key(path)
    with LOCK:
        found = read(k) if k in _EXPECTED else None
        if k in _EXPECTED and _differs(k, found):
            _note(k, found)
        try:
            os.unlink(k)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(k, ignore_errors=True)
        if os.path.dirname(k) in _DIRS:
            _EXPECTED.pop(k, None)
            _GOOD_AT.pop(k, None)
        else:
            _EXPECTED[k], _GOOD_AT[k] = None, time.monotonic()


def changes(paths: Iterable[Path | str], after: float) -> list[Change]:
    """The Changes found after the monotonic time ``after`` among ``paths`` (files, or folders
    meaning everything in them)."""
    keys = {_key(p) for p in paths}
    with LOCK:
        return [c for c in _CHANGES if c.at > after and (c.path in keys or os.path.dirname(c.path) in keys)]
