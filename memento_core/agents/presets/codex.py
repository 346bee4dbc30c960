"""The ``codex`` preset: OpenAI Codex CLI ``codex exec`` (README "Agents" explains each flag)."""

from __future__ import annotations

from pathlib import Path

from ...config import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args


def build(config: Config, req: AgentRequest) -> Invocation:
    """``codex exec`` in the project, sandboxed to it, the prompt read from stdin."""
    argv = ["codex", "exec", "--sandbox", "workspace-write", "--cd", str(req.workdir),
            "--color", "never"]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv.append("-")  # the prompt is read from stdin
    return Invocation(tuple(argv), False, Path(req.prompt_file), "codex")


SPEC = AgentSpec(
    "codex",
    "codex",
    "OpenAI Codex CLI `codex exec`; prompt on stdin, workspace-write sandbox",
    build,
)
