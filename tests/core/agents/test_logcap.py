"""agents/logcap.py: a log over twice its kept size keeps its first and last bytes with a marker
between, never through a link; LogCap trims while a writer still appends (real files, a real thread)."""

from __future__ import annotations

import os
import threading
import time

from memento_core.agents import logcap

KEEP = 1000


def test_trim_keeps_the_first_and_last_bytes_and_says_how_many_were_cut(tmp_path):
    log = tmp_path / "tick.log"
    log.write_bytes(b"a" * KEEP + b"m" * 50_000 + b"z" * KEEP)
    assert logcap.trim(log, keep=KEEP) == 50_000
    marker = logcap.MARKER.format(n=50_000, keep=KEEP).encode()
    assert log.read_bytes() == b"a" * KEEP + marker + b"z" * KEEP


def test_a_log_under_twice_the_kept_size_is_left_alone(tmp_path):
    log = tmp_path / "tick.log"
    data = b"x" * (2 * KEEP + 4096)
    log.write_bytes(data)
    assert logcap.trim(log, keep=KEEP) == 0 and log.read_bytes() == data
    assert logcap.trim(tmp_path / "missing.log", keep=KEEP) == 0


def test_a_link_in_the_logs_place_is_never_cut(tmp_path):
    """The agent replaced the log by a symbolic link or a hard link to a person's file (SPEC §13)."""
    persons = tmp_path / "thesis.tex"
    data = b"p" * (10 * KEEP)
    persons.write_bytes(data)
    symlink = tmp_path / "tick.log"
    symlink.symlink_to(persons)
    assert logcap.trim(symlink, keep=KEEP) == 0
    hard = tmp_path / "other.log"
    os.link(persons, hard)
    assert logcap.trim(hard, keep=KEEP) == 0
    assert persons.read_bytes() == data


def test_logcap_trims_while_a_writer_still_appends(tmp_path, monkeypatch):
    monkeypatch.setattr(logcap, "KEEP", KEEP)
    monkeypatch.setattr(logcap, "EVERY", 0.01)
    log = tmp_path / "tick.log"
    log.touch()
    cut = threading.Event()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)  # as the log pipe writes it
    deadline = time.monotonic() + 120  # a bound for a loaded machine, not a measure
    try:
        with logcap.LogCap(log):
            n = 0
            while not cut.is_set() and time.monotonic() < deadline:
                for _ in range(100):
                    os.write(fd, b"line %06d\n" % n)
                    n += 1
                if b"bytes cut from the middle" in log.read_bytes():
                    cut.set()  # cut by the thread while writing, not only at the end
                time.sleep(0.002)  # the thread gets its turn
            os.write(fd, b"the last line\n")
        assert cut.is_set()
    finally:
        os.close(fd)
    text = log.read_bytes()
    assert text.startswith(b"line 000000\n") and text.endswith(b"the last line\n")
    assert len(text) < 2 * KEEP + 4096 + 200
