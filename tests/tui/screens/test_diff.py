"""screens/diff.py: a commit's diff, read in a worker, shown with its stat and patch."""

from __future__ import annotations

from tests.tui.snaps import make, on_task, press, ready


def test_diff_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-102"), press("d")))
