"""Modes are git's (SPEC §13 "Either way"): after an attempt, passed or not, nothing the agent set
on a file's or folder's mode or extended attributes outlives it.

git records one thing of a mode, a file's executable bit, and nothing of extended attributes, so a
`chmod 4755`, `chmod 777 src`, a POSIX ACL or a file capability is in no diff and nothing undoes
it: a set-uid copy of a shell in a set-gid folder, a folder made world-writable, an ACL granting
another user rwx on a source file would all stay after a pass. :func:`take` records, at the
snapshot, the permission bits of the work-tree root and every tracked file and folder (kept.py's
``Kept.modes``) and the extended attributes Memento watches on them (:func:`watched`: the POSIX
ACLs, the file capability, every ``user.*``); :func:`settle` then puts back what the agent (or
verify) changed and gives what it made git's mode:

* a path that was there: its mode of the snapshot, but for a file's executable bit when that
  changed (git records it: a `chmod +x` is part of the change), which follows the read bits;
  its watched attributes as they were (the person's own ACL stays, one the agent added goes);
* a path that is new (a created file, the folders holding it, a new folder, empty or not, or
  an ignored one verify made): 0666 or 0777 (by the owner's x bit) under the person's umask,
  a folder 0777 under it (searchable); no watched attribute, but a set-gid bit or an ACL
  it inherited from a folder the person set so at the snapshot (the kernel's inheritance, not
  the agent's doing).

What was reset is said: set-uid, set-gid and sticky bits, POSIX ACLs and file capabilities
(:attr:`Found.special`: they hand another user or process power) are a guard failure naming each
path; write bits for group or others and other extended attributes are named in the status
entry (:attr:`Found.named`); any other difference (a file made 0600 by an atomic write) only in
the tick log. Nothing is followed: a symbolic link is never changed, nor anything below a folder
that became one; a file with more than one hard link is replaced by a copy of its own rather
than changed in place (its other names may be outside the work tree). Memento's own files and
``.git/`` are not looked at. What cannot be removed in place (a capability without CAP_SETFCAP)
is removed by replacing the file with a copy of its bytes.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..git.run import run_git
from ..git.status import was_there
from ..workspace import MEMENTO_FILES, OWN_PREFIX, own_file
from .context import append_log

ACL_ACCESS = "system.posix_acl_access"
ACL_DEFAULT = "system.posix_acl_default"
CAPABILITY = "security.capability"
SPECIAL_BITS = ((stat.S_ISUID, "set-uid"), (stat.S_ISGID, "set-gid"), (stat.S_ISVTX, "sticky"))
WIDE = stat.S_IWGRP | stat.S_IWOTH
_POWER = {ACL_ACCESS: "a POSIX ACL", ACL_DEFAULT: "a default POSIX ACL", CAPABILITY: "a file capability"}
_OWN_TOPS = frozenset({".git", *(f.strip("/").partition("/")[0] for f in MEMENTO_FILES)})
# The named entries of a POSIX ACL (linux/posix_acl_xattr.h): ACL_USER and ACL_GROUP, each with an id.
_NAMED_TAGS = (0x02, 0x08)


def watched(name: str) -> bool:
    """Whether the extended attribute ``name`` is one an agent may not leave: the POSIX ACLs, the file
    capability and every ``user.*`` (a security label such as ``security.selinux`` is the system's)."""
    return name in _POWER or name.startswith("user.")


@dataclass(frozen=True)
class Before:
    """The modes and watched attributes of the snapshot."""

    modes: Mapping[str, int]  # "." and every tracked file and folder: st_mode
    ctimes: Mapping[str, int]  # the same paths: st_ctime_ns (a chmod or an attribute set moves it)
    attrs: Mapping[str, Mapping[str, bytes]]  # those of them with watched attributes: name -> value
    untracked: frozenset[str]  # the person's paths (git.status.persons_paths): never looked at here
    umask: int
    archive_dir: str | None = None


@dataclass
class Found:
    """What :func:`settle` reset, each item "path (what)"."""

    special: list[str] = field(default_factory=list)  # set-uid/gid, sticky, ACLs, capabilities: a failure
    named: list[str] = field(default_factory=list)  # write for group or others, other attributes: in the entry
    quiet: list[str] = field(default_factory=list)  # any other mode made git's again: the log only
    failed: list[str] = field(default_factory=list)  # could not be reset

    def reason(self, who: str = "the agent") -> str:
        """The guard failure ('' = none): a special mode or right, or anything that could not be reset."""
        parts = [f"{who} set special modes or rights, removed: {listed(self.special)}"] if self.special else []
        parts += [f"modes or attributes that could not be reset: {listed(self.failed)}"] if self.failed else []
        return "; ".join(parts)

    def said(self) -> str:
        """One line for the tick log ('' = nothing done)."""
        parts = [f"reset {listed(self.special + self.named)}"] if self.special or self.named else []
        parts += [f"modes made git's: {listed(self.quiet)}"] if self.quiet else []
        parts += [f"COULD NOT reset {listed(self.failed)}"] if self.failed else []
        return "; ".join(parts)


def take(root: Path, modes: Mapping[str, int], untracked: Iterable[str], archive_dir: str | None = None) -> Before:
    """The snapshot's part: ``modes`` (kept.tracked_modes) with the root's, and the watched
    attributes of each (one listxattr per path: most have none)."""
    top, lstat = os.fspath(root), os.lstat
    everything, ctimes, attrs = {}, {}, {}
    for rel in (".", *modes):
        if rel != "." and _memento(rel, archive_dir):
            continue
        try:
            st = lstat(_full(top, rel))
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            continue
        everything[rel], ctimes[rel] = st.st_mode, st.st_ctime_ns
        found = _attrs(_full(top, rel))
        if found:
            attrs[rel] = found
    return Before(everything, ctimes, attrs, frozenset(untracked), _umask(), archive_dir)


def settle(root: Path, before: Before | None, changes=(), log_path: Path | None = None) -> Found:
    """Put the modes and watched attributes back as the module says; what was done, said in the log."""
    found = Found()
    if before is None:
        return found
    top = os.fspath(root)
    real = {"."}  # folders checked to be real folders (never follow a link the agent put in the way)
    for rel in _paths(top, before, changes):
        parent = rel.rpartition("/")[0] or "."
        if rel != "." and parent not in real:
            continue
        try:
            st = os.lstat(_full(top, rel))
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            continue
        was = before.modes.get(rel)
        if was == st.st_mode and before.ctimes.get(rel) == st.st_ctime_ns:  # no chmod, no attribute set since
            if stat.S_ISDIR(st.st_mode):
                real.add(rel)
            continue
        if was is not None and stat.S_IFMT(was) != stat.S_IFMT(st.st_mode):
            was = None  # a file where a folder was, or the reverse: new
        _settle_one(top, rel, st, was, before, found)
        if stat.S_ISDIR(st.st_mode):
            real.add(rel)
    if log_path is not None and found.said():
        append_log(log_path, f"[memento] modes: {found.said()}\n")
    return found


# ---------------------------------------------------------------- one path


def _settle_one(top: str, rel: str, st: os.stat_result, was: int | None, before: Before, found: Found) -> None:
    path = _full(top, rel)
    shown = rel + "/" if stat.S_ISDIR(st.st_mode) and rel != "." else rel
    parent = _full(top, rel.rpartition("/")[0] or ".")
    now = _attrs(path)
    had = before.attrs.get(rel, {}) if was is not None else _inherited(parent, now, stat.S_ISDIR(st.st_mode))
    wrong = {n: v for n, v in now.items() if had.get(n) != v} | {n: None for n in had if n not in now}
    target = _target(st.st_mode, was, before.umask, parent)
    if was is None and ACL_ACCESS in had:  # the group bits are the inherited ACL's mask: the person's
        target = (target & ~0o070) | (st.st_mode & 0o070)
    if not wrong and stat.S_IMODE(st.st_mode) == target:
        return
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        ok = _fresh_copy(path, target, had)  # never change a mode or an attribute through a hard link
    else:
        ok = _put_attrs(path, wrong, had) and _chmod(path, target)
        if not ok and stat.S_ISREG(st.st_mode):
            ok = _fresh_copy(path, target, had)
    for name in sorted(wrong):
        what = _POWER.get(name, f"extended attribute {name}")
        item = f"{shown} ({what} {'restored' if name in had else 'removed'})"
        (found.special if name in _POWER else found.named).append(item)
    extra = stat.S_IMODE(st.st_mode) & ~target
    if ACL_ACCESS in wrong:  # the group bits were the ACL's mask: said with the ACL
        extra &= ~0o070
    for bit, word in SPECIAL_BITS:
        if extra & bit:
            found.special.append(f"{shown} ({word})")
    if extra & WIDE:
        found.named.append(f"{shown} (write for {_who_writes(extra & WIDE)})")
    elif stat.S_IMODE(st.st_mode) != target and not extra & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
        found.quiet.append(f"{shown} {stat.S_IMODE(st.st_mode):04o} -> {target:04o}")
    if not ok:
        found.failed.append(shown)


def _target(mode: int, was: int | None, umask: int, parent: str) -> int:
    """The permission bits ``mode``'s path should have (see the module)."""
    if was is not None:
        keep = stat.S_IMODE(was)
        if stat.S_ISDIR(mode) or bool(mode & stat.S_IXUSR) == bool(keep & stat.S_IXUSR):
            return keep
        return keep | ((keep & 0o444) >> 2) if mode & stat.S_IXUSR else keep & ~0o111
    if stat.S_ISDIR(mode):
        inherited = mode & stat.S_ISGID and _mode(parent) & stat.S_ISGID  # the kernel's, from a set-gid folder
        return (0o777 & ~umask) | (stat.S_ISGID if inherited else 0)
    return (0o777 if mode & stat.S_IXUSR else 0o666) & ~umask


def _inherited(parent: str, now: Mapping[str, bytes], folder: bool) -> dict[str, bytes]:
    """Of a new path's watched attributes ``now``, those it may keep: the ACLs the kernel gave it from
    its folder's default ACL (set there by the person: the folder was settled before what it holds),
    naming no one that default ACL does not; a folder's own default ACL only as its folder's."""
    default = _attrs(parent).get(ACL_DEFAULT)
    if default is None:
        return {}
    kept = {}
    if ACL_ACCESS in now and acl_names(now[ACL_ACCESS]) <= acl_names(default):
        kept[ACL_ACCESS] = now[ACL_ACCESS]
    if folder and now.get(ACL_DEFAULT) == default:
        kept[ACL_DEFAULT] = default
    return kept


def _put_attrs(path: str, wrong: Mapping[str, bytes | None], had: Mapping[str, bytes]) -> bool:
    ok = True
    for name in wrong:
        try:
            if name in had:
                os.setxattr(path, name, had[name], follow_symlinks=False)
            else:
                os.removexattr(path, name, follow_symlinks=False)
        except OSError:
            ok = False
    return ok


def _chmod(path: str, mode: int) -> bool:
    try:
        if stat.S_IMODE(os.lstat(path).st_mode) != mode:
            os.chmod(path, mode)
        return True
    except OSError:
        return False


def _fresh_copy(path: str, mode: int, had: Mapping[str, bytes]) -> bool:
    """Replace the file at ``path`` by a new one with its bytes, ``mode`` and ``had`` (attributes and
    other hard links stay with the old inode, which this path no longer names)."""
    tmp = f"{path}.memento-mode.{os.getpid()}"
    try:
        src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            dst = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                while chunk := os.read(src, 1 << 20):
                    os.write(dst, chunk)
                os.fchmod(dst, mode)
                for name, value in had.items():
                    os.setxattr(dst, name, value)
            finally:
                os.close(dst)
            st = os.fstat(src)
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(src)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


# ---------------------------------------------------------------- which paths


def _paths(top: str, before: Before, changes) -> list[str]:
    """The root, every tracked path of the snapshot, and what is new: each created path and the
    folders holding it, and every new untracked or ignored folder walked whole. A folder comes
    before what it holds."""
    found: set[str] = set()
    skip = before.untracked
    for change in changes:
        if change.kind in ("created", "added") and not was_there(change.path, skip):
            found.add(change.path)
    listed = run_git(Path(top), ["ls-files", "-z", "--others", "--directory", "--", "."], check=False)
    for entry in listed.stdout.decode("utf-8", "surrogateescape").split("\0"):
        rel = entry.rstrip("/")
        if not rel or _memento(rel, before.archive_dir) or was_there(entry, skip):
            continue
        if any(p.startswith(entry) for p in skip):  # a person's folder with the person's files in it
            continue
        found.add(rel)
        if entry.endswith("/"):
            found.update(_walk(top, rel, skip))
    for rel in list(found):  # the folders on the way to each new path
        while "/" in rel:
            rel = rel.rpartition("/")[0]
            found.add(rel)
    found = {p for p in found if not _memento(p, before.archive_dir)} | set(before.modes)
    return sorted(found, key=lambda p: (0 if p == "." else p.count("/") + 1, p))


def _walk(top: str, folder: str, skip: frozenset[str]) -> list[str]:
    """Every path below the new ``folder``, links never followed."""
    found, todo = [], [folder]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(_full(top, rel)) as it:
                items = list(it)
        except OSError:
            continue
        for item in items:
            sub = f"{rel}/{item.name}"
            if was_there(sub, skip):
                continue
            found.append(sub)
            if item.is_dir(follow_symlinks=False):
                todo.append(sub)
    return found


# ---------------------------------------------------------------- helpers


def _attrs(path: str) -> dict[str, bytes]:
    """The watched extended attributes of ``path`` (never followed), name -> value; {} where the
    file system has none or refuses them."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return {}
    found = {}
    for name in names:
        if watched(name):
            try:
                found[name] = os.getxattr(path, name, follow_symlinks=False)
            except OSError:
                continue
    return found


def acl_names(value: bytes) -> frozenset[tuple[int, int]]:
    """The named entries (tag, id) of a POSIX ACL in the kernel's xattr format: the users and groups
    it grants something beyond the owner, the owning group and others."""
    names = set()
    for at in range(4, len(value) - 7, 8):
        tag, _perm, ident = struct.unpack_from("<HHI", value, at)
        if tag in _NAMED_TAGS:
            names.add((tag, ident))
    return frozenset(names)


def _mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _umask() -> int:
    """The tick's umask, the person's: read from /proc (setting it to read it would race the threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _full(top: str, rel: str) -> str:
    return top if rel == "." else f"{top}/{rel}"


def _memento(rel: str, archive_dir: str | None) -> bool:
    first = rel.partition("/")[0]
    if first not in _OWN_TOPS and not first.startswith(OWN_PREFIX) and first != (archive_dir or "").partition("/")[0]:
        return False  # own_file's answer, without its cost on each of 10,000 tracked paths
    return own_file(rel, archive_dir)  # .git/ among them (MEMENTO_FILES)


def _who_writes(bits: int) -> str:
    return "group and others" if bits == WIDE else "group" if bits & stat.S_IWGRP else "others"


def listed(names, limit: int = 10) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
