"""The ``openclaw`` preset: OpenClaw ``agent --local`` (docs/agents.md explains each flag)."""

from __future__ import annotations

from pathlib import Path

from ...config.model import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args
from ..usage import tail_rate_limit


def _prompt_digest(path: Path) -> str:
    """A short digest of the prompt, so each attempt gets its own openclaw session."""
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return "noprompt"


def openclaw_message(req: AgentRequest) -> str:
    """The --message openclaw gets: where the prompt is and where to work."""
    return (
        f"Memento task {req.task_id}. Your full instructions (system prompt, then the task) "
        f"are in the file {req.prompt_file}: read it first and follow it. Work only in the "
        f"project at {req.workdir} (use absolute paths there), change only the files the "
        f"task allows, and do not commit."
    )


def build(config: Config, req: AgentRequest) -> Invocation:
    """``openclaw agent --local`` in a session of its own, told where the prompt file is."""
    argv = [
        "openclaw", "agent", "--local",
        "--session-id", f"memento-{req.task_id}-{_prompt_digest(req.prompt_file)}",
        "--timeout", str(max(1, int(config.agent_timeout))),
    ]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += ["--message", openclaw_message(req)]
    return Invocation(tuple(argv), False, None, "openclaw")


SPEC = AgentSpec(
    "openclaw",
    "openclaw",
    "OpenClaw `agent --local`; told to read the prompt file",
    build,
    rate_limit=tail_rate_limit,
)
