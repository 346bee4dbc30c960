"""commands.py: the command palette (ctrl+p) lists every dashboard action once, with its key, and runs it."""

from __future__ import annotations

import inspect
import tomllib

from memento_tui.app import MementoApp
from memento_tui.commands import MementoCommands
from memento_tui.keymap import ALL_KEYS
from memento_tui.screens.dialogs import ConfirmScreen
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


async def test_the_palette_keeps_key_hints_and_lists_each_entry_once(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        assert await wait_for(pilot, lambda: "Reset [r]" in screen_text(app))
        text = screen_text(app)
        assert "Skip [s]" in text and "Note [n]" in text
        assert text.count("reset the selected task's retries") == 1
        await pilot.press(*"reset")
        assert await wait_for(pilot, lambda: "Reset [r]" in screen_text(app))  # search results too
        hits = [hit async for hit in MementoCommands(app.screen).search("skip")]
        assert any(hit.text == "Skip [s]" for hit in hits)
