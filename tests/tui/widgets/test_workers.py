"""The dashboard shows each running worker (task, stage, elapsed) and follows its live log (SPEC §12).

A real tick runs two parallel workers (held by the fake agent until the test
says go); the dashboard reads their claims and logs like any other file.
"""

from __future__ import annotations

import subprocess

import pytest

from memento_tui.app import MementoApp
from memento_tui.snapshot import PLAN
from memento_tui.widgets.workers import WorkersPane
from tests.core.tick.test_workers import make_parallel_ws, start_tick, started
from tests.core.tick.test_workers import wait_for as wait_until
from tests.tui.pilot import screen_text, wait_for


@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "NO_COLOR"])
async def test_running_workers_and_their_live_log(tmp_path, git_env, monkeypatch, no_color):
    """NO_COLOR=1 puts Textual's monochrome filter on every line, the live worker log's too (issue 25:
    it raised AttributeError on the log's unstyled segments)."""
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    ids = ["T-1", "T-2"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    (scratch / "hold").write_text("")
    tick = start_tick(ws)
    try:
        wait_until(lambda: started(scratch, ids))
        app = MementoApp(ws.root, show_clock=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.screen.query_one(WorkersPane)
            assert await wait_for(pilot, lambda: len(pane.running) == 2, tries=200)
            # The pane's data can be there a frame before the screen shows it: wait for the screen.
            assert await wait_for(pilot, lambda: "Workers (2 running)" in screen_text(app), tries=200)
            text = screen_text(app)
            for tid in ids:
                assert f"{tid}  running" in text and f".memento/worktrees/{tid}" in text
            first = pane.running[0]["task"]
            assert await wait_for(pilot, lambda: f"{first} started in" in screen_text(app), tries=200)
            pane.action_next_worker()
            other = pane.running[1]["task"]
            assert await wait_for(pilot, lambda: f"{other} started in" in screen_text(app), tries=200)
            (scratch / "go").write_text("")
            tick.wait(timeout=120)
            app.request_refresh({PLAN})  # what the file watcher does when the plan changes
            assert await wait_for(pilot, lambda: pane.has_class("-empty"), tries=400)
            assert app.is_running
        assert app.return_code in (None, 0)
    finally:
        (scratch / "go").write_text("")
        if tick.poll() is None:
            tick.kill()
        tick.communicate()
    assert subprocess.run(["git", "status"], cwd=ws.root, capture_output=True).returncode == 0
