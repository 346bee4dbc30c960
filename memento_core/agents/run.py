"""Running one agent invocation (SPEC §4 step 10): its environment and its lines in the log."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..config.model import Config
from ..durations import format_duration
from ..runlog import utc_stamp
from ..workspace import Workspace
from .invocation import Invocation
from .process import DEFAULT_GRACE, ProcResult, append_to_log, run_in_group
from .reaper import tick_identity
from .stream import StreamLog


def _footer(result: ProcResult) -> str:
    took = format_duration(result.duration)
    if result.error:
        return f"agent did not start: {result.error}"
    if result.timed_out:
        return f"agent timed out after {took}"
    if result.interrupted:
        return f"agent interrupted after {took}"
    return f"agent exited with code {result.exit_code} after {took}"


def run_agent(
    invocation: Invocation,
    *,
    cwd: Path | str,
    log_path: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    grace: float = DEFAULT_GRACE,
    wrap: Sequence[str] = (),
) -> ProcResult:
    """Run an Invocation through run_in_group (under the prefix ``wrap``), with header and footer log
    lines; a CLI that streams JSON events gets a line per tool call in the log as it works."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    append_to_log(
        log_path,
        f"[memento] {utc_stamp()} agent ({invocation.preset}) in {cwd}: {invocation.display()}\n",
    )
    result = run_in_group(
        invocation.argv,
        cwd=cwd,
        log_path=log_path,
        timeout=timeout,
        stdin_path=invocation.stdin_path,
        env=env,
        shell=invocation.shell,
        on_start=on_start,
        preset=invocation.preset,
        grace=grace,
        wrap=wrap,
        stream=StreamLog(invocation.stream(), invocation.stream_wanted, str(cwd))
        if invocation.stream is not None else None,
    )
    append_to_log(log_path, f"\n[memento] {utc_stamp()} {_footer(result)}\n")
    return result


def agent_env(
    workspace: Workspace,
    *,
    task_id: str | None = None,
    prompt_file: Path | None = None,
    system_prompt_file: Path | None = None,
    extra: Mapping[str, str] | None = None,
    config: Config | None = None,
    model: bool = True,
) -> dict[str, str]:
    """The agent's environment: the allowlist of SPEC §13 (sandbox/environment.py) cut from ours,
    plus MEMENTO_* facts about the project and task, then ``extra``.

    ``config``: its preset's variables (``model``: false for verify, which gets none) and
    ``[sandbox] env``; without one, the base list only. PATH is kept (os.defpath if unset); git
    never prompts. The person's own MEMENTO_* are dropped unless ``[sandbox] env`` names them.
    """
    # Deferred: the agents package stays light to import.
    from ..sandbox.environment import allowed_env

    names = config.sandbox_env if config is not None else ()
    preset = config.agent_preset if config is not None and model else None
    env = allowed_env(os.environ, preset=preset, extra_names=names)
    if not env.get("PATH"):
        env["PATH"] = os.defpath
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("PYTHONUNBUFFERED", "1")  # so the log can be followed live
    env["MEMENTO_PROJECT"] = str(workspace.root)
    # Which tick started it: recovery kills a process group only when its leader says so.
    env["MEMENTO_TICK"] = tick_identity()
    env["MEMENTO_PLAN"] = str(workspace.plan_path)
    env["MEMENTO_PROJECT_MAP"] = str(workspace.map_path)
    env["MEMENTO_TICK_RESULT"] = str(workspace.tick_result_path)
    if task_id:
        env["MEMENTO_TASK_ID"] = task_id
    if prompt_file is not None:
        env["MEMENTO_PROMPT_FILE"] = str(prompt_file)
    if system_prompt_file is not None:
        env["MEMENTO_SYSTEM_PROMPT_FILE"] = str(system_prompt_file)
    if extra:
        env.update(extra)
    return env
