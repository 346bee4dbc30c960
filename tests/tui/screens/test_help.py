"""screens/help.py: every key and what it does, as memento.toml [keys] remapped them."""

from __future__ import annotations

from tests.tui.snaps import make, press, ready


def test_help_screen(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready(press("question_mark")))
