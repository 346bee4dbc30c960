"""Every key against real workspace files: the files change as SPEC §6 says (Pilot tests).

One app session drives several keys (a dashboard session is what a person has
too), which keeps the suite fast; every step asserts on the file it changed.
"""

from __future__ import annotations

import inspect
import threading
import tomllib

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.status_log import parse_status
from memento_tui import app as app_module
from memento_tui.app import MementoApp
from memento_tui.commands import MementoCommands
from memento_tui.keymap import ALL_KEYS
from memento_tui.screens.dialogs import AskScreen, ConfirmScreen, NoteComposer
from memento_tui.screens.diff import DiffScreen
from memento_tui.screens.help import HelpScreen
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.tasks import TaskPane
from tests.tui.pilot import answer, messages, screen_text, select_task, settle, wait_for, write_note


def plan_of(root):
    return parse_plan(root / "docs" / "MASTER_PLAN.md")


def notes_of(root):
    return parse_notes(root / "docs" / "HUMAN_NOTES.md")


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


async def test_tick_now_runs_one_tick_in_a_worker(demo, monkeypatch):
    release = threading.Event()
    real_run_tick = app_module.run_tick

    def held_tick(root):
        release.wait(timeout=30)  # the tick is "running" until the test has looked at the screen
        return real_run_tick(root)

    monkeypatch.setattr(app_module, "run_tick", held_tick)
    app = MementoApp(demo, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        assert app.ticking
        text = screen_text(app)
        assert "TICK RUNNING" in text and "◐ RUNNING" in text  # the UI is live while the worker runs
        await pilot.press("t")  # a second press while running does not start another
        await pilot.pause()
        assert any("already running" in m for m in messages(app))
        release.set()
        await settle(app, pilot)
        assert not app.ticking
        assert app.last_outcome is not None and app.last_outcome.exit_code == 0
        assert "TICK RUNNING" not in screen_text(app)
    assert [e.task_id for e in parse_status(demo / "docs" / "TICK_STATUS.md")] == ["T-101"]
    assert plan_of(demo).task("T-101").status == "x"


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


async def test_keys_are_remapped_from_memento_toml(scripted):
    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\npause = "f6"\nnot_an_action = "z"\n')
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert any("not_an_action" in m for m in messages(app))
        await pilot.press("p")  # no longer pause
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "auto"
        await pilot.press("f6")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "paused"


async def test_auto_tick_counts_down_and_reschedules_after_the_tick(demo):
    now = [1000.0]
    app = MementoApp(demo, auto_tick=True, auto_interval=30, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.next_tick_at == 1030.0
        now[0] = 1010.0
        app.every_second()
        assert "next tick: in 20s" in screen_text(app)
        now[0] = 1031.0
        app.every_second()
        assert app.ticking and app.next_tick_at is None  # no countdown while the tick runs
        await settle(app, pilot)
        assert not app.ticking
        assert app.next_tick_at == 1061.0  # rescheduled only after the tick finished
        await pilot.press("o")
        assert not app.auto_tick and app.next_tick_at is None
        now[0] = 2000.0
        app.every_second()
        assert not app.ticking
    assert [e.task_id for e in parse_status(demo / "docs" / "TICK_STATUS.md")] == ["T-101"]


async def test_command_palette_runs_every_action(scripted):
    """The palette lists every action; choosing one runs the same action as its key."""
    app = MementoApp(scripted, show_clock=False)

    async def run(pilot, title: str) -> None:
        provider = MementoCommands(app.screen)
        hits = [hit async for hit in provider.search(title)]
        assert hits, title
        result = max(hits, key=lambda hit: hit.score).command()
        if inspect.isawaitable(result):  # the palette awaits it the same way (call_later)
            await result
        await pilot.pause()

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        # once through the real palette: ctrl+p, type, enter
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"pause")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: plan_of(scripted).meta.tick_mode == "paused")

        provider = MementoCommands(app.screen)
        listed = [hit.text async for hit in provider.discover()]
        assert len(listed) == len(ALL_KEYS)
        # Each entry once, its single-letter key shown literally (not read as markup).
        assert "Reset [r]" in listed and "Skip [s]" in listed and "Help [?]" in listed
        await run(pilot, "Resume [")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "auto"
        await run(pilot, "Stop [")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "stopped"
        select_task(app, "T-201")
        await run(pilot, "Reset [")
        await settle(app, pilot)
        assert plan_of(scripted).task("T-201").status == " "
        select_task(app, "T-202")
        await run(pilot, "Skip [")
        await answer(app, pilot, "later")
        await settle(app, pilot)
        assert plan_of(scripted).task("T-202").reason == "later"
        select_task(app, "T-301")
        await run(pilot, "Note [")
        await write_note(app, pilot, "via palette")
        await settle(app, pilot)
        assert {n.text: n.target for n in notes_of(scripted)}["via palette"] == "T-301"
        await run(pilot, "Interval [")
        await answer(app, pilot, "90s")
        await settle(app, pilot)
        assert tomllib.loads((scripted / "memento.toml").read_text())["schedule"]["every"] == "90s"
        await run(pilot, "Filter [")
        assert app.screen.query_one(TaskPane).filter == "Pending"
        await run(pilot, "Ack [")
        await settle(app, pilot)
        assert any("acknowledge" in m for m in messages(app)), messages(app)
        await run(pilot, "Tick [")
        await settle(app, pilot)
        assert app.last_outcome is not None  # stopped: the tick ran and skipped
        await run(pilot, "Auto [")
        assert app.auto_tick
        select_task(app, "T-201")
        await run(pilot, "Log [")
        assert isinstance(app.screen, LogScreen)
        await pilot.press("escape")
        await run(pilot, "Help [")
        assert isinstance(app.screen, HelpScreen)


async def test_quit_during_a_tick_waits_on_screen_until_it_finishes(scripted):
    from memento_tui.messages import TickFinished

    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.ticking = True  # as while a tick worker runs
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.quit_requested
        assert any("closes when it has finished" in n.message for n in app._notifications)
        app.post_message(TickFinished(None, "done"))
        assert await wait_for(pilot, lambda: not app.is_running)
