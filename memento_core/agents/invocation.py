"""What a preset is given and what it returns: the values every preset module shares."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..config.model import Config
from .usage import RateLimit, Usage


@dataclass(frozen=True)
class AgentRequest:
    """What a preset needs to know about one task's run."""

    task_id: str
    do_command: str | None
    prompt_file: Path
    system_prompt_file: Path
    workdir: Path
    # The task's context_files; None: not given (a preset that needs them reads the plan).
    context_files: tuple[str, ...] | None = None
    # The run is confined in Memento's sandbox (SPEC §13): a CLI's own sandbox, which cannot
    # nest inside it (codex's bubblewrap), is turned off; Memento's confines the CLI instead.
    confined: bool = False


@dataclass(frozen=True)
class Invocation:
    """A ready-to-run agent command: an argv tuple, or a shell string when ``shell``."""

    argv: tuple[str, ...] | str
    shell: bool
    stdin_path: Path | None
    preset: str
    # Variables the CLI needs on top of the agent's environment (gemini's trust).
    env: Mapping[str, str] = field(default_factory=dict)
    # How its output is read as it arrives (stream.StreamLog): the output preset's renderer
    # factory and line filter; None: copied into the log as printed.
    stream: Callable[[], Callable] | None = None
    stream_wanted: Callable[[bytes, int], bool] | None = None

    def display(self) -> str:
        """The command line as one string, for logs."""
        return self.argv if isinstance(self.argv, str) else shlex.join(self.argv)


@dataclass(frozen=True)
class AgentSpec:
    """One preset: its name, the binary it needs (None: none), and how to build its command."""

    name: str
    binary: str | None
    description: str
    build: Callable[[Config, AgentRequest], Invocation]
    # The CLI takes the system prompt through its own flag, so the prompt file
    # must not carry it a second time.
    separate_system_prompt: bool = False
    # What the CLI's own output says (usage.py): tokens and cost, a rate limit, and
    # the answer as text when the CLI printed it inside JSON. None: nothing to read.
    parse_usage: Callable[[str], Usage | None] | None = None
    rate_limit: Callable[..., RateLimit | None] | None = None
    readable: Callable[[str], str | None] | None = None
    # The CLI streams JSON events (SPEC §20): a new renderer per attempt (stream.Render: an
    # event to its readable lines), and a look at a raw line that skips events shown by none.
    stream: Callable[[], Callable] | None = None
    stream_wanted: Callable[[bytes, int], bool] | None = None
    # Text every line ``parse_usage`` reads holds: while the agent runs, the budget watch parses
    # only those lines (logpipe.LineTap); None: the whole output.
    usage_marker: bytes | None = None
    # The provider's usage windows the CLI reported (Claude Code's rate_limit_event).
    windows: Callable[[str], list] | None = None


def model_args(flag: str, config: Config) -> list[str]:
    """``[flag, model]`` when memento.toml sets ``[agent] model``, else nothing."""
    model = config.agent_model.strip()
    return [flag, model] if model else []
