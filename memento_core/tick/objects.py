"""Git objects are immutable (SPEC §13 "Either way"): what the object store held at the snapshot still reads the same.

git/state.py puts back refs, HEAD and git's configuration; none of that helps when
an unconfined agent rewrites the object a ref names. A loose object is a file
named by the hash of its inflated content, a pack is named by the hash of its
bytes (its trailer), and git trusts both without checking: an agent that writes
other bytes under an old name makes a person's branch, tag and history read the
agent's text with the same commit ids. It can also plant a loose object under the
name of content that does not exist yet (the blob of the file the task will
write): git then sees that object "already there" when Memento commits the task
and never writes the real one.

:func:`take` (at the snapshot) records a stat print of every loose object, pack
and pack index of the common git folder (inode, size, ctime: a process cannot
set a ctime back, so any write in place is seen) and the trailer of each pack and
index, and keeps a copy of each in the mirror (`.memento/objects/`), incrementally:
a loose object is copied once, the first time a snapshot sees it, and a pack once
(a reflink where the file system has one; over :data:`PACK_COPY_LIMIT` without
one, no copy). A copy is a new file, never a hard link (a write in place would
change both), and is trusted only when its content still hashes to its name
(a loose object) or to the trailer recorded at the snapshot (a pack, an index):
an agent that also rewrote the mirror gains nothing. The mirror is flat (a loose object's copy
is named by its whole id, the packs' are in `pack/`): git's 256 fan-out folders there cost every
walk of `.memento/` a listing each, six walks a tick, and stayed behind empty after a pack.

:func:`put_back` (at the guards, before verify and after it, and at the rollback,
before any checkout reads an object) compares:

* a loose object whose inode or size changed, or which went away while git no
  longer has it, is damage: the file found is moved to logs/rollback/ and the
  copy renamed into place; one whose ctime alone changed (git itself "freshens"
  an object it is asked to write again) is re-hashed, and damage only when it
  no longer hashes to its name;
* a pack or index likewise (a freshened pack is re-hashed whole against its
  trailer);
* a loose object that is new and does not hash to its name is moved aside; a
  new pack that `git verify-pack` refuses is moved aside with its index;
* the derived indexes git trusts without checking them against the objects
  (`objects/info/commit-graph`, `commit-graphs/`, `multi-pack-index`, a pack's
  `.rev` and `.bitmap`) that changed or appeared are removed: git reads the
  objects themselves without them.

What has no valid copy cannot be put back: the result says so (``lost``) and the
tick stops for a person (the circuit breaker's "git error": the plan paused,
the alert written, exit 1), so nothing more is committed on top of a history
that no longer reads as it did.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import MementoError
from ..git.repo import repo_dirs
from ..git.run import run_git
from ..git.state import read_plain

PACK_COPY_LIMIT = 64 * 1024 * 1024  # a pack bigger than this is copied only where a reflink is free
MIRROR = "objects"  # below the project's .memento/
FICLONE = 0x40049409  # ioctl: a copy-on-write clone (btrfs, xfs, bcachefs); not a hard link
_LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
_LOOSE_NAME = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
_LOOSE_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a loose object's copy in the mirror
_PACK_NAME = re.compile(r"pack-[0-9a-f]{40,64}\.(pack|idx)")
# Derived indexes git trusts as they are: below objects/, removed when they changed or appeared.
_DERIVED_TOP = ("info/commit-graph", "info/commit-graphs", "pack/multi-pack-index")
_DERIVED_SUFFIXES = (".rev", ".bitmap")

# (inode, size, ctime_ns) of a file; its trailer for a pack or an index (b"" for a loose object).
Print = tuple[int, int, int]


@dataclass
class Objects:
    """The object store at the snapshot. The maps are brought up to date by :func:`put_back` (what it
    restored, what it found genuine), so each later look compares with what it left."""

    objects_dir: str
    mirror: str  # where the copies are (.memento/objects/)
    loose: dict[str, Print] = field(default_factory=dict)  # "ab/cdef…" -> print
    packs: dict[str, tuple[Print, bytes]] = field(default_factory=dict)  # "pack/pack-….pack" -> (print, trailer)
    derived: dict[str, Print] = field(default_factory=dict)  # "info/commit-graph", "pack/….rev" -> print


@dataclass
class Damage:
    """What :func:`put_back` found, by path below `.git/objects/`."""

    restored: list[str] = field(default_factory=list)  # changed or removed, put back from the copy
    planted: list[str] = field(default_factory=list)  # new, not what their name says: moved aside
    derived: list[str] = field(default_factory=list)  # derived indexes changed or added: removed
    lost: list[str] = field(default_factory=list)  # changed or removed, and no valid copy

    def __bool__(self) -> bool:
        return bool(self.restored or self.planted or self.derived or self.lost)

    def reason(self, who: str = "the agent") -> str:
        """'' or the guard failure's sentence, every path named."""
        parts = []
        if self.restored:
            parts.append(f"rewrote or removed {_listed(self.restored)} (put back from Memento's copy)")
        if self.planted:
            parts.append(f"planted {_listed(self.planted)}, whose content is not what the name says (moved to "
                         "logs/rollback/)")
        if self.derived:
            parts.append(f"changed git's derived indexes {_listed(self.derived)} (removed; git reads the objects "
                         "without them)")
        if self.lost:
            parts.append(f"rewrote or removed {_listed(self.lost)}, and Memento has no copy to put back: the "
                         "history they hold no longer reads as it did; the plan is paused until a person "
                         "restores them (from a clone or a backup) and resumes")
        if not parts:
            return ""
        return f"{who} changed git objects, which never change: " + "; ".join(parts)


