"""`memento pause | resume | stop` (cli/commands/mode.py), a real subprocess: the plan's tick_mode set
by a one-line edit, the mode it had said."""

from __future__ import annotations

from pathlib import Path

from tests.core.cli.runs import PLAN, memento


def test_mode_commands_edit_the_tick_mode_line_only(ws: Path):
    plan = ws / PLAN
    before = plan.read_bytes().splitlines()
    assert memento("resume", str(ws)).stdout == "[ok] tick_mode: auto (was paused)\n"
    after = plan.read_bytes().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [4]
    assert b"- tick_mode: auto        <!--" in after[4]
    assert memento("stop", "--project", str(ws)).returncode == 0
    assert b"tick_mode: stopped" in plan.read_bytes()
