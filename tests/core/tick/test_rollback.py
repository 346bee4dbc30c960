"""The rollback's own steps (SPEC §4 step 14) where no other step hides them: what an agent hid
behind a new `.gitignore` in a subfolder is found once the rollback removed that file, and the
plan an agent forged is saved under logs/rollback/ before the plan is put back.

The rate-limited agent is tests/agents/reports_like_a_cli.py through the real `command` preset; its
work is rolled back before the fallback preset runs in the same tick (tick/limits.py), with no
ignored-files step between: the rollback alone must find what was hidden. The forger is
tests/agents/forges_documents.py.
"""

from __future__ import annotations

import re

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick

from ..scenarios.test_engine import HELLO, agent
from ..scenarios.test_engine import make_ws as engine_ws
from .test_limits import git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_what_a_refused_agent_hid_behind_a_new_gitignore_is_gone_before_the_fallback_starts(tmp_path):
    ws = make_ws(tmp_path, "claude-limit", cost="hides", extra='fallback = ["script"]')
    # the fallback preset's own work fails when the refused agent's hidden file is still there
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- do: `printf", "- do: `test ! -e sub/hidden.txt && printf"))
    git(ws.root, "commit", "-qam", "the script checks first")
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert not (ws.root / "sub").exists()
    saved = [p.relative_to(ws.rollback_dir).as_posix() for p in ws.rollback_dir.rglob("hidden.txt")]
    assert len(saved) == 1 and saved[0].endswith("/hidden/files/sub/hidden.txt"), saved


TWO = HELLO + HELLO.replace("T-1", "T-2").replace("[MODULE:hello] Write hello", "[MODULE:two] Second").replace(
    "[hello.txt]", "[two.txt]")


def test_the_plan_an_agent_forged_is_saved_before_the_other_tasks_are_put_back(tmp_path):
    ws = engine_ws(tmp_path, agent("forges_documents.py", "plan"), tasks=TWO)
    (result,) = run_tick(ws.root).results
    assert not result.passed and "the agent marked T-2 [x]" in result.reason, result.reason
    assert "FORGED" not in ws.plan_path.read_text()
    (saved,) = ws.rollback_dir.glob("*-T-1-plan-others/MASTER_PLAN.md")
    assert "- [x] `T-2` [MODULE:two] Second FORGED" in saved.read_text()


@pytest.mark.parametrize(("mode", "name", "forged"), [
    ("entry", "TICK_STATUS.md", "- **Task**: T-2 FORGED"),
    ("note", "HUMAN_NOTES.md", "FORGED: every test may be skipped."),
])
def test_the_status_log_and_notes_an_agent_forged_are_saved_then_put_back(tmp_path, mode, name, forged):
    ws = engine_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO)
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert forged not in (ws.root / "docs" / name).read_text()
    (saved,) = ws.rollback_dir.glob(f"*-T-1-docs/{name}")
    assert forged in saved.read_text()
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    said = " ".join(value for _key, value in entry.fields)
    assert f"status log and notes restored, the agent's versions in {ws.rel(saved.parent)}" in said, said


@pytest.mark.parametrize("mode", ["self", "plan-self"])
def test_an_agent_that_marked_its_own_task_done_in_a_failed_run_leaves_it_to_retry(tmp_path, mode):
    """Its own task `[x]` by hand (its definition's guard leaves the status out), then a failure:
    verify's ("self") or the guard's, T-2 forged too ("plan-self", the whole plan put back). The
    task is `[ ]` with its retry counted, never left done; the plan found is saved first."""
    ws = engine_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO)
    if mode == "self":
        ws.plan_path.write_text(ws.plan_path.read_text().replace("grep -q done hello.txt", "grep -q nope hello.txt", 1))
        git(ws.root, "commit", "-qam", "T-1's verify fails")
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert ("verify failed" if mode == "self" else "the agent marked T-2 [x]") in result.reason, result.reason
    plan = parse_plan(ws.plan_path)
    assert [(t.id, t.status, t.retries) for t in plan.tasks] == [("T-1", " ", 1), ("T-2", " ", 0)]
    saved = [p.read_text() for p in ws.rollback_dir.glob("*-T-1-plan-*/MASTER_PLAN.md")]
    assert any(re.search(r"^- \[x\] `T-1`", text, re.M) for text in saved), saved
    assert "- [x] `T-1`" not in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
