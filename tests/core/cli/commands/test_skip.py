"""`memento skip ID --reason TEXT` (cli/commands/skip.py), a real subprocess: the task [-] with its
reason in the plan; no reason, no skip."""

from __future__ import annotations

from pathlib import Path

from tests.core.cli.runs import PLAN, memento


def test_skip_needs_a_reason_and_writes_it_under_the_task(ws: Path):
    plan = ws / PLAN
    r = memento("skip", "T-101", str(ws))
    assert r.returncode == 2 and "--reason" in r.stderr
    assert memento("skip", "T-101", "--reason", "done by hand", str(ws)).returncode == 0
    assert "- [-] `T-101`" in plan.read_text() and "  - reason: done by hand" in plan.read_text()
