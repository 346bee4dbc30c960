"""File locks and atomic writes: the only way Memento changes a shared file.

Every edit is lock, re-read, apply, write a temp file, fsync, os.replace,
fsync the directory. A rename replaces a name, never an inode: that is how Memento
writes over a file an agent replaced by a hard link to a person's file without
touching it (SPEC §13); an append never goes through such a link (:func:`open_append`). Lock files are never deleted or renamed (deleting a
flock'ed file lets two processes each hold "the" lock on different inodes),
and their descriptors are close-on-exec so an agent never inherits one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .crashpoints import crash_point
from .errors import MementoError
from .lines import NotAFile, file_kind, read_regular


class LockBusy(MementoError):
    """A non-blocking lock attempt found the lock held."""


class SymlinkRefused(MementoError):
    """A file Memento writes is a symbolic link: Memento never writes, restores or appends through one."""

    def __init__(self, path: Path | str):
        super().__init__("is a symbolic link; Memento never writes through one (put the file itself "
                         "there)", path=path)


class HardLinkRefused(SymlinkRefused):
    """A file Memento would append to or change in place has other names (``st_nlink`` > 1): one
    of them may be a person's file, outside the project even, and O_NOFOLLOW does not see it."""

    def __init__(self, path: Path | str, names: int):
        MementoError.__init__(self, f"is a hard link ({names} names for one file); Memento never writes "
                              "through one (put a file of its own there)", path=path)


def refuse_link(path: Path) -> None:
    """Raise SymlinkRefused if ``path`` itself is a symbolic link (SPEC §13)."""
    if os.path.islink(path):
        raise SymlinkRefused(path)


