"""The ``claude`` preset: Claude Code in print mode (README "Agents" explains each flag)."""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args


def build(config: Config, req: AgentRequest) -> Invocation:
    """``claude -p``, the prompt on stdin, edits accepted, the system prompt by its own flag."""
    argv = ["claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "text"]
    # The prompt on stdin starts with the system prompt too; a missing file must
    # not make claude refuse to start.
    if Path(req.system_prompt_file).is_file():
        argv += ["--append-system-prompt-file", str(req.system_prompt_file)]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    return Invocation(tuple(argv), False, Path(req.prompt_file), "claude")


SPEC = AgentSpec(
    "claude",
    "claude",
    "Claude Code in print mode; prompt on stdin, edits auto-accepted",
    build,
    separate_system_prompt=True,
)
