"""The timeline reads well at 80 and 120 columns and the layout is the same from run to run.

One row per tick (a two-task tick is one row), the failure reason wrapped in
"What happened", commits without their subject, an event row that takes no
column away, the rollback patch of a failed tick next to its log. Real ticks
(tests/agents/ fakes through the `command` preset) where a tick is needed.
"""

from __future__ import annotations

import re

import pytest

from memento_core import status_log
from memento_core.tick.__main__ import run_tick
from memento_tui.app import MementoApp
from memento_tui.screens.log import LogScreen
from tests.core.scenarios.test_engine import HELLO, agent, git, make_ws
from tests.tui.pilot import screen_text, settle, strip_ws, wait_for


def timeline_text(app) -> str:
    table = app.screen.query_one("#timeline-table")
    region = table.region
    rows = screen_text(app).splitlines()[region.y:region.y + region.height]
    return "\n".join(line[region.x:region.x + region.width] for line in rows)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_failure_reasons_are_readable_and_successes_do_not_repeat_the_subject(scripted, size):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        text = timeline_text(app)
        assert "What happened" in text
        flat = strip_ws(text)
        assert "#4 14:04 T-201 ✖ BLOCKED verify failed with exit code 1: AssertionError: mul" in flat
        assert "#3 14:03 T-201 ✖ FAILED 1/3 verify failed with exit code 1: AssertionError: mul" in flat
        assert "memento: complete" not in text  # the commit id, its time and files; not the subject again
        assert "· 1m30s · 1 file" in flat


async def test_an_event_row_takes_no_column_away(scripted):
    event = status_log.format_entry("2026-11-29T14:05:00Z", 5, [
        ("Event", "⚠️ PIPELINE BLOCKED — every remaining task is blocked or waits on a blocked one"),
        ("Tasks", "T-201, T-202, T-301, T-302, T-303, T-304")])
    status_log.append_entry(scripted / "docs" / "TICK_STATUS.md", event)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = timeline_text(app)
        flat = strip_ws(text)
        assert "⚠ BLOCKED" in text and "What happened" in text
        assert "PIPELINE BLOCKED" in flat
        assert "verify failed with exit code 1: AssertionError: mul" in flat  # the task rows keep theirs
        widths = {c.key.value: c.width for c in app.screen.query_one("#timeline-table").columns.values()}
        assert widths["what"] >= 24


async def test_a_two_task_tick_is_one_row(tmp_path):
    tasks = HELLO + HELLO.replace("T-1", "T-2").replace("Write hello", "Again")
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "'done {task_id}'"), tasks=tasks)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("max_tasks_per_tick: 1", "max_tasks_per_tick: 2"))
    git(ws.root, "commit", "-qam", "two per tick")
    assert [r.passed for r in run_tick(ws.root).results] == [True, True]
    app = MementoApp(ws.root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one("#timeline-table").row_count == 1
        flat = strip_ws(timeline_text(app))
        assert "T-1,T-2" in flat and "✔ 2 passed" in flat
        assert "T-1 ✔" in flat and "T-2 ✔" in flat


async def test_the_rollback_patch_of_a_failed_tick_opens_from_its_log(tmp_path):
    ws = make_ws(tmp_path, agent("writes_big_diff.py", "other.txt", "120"))  # a tracked file
    run_tick(ws.root)  # diff too large: rolled back, the change saved under logs/rollback/
    assert list((ws.root / "logs" / "rollback").glob("*/changes.patch"))
    app = MementoApp(ws.root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "diff too large" in strip_ws(timeline_text(app))
        app.screen.query_one("#timeline-table").focus()
        await pilot.press("l")
        assert await wait_for(pilot, lambda: isinstance(app.screen, LogScreen))
        assert "p: rollback patch" in screen_text(app)
        await pilot.press("p")
        assert await wait_for(pilot, lambda: "changes.patch" in screen_text(app))
        assert await wait_for(pilot, lambda: "+line 0" in screen_text(app))


async def test_the_layout_is_the_same_from_run_to_run(scripted):
    seen = []
    for _ in range(3):
        app = MementoApp(scripted, show_clock=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            tasks = app.screen.query_one("#tasks")
            assert tasks.outer_size.width == 57  # 48 % of 120, whatever the data
            text = screen_text(app)
            bar = next(line for line in text.splitlines() if re.search(r"█.* \d/8 ", line))
            assert bar.rstrip().endswith("│")  # the count fits inside the Progress pane
            seen.append(text)
            app.start_tick()  # the tick changes the files, so the next run starts from other data
            await settle(app, pilot)
            assert await wait_for(pilot, lambda app=app: not app.ticking)
    # same widths every run: the rows differ only where the ticks changed them
    widths = [[len(line) for line in text.splitlines()] for text in seen]
    assert widths[0] == widths[1] == widths[2]
    first_rows = [text.splitlines()[13][:55] for text in seen]
    assert all("│" in row for row in first_rows)
