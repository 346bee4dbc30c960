"""The guards' private copy of the index (:func:`scrubbed_index`): the real index's entries,
without their stat data or flags (SPEC §13).

The guards judge the work tree through a private index holding the real one's entries (path,
mode, object, stage) and nothing else: no stat data, no assume-unchanged or skip-worktree flag,
so that every tracked file is hashed again. Git can make that index itself (``ls-files
--stage``, then ``update-index --index-info``): two processes, paid three times a task and a few
times more a tick. :func:`scrubbed` makes the same file from the real index's bytes in Python.

Only a plain index is taken (versions 2 to 4, a valid checksum in the repository's object
format, the modes git writes, entries sorted with no
duplicate, no file where another entry needs a folder, every path one git itself accepts;
no split or sparse index). Anything else returns None and the caller asks git, which reads
and checks the file its own way. An entry is read as git reads it: its name is as long as
its flags say (their low 12 bits; all ones meaning "up to the NUL"), and the next entry starts
where that length puts it. A name whose NUL is elsewhere is refused, not read either way: git
and this module would otherwise see different entries in the same bytes (a forged length can
hide an entry from one of them and show the other one that git never reads). So are the
extensions that make git read the file otherwise (EOIE and IEOT: entries and extensions read
from the offsets they hold, by threads), one git stops on (a malformed FSMN, a lowercase one
it does not know) and an extended flag git does not know. dulwich reads index files too, but its import would cost
each tick more than the two processes this saves, and it takes what git would refuse.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..lines import read_regular
from .repo import repo_dirs
from .run import git_env, run_git

_HEADER = struct.Struct(">4sII")
_STAT_BYTES = 40  # ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_WIDTHS = {"sha1": 20, "sha256": 32}
# The modes git writes to an index (update-index --index-info makes any other one of these):
# a forged one would make git's diff stop ("unsupported ce_mode") where it should show a change.
_MODES = frozenset({0o100644, 0o100755, 0o120000, 0o160000})
# Extensions that change what the entries are or how git reads them (a split index's entries
# elsewhere, a sparse one's folders, the offsets its threads start from) or that git may stop on.
_REFUSED_EXTENSIONS = (b"link", b"sdir", b"EOIE", b"IEOT", b"FSMN")
_EXTENDED_KNOWN = 0x6000  # intent-to-add and skip-worktree: git stops on any other extended flag


def scrubbed(data: bytes, fmt: str = "sha1") -> bytes | None:
    """``data`` (an index file's bytes, of a repository whose object format is ``fmt``) as a
    version 2 index of the same entries, each with its stat data zeroed and its flags dropped
    but its stage; None when it is not a plain index this module takes (see the module's
    docstring): git must then be asked."""
    found = _read(data, fmt)
    if found is None:
        return None
    fmt, width, entries = found
    body = bytearray(_HEADER.pack(b"DIRC", 2, len(entries)))
    for path, mode, oid, stage in entries:
        head = bytes(24) + struct.pack(">I", mode) + bytes(12)
        size = _STAT_BYTES + width + 2 + len(path)
        body += head + oid + struct.pack(">H", (stage << 12) | min(len(path), _NAME_MASK)) + path
        body += bytes(((size + 8) & ~7) - size)  # the name's NUL and the padding to 8 bytes
    return bytes(body + hashlib.new(fmt, body).digest())


def entry_paths(data: bytes, fmt: str = "sha1") -> list[bytes] | None:
    """The paths of a plain index's entries (from the top level, in the index's order, a
    conflicted one once per stage as ``git ls-files`` lists it); None where :func:`scrubbed`
    would leave the index to git."""
    found = _read(data, fmt)
    return None if found is None else [path for path, _mode, _oid, _stage in found[2]]


def _read(data: bytes, fmt: str) -> tuple[str, int, list[tuple[bytes, int, bytes, int]]] | None:
    """(object format, id width, [(path, mode, object id, stage)]) of a plain index, else None."""
    width = _WIDTHS.get(fmt)
    if width is None or len(data) < _HEADER.size + width:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4) or hashlib.new(fmt, data[:-width]).digest() != data[-width:]:
        return None
    entries = _entries(data, version, count, width)
    return (fmt, width, entries) if entries is not None else None


def _entries(data: bytes, version: int, count: int, width: int) -> list[tuple[bytes, int, bytes, int]] | None:
    end = len(data) - width
    pos, previous = _HEADER.size, b""
    entries: list[tuple[bytes, int, bytes, int]] = []
    try:
        for _ in range(count):
            start = pos
            (mode,) = struct.unpack_from(">I", data, pos + 24)
            oid = data[pos + _STAT_BYTES:pos + _STAT_BYTES + width]
            (flags,) = struct.unpack_from(">H", data, pos + _STAT_BYTES + width)
            pos += _STAT_BYTES + width + 2
            if flags & _EXTENDED:
                (extended,) = struct.unpack_from(">H", data, pos)
                if version < 3 or extended & ~_EXTENDED_KNOWN:
                    return None
                pos += 2
            if version == 4:
                strip, pos = _varint(data, pos)
                if strip > len(previous):
                    return None
                stop = data.index(b"\0", pos, end)
                path = previous[:len(previous) - strip] + data[pos:stop]
                pos = stop + 1
            else:
                stop = data.index(b"\0", pos, end)
                path = data[pos:stop]
                size = stop - start
                pos = start + ((size + 8) & ~7)
                if data[stop:pos].strip(b"\0") or pos > end:
                    return None
            # Git takes the name's length from the flags: a NUL anywhere else would make it read
            # another name, and the next entry at another place, than the NUL makes this loop.
            if flags & _NAME_MASK not in (len(path), _NAME_MASK):
                return None
            if len(oid) != width or mode not in _MODES or not _valid(path):
                return None
            entries.append((path, mode, oid, (flags >> 12) & 3))
            previous = path
    except (struct.error, ValueError, IndexError):
        return None
    return entries if _extensions_taken(data, pos, end) and _consistent(entries) else None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """Git's offset varint (index version 4): each continuation adds one before shifting."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def _extensions_taken(data: bytes, pos: int, end: int) -> bool:
    """The extensions after the entries are well formed and none is one that changes what the
    entries mean (the copy drops them all: a cached tree or an untracked cache is only a cache)."""
    while pos < end:
        if pos + 8 > end:
            return False
        signature, (size,) = data[pos:pos + 4], struct.unpack_from(">I", data, pos + 4)
        if signature in _REFUSED_EXTENSIONS or not b"A" <= signature[:1] <= b"Z" or pos + 8 + size > end:
            return False
        pos += 8 + size
    return pos == end


