"""widgets/log_view.py: the lazy viewer follows a growing log, and stops following on F."""

from __future__ import annotations

from memento_tui.app import MementoApp
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.log_view import LazyLog
from tests.tui.pilot import screen_text, settle, wait_for


async def test_follow_shows_lines_as_they_are_appended(scripted):
    log = scripted / "logs" / "tick_live.log"
    log.write_text("".join(f"line {i}\n" for i in range(200)))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await app.push_screen(LogScreen(log, "logs/tick_live.log", follow=True))
        await pilot.pause()
        view = app.screen.query_one(LazyLog)
        assert await wait_for(pilot, lambda: view.line_count == 200 and "line 199" in screen_text(app))
        with log.open("a") as fh:
            fh.write("appended while following\n")
        assert await wait_for(pilot, lambda: "appended while following" in screen_text(app))
        assert view.line_count == 201
        await pilot.press("F")  # stop following
        await pilot.pause()
        assert not view.follow
        await pilot.press("home")
        assert await wait_for(pilot, lambda: "line 0" in screen_text(app))
