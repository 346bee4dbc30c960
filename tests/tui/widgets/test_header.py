"""The header names this host when the project is worked by a fleet (SPEC §12)."""

from __future__ import annotations

from dataclasses import replace

from memento_core.config.model import Config
from memento_tui.app import MementoApp
from tests.tui.pilot import screen_text, settle


async def test_the_header_names_the_host_only_with_a_remote(scripted, monkeypatch):
    monkeypatch.delenv("MEMENTO_HOST", raising=False)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "@" not in screen_text(app).splitlines()[0]
        snap = app.snapshot
        app.snapshot = replace(snap, config=Config(workers_remote="origin", workers_host="[b]runner-7"),
                               parts_read=frozenset())
        await pilot.pause()
        first = screen_text(app).splitlines()[0]
        assert "@[b]runner-7" in first  # literal text, never markup
