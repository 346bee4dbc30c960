"""widgets/controls.py: each button runs the same action as its key, against the real files, and the
buttons say the interval and who ticks: the dashboard's auto-tick or a cron entry (Pilot)."""

from __future__ import annotations

from textual.widgets import Button

from memento_core import cron
from memento_core.plan.scan import parse_plan
from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import ConfirmScreen
from tests.tui.pilot import screen_text, settle, wait_for
from tests.tui.scenarios.test_truth import fake_proc


def mode(root) -> str:
    return parse_plan(root / "docs" / "MASTER_PLAN.md").meta.tick_mode


async def test_pause_resume_and_stop_buttons_change_the_plan(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.click("#btn-pause")
        await settle(app, pilot)
        assert mode(scripted) == "paused" and "PAUSED" in screen_text(app).splitlines()[0]
        await pilot.click("#btn-resume")
        await settle(app, pilot)
        assert mode(scripted) == "auto"
        await pilot.click("#btn-stop")  # asks first, as x does
        assert await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(app, pilot)
        assert mode(scripted) == "stopped" and "STOPPED" in screen_text(app).splitlines()[0]


async def test_the_auto_tick_button_and_the_interval_it_shows(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        auto = app.screen.query_one("#btn-auto", Button)
        assert "Every 1min" in screen_text(app) and str(auto.label) == "Auto-tick: off"
        await pilot.click("#btn-auto")
        await settle(app, pilot)
        assert app.auto_tick and str(auto.label) == "Auto-tick: on" and "Auto-tick: on" in screen_text(app)
        await pilot.click("#btn-auto")
        await settle(app, pilot)
        assert not app.auto_tick and str(auto.label) == "Auto-tick: off"


async def test_a_running_cron_entry_takes_the_auto_tick_button(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tmp_path / "crontab"))
    (tmp_path / "crontab").write_text("")
    cron.install(scripted, "5min")
    monkeypatch.setenv(cron.PROC_ENV, str(fake_proc(tmp_path, daemon=True)))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        auto = app.screen.query_one("#btn-auto", Button)
        assert str(auto.label) == "cron on" and auto.disabled
        assert "cron on" in screen_text(app)
        await pilot.click("#btn-auto")
        await settle(app, pilot)
        assert not app.auto_tick  # a disabled button runs nothing: cron ticks
