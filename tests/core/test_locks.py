"""locks.py (SPEC §11, §13): the flock every writer takes (another process holding it is waited
for, then LockBusy), writes that a reader sees whole or not at all, an edit that starts over when
a person's editor saved meanwhile, and no write, append or read through a symbolic or a hard link."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from memento_core import locks
from memento_core.errors import MementoError
from memento_core.lines import NotAFile

HOLD = ("import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n")


def test_a_lock_another_process_holds_is_busy_until_it_lets_go(tmp_path):
    lock = tmp_path / "sub" / "x.lock"
    lock.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        # The holder lets go a second from now: a non-blocking attempt has said busy long before.
        letting_go = threading.Timer(1.0, holder.stdin.close)
        letting_go.start()
        with pytest.raises(locks.LockBusy, match="is held by another process"):
            with locks.file_lock(lock, blocking=False, timeout=60):
                pass
        letting_go.cancel()
        with pytest.raises(locks.LockBusy):
            with locks.file_lock(lock, timeout=0.05):
                pass
    finally:
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(timeout=30)
    with locks.file_lock(lock, blocking=False) as fd:
        assert fd >= 0
    with locks.file_lock(tmp_path / "made" / "here.lock", blocking=False):
        assert (tmp_path / "made" / "here.lock").exists()  # its folder made


def test_an_atomic_write_keeps_the_files_mode_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("old\n")
    path.chmod(0o750)
    locks.atomic_write_text(path, "new\r\nline\n")
    assert path.read_bytes() == b"new\r\nline\n" and path.stat().st_mode & 0o7777 == 0o750
    locks.atomic_write_bytes(tmp_path / "deep" / "fresh.txt", b"x")
    assert (tmp_path / "deep" / "fresh.txt").stat().st_mode & 0o7777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "run.sh"]


def test_no_write_or_read_through_a_symbolic_link(tmp_path):
    target = tmp_path / "persons.txt"
    target.write_text("theirs\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(locks.SymlinkRefused, match="is a symbolic link; Memento never writes through one"):
        locks.atomic_write_text(link, "ours\n")
    with pytest.raises(locks.SymlinkRefused):
        locks.open_append(link)
    with pytest.raises(locks.SymlinkRefused):
        locks.read_no_follow(link)
    linked_folder = tmp_path / "logs"
    linked_folder.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(locks.SymlinkRefused):
        locks.open_append(linked_folder / "cron.log")
    assert target.read_text() == "theirs\n" and link.is_symlink()
    assert locks.read_no_follow(tmp_path / "missing") == b""
    with pytest.raises(MementoError, match="is a directory"):
        locks.read_no_follow(tmp_path)


def test_an_append_to_a_hard_link_is_refused_or_with_split_made_a_file_of_its_own(tmp_path):
    log = tmp_path / "cron.log"
    log.write_text("first\n")
    persons = tmp_path / "persons.txt"
    os.link(log, persons)
    persons.chmod(0o600)
    with pytest.raises(locks.HardLinkRefused, match=r"2 names for one file"):
        locks.open_append(log)
    with locks.open_append(log, split=True) as fh:
        fh.write("second\n")
    assert log.read_text() == "first\nsecond\n" and persons.read_text() == "first\n"
    assert os.stat(persons).st_nlink == 1 and log.stat().st_mode & 0o7777 == 0o600
    assert locks.split_hard_link(log) is False  # a single name now
    assert locks.split_hard_link(tmp_path / "missing") is False


def test_an_append_to_a_fifo_fails_at_once(tmp_path):
    fifo = tmp_path / "cron.log"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="FIFO"):
        locks.open_append(fifo)


def test_a_locked_edit_starts_over_from_a_save_made_while_it_computed(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(b"a\n")
    seen: list[bytes] = []

    def add_line(current: bytes) -> bytes:
        seen.append(current)
        if len(seen) == 1:
            path.write_bytes(b"a\nthe person's line\n")  # an editor's save: it takes no lock
        return current + b"ours\n"

    assert locks.locked_edit(path, add_line) == b"a\nthe person's line\nours\n"
    assert seen == [b"a\n", b"a\nthe person's line\n"]
    assert path.read_bytes() == b"a\nthe person's line\nours\n"
    assert locks.locked_edit(path, lambda current: None) is None
    assert locks.locked_edit(path, lambda current: current) is None


def test_an_edit_that_never_settles_gives_up_saying_so(tmp_path):
    path = tmp_path / "busy.md"
    path.write_text("0")

    def keeps_changing(current: bytes) -> bytes:
        path.write_text(str(int(path.read_text()) + 1))
        return b"ours"

    with pytest.raises(MementoError, match="keeps changing underneath the edit"):
        locks.locked_edit(path, keeps_changing)
    assert path.read_text() == "20"


def test_a_workspace_files_edit_lock_lives_in_memento_locks(tmp_path):
    (tmp_path / "ws" / ".memento").mkdir(parents=True)
    (tmp_path / "ws" / "docs").mkdir()
    assert locks.lock_path_for(tmp_path / "ws" / "docs" / "MASTER_PLAN.md") == \
        (tmp_path / "ws" / ".memento" / "locks" / "MASTER_PLAN.md.lock").resolve()
    assert locks.lock_path_for(tmp_path / "ws" / "memento.toml").parent == (tmp_path / "ws" / ".memento" / "locks")
    assert locks.lock_path_for(tmp_path / "plain.txt") == (tmp_path / ".plain.txt.lock").resolve()
