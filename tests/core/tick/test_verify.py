"""tick/verify.py (step 12): the task's verify in a shell at the project's root, in its own
process group, with the task's `timeout:` first; exit 0 passes, the tail of its output goes to the
entry, and a parallel worker's verify is timed as its own run. Real commands, a real log."""

from __future__ import annotations

import time

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.context import TickContext
from memento_core.tick.verify import run_verify
from tests.core.scenarios.test_engine import make_ws
from tests.core.tick.ticks import tick_context


def _ctx(tmp_path, verify: str, extra: str = "") -> tuple[TickContext, object]:
    tasks = f"- [ ] `T-1` Write hello\n  - verify: `{verify}`\n  - context_files: [hello.txt]\n{extra}"
    ws = make_ws(tmp_path, "true", tasks)
    ctx = tick_context(ws, None)
    return ctx, parse_plan(ws.plan_path).task("T-1")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_a_passing_verify_runs_at_the_root_with_the_tasks_id_and_its_output_is_the_tail(tmp_path):
    ctx, task = _ctx(tmp_path, "pwd; echo $MEMENTO_TASK_ID; test -f guarded.txt")
    code, output, reason = run_verify(ctx, task)
    assert (code, reason) == (0, "")
    assert output.split() == [str(ctx.root), "T-1"]
    assert f"[memento] verify T-1: {task.verify}" in ctx.log_path.read_text()


def test_a_failing_verify_says_its_exit_code_and_a_slow_one_its_task_timeout(tmp_path):
    slow = "\n- [ ] `T-2` Slow\n  - verify: `sleep 30`\n  - context_files: [two.txt]\n  - timeout: 1s\n"
    ctx, task = _ctx(tmp_path, "echo nope; exit 3", slow)
    assert run_verify(ctx, task) == (3, "nope\n", "verify failed with exit code 3")
    slow = ctx.plan().task("T-2")
    began = time.monotonic()
    code, _output, reason = run_verify(ctx, slow)
    assert code is None and reason == "verify timed out after 1s" and time.monotonic() - began < 20


def test_a_parallel_workers_verify_is_recorded_as_its_own_run(tmp_path):
    ctx, task = _ctx(tmp_path, "true")
    ctx.own_runs = []
    before = time.time()
    run_verify(ctx, task)
    [(kind, start, end)] = ctx.own_runs
    assert kind == "verify" and before <= start <= end <= time.time()
