"""screens/dashboard.py: every key against real workspace files; the files change as SPEC §6 says (Pilot
tests), and the main view as a snapshot.

One app session drives several keys (a dashboard session is what a person has
too), which keeps the suite fast; every step asserts on the file it changed.
"""

from __future__ import annotations

import tomllib

from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import AskScreen, ConfirmScreen, NoteComposer
from memento_tui.screens.diff import DiffScreen
from memento_tui.screens.help import HelpScreen
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.tasks import TaskPane
from tests.tui.pilot import (
    answer,
    messages,
    notes_of,
    plan_of,
    screen_text,
    select_task,
    settle,
    wait_for,
    write_note,
)
from tests.tui.snaps import make, ready


async def test_task_keys_reset_skip_note_filter_expand(scripted):
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        # r: [!] → [ ] with retries 0
        select_task(app, "T-201")
        assert "BLOCKED 3/3" in screen_text(app)
        await pilot.press("r")
        await settle(app, pilot)
        task = plan_of(scripted).task("T-201")
        assert (task.status, task.retries) == (" ", 0)
        assert "BLOCKED 3/3" not in screen_text(app)  # the table followed the file

        # s asks for a reason; escape cancels and changes nothing
        before = (scripted / "docs" / "MASTER_PLAN.md").read_bytes()
        select_task(app, "T-202")
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert (scripted / "docs" / "MASTER_PLAN.md").read_bytes() == before
        await pilot.press("s")
        await answer(app, pilot, "not needed")
        await settle(app, pilot)
        task = plan_of(scripted).task("T-202")
        assert (task.status, task.reason) == ("-", "not needed")

        # n: a note to the selected task, or a global one
        select_task(app, "T-301")
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteComposer)
        await write_note(app, pilot, "print a newline")
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        app.screen.query_one("#target-global").value = True
        await write_note(app, pilot, "for everyone")
        await settle(app, pilot)
        targets = {n.text: n.target for n in notes_of(scripted)}
        assert targets["print a newline"] == "T-301"
        assert targets["for everyone"] == "global"

        # f cycles All / Pending / Done / Blocked
        table = app.screen.query_one("#task-table")
        counts = [table.row_count]
        for _ in range(4):
            await pilot.press("f")
            await pilot.pause()
            counts.append(table.row_count)
        assert counts == [8, 5, 3, 0, 8]  # T-201 reset and T-202 skipped above

        # enter expands the task: fields, last result, error tail, retries
        select_task(app, "T-201")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.query_one(TaskPane).expanded
        text = screen_text(app)
        assert "last result: BLOCKED" in text and "AssertionError: mul" in text
        assert "retries 0/3" in text, text
        await pilot.press("enter")
        await pilot.pause()
        assert not app.screen.query_one(TaskPane).expanded


async def test_pipeline_keys_at_80x24(scripted):
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "paused"
        assert "PAUSED" in screen_text(app)
        await pilot.press("space")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "auto"
        # x asks to confirm: n keeps running, y stops
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "auto"
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "stopped"
        assert "STOPPED" in screen_text(app)

        # r works at this size too
        select_task(app, "T-201")
        await pilot.press("r")
        await settle(app, pilot)
        assert plan_of(scripted).task("T-201").status == " "

        # i: the interval, written to memento.toml (comments kept); a bad value is an error
        await pilot.press("i")
        await pilot.pause()
        field = app.screen.query_one("#ask-input")
        assert field.value == "1min"
        field.value = "soon"
        await pilot.press("enter")
        await settle(app, pilot)
        assert any("[schedule] every" in m for m in messages(app))
        assert tomllib.loads((scripted / "memento.toml").read_text())["schedule"]["every"] == "1min"
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#ask-input").value = "2min"
        await pilot.press("enter")
        await settle(app, pilot)
        text = (scripted / "memento.toml").read_text()
        assert tomllib.loads(text)["schedule"]["every"] == "2min"
        assert text.startswith("# memento.toml for the demo")

        # a: acknowledge unsurfaced results (through memento_core.checkpoint)
        await pilot.press("a")
        await settle(app, pilot)
        assert any("acknowledged" in m for m in messages(app))

        # ? shows the help; q quits
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_log_diff_and_help(scripted):
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-201")
        await pilot.press("l")
        await settle(app, pilot)
        assert isinstance(app.screen, LogScreen)
        assert "AssertionError: mul" in screen_text(app)
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, LogScreen))
        select_task(app, "T-102")
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen)
        assert "def mul(a, b):" in screen_text(app)
        await pilot.press("question_mark")  # the diff screen's own keys, not the dashboard's
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Diff screen — keys" in screen_text(app) and "reset the selected task" not in screen_text(app)
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, DiffScreen))
        # the timeline: newest tick first; enter opens its log
        app.screen.query_one("#timeline-table").focus()
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, LogScreen)
        assert app.screen.path.name == "tick_2026-11-29T140400Z.log"
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, LogScreen))
        await pilot.press("d")  # that tick was rolled back: nothing to diff, said so
        await pilot.pause()
        assert any("no commit" in m for m in messages(app))
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        for action in ("reset", "skip", "note", "pause", "resume", "stop", "tick", "interval", "auto_tick",
                       "filter", "expand", "log", "diff", "acknowledge", "help", "quit"):
            assert action in text


async def test_tabs_are_reachable_with_1_to_4(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tabs = app.screen.query_one("#tabs")
        for key, tab in (("2", "tab-notes"), ("3", "tab-continuity"), ("4", "tab-memory"), ("1", "tab-timeline")):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab


def test_main_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready())


def test_main_view_80x24(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(80, 24), run_before=ready())