# ---------------------------------------------------------------- the snapshot


def take(root: Path, mirror: Path) -> Objects | None:
    """The stat print of the object store of ``root``'s repository, each object copied into ``mirror``
    once; None when there is no object folder to look at."""
    common = repo_dirs(Path(root)).common_dir
    objects_dir = common / "objects"
    if not objects_dir.is_dir():
        return None
    snap = Objects(str(objects_dir), str(mirror))
    snap.loose, snap.packs, snap.derived = _scan(objects_dir)
    _mirror(snap)
    return snap


def to_bytes(snap: Objects) -> bytes:
    """``snap``'s prints as JSON, kept beside the tick's record (record.save_objects) so that the
    recovery after a killed tick judges the store against them (:func:`put_back`), packs and
    derived indexes included; the folders are not kept (from_bytes takes them again)."""
    return json.dumps({"loose": snap.loose, "derived": snap.derived,
                       "packs": {rel: [printed, trailer.hex()] for rel, (printed, trailer) in snap.packs.items()}}
                      ).encode("ascii")


def from_bytes(data: bytes, root: Path, mirror: Path) -> Objects | None:
    """What :func:`to_bytes` wrote, for the store of ``root``'s repository and its copies in
    ``mirror``; None when it is not that (a name that is no path below `.git/objects/` included)."""
    try:
        body = json.loads(data.decode("ascii"))
        snap = Objects(str(repo_dirs(Path(root)).common_dir / "objects"), str(mirror))
        snap.loose = {_below(rel, _LOOSE_REL): _printed(v) for rel, v in body["loose"].items()}
        snap.packs = {_below(rel, _PACK_REL): (_printed(v[0]), bytes.fromhex(v[1])) for rel, v in body["packs"].items()}
        snap.derived = {_below(rel, _DERIVED_REL): _printed(v) for rel, v in body["derived"].items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, MementoError):
        return None
    return snap


_LOOSE_REL = re.compile(r"[0-9a-f]{2}/(?:[0-9a-f]{38}|[0-9a-f]{62})")
_PACK_REL = re.compile(r"pack/pack-[0-9a-f]{40,64}\.(?:pack|idx)")
_DERIVED_REL = re.compile(r"(?:info/commit-graph|info/commit-graphs/[^/]+|pack/multi-pack-index|pack/[^/]+)")


