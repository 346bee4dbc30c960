"""What the dashboard's Pilot tests share: the screen as text, waiting for workers, picking a task, typing."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from rich.console import Console
from textual.widgets import Input

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_tui import screenshots


def screen_text(app) -> str:
    """The screen as plain text, as a person would read it (for 'shown literally' checks)."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(),
                      force_terminal=True, color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False)


async def settle(app, pilot) -> None:
    """Wait until the workers are done and the messages they posted are handled."""
    await screenshots.settle(app, pilot)
    await pilot.pause()


async def wait_for(pilot, condition: Callable[[], bool], tries: int = 100, step: float = 0.05) -> bool:
    """Let the app run until ``condition`` holds (event-driven tests, no time.sleep)."""
    for _ in range(tries):
        if condition():
            return True
        await pilot.pause(step)
    return condition()


def select_task(app, task_id: str) -> None:
    table = app.screen.query_one("#task-table")
    table.move_cursor(row=table.get_row_index(task_id), animate=False)


def strip_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def pane_text(app, selector: str) -> str:
    """What the pane ``selector`` shows on screen, its lines joined by one space (a wrapped line reads whole)."""
    region = app.screen.query_one(selector).region
    lines = screen_text(app).splitlines()[region.y:region.bottom]
    return strip_ws(" ".join(line[region.x:region.right] for line in lines))


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def write_note(app, pilot, text: str) -> None:
    """Fill the note composer's text area and send it (ctrl+enter)."""
    await pilot.pause()
    app.screen.query_one("#note-input").load_text(text)
    await pilot.press("ctrl+enter")


async def answer(app, pilot, text: str) -> None:
    """Fill the open dialog's text field and press enter (typing letter by letter is slow)."""
    await pilot.pause()
    app.screen.query_one(Input).value = text
    await pilot.press("enter")


def plan_of(root):
    return parse_plan(root / "docs" / "MASTER_PLAN.md")


def notes_of(root):
    return parse_notes(root / "docs" / "HUMAN_NOTES.md")
