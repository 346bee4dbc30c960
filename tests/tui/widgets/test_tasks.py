"""widgets/tasks.py: the task pane shows what it is for (issue 38, item 16): titles whole at 120 columns, an
empty filter that says so, the selected row in view at 80x24, what a task waits on (`depends:`), its review
verdicts (SPEC §16) and a blocked task's detail."""

from __future__ import annotations

import pytest

from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_tui.app import MementoApp
from memento_tui.widgets.tasks import TaskPane
from tests.tui.pilot import screen_text, select_task, settle, strip_ws
from tests.tui.snaps import make, on_task, press, ready


def pane_lines(app) -> list[str]:
    pane = app.screen.query_one("#tasks")
    lines = screen_text(app).splitlines()[pane.region.y:pane.region.bottom]
    return [ln[pane.region.x:pane.region.right] for ln in lines]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_titles_up_to_27_characters_are_whole(demo, size):
    tasks = parse_plan(demo / "docs" / "MASTER_PLAN.md").tasks
    assert len([t for t in tasks if len(t.title) <= 27]) >= 7
    app = MementoApp(demo, show_clock=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        lines = pane_lines(app)
        rows = {t.id: next((ln for ln in lines if f" {t.id} " in ln), None) for t in tasks}
        assert sum(row is not None for row in rows.values()) >= (8 if size[1] >= 40 else 4)  # rows on screen
        cut = [t.title for t in tasks if rows[t.id] is not None and len(t.title) <= 27 and t.title not in rows[t.id]]
        assert not cut, f"cut at {size}: {cut}\n" + "\n".join(lines)


async def test_an_empty_filter_says_so(demo):
    app = MementoApp(demo, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for _ in range(3):  # All → Pending → Done → Blocked: the demo has none blocked
            await pilot.press("f")
        await pilot.pause()
        shown = " ".join(" ".join(pane_lines(app)).split())
        assert "filter: Blocked" in shown and "No blocked tasks (8 in the plan; f: the next filter)." in shown
        await pilot.press("f")  # All again: the rows, no message
        await pilot.pause()
        shown = " ".join(" ".join(pane_lines(app)).split())
        assert "No blocked tasks" not in shown and "T-101" in shown


async def test_enter_at_80x24_keeps_the_selected_task_in_view(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-304")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.query_one("#tasks").has_class("-expanded")
        assert any("○  T-304" in line for line in screen_text(app).splitlines())  # the row, not the detail


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


def test_blocked_task_expanded(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40),
                        run_before=ready(on_task("T-201"), press("enter")))
