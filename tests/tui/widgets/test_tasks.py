"""The task pane shows what it is for (issue 38, item 16): titles whole at 120 columns, and an
empty filter says so rather than show a blank table."""

from __future__ import annotations

import pytest

from memento_core.plan.scan import parse_plan
from memento_tui.app import MementoApp
from tests.tui.pilot import screen_text, settle


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
