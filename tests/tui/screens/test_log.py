"""screens/log.py: a tick's log in the lazy viewer, following a running tick, and its own help."""

from __future__ import annotations

from memento_core.locks import atomic_write_text
from memento_tui.app import MementoApp
from memento_tui.screens.help import HelpScreen
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.log_view import LazyLog
from tests.tui.pilot import screen_text, settle, wait_for
from tests.tui.snaps import make, on_task, press, ready


async def test_the_log_screen_stops_following_when_the_tick_ends_and_keeps_reading(scripted):
    log = scripted / "logs" / "tick_2026-11-29T140400Z.log"
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.ticking = True
        app.push_screen(LogScreen(log, "logs/tick_2026-11-29T140400Z.log (running)", follow=True))
        await settle(app, pilot)
        assert "(running)" in screen_text(app) and "following" in screen_text(app)
        app.ticking = False
        await settle(app, pilot)
        text = screen_text(app)
        assert "(running)" not in text and "following" not in text
        # Not following: the file still grows on screen (no freeze), the view stays where it is.
        before = app.screen.query_one(LazyLog).line_count
        atomic_write_text(log, log.read_text() + "one more line\n")
        assert await wait_for(pilot, lambda: app.screen.query_one(LazyLog).line_count == before + 1)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Log screen — keys" in screen_text(app) and "rollback patch" in screen_text(app)


def test_log_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-201"), press("l")))
