"""The ``gemini`` preset: Gemini CLI in headless mode (README "Agents" explains each flag)."""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args

# Gemini CLI appends its --prompt text to what it reads on stdin (the prompt file).
GEMINI_PROMPT_SUFFIX = "Do the task described above, following every rule in it, then stop."


def build(config: Config, req: AgentRequest) -> Invocation:
    """``gemini --prompt``, the prompt file on stdin, edits auto-approved."""
    argv = ["gemini", "--approval-mode", "auto_edit"]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += ["--prompt", GEMINI_PROMPT_SUFFIX]
    return Invocation(tuple(argv), False, Path(req.prompt_file), "gemini")


SPEC = AgentSpec(
    "gemini",
    "gemini",
    "Gemini CLI headless mode; prompt on stdin, edits auto-approved",
    build,
)
