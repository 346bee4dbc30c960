"""The dashboard shows what a task waits on (`depends:`) and a task's review verdicts (SPEC §16)."""

from __future__ import annotations

from memento_core.plan import edit_plan
from memento_tui.app import MementoApp
from memento_tui.widgets.tasks import TaskPane

from .conftest import screen_text, select_task, settle


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
