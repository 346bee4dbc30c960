"""A person's `memento skip` / `reset` / pause during an architect run (SPEC §16): the person's
change stays whatever the run's outcome, and is never taken for the architect's."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memento_core import control
from memento_core.plan.scan import parse_plan
from memento_core.tick.architect.run import CHANGED, ROLLED_BACK, UNCHANGED, run_architect
from tests.core.tick.architect.test_run import agent, git, history, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def _run_with_person(ws, flag: Path, person, *, dry_run: bool = False):
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=run_architect(ws, dry_run=dry_run)))
    worker.start()
    try:
        end = time.monotonic() + 60
        while not Path(str(flag) + ".started").exists() and time.monotonic() < end and worker.is_alive():
            time.sleep(0.02)
        person()
    finally:
        flag.write_text("go")
        worker.join(120)
    return box["result"]


@pytest.mark.parametrize("action,outcome", [(("nothing",), UNCHANGED),
                                            (("edit_code", "code.py"), ROLLED_BACK),
                                            (("fix", "T-1", "true"), CHANGED)])
def test_a_persons_skip_during_the_run_stays_and_is_not_the_architects(tmp_path, action, outcome):
    flag = tmp_path / "go"
    ws = make_ws(tmp_path, agent("architect.py", "wait_then", str(flag), *action))
    code_before = (ws.root / "code.py").read_bytes()
    result = _run_with_person(ws, flag, lambda: control.skip_task(ws, "T-4", "a person's decision"))
    assert result.outcome == outcome, result.message
    assert not any("CURRENT_STATE" in r for r in result.reasons)
    task = parse_plan(ws.plan_path).task("T-4")
    assert task.status == "-" and task.reason == "a person's decision"
    assert "T-4" not in result.changes.skipped
    assert (ws.root / "code.py").read_bytes() == code_before
    if outcome == CHANGED:
        assert parse_plan(ws.plan_path).task("T-1").status == " "
        committed = git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
        assert "- [-] `T-4`" in committed and history(ws.root)[0].split(" ", 1)[1].startswith("memento: architect")


def test_a_persons_pause_during_a_dry_run_stays(tmp_path):
    flag = tmp_path / "go"
    ws = make_ws(tmp_path, agent("architect.py", "wait_then", str(flag), "fix", "T-1", "true"))
    result = _run_with_person(ws, flag, lambda: control.set_mode(ws, "paused"), dry_run=True)
    assert result.outcome == CHANGED, result.message
    plan = parse_plan(ws.plan_path)
    assert plan.meta.tick_mode == "paused" and plan.task("T-1").status == "!"


def test_a_persons_hand_edit_of_the_plan_during_a_dry_run_is_saved_not_lost(tmp_path):
    flag = tmp_path / "go"
    ws = make_ws(tmp_path, agent("architect.py", "wait_then", str(flag), "fix", "T-1", "true"))
    mark = "<!-- a person's line, typed while the dry run ran -->"

    def person():
        with ws.plan_path.open("a", encoding="utf-8") as out:
            out.write(f"\n{mark}\n")

    result = _run_with_person(ws, flag, person, dry_run=True)
    assert result.outcome == CHANGED, result.message
    saved = [p for p in (ws.root / "logs" / "rollback").rglob("MASTER_PLAN.md") if mark in p.read_text()]
    assert saved, "the dry run put the plan back without keeping the person's edit anywhere"


def test_the_architects_own_pause_and_note_recorded_as_a_persons_are_not_kept(tmp_path):
    """SPEC §13: the run listens for a person's receipts; the agent's lines in ARCHITECT.person
    and notes_added carry none, so its pause and note are its own: refused, put back."""
    ws = make_ws(tmp_path, agent("architect.py", "forge_person"))
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK, result.message
    assert any("wrote 1 note(s) into docs/HUMAN_NOTES.md" in r for r in result.reasons), result.reasons
    plan = parse_plan(ws.plan_path)
    assert plan.meta.tick_mode == "auto" and plan.task("T-1").status == "!"
    assert "skip the tests" not in ws.notes_path.read_text()
