"""The smaller things a demanding user hit: palette, footer, enter at 80x24, log screen, tabs, notes, duplicates, ETA."""

from __future__ import annotations

from memento_core.locks import atomic_write_text
from memento_core.notes import parse_notes
from memento_tui.app import MementoApp
from memento_tui.commands import MementoCommands
from memento_tui.screens.dialogs import NoteComposer
from memento_tui.screens.help import HelpScreen
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.log_view import LazyLog
from tests.tui.pilot import messages, screen_text, select_task, settle, wait_for


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


async def test_the_footer_at_80_columns_shows_log_diff_help_and_quit(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = screen_text(app).splitlines()[-1]
        for word in ("Log", "Diff", "Help", "Quit"):
            assert word in footer, footer


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


async def test_the_log_screen_stops_following_when_the_tick_ends_and_keeps_reading(scripted):
    log = scripted / "logs" / "tick_2026-11-29T140400Z.log"
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.ticking = True
        app.push_screen(LogScreen(log, "logs/tick_2026-11-29T140400Z.log (running)", follow=True))
        await settle(app, pilot)
        assert "(running)" in screen_text(app) and "following" in screen_text(app)
        app.ticking = False
        await settle(app, pilot)
        text = screen_text(app)
        assert "(running)" not in text and "following" not in text
        # Not following: the file still grows on screen (no freeze), the view stays where it is.
        before = app.screen.query_one(LazyLog).line_count
        atomic_write_text(log, log.read_text() + "one more line\n")
        assert await wait_for(pilot, lambda: app.screen.query_one(LazyLog).line_count == before + 1)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Log screen — keys" in screen_text(app) and "rollback patch" in screen_text(app)


async def test_tabs_are_reachable_with_1_to_4(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tabs = app.screen.query_one("#tabs")
        for key, tab in (("2", "tab-notes"), ("3", "tab-continuity"), ("4", "tab-memory"), ("1", "tab-timeline")):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab


async def test_a_multi_line_note_and_the_warning_for_a_finished_task(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-202")
        await pilot.press("n")
        assert await wait_for(pilot, lambda: isinstance(app.screen, NoteComposer))
        assert not app.screen.query_one("#note-warning").display
        await pilot.press(*"first", "enter", *"second", "ctrl+enter")
        await settle(app, pilot)
        notes = [n for n in parse_notes(scripted / "docs" / "HUMAN_NOTES.md") if n.target == "T-202"]
        assert notes[-1].text == "first\nsecond"

        select_task(app, "T-101")  # done
        await pilot.press("n")
        assert await wait_for(pilot, lambda: isinstance(app.screen, NoteComposer))
        warning = app.screen.query_one("#note-warning")
        assert warning.display and "T-101 is already done" in screen_text(app)
        await pilot.press(*"too late", "ctrl+enter")
        await settle(app, pilot)
        assert any("no worker will read this note" in m for m in messages(app))


async def test_progress_and_the_list_agree_on_a_plan_with_a_duplicate_id(scripted):
    plan = scripted / "docs" / "MASTER_PLAN.md"
    text = plan.read_text()
    block = text[text.index("- [ ] `T-303`"):text.index("- [ ] `T-304`")]
    atomic_write_text(plan, text.replace(block, block + block.replace("Usage notes", "Usage notes again")))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        total = app.snapshot.summary["counts"]["total"]
        assert f"Tasks ({total})" in screen_text(app) and f"/{total}" in screen_text(app)
        assert "Usage notes again" in screen_text(app)


async def test_the_eta_counts_the_interval_and_the_glyphs_render(scripted):
    app = MementoApp(scripted, auto_tick=True, auto_interval=360, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "left: ~" in text and "(a tick every 6m00s)" in text
        assert "left: ~5m06s" not in text  # the work alone; 5 tasks at one a tick take 24 min or more
        assert "⏸" not in text and "⏹" not in text and "‖ Pause" in text and "■ Stop" in text
