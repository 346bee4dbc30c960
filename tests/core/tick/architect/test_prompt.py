"""architect/prompt.py (SPEC §16): what the architect is told. Each blocked task with every
failed attempt (reason, verify output, error tail), the unread notes, the map and the plan, each
fenced; the project's own system prompt before the bundled one. A real blocked tick."""

from __future__ import annotations

import pytest

from memento_core.notes import add_note
from memento_core.plan.scan import parse_plan
from memento_core.tick.architect.prompt import build_architect_prompt, system_prompt
from tests.core.tick.architect.test_run import agent, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_the_prompt_holds_the_blocked_task_its_failed_attempts_and_the_unread_notes(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "nothing"))
    add_note(ws.notes_path, "use DONE in capitals", target="T-1")
    prompt = build_architect_prompt(ws, parse_plan(ws.plan_path), include_system=False)
    assert prompt.startswith("# Architect run: ")
    blocked = prompt.split("## Blocked tasks (1)", 1)[1].split("## Unread notes", 1)[0]
    assert "### T-1 [MODULE:hello] Write hello" in blocked and "- verify: `grep -q DONE hello.txt`" in blocked
    assert "Failed attempts of T-1 (1):" in blocked and "1. Tick #1 at " in blocked
    assert "   - Reason: verify failed with exit code 1" in blocked
    assert "## Unread notes from people (1); mark each you act on [NOTE:READ]" in prompt
    assert "use DONE in capitals" in prompt.split("## Unread notes", 1)[1]
    assert "## docs/MASTER_PLAN.md (as it is now)" in prompt and "## docs/PROJECT_MAP.md" in prompt


def test_the_projects_own_system_prompt_comes_first_else_the_bundled_one(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "nothing"))
    ws.architect_prompt_path.unlink(missing_ok=True)
    bundled = system_prompt(ws)
    assert "architect" in bundled.lower() and len(bundled) > 200
    ws.architect_prompt_path.parent.mkdir(parents=True, exist_ok=True)
    ws.architect_prompt_path.write_text("You are this project's architect.\n")
    assert system_prompt(ws) == "You are this project's architect."
    assert build_architect_prompt(ws, parse_plan(ws.plan_path)).startswith("You are this project's architect.\n\n---\n")