def split_hard_link(path: Path, data: bytes | None = None) -> bool:
    """Make ``path`` a file of its own if it is a regular file with other names (a hard link):
    a new file holding ``data`` (None: the bytes it holds now) and its permission bits, renamed
    into its place (SPEC §13). The other names keep the inode, and its bytes and mode, untouched.
    False when ``path`` is not such a file (missing, a link, single-named)."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return False
    if data is None:
        data = read_regular(path)  # reading through the link changes nothing
    atomic_write_bytes(path, data)  # keeps the bits: atomic_write_bytes copies them from lstat
    return True


def open_append(path: Path, mode: str = "a", *, split: bool = False):
    """``path`` opened for appending (``mode`` "a" text UTF-8 or "ab"), created if missing,
    never through a symbolic link (O_NOFOLLOW), nor into a folder that is one (a log's
    folder is logs/, never the project root): SymlinkRefused instead. Nor through a hard
    link (a file with more than one name, SPEC §13): HardLinkRefused, or with ``split`` (for
    Memento's own logs, whose lines must not stop a tick) the file is made one of its own first
    (:func:`split_hard_link`) and appended to."""
    path = Path(path)
    refuse_link(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        fh = _open_append(path, mode)
        names = os.fstat(fh.fileno()).st_nlink
        if names < 2:
            return fh
        fh.close()
        if not split:
            break
        split_hard_link(path)
    raise HardLinkRefused(path, names)


def _open_append(path: Path, mode: str):
    """open_append's open of a regular file (O_NOFOLLOW, never blocking), its link count unchecked."""
    # O_NONBLOCK: a FIFO the agent put there (no reader) fails at once instead of holding the open.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(path) from None
        if exc.errno == errno.ENXIO:
            raise NotAFile("is a FIFO or a socket, not a regular file; Memento does not write to it",
                           path=path) from None
        raise
    st_mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(st_mode):
        os.close(fd)
        raise NotAFile(f"is {file_kind(st_mode)}, not a regular file; Memento does not write to it", path=path)
    os.set_blocking(fd, True)
    if "b" in mode:
        return os.fdopen(fd, "ab")
    return os.fdopen(fd, "a", encoding="utf-8")


@contextmanager
def file_lock(lock_path: Path, *, blocking: bool = True, timeout: float = 30.0) -> Iterator[int]:
    """Hold an exclusive flock on ``lock_path``; yields the descriptor.

    Non-blocking: raise LockBusy at once if held. Blocking: wait up to
    ``timeout`` seconds, then raise LockBusy (a hung holder must not hang us).
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    # os.open descriptors are non-inheritable by default (PEP 446).
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                if not blocking or time.monotonic() >= deadline:
                    raise LockBusy(f"{lock_path} is held by another process") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _ChangedUnderneath(Exception):
    """The file is no longer what the edit was computed from."""


def atomic_write_bytes(path: Path, data: bytes, *, unchanged: bytes | None = None, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file, never half.

    A symbolic link at ``path`` is refused (SymlinkRefused): Memento never writes
    through one, and the rename would only ever replace the link itself. A hard link
    there is replaced as a name: its other names keep their inode, bytes and mode. With
    ``unchanged``, the file is compared with those bytes at the last moment
    before the rename (after the slow fsync) and _ChangedUnderneath is raised
    if an editor that ignores our lock saved it meanwhile. On any failure
    (ENOSPC included) the previous file is left untouched and the temp file
    removed; the OSError propagates with the path in it. ``sync=False``: neither the file nor
    the rename is made durable (no fsync), for a file a crash may lose because it is made again
    (a conflict resolved in the middle of a rebase, which the next tick aborts).
    """
    path = Path(path)
    refuse_link(path)
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.lstat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    import tempfile  # here, not at the top: a paused tick writes nothing this way (SPEC §11)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        crash_point(f"write:{path.name}")
        if unchanged is not None:
            if _read_or_empty(path) != unchanged:
                raise _ChangedUnderneath()
            if unchanged and _exchange(tmp, path):
                # The previous file is now at tmp: compare-and-swap, with no window at all.
                if _read_or_empty(Path(tmp)) != unchanged:
                    _exchange(tmp, path)  # give the editor's save back its place
                    raise _ChangedUnderneath()
                os.unlink(tmp)
                if sync:
                    fsync_dir(directory)
                return
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sync:
        fsync_dir(directory)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2 = None


def _exchange(a: str | Path, b: str | Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            func = libc.renameat2
            func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            _renameat2 = func
        except (OSError, AttributeError):
            _renameat2 = False
    if not _renameat2:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EPERM, errno.ENOTSUP):
        _renameat2 = False  # this file system cannot: fall back to rename for good
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(b))


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically, newlines exactly as given."""
    atomic_write_bytes(path, text.encode("utf-8"))


def lock_path_for(path: Path) -> Path:
    """Where the edit lock of a workspace file lives.

    Inside a workspace (a ``.memento/`` beside ``docs/`` or the file) the lock
    goes in ``.memento/locks/`` so docs/ stays clean; elsewhere beside the file.
    """
    path = Path(path).resolve()
    for base in (path.parent.parent, path.parent):
        if (base / ".memento").is_dir():
            return base / ".memento" / "locks" / f"{path.name}.lock"
    return path.parent / f".{path.name}.lock"


def locked_edit(path: Path, transform: Callable[[bytes], bytes | None]) -> bytes | None:
    """Lock, re-read, transform, atomically replace. Returns the bytes written.

    ``transform`` receives the current bytes (b"" if the file is missing) and
    returns the new bytes, or None to leave the file untouched.
    """
    path = Path(path)
    with file_lock(lock_path_for(path)):
        for _ in range(20):
            current = _read_or_empty(path)
            new = transform(current)
            if new is None or new == current:
                return None
            # A person's editor does not take our lock: if the file changed while we
            # computed and synced, start over from what is there now.
            try:
                atomic_write_bytes(path, new, unchanged=current)
            except _ChangedUnderneath:
                continue
            return new
        raise MementoError("the file keeps changing underneath the edit; try again", path=path)


def read_no_follow(path: Path) -> bytes:
    """The file's bytes (b"" when missing); SymlinkRefused when it is a symbolic link."""
    return _read_or_empty(Path(path))


def _read_or_empty(path: Path) -> bytes:
    """The file's bytes (b"" when missing), never read through a symbolic link, never a FIFO."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return b""
    except IsADirectoryError:
        raise MementoError("is a directory, not a file", path=path) from None
    except NotAFile:
        if os.path.islink(path):
            raise SymlinkRefused(path) from None
        raise
