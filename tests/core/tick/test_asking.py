"""tick/asking.py (SPEC §18): a worker's question taken after its agent, or not (a bad question
file is the attempt's failure; a question of an attempt that failed otherwise is not taken), the
task `[?]` with its question, `[!]` past max_questions, and what the entry says. Real files."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.asking import (
    MAX_QUESTIONS_BLOCKED,
    NEEDS_INPUT,
    clear_question_file,
    entry_fields,
    mark_waiting,
    outcome,
    take_question,
)
from tests.core.scenarios.test_engine import make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true", extra_meta="- max_questions: 2\n")
    c = tick_context(ws, None)
    ws.question_path.parent.mkdir(parents=True, exist_ok=True)
    return c


def _attempt():
    return SimpleNamespace(agent=None, question=None)


def test_a_question_is_taken_from_an_agent_that_ended_asking_and_its_file_goes(ctx):
    ctx.ws.question_path.write_text("Which database?\n- [ ] Redis\n- [ ] Postgres\n")
    at = _attempt()
    assert take_question(ctx, at, "agent exited with code 1") == "the worker asked a question: Which database?"
    assert at.question[1:] == ("Which database?", ("Redis", "Postgres"))
    assert not ctx.ws.question_path.exists()
    assert take_question(ctx, _attempt(), "") == ""  # no file: no question


def test_a_question_of_an_attempt_that_failed_otherwise_is_not_taken(ctx):
    ctx.ws.question_path.write_text("Which database?\n")
    at = _attempt()
    assert take_question(ctx, at, "agent timed out after 20s") == "agent timed out after 20s"
    assert at.question is None and not ctx.ws.question_path.exists()
    assert "the worker's question was not taken: agent timed out" in ctx.log_path.read_text()


def test_a_question_file_that_is_no_question_is_the_attempts_failure(ctx):
    os.mkfifo(ctx.ws.question_path)
    at = _attempt()
    reason = take_question(ctx, at, "")
    assert "FIFO" in reason and at.question is None and not ctx.ws.question_path.exists()


def test_a_folder_left_where_the_question_goes_is_cleared(ctx):
    (ctx.ws.question_path / "deep").mkdir(parents=True)
    clear_question_file(ctx)
    assert not ctx.ws.question_path.exists()


def test_the_task_waits_with_its_question_then_blocks_past_max_questions(ctx):
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    plan = parse_plan(ctx.ws.plan_path)
    status, blocked, count = outcome(plan, plan.task("T-1"))
    assert (status, blocked, count) == (f"{NEEDS_INPUT} (question 1/2, no retry counted)", False, 1)
    mark_waiting(ctx, plan.task("T-1"), ("Which?\n- [ ] A", "Which?", ("A",)), blocked, count)
    task = parse_plan(ctx.ws.plan_path).task("T-1")
    assert task.status == "?" and task.fields["question"] == "Which?" and task.questions == 1
    assert outcome(plan, task)[1:] == (False, 2)  # the second of two may still be asked
    # The plan after a second question: two asked, the third blocks.
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("- [?] `T-1`", "- [~] `T-1`")
                                .replace("questions: 1", "questions: 2"))
    plan = parse_plan(ctx.ws.plan_path)
    status, blocked, count = outcome(plan, plan.task("T-1"))
    assert (status, blocked, count) == (f"{MAX_QUESTIONS_BLOCKED} (2/2 asked)", True, 2)
    mark_waiting(ctx, plan.task("T-1"), ("Which?", "Which?", ()), blocked, count)
    assert parse_plan(ctx.ws.plan_path).task("T-1").status == "!"


def test_the_entry_says_how_to_answer_or_that_the_architect_is_needed(ctx):
    task = ctx.plan().task("T-1")
    assert entry_fields(task, ("", "Which?", ("A", "B")), False) == [
        ("Question", "Which?"), ("Choices", "1. A; 2. B"),
        ("Action", "answer with `memento answer T-1 --choice N`, or in the dashboard")]
    assert entry_fields(task, ("", "Why?", ()), True) == [
        ("Question", "Why?"), ("Escalation", "⚠️ NEEDS ARCHITECT ATTENTION (the worker keeps asking)")]
