"""The App's shared state (ticking, auto_tick, next_tick_at, now, snapshot) reaches the widgets that watch it.

Each step sets one of the App's reactives, as the App itself does, and checks
what the screen shows; nothing here calls a widget.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from textual.widgets import Button

from memento_tui.app import MementoApp
from memento_tui.snapshot import NOTES
from tests.tui.pilot import screen_text, settle

PACKAGE = Path(__file__).resolve().parents[2] / "memento_tui"
NOTE = "Use integer division only"  # the start of a pending note of the scripted workspace


async def test_a_running_tick_shows_in_the_header_the_timeline_and_the_tick_button(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        button = app.screen.query_one("#btn-tick", Button)
        text = screen_text(app)
        assert "TICK RUNNING" not in text and "◐ RUNNING" not in text and "Tick now" in text
        assert not button.disabled

        app.ticking = True  # what start_tick does before the worker runs
        await pilot.pause()
        text = screen_text(app)
        assert "⟳ TICK RUNNING" in text and "next tick: now (running)" in text
        assert "◐ RUNNING" in text  # the timeline's first row
        assert "Ticking…" in text and "Tick now" not in text and button.disabled

        app.ticking = False
        await pilot.pause()
        text = screen_text(app)
        assert "TICK RUNNING" not in text and "◐ RUNNING" not in text
        assert "Tick now" in text and not button.disabled


async def test_auto_tick_and_the_countdown_reach_the_header_and_the_controls(scripted):
    now = [500.0]
    app = MementoApp(scripted, watch=False, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        # Nothing will tick: the header says so, not RUNNING with a "manual" next tick.
        assert "● IDLE nothing will tick (no cron entry, auto-tick off)" in text and "Auto-tick: off" in text
        assert "RUNNING" not in text and "next tick" not in text

        app.auto_tick = True  # on, nothing scheduled yet
        await pilot.pause()
        text = screen_text(app)
        assert "next tick: soon" in text and "Auto-tick: on" in text

        app.next_tick_at = 590.0
        await pilot.pause()
        assert "next tick: in 1m 30s" in screen_text(app)

        now[0] = 545.0
        app.every_second()  # the once-a-second beat moves app.now
        await pilot.pause()
        text = screen_text(app)
        assert app.now == 545.0 and not app.ticking  # not due yet
        assert "next tick: in 45s" in text and "up 45s" in text

        app.auto_tick = False
        app.next_tick_at = None
        await pilot.pause()
        text = screen_text(app)
        assert "● IDLE nothing will tick" in text and "Auto-tick: off" in text


async def test_a_new_snapshot_redraws_the_header_and_the_panes_whose_files_were_read(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#tabs").active = "tab-notes"
        await pilot.pause()
        snap = app.snapshot
        assert NOTE in screen_text(app) and "⚠ alert" not in screen_text(app)

        # Nothing read again: the notes pane keeps what it shows; the header shows the alert.
        app.snapshot = replace(snap, notes=(), alert=True, parts_read=frozenset())
        await pilot.pause()
        text = screen_text(app)
        assert "⚠ alert" in text and NOTE in text

        app.snapshot = replace(snap, notes=(), parts_read=frozenset({NOTES}))
        await pilot.pause()
        text = screen_text(app)
        assert NOTE not in text and "no pending notes" in text and "⚠ alert" not in text


def test_screens_and_widgets_never_import_the_app():
    """They see the App through app_state.AppState; an import of app.py (even deferred) is a cycle."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                prefix = module if module.endswith(".") else module + "."
                names = [module] + [prefix + a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n in ("..app", "memento_tui.app") or n.startswith(("..app.", "memento_tui.app."))
                   for n in names):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []
