"""Snapshot tests (pytest-textual-snapshot): the main view and the detail, log, diff and notes views.

The workspace is the scripted one: fixed dates, fixed commit ids, the clock
hidden, no temporary path on screen. Update the baselines with
`pytest tests/tui --snapshot-update` after a deliberate change, and look at them.
"""

from __future__ import annotations

from textual.pilot import Pilot

from memento_tui.app import MementoApp
from tests.tui.pilot import select_task, settle


def make(root) -> MementoApp:
    return MementoApp(root, show_clock=False, watch=False)


def ready(*steps):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app, pilot)
        for step in steps:
            result = step(app)
            if result is not None:
                await result
            await settle(app, pilot)

    return run_before


def on_task(task_id):
    return lambda app: select_task(app, task_id)


def press(*keys):
    async def run(app):
        await Pilot(app).press(*keys)

    return run


def test_main_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready())


def test_main_view_80x24(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(80, 24), run_before=ready())


def test_blocked_task_expanded(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40),
                        run_before=ready(on_task("T-201"), press("enter")))


def test_log_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-201"), press("l")))


def test_diff_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-102"), press("d")))


def test_notes_composer(scripted, snap_compare):
    def fill(app):
        area = app.screen.query_one("#note-input")
        area.cursor_blink = False  # a blinking cursor would differ from run to run
        area.load_text("Use [bold]exact[/bold] integers\nand keep the remainder")

    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-201"), press("n"), fill))


def test_notes_tab(scripted, snap_compare):
    def notes_tab(app):
        app.screen.query_one("#tabs").active = "tab-notes"

    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready(notes_tab))


def test_help_screen(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready(press("question_mark")))


def test_main_view_with_pull_requests(scripted, snap_compare):
    """Each phase's pull request beside its bar, a failing check under "Needs you" (SPEC §19)."""
    from tests.tui.widgets.test_progress import with_pulls

    with_pulls(scripted)
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready())
