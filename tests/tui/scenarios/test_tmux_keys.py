"""Keys that work in tmux (issue 38, item 3): the dashboard in a real tmux at 120x40 and 80x24.

tmux passes ctrl+enter on as a plain enter, so the notes composer must be sent
with F2, which it names first; escape with text typed asks before it throws the
note (or a skip's reason, or a brief) away. Judged on the screen tmux shows and
in the files.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from tests.tui.scenarios.tmux import Tmux, dashboard_argv, needs_tmux

pytestmark = needs_tmux


@pytest.fixture
def demo_project(tmp_path, git_env):
    root = tmp_path / "calc"
    subprocess.run([sys.executable, "-m", "memento_core.cli", "demo", str(root)], check=True, capture_output=True)
    return root


def notes(root) -> list[str]:
    return [n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md")]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_a_note_is_sent_with_f2_in_tmux_and_escape_asks_before_it_drops_one(demo_project, size):
    root = demo_project
    before = notes(root)  # the demo's own
    tmux = Tmux(dashboard_argv(root), *size)
    try:
        tmux.wait_text("Tasks (8)")
        tmux.keys("n")
        shown = tmux.wait_text("New note for the worker")
        flat = " ".join(shown.split())
        assert "F2: send" in flat and flat.index("F2: send") < flat.index("escape")  # the tmux-safe key first
        tmux.type("use the company signature")
        tmux.keys("Enter")  # a person's ctrl+enter, as tmux delivers it: a new line, not a send
        tmux.type("not memento")
        tmux.wait_text("not memento")
        assert notes(root) == before
        tmux.keys("F2")
        tmux.wait_for(lambda s: len(notes(root)) > len(before), what="the note written")
        assert notes(root) == [*before, "use the company signature\nnot memento"]
        # the note is on disk before its composer has closed: an "n" typed then is its text, not a new note
        tmux.wait_for(lambda s: "New note for the worker" not in s, what="the composer closed")

        tmux.keys("n")
        tmux.wait_text("New note for the worker")
        tmux.type("half a thought")
        tmux.wait_text("half a thought")
        tmux.keys("Escape")
        tmux.wait_text("Discard the note you typed?")
        tmux.keys("n")  # keep writing: the text is still there
        tmux.wait_for(lambda s: "Discard the note" not in s and "half a thought" in s, what="back in the composer")
        tmux.type(", finished")
        tmux.keys("F2")
        tmux.wait_for(lambda s: len(notes(root)) == len(before) + 2, what="the note written")
        assert notes(root)[-1] == "half a thought, finished"
        # as above: an "n" typed before the composer has closed would be its text, not a new note
        tmux.wait_for(lambda s: "New note for the worker" not in s, what="the composer closed")

        tmux.keys("n")
        tmux.wait_text("New note for the worker")
        tmux.type("thrown away on purpose")
        tmux.wait_text("thrown away on purpose")
        tmux.keys("Escape")
        tmux.wait_text("Discard the note you typed?")
        tmux.keys("y")
        tmux.wait_for(lambda s: "New note for the worker" not in s, what="the composer closed")
        assert "thrown away on purpose" not in (root / "docs" / "HUMAN_NOTES.md").read_text()
        tmux.keys("n")  # an empty composer closes on escape at once
        tmux.wait_text("New note for the worker")
        tmux.keys("Escape")
        tmux.wait_for(lambda s: "New note for the worker" not in s and "Discard" not in s, what="closed at once")
    finally:
        tmux.close()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_a_skip_reason_typed_in_tmux_is_not_lost_to_escape(demo_project, size):
    root = demo_project
    tmux = Tmux(dashboard_argv(root), *size)
    try:
        tmux.wait_text("Tasks (8)")
        tmux.keys("s")  # the selected task, T-101
        tmux.wait_text("reason")
        tmux.type("done by hand")
        tmux.wait_text("done by hand")
        tmux.keys("Escape")
        tmux.wait_text("Discard the text you typed?")
        tmux.keys("n")
        tmux.wait_for(lambda s: "Discard" not in s and "done by hand" in s, what="back in the dialog")
        tmux.keys("Enter")
        plan = root / "docs" / "MASTER_PLAN.md"
        tmux.wait_for(lambda s: parse_plan(plan).task("T-101").status == "-", what="T-101 skipped")
        assert parse_plan(plan).task("T-101").reason == "done by hand"
    finally:
        tmux.close()
