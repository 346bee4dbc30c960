"""The dashboard's Report view (SPEC §15): what needs a person at the top, then the report (Pilot)."""

from __future__ import annotations

from memento_tui.app import MementoApp
from memento_tui.commands import MementoCommands
from memento_tui.screens.dashboard import DashboardScreen
from memento_tui.screens.report import ReportScreen
from tests.tui.pilot import screen_text, settle, wait_for


async def test_the_report_view_shows_needs_first_then_what_happened(scripted):
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("m")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen.doc is not None)
        await settle(app, pilot)
        text = screen_text(app)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert lines[0].startswith("Report — the last 24h")
        assert lines[1].startswith("Needs you (") and "T-201 blocked after 3 retries" in lines[2]
        # The scripted entries are from 2026-11-29: the whole history holds them.
        for _ in range(3):
            await pilot.press("w")
            await settle(app, pilot)
        assert app.screen.window == "all"
        text = screen_text(app)
        assert "Report — all the history" in text
        assert "Passed:" in text and "T-102" in text
        assert "Blocked:" in text and "T-201" in text
        assert "Failed attempts:" in text
        assert "Unread notes" in text
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, DashboardScreen)


async def test_the_palette_has_the_report(scripted):
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        provider = MementoCommands(app.screen)
        titles = [title for title, _help, _cb in provider._commands()]
        assert "Report [m]" in titles
        callback = next(cb for title, _help, cb in provider._commands() if title == "Report [m]")
        await callback()
        assert await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen))
        await settle(app, pilot)
