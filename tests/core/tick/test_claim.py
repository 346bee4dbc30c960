"""tick/claim.py (steps 7 and 8): the claim file before `[~]` (a `[~]` without a claim is always
stale), a task a person changed meanwhile never claimed, and the snapshot taken right after it
with what an earlier run left in Memento's folders removed first. Real files, real git."""

from __future__ import annotations

import os

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.runlog import TaskResult
from memento_core.state import read_claim
from memento_core.tick.claim import claim_task, take_snapshot
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    c = tick_context(ws, 4)
    return c


def test_the_claim_file_comes_with_the_task_in_progress_and_the_ticks_number(ctx):
    base = git(ctx.root, "rev-parse", "HEAD").strip()
    task = ctx.plan().task("T-1")
    claim = claim_task(ctx, task, base, {"notes.txt"})
    assert read_claim(ctx.ws, "T-1") == claim and claim.base == base and claim.untracked == ["notes.txt"]
    assert claim.pid == os.getpid() and claim.tick == 4 and claim.log == ctx.ws.rel(ctx.log_path)
    plan = parse_plan(ctx.ws.plan_path)
    assert plan.task("T-1").status == "~" and plan.meta.total_ticks == 4 and ctx.number_saved


def test_a_task_a_person_changed_meanwhile_is_not_claimed_and_leaves_no_claim(ctx):
    task = ctx.plan().task("T-1")
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("- [ ] `T-1`", "- [x] `T-1`"))
    got = claim_task(ctx, task, None, set())
    assert isinstance(got, TaskResult) and not got.passed and got.reason.startswith("could not claim")
    assert read_claim(ctx.ws, "T-1") is None and parse_plan(ctx.ws.plan_path).task("T-1").status == "x"


def test_the_snapshot_holds_the_documents_as_they_were_and_a_fifo_left_in_memento_s_folder_goes(ctx):
    base = git(ctx.root, "rev-parse", "HEAD").strip()
    os.mkfifo(ctx.ws.memento_dir / "left.fifo")
    snap = take_snapshot(ctx, base, {"notes.txt"})
    assert snap.base == base and snap.untracked == frozenset({"notes.txt"})
    assert snap.plan == ctx.ws.plan_path.read_bytes() and snap.status == (ctx.ws.status_path.read_bytes())
    assert snap.git.refs["refs/heads/main"] == base
    assert not (ctx.ws.memento_dir / "left.fifo").exists()
    assert "[memento] before the run:" in ctx.log_path.read_text()
