"""Status back for a question (SPEC §19 "Status back", §18): a task that became ``[?]`` gets one
comment on its issue with the worker's question, defused and fenced, and how to answer it. Real
ticks, the GitHub stand-in."""

from __future__ import annotations

import pytest

from memento_core.plan.scan import parse_plan
from tests.core.forge.test_comments import AGENTS, BLOCK, PY, do_import, make_project, tick


@pytest.fixture
def project(tmp_path, git_identity, github):
    return make_project(tmp_path, github, agent=f"{PY} {AGENTS / 'asks_with_markup.py'}")


def test_a_question_is_told_on_the_issue_once_with_how_to_answer(project, github):
    github.issue(3, "Pick a store", BLOCK.format(id="GH-3"))
    do_import(project)
    out = tick(project)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert parse_plan(project / "docs" / "MASTER_PLAN.md").task("GH-3").status == "?"
    (body,) = github.posted(3)
    assert "GH-3 asks a question" in body and "`memento answer GH-3 --choice N`" in body
    assert "dashboard" in body and "`w`" in body and "chat" in body
    fence = "`````"  # longer than the run of four backticks the question holds
    start, end = body.index(fence + "\n"), body.rindex("\n" + fence + "\n")
    inside = body[start:end]
    assert "Which store should this use?" in inside and "<b>bold</b>" in inside
    assert "1. sqlite" in inside and "2. postgres" in inside
    assert "\x1b" not in body and "@here" not in body and "＠here" in inside
    assert body.endswith("<!-- memento:GH-3:?:1 -->")
    tick(project)  # still waiting: no second comment
    assert len(github.posted(3)) == 1
