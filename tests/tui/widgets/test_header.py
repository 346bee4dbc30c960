"""widgets/header.py: the one header line: the host when the project is worked by a fleet (SPEC §12), a tick
another process runs (its claims), and how long the dashboard has been up."""

from __future__ import annotations

from dataclasses import replace

from memento_core.config.model import Config
from memento_core.workspace import Workspace
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


async def test_a_tick_another_process_runs_and_the_uptime_are_in_the_header(scripted):
    now = [1000.0]
    app = MementoApp(scripted, watch=False, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        first = screen_text(app).splitlines()[0]
        assert "TICK RUNNING" not in first and "up 0s" in first
        claims = Workspace(scripted).claims_dir
        claims.mkdir(parents=True, exist_ok=True)
        (claims / "T-202.json").write_text("{}")  # a cron tick's claim: not this dashboard's tick
        now[0] += 3_900
        app.every_second()
        app.request_refresh({"state"})
        await settle(app, pilot)
        first = screen_text(app).splitlines()[0]
        assert "● RUNNING" in first and "⟳ TICK RUNNING T-202" in first and "up 1h 05m" in first, first
        assert not app.ticking