def _below(rel: str, shape: re.Pattern) -> str:
    if not shape.fullmatch(rel) or ".." in rel.split("/"):
        raise ValueError(f"not a path below .git/objects/: {rel!r}")
    return rel


def _printed(value) -> Print:
    ino, size, ctime = value
    if not all(type(n) is int for n in (ino, size, ctime)):
        raise ValueError(f"not a print: {value!r}")
    return (ino, size, ctime)


def _algo(name: str) -> str:
    """The hash of an object's or a pack's name, by its length: sha1 (40 hex digits) or sha256 (64)
    (a repository is one or the other; git reads no name of the other length)."""
    return "sha256" if re.search(r"[0-9a-f]{64}", name.replace("/", "")) else "sha1"


def _scan(objects_dir: Path) -> tuple[dict[str, Print], dict[str, tuple[Print, bytes]], dict[str, Print]]:
    loose: dict[str, Print] = {}
    packs: dict[str, tuple[Print, bytes]] = {}
    derived: dict[str, Print] = {}
    try:
        folders = [e for e in os.scandir(objects_dir) if _LOOSE_DIR.fullmatch(e.name)]
    except OSError:
        folders = []
    for folder in folders:  # thousands of entries: a DirEntry's own lstat, no Path made per file
        try:
            with os.scandir(folder.path) as it:
                for e in it:
                    if not _LOOSE_NAME.fullmatch(e.name):
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    regular = stat.S_ISREG(st.st_mode)
                    loose[folder.name + "/" + e.name] = (st.st_ino if regular else -1, st.st_size if regular else -1,
                                                         st.st_ctime_ns)
        except OSError:
            continue
    try:
        names = os.listdir(objects_dir / "pack")
    except OSError:
        names = []
    for name in names:
        path = objects_dir / "pack" / name
        got = _print(path)
        if got is None:
            continue
        if _PACK_NAME.fullmatch(name):
            packs[f"pack/{name}"] = (got, _trailer(path))
        elif name.endswith(_DERIVED_SUFFIXES) or f"pack/{name}" in _DERIVED_TOP:
            derived[f"pack/{name}"] = got
    for rel in _DERIVED_TOP:
        base = objects_dir / rel
        if base.is_dir() and not base.is_symlink():
            for name in sorted(os.listdir(base)):
                got = _print(base / name)
                if got is not None:
                    derived[f"{rel}/{name}"] = got
        elif not rel.startswith("pack/"):
            got = _print(base)
            if got is not None:
                derived[rel] = got
    return loose, packs, derived


def _print(path: Path) -> Print | None:
    """(inode, size, ctime_ns) of a regular file (a link or a folder where a file belongs: a
    print no file has, so it is seen as changed)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return (-1, -1, st.st_ctime_ns)
    return (st.st_ino, st.st_size, st.st_ctime_ns)


def _trailer(path: Path) -> bytes:
    """The last 32 bytes of a pack or an index (the hash of what precedes them is the last 20 of
    them for sha1): enough for either format, cut to the format's length when checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b""
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - 32), os.SEEK_SET)
        return os.read(fd, 32)
    finally:
        os.close(fd)


def _mirror(snap: Objects) -> None:
    """Copy into the mirror what it does not hold yet; forget what the store no longer holds."""
    mirror, objects_dir = Path(snap.mirror), Path(snap.objects_dir)
    have = _mirrored(mirror)
    for rel in snap.loose.keys() - have:
        _copy_loose(objects_dir / rel, copy_path(mirror, rel), rel)
    for rel, (printed, _trailer) in snap.packs.items():
        if rel not in have:
            _copy_pack(objects_dir / rel, copy_path(mirror, rel), printed[1])
    for rel in have - snap.loose.keys() - snap.packs.keys():
        _unlink(copy_path(mirror, rel))


