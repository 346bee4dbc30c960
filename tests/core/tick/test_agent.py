"""tick/agent.py (steps 9 and 10): the worker's prompt written where the agent reads it (and the
log saying so), the agent run at the project's root in its own process group with the task's id,
its exit code, its timeout and a parallel worker's own run timed. The `command` preset running a
real script."""

from __future__ import annotations

import os
import sys
import time

import pytest

from memento_core.state import Heartbeat
from memento_core.tick.agent import build_worker_prompt, run_agent
from memento_core.tick.claim import claim_task
from memento_core.tick.context import TickContext
from tests.core.scenarios.test_engine import make_ws
from tests.core.tick.ticks import tick_context

SCRIPT = """import os, sys, time
from pathlib import Path
Path(sys.argv[1]).write_text(os.getcwd() + "\\n" + os.environ["MEMENTO_TASK_ID"] + "\\n" + str(os.getpgrp()))
time.sleep(float(sys.argv[3]))
sys.exit(int(sys.argv[2]))
"""


def _ctx(tmp_path, code: int, seconds: float = 0, timeout: str = "20s") -> TickContext:
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    ws = make_ws(tmp_path, f"{sys.executable} {script} {tmp_path / 'seen.txt'} {code} {seconds}")
    ws.config_path.write_text(ws.config_path.read_text().replace('timeout = "20s"', f'timeout = "{timeout}"', 1))
    ctx = tick_context(ws)
    return ctx


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_the_prompt_is_written_for_the_agent_and_the_log_says_so(tmp_path):
    ctx = _ctx(tmp_path, 0)
    path, given = build_worker_prompt(ctx, ctx.plan().task("T-1"))
    assert path == ctx.ws.memento_dir / "prompts" / "T-1.md" and given == []
    assert "T-1" in path.read_text() and "grep -q done hello.txt" in path.read_text()
    assert f"[memento] prompt {ctx.ws.rel(path)} (" in ctx.log_path.read_text()


def test_the_agent_runs_at_the_root_in_a_group_of_its_own_and_its_exit_code_is_the_reason(tmp_path):
    ctx = _ctx(tmp_path, 3)
    task = ctx.plan().task("T-1")
    path, _ = build_worker_prompt(ctx, task)
    claim = claim_task(ctx, task, None, set())
    ctx.own_runs = []
    with Heartbeat(ctx.ws, claim) as beat:
        assert run_agent(ctx, task, path, beat) == ("agent exited with code 3", 3)
    cwd, task_id, pgid = (tmp_path / "seen.txt").read_text().split("\n")
    assert (cwd, task_id) == (str(ctx.root), "T-1")
    assert int(pgid) != os.getpgrp()
    [(kind, start, end)] = ctx.own_runs
    assert kind == "agent" and start <= end


def test_a_slow_agent_is_stopped_at_its_timeout(tmp_path):
    ctx = _ctx(tmp_path, 0, seconds=30, timeout="1s")
    task = ctx.plan().task("T-1")
    path, _ = build_worker_prompt(ctx, task)
    claim = claim_task(ctx, task, None, set())
    began = time.monotonic()
    with Heartbeat(ctx.ws, claim) as beat:
        reason, code = run_agent(ctx, task, path, beat)
    assert reason == "agent timed out after 1s (its process group was killed)" and code is None
    assert time.monotonic() - began < 20
