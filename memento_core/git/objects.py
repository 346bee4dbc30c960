"""Git objects by their ids (SPEC §4): an object's id computed as git computes it, objects read
in bulk (one ``cat-file --batch``) and written in bulk (one ``unpack-objects`` of a pack made
here, which git checks against the pack's own hash), the files of the work tree hashed
into blobs (:func:`hash_blobs`: a commit made later of exactly the bytes verify ran), and the
loose objects packed once there are many (:func:`pack_loose`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import MementoError
from ..lines import read_regular
from .repo import repo_dirs
from .run import batches, output, run_git


def object_id(fmt: str, kind: str, data: bytes) -> str:
    """The id git gives an object of ``kind`` holding ``data`` (``fmt``: sha1 or sha256)."""
    return hashlib.new(fmt, f"{kind} {len(data)}\0".encode() + data).hexdigest()


_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3}


def object_format(root: Path) -> str:
    """``sha1`` or ``sha256``: the repository's object format (repo_dirs: asked of git
    once per process, with where the repository is)."""
    return repo_dirs(Path(root)).object_format


def write_objects(root: Path, objects: Sequence[tuple[str, bytes]]) -> list[str]:
    """``objects`` ((kind, content): commit, tree or blob) written to the object store in one
    git command; their ids, in order. Git checks the pack's hash and unpacks each object."""
    fmt = object_format(root)
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    ids = []
    for kind, data in objects:
        size = len(data)
        byte = (_PACK_TYPES[kind] << 4) | (size & 15)
        size >>= 4
        while size:
            pack.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        pack.append(byte)
        pack += zlib.compress(data, 1)
        ids.append(object_id(fmt, kind, data))
    pack += hashlib.new(fmt, pack).digest()
    run_git(Path(root), ["unpack-objects", "-q"], input=bytes(pack))
    return ids


# How many loose objects make the tick pack them (tick/afterwards.py). The tick's guard reads each
# loose object's stat three times a tick (tick/objects.py: about 9 µs each here), and Memento's
# plumbing writes some 15 a tick and never runs git's own `gc --auto`: unpacked, a project a
# thousand ticks old would pay some 0.4 s of CPU a tick for them. Packing 256 costs about 50 ms.
LOOSE_LIMIT = 256
# pack_loose's answers where the person's configuration says not to pack: not failures.
GC_AUTO_OFF = "gc.auto = 0 in git's configuration"
PARTIAL_CLONE = "a partial clone (extensions.partialClone)"


def _zero(value: str) -> bool:
    """Whether git reads a config value as the integer 0 (``0``, ``00``, ``0x0``, ``0k``, ``-0``)."""
    text = value.strip().lower()
    text = text[:-1] if text[-1:] in ("k", "m", "g") else text
    digits = text.lstrip("+-")
    if digits.startswith("0x"):
        digits = digits[2:]
    return bool(digits) and set(digits) == {"0"}


def pack_loose(root: Path) -> str:
    """Pack the loose objects of ``root``'s repository the way git itself does, crash-safe
    (``git repack --geometric=2 -d``: the loose objects and the small packs rolled up into one,
    so the packs' sizes grow geometrically and there are few; what was packed removed). Local
    objects only (``-l``), no server info written (``-n``), no deltas looked for (``--window=0``:
    the person's own ``git gc`` makes them). Not where the person turned git's packing off
    (``gc.auto = 0``), nor in a partial clone (``extensions.partialClone``: git before 2.53 rolls
    its promisor packs up as if they were its own): then :data:`GC_AUTO_OFF` or
    :data:`PARTIAL_CLONE`. Returns '' when packed, else why not (git's last words)."""
    root = Path(root)
    said = run_git(root, ["config", "--get-regexp", r"^(gc\.auto|extensions\.partialclone)$"], check=False)
    for line in said.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if key == "extensions.partialclone":
            return PARTIAL_CLONE
        if key == "gc.auto" and _zero(value):
            return GC_AUTO_OFF
    proc = run_git(root, ["repack", "--geometric=2", "-d", "-l", "-n", "-q", "--window=0"], check=False)
    if proc.returncode == 0:
        return ""
    words = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return words[-1] if words else f"git repack exited with {proc.returncode}"


def read_objects(root: Path, names: Sequence[str]) -> list[tuple[str, str, bytes] | None]:
    """Each object ``names`` name (an id or anything ``rev-parse`` takes) as (id, kind, bytes),
    None when there is none, all from one ``git cat-file --batch``."""
    if any("\n" in n for n in names):
        raise MementoError("a path with a line break cannot be read in a batch")
    if not names:
        return []
    out = run_git(Path(root), ["cat-file", "--batch"], input="".join(n + "\n" for n in names).encode()).stdout
    got, at = [], 0
    for name in names:
        end = out.find(b"\n", at)
        header = out[at:end].split() if end >= 0 else []
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            got.append((header[0].decode(), header[1].decode(), out[end + 1:end + 1 + size]))
            at = end + 1 + size + 1
        elif header[-1:] == [b"missing"]:
            got.append(None)
            at = end + 1
        else:
            raise MementoError(f"git cat-file --batch could not read {name}: {out[at:at + 120]!r}")
    return got


