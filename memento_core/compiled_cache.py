"""Files of compiled code Memento keeps beside its own bytecode, once per install (issue 42).

Python keeps a module's compiled code in ``__pycache__``; two things every Memento process
compiles again, in every process, are kept the same way, each in its own file:
:mod:`memento_core.dataclass_code` (the methods ``@dataclass`` writes) and
:mod:`memento_core.regex_code` (the patterns modules compile as they are imported).

A file is a magic (the interpreter's and what else its contents depend on) followed by a
``marshal``-ed dict of keys to ``bytes``. It is read once, a regular file, never through a link,
at most :data:`MAX_BYTES`; anything else reads as empty (the process compiles as it would
without it). It is written atomically, and never through a link.
"""

import marshal
import os
from collections.abc import Callable
from importlib.util import cache_from_source

MAX_BYTES = 16 * 1024 * 1024


def path_of(name: str) -> str:
    """Where the file named after ``name`` (a ``.py`` that does not exist beside this module) is
    kept: ``__pycache__/NAME.<tag>.pyc`` (``PYTHONPYCACHEPREFIX`` moves it too)."""
    return cache_from_source(os.path.join(os.path.dirname(os.path.abspath(__file__)), name))


def read(path: str, magic: bytes, keep: Callable[[object], bool]) -> dict:
    """The entries of ``path`` whose key ``keep`` accepts and whose value is ``bytes``; {} when
    it is missing, not a regular file, too big, of another magic or damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as fh:  # what fstat says it holds (a buffer that size)
            data = fh.read(info.st_size + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    if not data.startswith(magic):
        return {}
    try:
        found = marshal.loads(data[len(magic):])
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if type(v) is bytes and keep(k)}


def write(path: str, magic: bytes, entries: dict, used: set, most: int) -> bool:
    """Write ``entries`` to ``path`` atomically (a new file, then a rename over the old): past
    ``most`` of them, only those ``used`` (the process starts the file again from its own, as an
    upgrade leaves old entries behind). False, and nothing left behind, when it cannot be written
    (a read-only install)."""
    if len(entries) > most:
        entries = {k: entries[k] for k in used if k in entries}
    tmp = f"{path}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + marshal.dumps(entries))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
