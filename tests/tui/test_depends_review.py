"""The dashboard shows what a task waits on (`depends:`) and a task's review verdicts (SPEC §16)."""

from __future__ import annotations

from memento_core.plan.edits import edit_plan
from memento_tui.app import MementoApp
from memento_tui.widgets.tasks import TaskPane
from tests.tui.pilot import screen_text, select_task, settle, strip_ws


async def test_task_table_and_detail_show_waits_on(scripted):
    # T-202 waits on the blocked T-201
    edit_plan(scripted / "docs" / "MASTER_PLAN.md", lambda e: e.set_field("T-202", "depends", "T-201"))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "waits on T-201" in text
        select_task(app, "T-202")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.query_one(TaskPane).expanded
        text = screen_text(app)
        assert "waits on: T-201" in text


async def test_task_detail_shows_the_review_verdicts(tmp_path, git_env):
    from tests.core.cli.test_output import memento
    from tests.core.tick.test_review import make_ws

    ws, _ = make_ws(tmp_path, "fail-once")
    for _ in range(2):  # FAIL (2/3), then PASS (3/3); in a process of its own (the tick's threads)
        assert memento("tick", str(ws.root)).returncode == 0
    app = MementoApp(ws.root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-1")
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "Review: PASS (3/3 criteria)" in text  # the last result's field
        app.screen.query_one("#task-detail-scroll").scroll_end(animate=False)
        await pilot.pause()
        text = strip_ws(screen_text(app).replace("│", " "))
        assert "reviews (3 criteria):" in text and "#2 PASS (3/3 criteria)" in text
        assert "#1 FAIL (2/3 criteria) — criterion 1 (hello.txt says done) not met" in text