_NTFS_SHORT = re.compile(rb"git~[0-9]+", re.I)


def _valid(path: bytes) -> bool:
    """A path git would put in an index: relative, no empty, ``.`` or ``..`` part, nothing
    inside a ``.git`` or a name NTFS would take for it (``GIT~1``, ``.git.``), no backslash."""
    if not path or path.startswith(b"/") or path.endswith(b"/") or b"\\" in path:
        return False
    return all(part not in (b"", b".", b"..") and part.lower().rstrip(b". ") != b".git"
               and not _NTFS_SHORT.fullmatch(part) for part in path.split(b"/"))


def _consistent(entries: list[tuple[bytes, int, bytes, int]]) -> bool:
    """Sorted as git sorts them (by path, then stage), no path twice at one stage, no merged
    entry beside unmerged ones of its path, no file where another entry needs a folder."""
    keys = [(path, stage) for path, _, _, stage in entries]
    if any(a >= b for a, b in itertools.pairwise(keys)):
        return False
    paths = {path for path, _ in keys}
    merged = {path for path, stage in keys if stage == 0}
    if any(stage and path in merged for path, stage in keys):
        return False
    for path in paths:
        cut = path.rfind(b"/")
        while cut > 0:
            if path[:cut] in paths:
                return False
            cut = path.rfind(b"/", 0, cut)
    return True


@contextmanager
def scrubbed_index(root: Path, refresh: bool = True) -> Iterator[dict[str, str]]:
    """The environment of a private index holding the real index's entries and nothing else.

    Every entry (path, mode, blob, stage) is copied, so what is staged stays staged;
    their stat data and flags are not, so ``update-index --assume-unchanged`` or
    ``--skip-worktree`` and a forged stat hide no change: every tracked file is
    hashed again. The real index is only read: by :func:`_scrubbed_copy` when it is a plain
    one, else by git (``ls-files --stage`` into ``update-index --index-info``).
    ``refresh``: the copy's stat data is filled in first (``update-index --refresh``), for
    several commands in a row; without it one ``git status``, which refreshes what it reads
    itself, or an ``ls-files`` of what is not tracked (no stat data read) costs one process.
    """
    dirs = repo_dirs(root)
    git_dir, top = str(dirs.git_dir), dirs.top
    fd, tmp_index = tempfile.mkstemp(prefix="memento-scrubbed-index.", dir=git_dir)
    os.close(fd)
    os.unlink(tmp_index)  # a missing index file is an empty index; an empty file is not
    try:
        env = git_env({"GIT_INDEX_FILE": tmp_index, "GIT_OPTIONAL_LOCKS": "1"})
        copied = _scrubbed_copy(dirs.git_dir / "index", dirs.object_format)
        if copied is None:  # not a plain index (split, sparse, odd): git copies the entries itself
            entries = run_git(top, ["ls-files", "--stage", "-z"], check=False).stdout
            run_git(top, ["update-index", "-z", "--index-info"], input=entries, env=env)
        elif copied:
            with open(tmp_index, "xb") as fh:  # private: the name mkstemp chose (and unlinked) above
                fh.write(copied)
        if refresh:
            run_git(top, ["update-index", "-q", "--refresh"], env=env, check=False)
        env["GIT_OPTIONAL_LOCKS"] = "0"
        yield env
    finally:
        remove_index(tmp_index)


def _scrubbed_copy(index: Path, fmt: str) -> bytes | None:
    """The private index's bytes made from the real ``index`` of a repository of object format
    ``fmt`` (:func:`scrubbed`; b'' when there is none: the copy
    stays missing, an empty index); None when git must make it: not a plain index, or not a
    regular file (a link, a FIFO: never followed nor waited on here)."""
    try:
        data = read_regular(index)
    except FileNotFoundError:
        return b""
    except OSError:  # NotAFile among them
        return None
    return scrubbed(data, fmt)


def remove_index(tmp_index: str) -> None:
    """A private index file and its lock, gone (either may be missing)."""
    for leftover in (tmp_index, tmp_index + ".lock"):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
