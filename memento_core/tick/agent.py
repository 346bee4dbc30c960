"""Steps 9 and 10 of SPEC §4: build the worker prompt, run the agent (SPEC §10).

:func:`build_worker_prompt` writes ``.memento/prompts/ID.md`` (prompt.py builds it);
:func:`run_agent` runs the agent in its own process group with a timeout, its output to the tick
log, inside the sandbox's argv prefix when there is one (:func:`run_confined_agent`,
confine.py). limits.py wraps it for rate limits, fallback presets and the budget (SPEC §14).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import agents, notes, sandbox
from ..crashpoints import crash_point
from ..durations import format_duration
from ..errors import MementoError
from ..locks import atomic_write_bytes
from ..plan.model import Task
from ..state import Heartbeat
from . import confine
from .context import Attempt, TickContext, append_log

SIGTERM_REASON = "interrupted by SIGTERM"


def build_worker_prompt(ctx: TickContext, task: Task) -> tuple[Path, list[notes.Note]]:
    """The worker's prompt in .memento/prompts/ID.md, and the notes it was given."""
    from ..prompt import build_prompt

    ws = ctx.ws
    spec = agents.PRESETS.get(ctx.config.agent_preset)
    separate = spec is not None and spec.separate_system_prompt and ws.system_prompt_path.is_file()
    text, given = build_prompt(ws, ctx.plan(), task, include_system=not separate)
    prompt_file = ws.memento_dir / "prompts" / f"{task.id}.md"
    atomic_write_bytes(prompt_file, text.encode("utf-8"), sync=False)  # made again by every attempt
    # The prompt file is overwritten by the next attempt; the log keeps the evidence
    # that this worker was given the checkpoint (the doctor's recovery-priority check).
    included = "CURRENT_STATE.md included" if ws.checkpoint_path.exists() else "no CURRENT_STATE.md"
    append_log(ctx.log_path, f"[memento] prompt {ws.rel(prompt_file)} "
                             f"({text.count(chr(10))} lines, {included})\n")
    return prompt_file, given

def run_confined_agent(ctx: TickContext, task: Task, prompt_file: Path, beat: Heartbeat, *,
                       at: Attempt) -> tuple[str, int | None]:
    """Step 10 inside the sandbox when there is one (the preset in ctx.config decides its state
    dirs); verify then runs in the same sandbox (``at.wrap``)."""
    at.wrap, refused = confine.prepare(ctx, task, at.snap.untracked, archive_dir=at.snap.archive_dir)
    if refused:
        return refused, None
    return run_agent(ctx, task, prompt_file, beat, at.wrap)

def run_agent(ctx: TickContext, task: Task, prompt_file: Path, beat: Heartbeat,
              wrap: tuple[str, ...] = (), *, system_prompt: Path | None = None,
              context_files: tuple[str, ...] | None = None, timeout: float | None = None) -> tuple[str, int | None]:
    """Run the agent in its own process group with a timeout: ('' or the failure reason, exit code).
    ``system_prompt``, ``context_files`` and ``timeout``: another role's (the reviewer's), else the worker's."""
    config, ws = ctx.config, ctx.ws
    system_prompt = system_prompt or ws.system_prompt_path
    try:
        invocation = agents.build_invocation(
            config, task_id=task.id, do_command=task.do, prompt_file=prompt_file,
            system_prompt_file=system_prompt, workdir=ctx.root,
            context_files=task.context_files if context_files is None else context_files,
            confined=bool(wrap))
    except MementoError as exc:
        append_log(ctx.log_path, f"[memento] {task.id}: {exc}\n")
        return str(exc), None
    env = agents.agent_env(ws, task_id=task.id, prompt_file=prompt_file,
                           system_prompt_file=system_prompt, extra=invocation.env, config=config)
    if wrap:  # .git is read-only in the sandbox: the agent stages into its own index (SPEC §13)
        try:
            env.update(sandbox.agent_git_env(ws))
        except (OSError, MementoError) as exc:
            append_log(ctx.log_path, f"[memento] sandbox: no private git index ({exc})\n")
    append_log(ctx.log_path, f"[memento] tick #{ctx.number} task {task.label}\n")
    limit = timeout or task.timeout_seconds or config.agent_timeout
    with own_run(ctx, "agent"):
        result = agents.run_agent(invocation, cwd=ctx.root, log_path=ctx.log_path, timeout=limit, env=env,
                                  wrap=wrap, on_start=lambda pgid: (beat.update(pgid=pgid),
                                                                    crash_point("tick:agent-running")))
    if result.error:
        return result.error, None
    if result.interrupted:
        return SIGTERM_REASON, None
    if result.timed_out:
        return f"agent timed out after {format_duration(limit)} (its process group was killed)", None
    if result.exit_code != 0:
        return f"agent exited with code {result.exit_code}", result.exit_code
    return "", 0

@contextmanager
def own_run(ctx: TickContext, kind: str) -> Iterator[None]:
    """When a parallel worker's own agent or verify ran (``ctx.own_runs``): a change in its worktree
    at another moment is not its own (crew_judge.py judges it)."""
    if ctx.own_runs is None:
        yield
        return
    run = [kind, time.time(), None]
    ctx.own_runs.append(run)
    try:
        yield
    finally:
        run[2] = time.time()  # its processes are gone: run_in_group waited for the whole group

def commit_memory_writes(ctx: TickContext, task: Task) -> None:
    """Commit what the agent wrote into memory/ without `memento memory write` (attributed to the task)."""
    from ..memory import commit_unattributed
    from .afterwards import best_effort

    best_effort(ctx.ws, "commit_unattributed", commit_unattributed, ctx.ws, task.id)