def copy_path(mirror: Path, rel: str) -> Path:
    """Where the mirror keeps its copy of ``rel`` (a path below `.git/objects/`): a loose object's
    ("ab/cdef…") under its whole id, a pack's or an index's ("pack/pack-….idx") as it is."""
    folder, _, name = rel.partition("/")
    return mirror / rel if folder == "pack" else mirror / (folder + name)


def _mirrored(mirror: Path) -> set[str]:
    """What the mirror holds, as paths below `.git/objects/`. Any folder but pack/ is removed: an
    older mirror's fan-out folders (a copy per folder, as git keeps them), whose objects are
    copied again."""
    found: set[str] = set()
    try:
        with os.scandir(mirror) as it:
            entries = list(it)
    except OSError:
        return found
    for entry in entries:
        if _LOOSE_ID.fullmatch(entry.name):
            found.add(f"{entry.name[:2]}/{entry.name[2:]}")
        elif entry.name == "pack" and entry.is_dir(follow_symlinks=False):
            try:
                found.update(f"pack/{name}" for name in os.listdir(entry.path) if not name.startswith("."))
            except OSError:
                pass  # nothing found there: copied again
        elif entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
    return found


def _copy_loose(src: Path, dest: Path, rel: str) -> None:
    """A copy of a loose object that hashes to its name (a forged one at the snapshot is not kept)."""
    data = read_plain(src)
    if data is None or not loose_is_genuine(data, rel):
        return
    _write_new(dest, data)


