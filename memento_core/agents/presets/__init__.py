"""The agent presets (SPEC §10): one module each, registered here by name.

A preset turns memento.toml plus a task into an ``Invocation``: ``command``
and ``script``, and the real coding CLIs ``claude``, ``codex``, ``aider``,
``gemini`` and ``openclaw``. Each real CLI's builder returns its documented
non-interactive invocation; docs/agents.md explains every flag and
where the documentation is thin. ``[agent] model`` is passed with the CLI's
model flag when set; ``[agent] extra_args`` come after Memento's flags
(before a trailing prompt argument).

To add a preset: a module here with its ``build`` and ``SPEC``, its name in
``_Presets.NAMES`` below and in ``config/model.PRESET_NAMES``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ...config.model import PRESET_NAMES, Config
from ...errors import MementoError
from ..invocation import AgentRequest, AgentSpec, Invocation


class _Presets(Mapping[str, AgentSpec]):
    """The presets by name, each module imported the first time its spec is asked for: a tick
    asks for its own preset only, and importing the other CLIs' (their builders, stream readers
    and usage parsers) cost every tick a few milliseconds of CPU for nothing (issue 42)."""

    # In the order `memento agents` and the doctor list them; each is the module presets/<name>.py.
    NAMES = ("claude", "codex", "aider", "gemini", "openclaw", "command", "script")

    def __getitem__(self, name: str) -> AgentSpec:
        # Each import by name, where it is needed (STYLE: greppable, no string table).
        if name == "claude":
            from . import claude as module
        elif name == "codex":
            from . import codex as module
        elif name == "aider":
            from . import aider as module
        elif name == "gemini":
            from . import gemini as module
        elif name == "openclaw":
            from . import openclaw as module
        elif name == "command":
            from . import command as module
        elif name == "script":
            from . import script as module
        else:
            raise KeyError(name)
        return module.SPEC

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMES)

    def __len__(self) -> int:
        return len(self.NAMES)


PRESETS: Mapping[str, AgentSpec] = _Presets()


def _preset(name: str) -> AgentSpec:
    """The preset called ``name``; MementoError naming the ones there are if none is."""
    spec = PRESETS.get(name)
    if spec is not None:
        return spec
    available = ", ".join(sorted(PRESETS))
    if name in PRESET_NAMES:
        raise MementoError(
            f"the {name!r} agent preset is not available in this version yet; "
            f"available: {available}"
        )
    raise MementoError(
        f"unknown agent preset {name!r}; one of {', '.join(PRESET_NAMES)} "
        f"(available now: {available})"
    )


def build_invocation(
    config: Config,
    *,
    task_id: str,
    do_command: str | None,
    prompt_file: Path,
    system_prompt_file: Path,
    workdir: Path,
    context_files: Sequence[str] | None = None,
    confined: bool = False,
) -> Invocation:
    """The command that runs ``config``'s agent on one task; MementoError if it cannot be built.

    ``context_files`` (the task's) is used by presets that open files
    themselves (aider); when None they read it from the plan. ``confined``: the
    command runs in Memento's sandbox (AgentRequest.confined).
    """
    spec = _preset(config.agent_preset)
    request = AgentRequest(
        task_id, do_command, Path(prompt_file), Path(system_prompt_file), Path(workdir),
        tuple(context_files) if context_files is not None else None, confined,
    )
    invocation = spec.build(config, request)
    # Its output is read as the output preset prints it (the `command` preset's agent may print
    # claude's stream): that preset's renderer makes the live log lines (SPEC §20).
    output = PRESETS.get(config.agent_output or config.agent_preset)
    if output is not None and output.stream is not None:
        invocation = dataclasses.replace(invocation, stream=output.stream,
                                         stream_wanted=output.stream_wanted)
    return invocation
