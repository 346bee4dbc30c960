"""screens/diff.py: a commit's diff, read in a worker, shown with its stat and patch."""

from __future__ import annotations

from memento_tui.app import MementoApp
from memento_tui.screens.diff import DiffScreen, diff_syntax
from tests.tui.pilot import screen_text, settle, wait_for
from tests.tui.snaps import make, on_task, press, ready


def test_diff_view(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(100, 30),
                        run_before=ready(on_task("T-102"), press("d")))


def test_a_diff_is_cut_after_its_lines_and_loses_its_escapes():
    code = diff_syntax("+one\n-two\n+\x1b]52;c;cHduZWQ=\x07three\n four\n", max_lines=3).code
    assert code == "+one\n-two\n+three\n… 1 more lines"
    assert diff_syntax("+one\n", max_lines=3).code == "+one"


async def test_a_commit_git_cannot_show_is_said_on_the_screen(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.push_screen(DiffScreen(scripted, "0" * 40, "a commit that is not there"))
        assert await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and "Diff " in screen_text(app))
        await settle(app, pilot)
        text = screen_text(app)
        assert "loading…" not in text
        assert "Diff 0000000000 a commit that is not there" in text
        assert "Error" in text and "0" * 40 in text, text
