"""Step 12 of SPEC §4: run the task's ``verify`` (shell, project root, timeout); exit 0 passes.

It runs in the agent's sandbox when there is one (``wrap``), in its own process group, its
output appended to the tick log; the tail of that output goes into the status entry.
"""

from __future__ import annotations

from .. import agents
from ..durations import format_duration
from ..plan.model import Task
from .agent import SIGTERM_REASON, own_run
from .context import TickContext, append_log, tail


def run_verify(ctx: TickContext, task: Task, wrap: tuple[str, ...] = ()) -> tuple[int | None, str, str]:
    """Run the task's verify command: (exit code or None, the output's tail, '' or the failure reason)."""
    log = ctx.log_path
    append_log(log, f"\n[memento] verify {task.id}: {task.verify}\n")
    start = log.stat().st_size
    # Confined, the user site of Python is the agent's private home: a .pth it planted there must
    # not run inside the tests that judge it (the person's own user site is not visible anyway).
    extra = {"PYTHONNOUSERSITE": "1"} if wrap else None
    env = agents.agent_env(ctx.ws, task_id=task.id, config=ctx.config, model=False, extra=extra)
    limit = task.timeout_seconds or ctx.config.verify_timeout  # the task's own `timeout:` first
    with own_run(ctx, "verify"):
        result = agents.run_in_group(task.verify, cwd=ctx.root, log_path=log, timeout=limit,
                                     env=env, shell=True, wrap=wrap)
    output = tail(log, start)
    append_log(log, f"[memento] verify exit code: {result.exit_code}\n")
    if result.interrupted:
        return None, output, SIGTERM_REASON
    if result.timed_out:
        return None, output, f"verify timed out after {format_duration(limit)}"
    if result.error:
        return None, output, f"verify could not run: {result.error}"
    if result.exit_code != 0:
        return result.exit_code, output, f"verify failed with exit code {result.exit_code}"
    return 0, output, ""
