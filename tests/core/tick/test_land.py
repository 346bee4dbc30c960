"""tick/land.py (SPEC §19, `[forge] land = "pr"`): the tick's part of landing by pull request,
without the network. Off by default; the picked task's phase worked on a branch of its own made
from the branch the work tree is on (recorded, said in cron.log), never from a detached HEAD; every
task done is not COMPLETE while the phase's pull request is unmerged. Real git, real files; the
pull request's state is Memento's own record (forge/pulls.py), as the last refresh left it."""

from __future__ import annotations

import pytest

from memento_core.forge import pulls
from memento_core.scheduler import BLOCKED, COMPLETE, WAITING, Verdict
from memento_core.tick import land
from memento_core.tick.context import TickContext
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


def _ctx(ws, forge: bool) -> TickContext:
    if forge:
        ws.config_path.write_text(ws.config_path.read_text() + '[forge]\nland = "pr"\nrepo = "octo-org/shop"\n')
    ctx = tick_context(ws)
    return ctx


@pytest.fixture
def ws(tmp_path, git_identity):
    return make_ws(tmp_path, "true")


def test_off_by_default_nothing_moves(ws):
    ctx = _ctx(ws, forge=False)
    assert not land.enabled(ctx) and land.before_pick(ctx) is None
    assert land.enter(ctx, ctx.plan(), ctx.plan().task("T-1")) is False
    assert git(ws.root, "branch", "--show-current").strip() == "main"


def test_the_phase_is_worked_on_a_branch_of_its_own_from_the_current_one(ws):
    ctx = _ctx(ws, forge=True)
    base = git(ws.root, "rev-parse", "HEAD").strip()
    assert land.enter(ctx, ctx.plan(), ctx.plan().task("T-1")) is False  # a new branch at the same commit
    branch = git(ws.root, "branch", "--show-current").strip()
    assert branch != "main" and git(ws.root, "rev-parse", "HEAD").strip() == base
    [rec] = pulls.load(ws).values()
    assert (rec.branch, rec.base, rec.state) == (branch, "main", "unpushed")
    assert f"is worked on branch {branch}, from main" in ws.cron_log.read_text()
    assert land.enter(ctx, ctx.plan(), ctx.plan().task("T-1")) is False  # already there: nothing new


def test_a_detached_head_is_refused_with_what_to_do(ws):
    ctx = _ctx(ws, forge=True)
    git(ws.root, "checkout", "-q", "--detach")
    outcome = land.enter(ctx, ctx.plan(), ctx.plan().task("T-1"))
    assert outcome.exit_code == 1 and "check out the base branch" in outcome.message


def test_every_task_done_waits_on_the_phases_unmerged_pull_request(ws):
    ctx = _ctx(ws, forge=True)
    complete = Verdict(COMPLETE)
    assert land.unlanded(ctx, complete) is complete  # no pull request: complete
    pulls.save(ws, {"Phase 1": pulls.PullRecord("Phase 1", "memento/phase-1", "main", number=7, state="open")})
    waiting = land.unlanded(ctx, complete)
    assert waiting.kind == WAITING and waiting.tasks == ("#7",)
    blocked = Verdict(BLOCKED)
    assert land.unlanded(ctx, blocked) is blocked  # only COMPLETE waits on it
    pulls.save(ws, {"Phase 1": pulls.PullRecord("Phase 1", "memento/phase-1", "main", number=7, state="closed")})
    assert land.unlanded(ctx, complete).kind == land.PR_CLOSED
