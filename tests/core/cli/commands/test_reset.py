"""`memento reset ID` (cli/commands/reset.py), a real subprocess: the task [ ] again with retries 0, a
skip's reason dropped; an unknown id refused."""

from __future__ import annotations

from pathlib import Path

from tests.core.cli.runs import PLAN, memento


def test_reset_puts_a_skipped_task_back_and_refuses_an_unknown_one(ws: Path):
    plan = ws / PLAN
    assert memento("skip", "T-101", "--reason", "done by hand", str(ws)).returncode == 0
    assert memento("reset", "T-101", str(ws)).returncode == 0
    assert "- [ ] `T-101`" in plan.read_text()
    r = memento("reset", "T-999", str(ws))
    assert r.returncode == 2 and "T-999 is not in the plan" in r.stderr


def test_reset_after_skip_drops_the_skip_reason(words_ws: Path):
    assert memento("skip", "T-2", "--reason", "not needed", str(words_ws)).returncode == 0
    assert "  - reason: not needed\n" in (words_ws / PLAN).read_text()
    assert memento("reset", "T-2", str(words_ws)).returncode == 0
    after = (words_ws / PLAN).read_text()
    assert "reason:" not in after
    assert after.split("- [ ] `T-2`")[1] == (" [MODULE:b] Fails without a word\n  - verify: `false`\n"
                                            "  - context_files: [b.txt]\n  - do: `echo b > b.txt`\n  - retries: 0\n")
