"""messages.py: the watcher and the workers talk to the App through these; a burst of file changes
waiting in the queue becomes one refresh that reads every part it names (Pilot)."""

from __future__ import annotations

from memento_core.notes import add_note
from memento_core.plan.edits import edit_plan
from memento_tui.app import MementoApp
from memento_tui.messages import ActionDone, FilesChanged, WatcherTrouble
from memento_tui.snapshot import NOTES, PLAN
from tests.tui.conftest import FIXED_NOW
from tests.tui.pilot import messages, screen_text, select_task, settle


async def test_two_changes_waiting_together_are_one_refresh_of_both_parts(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)  # no watcher: the test posts what it would
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#tabs").active = "tab-notes"
        await settle(app, pilot)
        edit_plan(scripted / "docs" / "MASTER_PLAN.md", lambda e: e.set_status("T-202", "x"))
        add_note(scripted / "docs" / "HUMAN_NOTES.md", "written by another process", target="T-301", now=FIXED_NOW)
        refreshes = app.refreshes
        app.post_message(FilesChanged({PLAN}))  # both wait in the queue: neither is handled yet
        app.post_message(FilesChanged({NOTES}))
        await settle(app, pilot)
        assert app.refreshes == refreshes + 1
        assert app.snapshot.parts_read == frozenset({PLAN, NOTES})
        select_task(app, "T-202")
        await pilot.pause()
        text = screen_text(app)
        assert "written by another process" in text and "✔  T-202" in text, text


async def test_a_watchers_trouble_and_a_failed_edit_are_told_to_the_person(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.post_message(WatcherTrouble("inotify watch limit reached"))
        app.post_message(ActionDone("skip T-202: the plan changed under you", error=True))
        app.post_message(ActionDone("T-201 reset"))
        await pilot.pause()
        said = {n.message: n.severity for n in app._notifications}  # noqa: SLF001
        assert said == {"inotify watch limit reached": "warning",
                        "skip T-202: the plan changed under you": "error", "T-201 reset": "information"}
        assert "T-201 reset" in messages(app)