def _copy_pack(src: Path, dest: Path, size: int) -> None:
    """A pack or index copied once: a reflink when the file system clones, else a byte copy of one
    up to PACK_COPY_LIMIT. Never a hard link. The copy is checked against the trailer when used."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            try:
                fcntl.ioctl(fout.fileno(), FICLONE, fin.fileno())
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EXDEV, errno.EINVAL, errno.ENOTTY, errno.EBADF):
                    raise
                if size > PACK_COPY_LIMIT:
                    raise OSError(errno.EFBIG, "too big to copy without a reflink") from None
                shutil.copyfileobj(fin, fout, 1024 * 1024)
        os.chmod(tmp, 0o444)
        os.replace(tmp, dest)
    except OSError:
        _unlink(tmp)


# ---------------------------------------------------------------- after the agent


def put_back(snap: Objects | None, root: Path, aside: Path) -> Damage:
    """Compare the object store with ``snap``, put back what changed from the copies (the file found
    moved into ``aside``, a folder under logs/rollback/ made when needed), move planted objects
    aside, remove changed derived indexes; what it found. ``snap`` is brought up to date."""
    damage = Damage()
    if snap is None:
        return damage
    objects_dir, mirror = Path(snap.objects_dir), Path(snap.mirror)
    loose, packs, derived = _scan(objects_dir)
    # New packs first: a loose object gone below is not lost when a pack checked here holds it.
    _new_packs(snap, Path(root), {k: v for k, v in packs.items() if k not in snap.packs}, aside, damage)
    gone = []
    for rel, was in list(snap.loose.items()):
        now = loose.get(rel)
        if now == was:
            continue
        if now is None:
            gone.append(rel)
            continue
        if now[:2] == was[:2] and loose_is_genuine(read_plain(objects_dir / rel) or b"", rel):
            snap.loose[rel] = now  # freshened (git's utime) or chmod-ed: the same object
            continue
        _restore(snap, rel, aside, damage)
    if gone:  # a loose object git has elsewhere (a pack checked here) is not lost: a `git gc` packed it
        present = _present(Path(root), [rel.replace("/", "") for rel in gone])
        for rel in gone:
            if rel.replace("/", "") in present:
                del snap.loose[rel]
            else:
                _restore(snap, rel, aside, damage)
    gone = {_pack_base(rel) for rel in snap.packs if rel not in packs}  # a pack and its index: one look
    repacked = {base for base in gone if _repacked(snap, Path(root), base + ".idx")}
    for rel, (was, trailer) in list(snap.packs.items()):
        now_pack = packs.get(rel)
        if now_pack is not None and now_pack[0] == was:
            continue
        if now_pack is not None and now_pack[0][:2] == was[:2] and _pack_is_genuine(objects_dir / rel, trailer):
            snap.packs[rel] = (now_pack[0], trailer)  # a freshened pack, whole
            continue
        if now_pack is None and _pack_base(rel) in repacked:  # its every object in git's store still (a person's gc)
            del snap.packs[rel]
            continue
        _restore(snap, rel, aside, damage)
    for rel in sorted(loose.keys() - snap.loose.keys()):
        if loose_is_genuine(read_plain(objects_dir / rel) or b"", rel):
            snap.loose[rel] = loose[rel]
            _copy_loose(objects_dir / rel, copy_path(mirror, rel), rel)
        else:
            _move_aside(objects_dir / rel, aside / rel)
            damage.planted.append(f".git/objects/{rel}")
    for rel in sorted(derived):  # one that went away is harmless: git reads the objects without it
        if derived[rel] != snap.derived.get(rel):
            _move_aside(objects_dir / rel, aside / rel)
            damage.derived.append(f".git/objects/{rel}")
    snap.derived = {k: v for k, v in derived.items() if k in snap.derived and snap.derived[k] == v}
    return damage


def check_loose(root: Path, mirror: Path, aside: Path) -> Damage:
    """After a killed tick (its snapshot died with it): every loose object is re-hashed; one that is
    not what its name says is put back from the mirror's copy (valid: it hashes to the name) or,
    without one, moved to ``aside`` and named as lost. Packs are not looked at here."""
    damage = Damage()
    objects_dir = repo_dirs(Path(root)).common_dir / "objects"
    if not objects_dir.is_dir():
        return damage
    loose, _packs, _derived = _scan(objects_dir)
    snap = Objects(str(objects_dir), str(mirror))
    for rel in sorted(loose):
        if loose_is_genuine(read_plain(objects_dir / rel) or b"", rel):
            continue
        snap.loose[rel] = loose[rel]
        _restore(snap, rel, aside, damage)
        if f".git/objects/{rel}" in damage.lost:
            _move_aside(objects_dir / rel, aside / rel)
    return damage


def _restore(snap: Objects, rel: str, aside: Path, damage: Damage) -> None:
    """Put the copy of ``rel`` in place by rename (what stands there moved aside, never written
    through: it may be a hard link to a file elsewhere); lost when there is no valid copy."""
    objects_dir, mirror = Path(snap.objects_dir), Path(snap.mirror)
    copy = read_plain(copy_path(mirror, rel))
    if copy is None and rel in snap.loose:  # an older mirror's fan-out copy (a tick killed before the upgrade)
        copy = read_plain(mirror / rel)
    if rel in snap.loose:
        valid = copy is not None and loose_is_genuine(copy, rel)
    else:
        valid = copy is not None and _bytes_are_genuine(copy, snap.packs[rel][1], _algo(rel))
    shown = f".git/objects/{rel}"
    if not valid:
        damage.lost.append(shown)
        return
    target = objects_dir / rel
    if os.path.lexists(target):
        _move_aside(target, aside / rel)
    _write_new(target, copy)
    got = _print(target)
    if rel in snap.loose:
        snap.loose[rel] = got
    else:
        snap.packs[rel] = (got, snap.packs[rel][1])
    damage.restored.append(shown)


def _new_packs(snap: Objects, root: Path, new: dict[str, tuple[Print, bytes]], aside: Path, damage: Damage) -> None:
    """A pack that appeared is kept only when git recomputes every object's id from its content
    (`git verify-pack`): a forged one would shadow the real objects (git reads packs first)."""
    objects_dir = Path(snap.objects_dir)
    for rel in sorted(r for r in new if r.endswith(".idx")):
        pack = rel[:-4] + ".pack"
        if pack not in new:
            continue
        proc = run_git(root, ["verify-pack", str(objects_dir / rel)], check=False)
        if proc.returncode == 0:
            for name in (rel, pack):
                snap.packs[name] = new[name]
            continue
        for name in (rel, pack):
            _move_aside(objects_dir / name, aside / name)
            damage.planted.append(f".git/objects/{name}")


def _pack_base(rel: str) -> str:
    """``pack/pack-<id>`` of a pack's or its index's path."""
    return rel.removesuffix(".pack").removesuffix(".idx")


def _repacked(snap: Objects, root: Path, idx: str) -> bool:
    """Whether the pack whose index is ``idx`` went away holding only objects git still reads from
    elsewhere, as after a person's `git gc` repacked it: told from the mirror's copy of its index,
    trusted when it hashes to the trailer recorded at the snapshot. False when that cannot be told."""
    recorded = snap.packs.get(idx)
    copy = read_plain(copy_path(Path(snap.mirror), idx)) if recorded is not None else None
    if copy is None or not _bytes_are_genuine(copy, recorded[1], _algo(idx)):
        return False
    ids = _index_ids(copy, hashlib.new(_algo(idx)).digest_size)
    return ids is not None and len(_present(root, ids)) == len(set(ids))


def _index_ids(data: bytes, width: int) -> list[str] | None:
    """The object ids a version 2 pack index lists (its 256 fan-out counts, then the names);
    None for anything else."""
    names = 8 + 256 * 4
    if data[:8] != b"\377tOc\0\0\0\2" or len(data) < names:
        return None
    count = int.from_bytes(data[names - 4:names], "big")
    if len(data) < names + count * width:
        return None
    return [data[i:i + width].hex() for i in range(names, names + count * width, width)]


def _present(root: Path, ids: list[str]) -> set[str]:
    """Which of ``ids`` git can read now (from a pack; their loose files are gone)."""
    if not ids:
        return set()
    proc = run_git(root, ["cat-file", "--batch-check=%(objectname)"], input="\n".join(ids).encode() + b"\n",
                   check=False)
    return {line for line in proc.stdout.decode("ascii", "replace").splitlines() if " missing" not in line}


# ---------------------------------------------------------------- what an object is


def loose_is_genuine(data: bytes, rel: str) -> bool:
    """A loose object's file: its zlib-inflated content hashes to its name (sha1 or sha256, the
    repository's object format, by the name's length)."""
    try:
        body = zlib.decompress(data)
    except zlib.error:
        return False
    return hashlib.new(_algo(rel), body).hexdigest() == rel.replace("/", "")


def _pack_is_genuine(path: Path, trailer: bytes) -> bool:
    """A pack or index file hashes (all but its trailer) to the trailer recorded at the snapshot."""
    algo = _algo(path.name)
    n = hashlib.new(algo).digest_size
    want = trailer[-n:]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    h = hashlib.new(algo)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        left = size - n
        if left < 0:
            return False
        while left:
            chunk = fh.read(min(left, 1024 * 1024))
            if not chunk:
                return False
            h.update(chunk)
            left -= len(chunk)
        return h.digest() == want and fh.read() == want


def _bytes_are_genuine(data: bytes, trailer: bytes, algo: str) -> bool:
    n = hashlib.new(algo).digest_size
    return len(data) >= n and data[-n:] == trailer[-n:] and hashlib.new(algo, data[:-n]).digest() == data[-n:]


# ---------------------------------------------------------------- files


def _write_new(path: Path, data: bytes) -> None:
    """A new file, renamed into place, read-only as git leaves its objects."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.memento")
    _unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _move_aside(src: Path, dest: Path) -> None:
    """Move what stands at ``src`` into logs/rollback/ (a rename: a hard-linked file's other names
    never see a write); a copy and a removal across file systems."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(src, dest)
    except OSError:
        try:
            shutil.copy2(src, dest, follow_symlinks=False)
        except OSError:
            pass
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.rmtree(src, ignore_errors=True)
        else:
            _unlink(src)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _listed(names: list[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
