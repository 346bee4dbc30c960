"""widgets/notes.py: the Notes tab lists the pending notes with their time and target, folds the read
ones under "Read (N)", and says when HUMAN_NOTES.md cannot be read (Pilot, and a snapshot)."""

from __future__ import annotations

from memento_core.notes import parse_notes
from memento_tui.app import MementoApp
from memento_tui.snapshot import NOTES
from tests.tui.pilot import pane_text, settle, wait_for
from tests.tui.snaps import make, ready

READ = "Keep evaluate() to one binary operation"  # the demo's note, read in the scripted workspace


async def notes_tab(app, pilot) -> str:
    app.screen.query_one("#tabs").active = "tab-notes"
    await settle(app, pilot)
    return pane_text(app, "#notes")


async def test_pending_notes_are_listed_and_read_ones_folded(scripted):
    notes = scripted / "docs" / "HUMAN_NOTES.md"
    assert [n.read for n in parse_notes(notes)] == [True, False, False]
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = await notes_tab(app, pilot)
        assert "⏳ pending 2026-11-29T14:00:00 → T-201" in text
        assert "Use integer division only when both operands are ints." in text
        assert "⏳ pending 2026-11-29T14:00:00 → global" in text
        assert "Read (1)" in text and READ not in text  # folded
        await pilot.click("#notes-read CollapsibleTitle")
        assert await wait_for(pilot, lambda: READ in pane_text(app, "#notes"))
        assert "✔ read" in pane_text(app, "#notes")


async def test_a_notes_file_that_cannot_be_read_is_said(scripted):
    notes = scripted / "docs" / "HUMAN_NOTES.md"
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        notes.unlink()
        notes.mkdir()  # an agent left a folder where the notes were
        app.request_refresh({NOTES})
        text = await notes_tab(app, pilot)
        assert "is a directory, not a file" in text
        assert "Use integer division only" in text  # the notes as last read stay, under the error
        notes.rmdir()
        notes.write_text("# Human Notes\n")
        app.request_refresh({NOTES})
        text = await notes_tab(app, pilot)
        assert "no pending notes" in text and "is a directory" not in text and "Read (0)" in text


def test_notes_tab(scripted, snap_compare):
    def notes_tab(app):
        app.screen.query_one("#tabs").active = "tab-notes"

    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready(notes_tab))
