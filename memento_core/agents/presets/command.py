"""The ``command`` preset: memento.toml's ``[agent] command``, its placeholders filled in."""

from __future__ import annotations

import shlex
from pathlib import Path

from ...config.model import Config
from ...errors import MementoError
from ..invocation import AgentRequest, AgentSpec, Invocation
from ..usage import tail_rate_limit

PLACEHOLDERS = ("prompt_file", "system_prompt_file", "task_id", "workdir", "model")


def _placeholder_values(config: Config, req: AgentRequest) -> dict[str, str]:
    return {
        "prompt_file": str(req.prompt_file),
        "system_prompt_file": str(req.system_prompt_file),
        "task_id": req.task_id,
        "workdir": str(req.workdir),
        "model": config.agent_model,
    }


def build(config: Config, req: AgentRequest) -> Invocation:
    """The command split as a shell would, each ``{placeholder}`` replaced; prompt on stdin."""
    template = config.agent_command.strip()
    if not template:
        raise MementoError(
            'memento.toml: [agent] preset = "command" needs a command, e.g. '
            'command = "python3 tools/my_agent.py {prompt_file}"'
        )
    try:
        tokens = shlex.split(template)
    except ValueError as exc:
        raise MementoError(f"memento.toml: [agent] command cannot be split: {exc}") from None
    values = _placeholder_values(config, req)
    argv = []
    for token in tokens:
        for key in PLACEHOLDERS:
            token = token.replace("{" + key + "}", values[key])
        argv.append(token)
    argv.extend(config.agent_extra_args)
    return Invocation(tuple(argv), False, Path(req.prompt_file), "command")


SPEC = AgentSpec(
    "command",
    None,
    "memento.toml's [agent] command, placeholders replaced; prompt on stdin",
    build,
    rate_limit=tail_rate_limit,  # [agent] output = "<preset>" reads it as that CLI's
)
