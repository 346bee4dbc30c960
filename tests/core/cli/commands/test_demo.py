"""`memento demo DIR` (cli/commands/demo.py), a real subprocess: the demo made where it was asked, said with
its full path and what to do next; a folder that is not empty refused with exit 2 and left as it was.
What the demo project holds is tests/core/test_demo.py."""

from __future__ import annotations

from pathlib import Path

from memento_core.plan.scan import parse_plan
from tests.core.cli.runs import memento


def test_the_demo_is_made_in_the_folder_named_and_says_what_to_do_next(tmp_path: Path, git_identity):
    done = memento("demo", "calc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "calc"
    assert done.stdout.splitlines() == [
        f"[ok] demo project created in {root}",
        f"Next: `memento status {root}`, then `memento tick {root}` a few times, "
        f"or `memento-tui {root}` and press `o` to let the dashboard tick it.",
    ]
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").tasks
    status = memento("status", str(root))
    assert status.returncode in (0, 1), status.stderr  # a workspace the next command takes


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(tmp_path: Path, git_identity):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("mine\n")
    done = memento("demo", str(tmp_path / "mine"))
    assert done.returncode == 2 and "is not empty; the demo needs a fresh folder" in done.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["keep.txt"]
