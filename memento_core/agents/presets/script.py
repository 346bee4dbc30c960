"""The ``script`` preset: the task's ``do:`` shell command, no model."""

from __future__ import annotations

from ...config.model import Config
from ...errors import MementoError
from ..invocation import AgentRequest, AgentSpec, Invocation


def build(config: Config, req: AgentRequest) -> Invocation:
    """The task's ``do:`` line, run by /bin/sh in the project root."""
    do = (req.do_command or "").strip()
    if not do:
        raise MementoError(f"task {req.task_id} has no `do:` command; the script preset needs one")
    return Invocation(do, True, None, "script")


SPEC = AgentSpec(
    "script",
    None,
    "the task's `do:` shell command in the project root; no model",
    build,
)