def read_blobs(root: Path, shas: Sequence[bytes]) -> dict[bytes, bytes]:
    """Each object's bytes by its id (hex, as bytes), all from one ``git cat-file --batch``;
    MementoError naming the first one the store does not have."""
    found = {}
    for sha, got in zip(shas, read_objects(root, [s.decode() for s in shas]), strict=True):
        if got is None or got[0] != sha.decode():
            raise MementoError(f"git cat-file --batch could not read {sha.decode()}")
        found[sha] = got[2]
    return found


def show_file(root: Path, rev: str, path: str) -> bytes | None:
    """The bytes of ``path`` at commit ``rev``, or None when it has no such file."""
    proc = run_git(Path(root), ["cat-file", "blob", f"{rev}:{path}"], check=False)
    return proc.stdout if proc.returncode == 0 else None


def object_path(root: Path, sha: str) -> Path | None:
    """Where the loose object ``sha`` is stored, or None (packed, or not a repository here)."""
    git_dir = output(Path(root), ["rev-parse", "--git-common-dir"]).strip()
    path = (Path(root) / git_dir / "objects" / sha[:2] / sha[2:]) if git_dir else None
    return path if path is not None and path.is_file() else None


ZERO_OID = "0" * 40


# (mode, blob id) of a file as it was hashed; GONE for a path that was not there.
Blob = tuple[str, str]

GONE: Blob = ("0", ZERO_OID)


def entry_kind(path: Path) -> tuple[str, os.stat_result | None]:
    """What stands at ``path``, never followed: ``gone``, ``link``, ``file`` (regular) or ``other``
    (a folder, a FIFO…), with its lstat (None when gone)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "gone", None
    return ("link" if stat.S_ISLNK(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"), st


def symlinked_parent(root: Path, rel: str) -> Path | None:
    """The first folder on ``rel``'s way below ``root`` that is a symbolic link (None when none
    is: the way ends at a real folder, a file or nothing)."""
    current = Path(root)
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return current
        if not current.is_dir():
            return None
    return None


def hash_blobs(root: Path, paths: Iterable[str], *, write: bool = True) -> dict[str, Blob]:
    """Each path's (mode, blob id) as it is now, the blob written into the object store
    (``git hash-object -w``), so a commit can be made of exactly these contents later
    whatever happens to the files meanwhile. A path that is gone is GONE; a folder is left out.
    ``write=False``: only the ids, to compare (the raw bytes hashed here as git hashes them
    with ``--no-filters``: no process), git's way for a file too big to read at once.
    """
    root = Path(root)
    if not write:
        known = _blob_ids(root, paths)
        if known is not None:
            return known
    blobs: dict[str, Blob] = {}
    files: list[str] = []
    modes: dict[str, str] = {}
    for path in sorted(set(paths)):
        kind, st = entry_kind(root / path)
        if kind == "gone":
            blobs[path] = GONE
        elif kind == "link":
            target = os.fsencode(os.readlink(root / path))
            blobs[path] = ("120000", output(root, ["hash-object", "-w", "--no-filters", "--stdin"],
                                            input=target).strip())
        elif kind == "file":
            files.append(path)
            modes[path] = "100755" if st.st_mode & stat.S_IXUSR else "100644"
    for batch in batches(files):
        # --no-filters: the bytes verify ran, whatever the agent's .gitattributes says (SPEC §13:
        # a working-tree-encoding or an eol conversion would commit something else).
        oids = output(root, ["hash-object", "-w", "--no-filters", "--", *batch]).split()
        blobs.update({path: (modes[path], oid) for path, oid in zip(batch, oids, strict=True)})
    return blobs


def _blob_ids(root: Path, paths: Iterable[str]) -> dict[str, Blob] | None:
    """:func:`hash_blobs`' answer without writing, computed here; None when git must (a file
    over 64 MiB, one that is not a regular file any more when read)."""
    fmt = repo_dirs(root).object_format
    blobs: dict[str, Blob] = {}
    for path in sorted(set(paths)):
        kind, st = entry_kind(root / path)
        try:
            if kind == "gone":
                blobs[path] = GONE
            elif kind == "link":
                blobs[path] = ("120000", object_id(fmt, "blob", os.fsencode(os.readlink(root / path))))
            elif kind == "file":
                if st.st_size > 64 << 20:
                    return None
                mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
                blobs[path] = (mode, object_id(fmt, "blob", read_regular(root / path)))
        except OSError:
            return None
    return blobs


def hash_files(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """Blob ids of work-tree files (``git hash-object --no-filters``, as hash_blobs); missing files left out."""
    present = [p for p in paths if (Path(root) / p).is_file()]
    if not present:
        return {}
    out = output(Path(root), ["hash-object", "--no-filters", "--stdin-paths"], input="\n".join(present).encode() + b"\n")
    return dict(zip(present, out.split(), strict=False))
