"""A blocked task a person skips is told as skipped (issue 38, item 10).

README's first project, T-102's verify wrong: T-102 blocks, the person skips it,
the plan is COMPLETE. CURRENT_STATE.md used to keep saying T-102 was BLOCKED and
the morning report left the skip out; both now say the task was skipped, why.
"""

from __future__ import annotations

import json

import pytest

from memento_core.checkpoint import parse_checkpoint
from tests.first_project import first_plan, memento, tick, write_plan


@pytest.fixture
def skipped(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    plan = first_plan().replace("tick_mode: paused", "tick_mode: auto").replace("max_retries: 3", "max_retries: 1")
    write_plan(root, plan.replace("grep -q memento greeting.txt", "grep -q nope greeting.txt"))
    assert tick(root).returncode == 0  # T-101 passes
    assert tick(root).returncode == 1  # T-102 blocks (and the breaker pauses the one-of-two plan)
    assert memento(root, "skip", "T-102", "--reason", "signed by hand").returncode == 0
    assert memento(root, "resume").returncode == 0
    return root


def test_the_checkpoint_and_the_report_tell_the_skip(skipped):
    root = skipped
    assert json.loads(memento(root, "status", "--json").stdout)["plan_state"] == "COMPLETE"
    doc = parse_checkpoint((root / "docs" / "CURRENT_STATE.md").read_text())
    step = " ".join(doc.section("Current Step"))
    assert "T-102" in step and "since skipped: signed by hand" in step, step
    assert doc.objective == "greeter: its task is complete"
    report = memento(root, "report")
    lines = report.stdout.splitlines()
    assert "Skipped after failing:" in lines
    assert lines[lines.index("Skipped after failing:") + 1] == "  T-102 Sign it: signed by hand"
    assert json.loads(memento(root, "report", "--json").stdout)["skipped"] == [
        {"id": "T-102", "title": "Sign it", "reason": "signed by hand"}]
    # A tick after the skip rewrites the checkpoint the same way.
    tick(root)
    step = " ".join(parse_checkpoint((root / "docs" / "CURRENT_STATE.md").read_text()).section("Current Step"))
    assert "since skipped: signed by hand" in step
