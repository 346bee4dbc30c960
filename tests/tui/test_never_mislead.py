"""Issue 25, what a person sees: the dashboard never loses a keystroke, never moves the selection
under a person's hands, uses the terminal's real size, and never says two contrary things.

Each test drives the real App through Pilot (or a real terminal for the size) and reads
the files or the screen's text afterwards.
"""

from __future__ import annotations

from textual import events

from memento_core.notes import parse_notes
from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import NoteComposer

from .conftest import screen_text, select_task, settle, wait_for

LONG = ("Please keep evaluate() to one binary operation, and when you touch the parser, "
        "write a test for every operator first: + - * / with ints and floats, then spaces. END-OF-NOTE")


def _notes_for(root, target: str) -> list[str]:
    return [n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md") if n.target == target]


async def test_a_long_note_typed_fast_and_sent_at_once_with_f2_is_kept_whole(scripted):
    """The keys arrive in one burst (a fast typist, a terminal's paste without bracketing): F2 comes last."""
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-202")
        await pilot.press("n")
        assert await wait_for(pilot, lambda: isinstance(app.screen, NoteComposer))
        for ch in LONG:
            app.post_message(events.Key(ch if ch != " " else "space", ch))
        app.post_message(events.Key("f2", None))
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: not isinstance(app.screen, NoteComposer))
        await settle(app, pilot)
        assert _notes_for(scripted, "T-202")[-1] == LONG


async def test_a_pasted_note_sent_at_once_with_f2_is_kept_whole(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-202")
        await pilot.press("n")
        assert await wait_for(pilot, lambda: isinstance(app.screen, NoteComposer))
        app.post_message(events.Paste(LONG + "\nsecond line"))
        app.post_message(events.Key("f2", None))
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: not isinstance(app.screen, NoteComposer))
        await settle(app, pilot)
        assert _notes_for(scripted, "T-202")[-1] == LONG + "\nsecond line"


def _block_the_last_task(root) -> None:
    from memento_core.plan import edit_plan

    def apply(e) -> None:
        e.set_status("T-304", "!")
        e.set_field("T-304", "retries", "3")
        e.update_counters()

    edit_plan(root / "docs" / "MASTER_PLAN.md", apply)


async def test_r_on_the_blocked_last_row_keeps_the_selection_and_s_skips_that_task(scripted):
    from memento_core.plan import parse_plan

    from memento_tui.screens.dialogs import AskScreen

    _block_the_last_task(scripted)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one("TaskPane")
        select_task(app, "T-304")
        assert pane.selected_id() == "T-304"
        await pilot.press("r")
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-304").status == " "
        assert pane.selected_id() == "T-304"
        await pilot.press("s")
        assert await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
        assert "Skip T-304:" in screen_text(app)
        await pilot.press(*"not needed", "enter")
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-304").status == "-"
        assert pane.selected_id() == "T-304"
        # A blocked row in the middle (T-201, two lines high) too.
        select_task(app, "T-201")
        await pilot.press("r")
        await settle(app, pilot)
        assert pane.selected_id() == "T-201"


def test_a_real_120x40_terminal_wins_over_exported_columns_and_lines(scripted):
    """COLUMNS=160 LINES=50 left by an earlier shell: the screen is the terminal's 120x40 all the same."""
    import re

    from memento_core.plan import parse_plan

    from .pty_screen import PtyDashboard

    plan = parse_plan(scripted / "docs" / "MASTER_PLAN.md")
    phases = [p.id for p in plan.phases]
    done = sum(t.status == "x" for t in plan.tasks)
    dashboard = PtyDashboard(scripted, (120, 40), {"COLUMNS": "160", "LINES": "50"})
    try:
        def complete(text: str) -> bool:
            return f"{done}/{len(plan.tasks)}" in text and all(
                re.search(rf"{re.escape(name)} .*\d+%", text) for name in phases)

        text = dashboard.read_until(lambda t: complete(t) and "Quit" in t)
    finally:
        dashboard.close()
    assert complete(text), text
    lines = text.splitlines()
    progress = next(line for line in lines if "Progress" in line)
    assert progress.rstrip().endswith("╮") and len(progress.rstrip()) == 120, progress
    assert "Quit" in lines[39], lines[39]  # the footer is on the terminal's last line, not the 50th


LONG_TITLE = "Factor numbers with a quantum computer, then explain every step in the usage notes"


async def test_cut_titles_end_in_an_ellipsis_and_progress_is_as_tall_as_controls(scripted):
    from memento_core.locks import atomic_write_text

    plan = scripted / "docs" / "MASTER_PLAN.md"
    atomic_write_text(plan, plan.read_text().replace("Factor numbers with a quantum computer", LONG_TITLE))
    for size in ((100, 30), (120, 40), (160, 50)):
        app = MementoApp(scripted, show_clock=False, watch=False)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            text = screen_text(app)
            row = next(line for line in text.splitlines() if "T-304" in line and "│" in line)
            title = row.split("Phase 3", 1)[1].split("│")[0].strip()
            assert title.endswith("…") and LONG_TITLE.startswith(title[:-1]), (size, row)
            controls, progress = (app.screen.query_one(s).region for s in ("#controls", "#progress"))
            assert progress.height >= controls.height and progress.y == controls.y, (size, controls, progress)
