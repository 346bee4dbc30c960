"""Markup in titles and notes, and escape sequences in logs, are shown literally on every screen and
never crash (literal.py's own tests are in tests/tui/test_literal.py)."""

from __future__ import annotations

from memento_core.notes import add_note
from memento_core.plan.edits import edit_plan
from memento_tui.app import MementoApp
from memento_tui.screens.log import LogScreen
from tests.tui.conftest import FIXED_NOW, HOSTILE
from tests.tui.pilot import screen_text, select_task, settle
from tests.tui.test_literal import ESCAPES


async def test_hostile_titles_notes_and_logs_are_literal(scripted):
    plan = scripted / "docs" / "MASTER_PLAN.md"
    title = " ".join(HOSTILE)

    def retitle(e):
        line = e.plan.task("T-202").line
        text = e.doc.lines[line - 1]
        e.doc.lines[line - 1] = text.replace("Evaluate simple expressions", title)
        e._plan = None

    edit_plan(plan, retitle)
    for text in HOSTILE:
        add_note(scripted / "docs" / "HUMAN_NOTES.md", f"note {text} end", target="T-202", now=FIXED_NOW)
    log = scripted / "logs" / "tick_2026-11-29T140400Z.log"
    log.write_text(f"before\n{ESCAPES}\n[bold red]not bold[/] [link=file:///etc/passwd]x[/link]\nafter\n")

    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert title in text  # the task list shows the title as written
        app.screen.query_one("#tabs").active = "tab-notes"
        await pilot.pause()
        text = screen_text(app)
        for hostile in HOSTILE:
            assert f"note {hostile} end" in text
        select_task(app, "T-202")
        await pilot.press("enter")
        await pilot.pause()
        assert title in screen_text(app)  # the detail panel too
        select_task(app, "T-201")
        await pilot.press("l")
        await settle(app, pilot)
        assert isinstance(app.screen, LogScreen)
        text = screen_text(app)
        assert "red plain" in text and "moved" in text
        assert "[bold red]not bold[/] [link=file:///etc/passwd]x[/link]" in text
        assert "\x1b" not in text and "ZWNobyBwd25lZA" not in text


async def test_notices_with_markup_like_text_are_literal_and_never_crash(scripted):
    """A phase heading with `[/x]` reaches a notice through the tick's message."""
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for text in HOSTILE:
            app.notify(f"⚠️ PIPELINE BLOCKED — {text} has unresolved [!] tasks")
        await pilot.pause()
        shown = [n.message for n in app._notifications]
        assert any("[/]" in m for m in shown) and all("\ufe0f" not in m for m in shown)
        assert app.is_running
