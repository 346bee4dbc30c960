"""The dashboard never blocks on a FIFO an agent left where it reads (SPEC §13 "Either way")."""

from __future__ import annotations

import os


def test_the_dashboards_readers_never_block_on_a_fifo(tmp_path):
    """The dashboard's watcher hashes changed files, its log view indexes a log, its snapshot reads
    the checkpoint: each on a FIFO returns nothing, at once."""
    from memento_tui.lazy_file import LineIndex
    from memento_tui.snapshot import _read_text
    from memento_tui.watcher import _digest

    fifo = tmp_path / "tick_2026-12-01T000000Z.log"
    os.mkfifo(fifo)
    assert _digest(fifo) is None and _read_text(fifo) is None
    lazy = LineIndex(fifo)
    assert list(lazy.scan()) == [] and lazy.size == 0
