"""The ``aider`` preset: aider with ``--message-file`` (README "Agents" explains each flag)."""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from ...errors import MementoError
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args

_GLOB_CHARS = set("*?[")


def _task_context_files(req: AgentRequest) -> tuple[str, ...]:
    """The task's context_files: given by the caller, else read from the plan (best effort)."""
    if req.context_files is not None:
        return tuple(req.context_files)
    from ...plan import parse_plan  # only the aider preset needs the plan here

    try:
        task = parse_plan(Path(req.workdir) / "docs" / "MASTER_PLAN.md").task(req.task_id)
    except (MementoError, OSError):
        return ()
    return tuple(task.context_files) if task is not None else ()


def _aider_files(req: AgentRequest) -> list[str]:
    """context_files aider can open for editing: plain paths, not folders or patterns."""
    files = []
    for entry in _task_context_files(req):
        entry = entry.strip()
        if (not entry or entry.startswith("-") or entry.endswith("/")
                or _GLOB_CHARS & set(entry) or (Path(req.workdir) / entry).is_dir()):
            continue
        files.append(entry)
    return files


def build(config: Config, req: AgentRequest) -> Invocation:
    """aider on the prompt file, the task's context_files open, no commits, no prompts."""
    state = Path(req.workdir) / ".memento" / "worker"  # writable in the sandbox (SPEC §13)
    argv = ["aider", "--message-file", str(req.prompt_file)]
    if Path(req.system_prompt_file).is_file():
        argv += ["--read", str(req.system_prompt_file)]
    argv += [
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-suggest-shell-commands",
        "--no-detect-urls",
        "--no-pretty",
        "--no-stream",
        "--no-fancy-input",
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
    ]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += _aider_files(req)
    return Invocation(tuple(argv), False, None, "aider")


SPEC = AgentSpec(
    "aider",
    "aider",
    "aider with --message-file; the task's context_files opened for editing",
    build,
    separate_system_prompt=True,
)
