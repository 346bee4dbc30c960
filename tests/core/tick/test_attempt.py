"""tick/attempt.py (steps 7–14 in order): a task attempted from the claim to its commit, verify run
only once the guards passed, and an exception inside an attempt is that attempt's recorded failure,
never a crash loop; if even the failure cannot be written, the claim is left for recovery. A real
attempt with the fake agent tests/agents/does_task.py; the failing work a real exception."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from memento_core.git.state import RepositoryGone
from memento_core.plan.scan import parse_plan, parse_plan_text
from memento_core.runlog import TaskResult
from memento_core.scaffold import init_workspace
from memento_core.tick.attempt import attempt_safely, attempt_task
from memento_core.tick.context import Attempt, Interrupted, TickContext
from memento_core.workspace import Workspace
from tests.core.scenarios.test_engine import agent, git, make_ws
from tests.core.tick.ticks import tick_context


def _ctx(ws) -> TickContext:
    ctx = tick_context(ws)
    return ctx


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_a_task_goes_from_its_claim_to_its_commit(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    ctx = _ctx(ws)
    result = attempt_task(ctx, ctx.plan(), ctx.plan().task("T-1"), None)
    assert result.passed and result.commit == git(ws.root, "rev-parse", "HEAD").strip()
    assert parse_plan(ws.plan_path).task("T-1").status == "x" and ctx.attempted


def test_verify_never_runs_after_a_guard_failed(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "guarded.txt", "done"))  # writes the guarded file
    ctx = _ctx(ws)
    result = attempt_task(ctx, ctx.plan(), ctx.plan().task("T-1"), None)
    assert not result.passed and "guarded.txt" in result.reason
    assert "[memento] verify T-1" not in ctx.log_path.read_text()
    assert (ws.root / "guarded.txt").read_text() == "do not touch\n"


def test_an_exception_in_the_work_is_the_attempts_failure_and_a_failure_to_record_it_is_said(tmp_path):
    ws = make_ws(tmp_path, "true")
    ctx = _ctx(ws)
    at = SimpleNamespace(task=ctx.plan().task("T-1"), began=time.monotonic())
    recorded = []

    def boom():
        raise OSError("disk full")

    def record(ctx_, at_, reason, *rest):
        recorded.append(reason)
        return TaskResult(at_.task.id, False, reason)

    result = attempt_safely(ctx, at, boom, record)
    assert result.reason == recorded[0] == "Memento failed during the attempt (OSError: disk full)"
    assert "OSError: disk full" in ctx.log_path.read_text()  # the traceback, for a person

    def cannot_record(*_args):
        raise ValueError("no room")

    result = attempt_safely(ctx, at, boom, cannot_record)
    assert not result.passed and result.reason.startswith("Memento failed during the attempt")
    assert "could not record the failure (ValueError: no room)" in ws.cron_log.read_text()
    for stop in (Interrupted, RepositoryGone):  # the tick stops: not this attempt's failure

        def stopped(kind=stop):
            raise kind("stop")

        with pytest.raises(stop):
            attempt_safely(ctx, at, stopped, record)


PLAN = "# MASTER_PLAN: p\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: All\n\n- [ ] T-1 [MODULE:m] One\n  - verify: `true`\n"


def test_an_exception_inside_an_attempt_is_its_failure_with_its_traceback_in_the_tick_log(tmp_path):
    root = tmp_path / "p"
    init_workspace(root, project="p", commit=False)
    ctx = TickContext(Workspace(root))
    at = Attempt(parse_plan_text(PLAN).tasks[0], None, None, time.monotonic())
    recorded: list[str] = []

    def work() -> TaskResult:
        raise ValueError("a bug in Memento")

    def record_failure(ctx, at, reason, *rest) -> TaskResult:
        recorded.append(reason)
        return TaskResult(at.task.id, False, reason)

    result = attempt_safely(ctx, at, work, record_failure)
    assert not result.passed and recorded == [result.reason]
    assert "Memento failed during the attempt (ValueError: a bug in Memento)" in result.reason
    log = ctx.log_path.read_text(encoding="utf-8")
    assert "[memento] Traceback (most recent call last)" in log and 'raise ValueError("a bug in Memento")' in log

    def cannot_record(*args) -> TaskResult:
        raise OSError("no space left on the device")

    result = attempt_safely(ctx, at, work, cannot_record)  # the failure not recorded: still a failure
    assert not result.passed and "ValueError: a bug in Memento" in result.reason
    log = ctx.log_path.read_text(encoding="utf-8")
    assert log.count("[memento] Traceback (most recent call last)") == 3 and "OSError: no space left" in log


# ---------------------------------------------------------------- the start's one status read (issue 42)


def _persons_paths_seen(monkeypatch):
    """What attempt_task's persons_paths returned, and how often git listed the untracked files for it."""
    from memento_core.git import status as git_status
    from memento_core.tick import attempt as attempt_module

    seen, listed = [], []
    real_paths, real_untracked = attempt_module.persons_paths, git_status.untracked
    monkeypatch.setattr(attempt_module, "persons_paths", lambda *a: seen.append(real_paths(*a)) or seen[-1])
    monkeypatch.setattr(git_status, "untracked", lambda *a: listed.append(a) or real_untracked(*a))
    return seen, listed


def test_the_first_attempt_takes_the_untracked_files_the_ticks_start_read_while_head_is_the_same(
        tmp_path, monkeypatch):
    from memento_core.tick.run import refuse_dirty_tree

    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    (ws.root / "persons.txt").write_text("mine\n")
    ctx = _ctx(ws)
    assert refuse_dirty_tree(ctx) is None
    assert ctx.untracked_at_start == (git(ws.root, "rev-parse", "HEAD").strip(), frozenset({"persons.txt"}))
    seen, listed = _persons_paths_seen(monkeypatch)
    result = attempt_task(ctx, ctx.plan(), ctx.plan().task("T-1"), None)
    assert result.passed and ctx.untracked_at_start is None  # the first attempt's only
    assert listed == [] and "persons.txt" in seen[0]  # git was not asked again
    assert (ws.root / "persons.txt").read_text() == "mine\n"
    assert "persons.txt" not in git(ws.root, "show", "--name-only", "--format=", "HEAD")


def test_once_head_moved_after_the_ticks_start_git_lists_the_untracked_files_again(tmp_path, monkeypatch):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    (ws.root / "persons.txt").write_text("mine\n")
    ctx = _ctx(ws)
    ctx.untracked_at_start = ("0" * 40, frozenset({"read-at-another-head.txt"}))  # a branch moved onto since
    seen, listed = _persons_paths_seen(monkeypatch)
    result = attempt_task(ctx, ctx.plan(), ctx.plan().task("T-1"), None)
    assert result.passed and len(listed) == 1
    assert "persons.txt" in seen[0] and "read-at-another-head.txt" not in seen[0]
    assert (ws.root / "persons.txt").read_text() == "mine\n"


def test_an_own_document_the_start_committed_is_no_untracked_file_of_the_persons(tmp_path):
    from memento_core.tick.run import refuse_dirty_tree

    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    git(ws.root, "rm", "-q", "--cached", "docs/HUMAN_NOTES.md")
    git(ws.root, "commit", "-qm", "notes untracked")
    (ws.root / "persons.txt").write_text("mine\n")
    ctx = _ctx(ws)
    assert refuse_dirty_tree(ctx) is None
    assert "docs/HUMAN_NOTES.md" in git(ws.root, "show", "--name-only", "--format=", "HEAD")  # sync docs
    assert ctx.untracked_at_start == (git(ws.root, "rev-parse", "HEAD").strip(), frozenset({"persons.txt"}))
