"""screens/dialogs.py: the note composer (several lines, a warning for a finished task) and the answer to a
worker's question (SPEC §18): "Needs you" shows the question, ``w`` opens a composer that shows it with its
choices, and the answer lands in the files (Pilot tests)."""

from __future__ import annotations

from memento_core.notes import parse_notes
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_core.questions import save_question
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import AnswerComposer, NoteComposer
from tests.tui.pilot import messages, screen_text, select_task, settle, wait_for
from tests.tui.snaps import make, on_task, press, ready

QUESTION = "Which rounding for div: [b]banker's[/b] or half-up?\n\nThe plan says neither.\n\n- [ ] banker's\n- [ ] half-up\n"


def ask(root, task_id: str = "T-202", text: str = QUESTION) -> None:
    ws = Workspace(root)
    first = text.splitlines()[0]
    edit_plan(ws.plan_path, lambda e: (e.set_status(task_id, "?"), e.set_field(task_id, "question", first),
                                       e.set_field(task_id, "questions", "1")))
    choices = tuple(line[6:] for line in text.splitlines() if line.startswith("- [ ] "))
    save_question(ws, task_id, text.strip(), first, choices, "2026-11-29T15:00:00Z")


async def test_needs_you_shows_the_question_and_w_answers_it_with_a_choice(scripted):
    ask(scripted)
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "T-202 asks: Which rounding for div: [b]banker's[/b] or half-up?" in text  # literal, no markup
        assert "answer it (w)" in text and "ASKS (w)" in text
        select_task(app, "T-101")  # not waiting: w takes the first question waiting
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, AnswerComposer)
        shown = screen_text(app)
        assert "T-202 asks" in shown and "The plan says neither." in shown
        assert "1. banker's" in shown and "2. half-up" in shown
        await pilot.press("down")  # the second choice
        await pilot.press("enter")
        await pilot.press("f2")
        await settle(app, pilot)
        task = parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-202")
        assert (task.status, task.retries) == (" ", 1)  # its retries as they were
        [note] = [n for n in parse_notes(scripted / "docs" / "HUMAN_NOTES.md") if n.is_answer]
        assert (note.target, note.text, note.source) == ("T-202", "half-up", "dashboard")
        assert "asks:" not in screen_text(app)


async def test_a_written_answer_and_escape_changes_nothing(scripted):
    ask(scripted, text="Where is the API key?\n")
    plan_before = (scripted / "docs" / "MASTER_PLAN.md").read_bytes()
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-202")
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, AnswerComposer) and not app.screen.query("#answer-choices")
        await pilot.press("escape")
        await settle(app, pilot)
        assert (scripted / "docs" / "MASTER_PLAN.md").read_bytes() == plan_before
        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one("#answer-input").load_text("in ~/.config/calc/key")
        await pilot.press("f2")
        await settle(app, pilot)
        [note] = [n for n in parse_notes(scripted / "docs" / "HUMAN_NOTES.md") if n.is_answer]
        assert note.text == "in ~/.config/calc/key"
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-202").status == " "
        await pilot.press("w")
        await pilot.pause()
        assert not isinstance(app.screen, AnswerComposer)
        assert any("no question waits" in n.message for n in app._notifications)


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


def test_notes_composer(scripted, snap_compare):
    def fill(app):
        area = app.screen.query_one("#note-input")
        area.cursor_blink = False  # a blinking cursor would differ from run to run
        area.load_text("Use [bold]exact[/bold] integers\nand keep the remainder")

    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-201"), press("n"), fill))
