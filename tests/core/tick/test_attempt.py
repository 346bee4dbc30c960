"""tick/attempt.py: steps 7–14 of one task (SPEC §4); an exception inside them is the attempt's failure."""

from __future__ import annotations

import time

from memento_core.plan.scan import parse_plan_text
from memento_core.runlog import TaskResult
from memento_core.scaffold import init_workspace
from memento_core.tick.attempt import attempt_safely
from memento_core.tick.context import Attempt, TickContext
from memento_core.workspace import Workspace

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
