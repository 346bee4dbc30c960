""""Needs you" never cuts its own advice, and a blocked task is on screen (issue 38, item 7).

At 120 columns the blocked task's line ended `→ fix it, then reset…` (README's
screenshot showed it); at 80x24 the blocked task was below the four rows the
task table shows. The advice is whole at both sizes (the reason gives way), and
a task that blocks takes the selection, in view, so `r`/`s` act on it.
"""

from __future__ import annotations

import pytest

from memento_core.plan.edits import edit_plan
from memento_tui.app import MementoApp
from tests.tui.pilot import screen_text, settle

ADVICE = "→ fix it, then reset (r) or skip (s)"
LATE = "T-304"  # the demo's last task


@pytest.fixture
def late_block(demo):
    """The demo with every task done but its last, blocked after 3 retries."""
    def apply(e):
        for task in e.plan.tasks:
            e.set_status(task.id, "!" if task.id == LATE else "x")
        e.set_field(LATE, "retries", "3")
    edit_plan(demo / "docs" / "MASTER_PLAN.md", apply)
    return demo


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_advice_is_whole_and_the_blocked_task_in_view(late_block, size):
    app = MementoApp(late_block, show_clock=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.pause()
        lines = screen_text(app).splitlines()
        blocked = next(ln for ln in lines if "Needs you" in ln)
        assert f"{LATE} blocked" in blocked and blocked.rstrip().endswith(ADVICE)
        table = app.screen.query_one("#task-table")
        tasks_pane = [ln for ln in lines[table.region.y:table.region.bottom]]
        assert any(f"✖  {LATE}" in ln and "BLOCKED 3/3" in ln for ln in tasks_pane), "\n".join(tasks_pane)
        assert app.screen.query_one("#tasks").selected_id() == LATE
