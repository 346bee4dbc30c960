"""tick/outcome.py (steps 13 and 14): a pass is `[x]`, its SUCCESS entry and one commit of exactly
the task's files and Memento's documents; a failure is rolled back, its retry counted (`[!]` at
max_retries, the notes it was given marked read), its entry and the documents committed; a person's
change of the task meanwhile stands. Real ticks with the fake agent tests/agents/does_task.py."""

from __future__ import annotations

import pytest

from memento_core import notes, status_log
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.tick.context import TickContext
from memento_core.tick.outcome import _count_retry, _failure_status
from tests.core.scenarios.test_engine import agent, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_a_pass_is_one_commit_of_the_tasks_file_and_the_documents(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    (ws.root / "persons.txt").write_text("untracked, the person's\n")
    outcome = run_tick(ws.root)
    assert outcome.results[0].passed, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    subject, files = git(ws.root, "log", "-1", "--format=%s", "--name-only").strip().split("\n", 1)
    assert subject == "memento: complete T-1 Write hello"
    assert "hello.txt" in files.split() and "persons.txt" not in files
    entry = status_log.parse_status(ws.status_path)[-1]
    assert entry.field("Status") == "✅ SUCCESS" and entry.field("Files Modified").startswith("hello.txt (+1 -0)")


def test_a_failure_is_rolled_back_counted_and_blocks_at_max_retries(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "nope"), max_retries=2)
    notes.add_note(ws.notes_path, "write done", target="T-1")
    git(ws.root, "commit", "-qam", "a note")
    run_tick(ws.root)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1) and not (ws.root / "hello.txt").exists()
    entry = status_log.parse_status(ws.status_path)[-1]
    assert entry.field("Status") == "❌ FAILED (retry 1/2)" and entry.field("Reason").startswith("verify failed")
    assert git(ws.root, "log", "-1", "--format=%s").strip().startswith("memento: T-1 failed (retry 1/2)")
    assert not any(n.read for n in notes.parse_notes(ws.notes_path))
    run_tick(ws.root)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == ("!", 2)
    entry = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"][-1]
    assert entry.field("Status") == "🚫 BLOCKED (retry 2/2 — max_retries exceeded)"
    assert entry.field("Escalation") == "⚠️ NEEDS ARCHITECT ATTENTION"
    assert all(n.read for n in notes.parse_notes(ws.notes_path))  # given to the attempt that blocked


def test_a_persons_change_of_the_task_meanwhile_stands_and_an_uncounted_failure_counts_nothing(tmp_path):
    ws = make_ws(tmp_path, "true")
    ctx = TickContext(ws)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    _count_retry(ctx, "T-1", 1, False, True)  # interrupted, set aside: pending again, retries as they were
    assert (parse_plan(ws.plan_path).task("T-1").status, parse_plan(ws.plan_path).task("T-1").retries) == (" ", 0)
    _count_retry(ctx, "T-1", 1, False, False)  # the person set it back to [ ] already: their edit stands
    assert parse_plan(ws.plan_path).task("T-1").retries == 0
    ctx.interrupted = True
    assert _failure_status(ctx, True, False, 1, 3) == "⏹ INTERRUPTED (no retry counted)"
    ctx.interrupted = False
    assert _failure_status(ctx, False, False, 1, 3) == "⏹ SET ASIDE (no retry counted)"
