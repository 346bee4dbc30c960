"""tick/modes.py on real files in a real repository: what settle resets, what it names, and what it
never touches (a person's paths, Memento's, anything behind a link)."""

from __future__ import annotations

import os
import stat
import struct
import subprocess
from pathlib import Path

import pytest

from memento_core.git.changes import FileChange
from memento_core.git.status import persons_paths
from memento_core.tick import kept, modes

U = 0xFFFFFFFF


def acl(*entries: tuple[int, int, int]) -> bytes:
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


NOBODY_RWX = acl((0x01, 6, U), (0x02, 7, 65534), (0x04, 4, U), (0x10, 7, U), (0x20, 4, U))


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".gitignore").write_text(".memento/\nlogs/\n.env\n")
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "src" / "app.py", 0o644)
    os.chmod(root / "run.sh", 0o755)
    os.chmod(root / "src", 0o755)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "s"],
                   check=True)
    (root / ".env").write_text("SECRET=1\n")
    os.chmod(root / ".env", 0o666)  # a person's, as loose as they like
    return root


def before(root: Path) -> modes.Before:
    return modes.take(root, kept.tracked_modes(root), persons_paths(root))


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_an_unchanged_tree_is_left_alone(tmp_path):
    root = repo(tmp_path)
    found = modes.settle(root, before(root))
    assert (found.special, found.named, found.quiet, found.failed) == ([], [], [], [])


def test_tracked_paths_get_the_snapshots_bits_but_a_chmod_x_git_records(tmp_path):
    root = repo(tmp_path)
    snap = before(root)
    os.chmod(root / "src", 0o3777)
    os.chmod(root / "src" / "app.py", 0o4700)  # set-uid, and x: git records the x bit
    os.chmod(root / "run.sh", 0o644)  # x gone: git records that too
    found = modes.settle(root, snap)
    assert mode(root / "src") == 0o755
    assert mode(root / "src" / "app.py") == 0o755  # the snapshot's 0644, x following each r bit
    assert mode(root / "run.sh") == 0o644
    assert sorted(found.special) == ["src/ (set-gid)", "src/ (sticky)", "src/app.py (set-uid)"]
    assert found.named == ["src/ (write for group and others)"]
    assert "set-uid" in found.reason() and found.reason("verify").startswith("verify set special modes")


def test_new_paths_get_gits_mode_under_the_umask_and_a_person_s_are_not_looked_at(tmp_path):
    root = repo(tmp_path)
    snap = before(root)
    (root / "src" / "new").mkdir()
    (root / "src" / "new" / "a.py").write_text("")
    (root / "src" / "empty").mkdir()
    os.chmod(root / "src" / "new" / "a.py", 0o600)
    os.chmod(root / "src" / "new", 0o700)
    os.chmod(root / "src" / "empty", 0o777)
    found = modes.settle(root, snap, [FileChange("src/new/a.py", 0, 0, "created")])
    umask = snap.umask
    assert mode(root / "src" / "new" / "a.py") == 0o666 & ~umask
    assert mode(root / "src" / "new") == 0o777 & ~umask
    assert mode(root / "src" / "empty") == 0o777 & ~umask  # found by git's listing alone
    assert mode(root / ".env") == 0o666  # the person's
    assert "src/new/a.py 0600 -> 0644" in found.quiet or umask != 0o022


def test_nothing_behind_a_link_is_changed(tmp_path):
    root = repo(tmp_path)
    snap = before(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("")
    os.chmod(outside / "app.py", 0o4777)
    os.rename(root / "src", tmp_path / "src-was")
    os.symlink(outside, root / "src")
    modes.settle(root, snap)
    assert mode(outside / "app.py") == 0o4777
    assert mode(outside) == stat.S_IMODE(os.stat(outside).st_mode)


def test_attributes_added_are_removed_and_a_persons_own_restored(tmp_path):
    root = repo(tmp_path)
    try:
        os.setxattr(root / "run.sh", "user.persons", b"mine")
        os.setxattr(root / "run.sh", "system.posix_acl_access", NOBODY_RWX)
        os.removexattr(root / "run.sh", "system.posix_acl_access")
    except OSError as exc:
        pytest.skip(f"no extended attributes here: {exc.strerror}")
    snap = before(root)
    os.setxattr(root / "run.sh", "user.persons", b"the agent's")
    os.setxattr(root / "src" / "app.py", "system.posix_acl_access", NOBODY_RWX)
    os.setxattr(root / "src", "user.planted", b"1")
    found = modes.settle(root, snap)
    assert os.getxattr(root / "run.sh", "user.persons") == b"mine"
    assert os.listxattr(root / "src" / "app.py") == [] and os.listxattr(root / "src") == []
    assert mode(root / "src" / "app.py") == 0o644  # the ACL's mask gone from the group bits too
    assert found.special == ["src/app.py (a POSIX ACL removed)"]
    assert sorted(found.named) == ["run.sh (extended attribute user.persons restored)",
                                   "src/ (extended attribute user.planted removed)"]


def test_acl_names_reads_the_named_entries():
    assert modes.acl_names(NOBODY_RWX) == {(0x02, 65534)}
    assert modes.acl_names(acl((0x01, 7, U), (0x04, 5, U), (0x20, 5, U))) == frozenset()
    assert modes.watched("user.x") and modes.watched("security.capability")
    assert not modes.watched("security.selinux") and not modes.watched("trusted.x")
