"""memento.toml as values: the validated Config and the names it takes (SPEC §10).

What load.py builds and every reader of memento.toml receives: :class:`Config`
(durations in seconds), :class:`AgentSettings` for another role's agent
([review], [architect]), the [chat] rooms, the preset names and the defaults,
and the shape of ``[git] author``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

PRESET_NAMES: tuple[str, ...] = (
    "claude",
    "codex",
    "aider",
    "gemini",
    "openclaw",
    "script",
    "command",
)

DEFAULT_PRESET = "script"
DEFAULT_AGENT_TIMEOUT = "30min"
DEFAULT_VERIFY_TIMEOUT = "10min"
DEFAULT_SCHEDULE_EVERY = "5min"
DEFAULT_FORGE_API = "https://api.github.com"
# What [notify] can send (SPEC §15); all of them unless `events` names fewer.
NOTIFY_EVENTS: tuple[str, ...] = ("blocked", "breaker", "complete", "dirty", "rate_limited", "budget", "architect",
                                  "stale_tick", "question")


_AUTHOR_RE = re.compile(r"^\s*([^<>]*?)\s*<([^<>\s]+)>\s*$")


def parse_author(text: str) -> tuple[str, str] | None:
    """``"Name <email>"`` as (name, email); None if ``text`` has another shape."""
    m = _AUTHOR_RE.match(text)
    if not m or not m.group(1):
        return None
    return m.group(1), m.group(2)


@dataclass(frozen=True)
class AgentSettings:
    """Another role's agent: a section with the keys of ``[agent]`` ([review], [architect])."""

    preset: str = DEFAULT_PRESET
    command: str = ""
    model: str = ""
    extra_args: tuple[str, ...] = ()
    timeout: float = 1800.0
    max_rounds: int = 2  # [review] only: failed reviews before the task blocks for a person
    output: str = ""  # which CLI's output the `command` preset's agent prints (usage, rate limits)


@dataclass(frozen=True)
class TelegramChat:
    """[chat] telegram: a bot's token file, the chats it obeys (and optionally who in them)."""

    token_file: str
    chats: tuple[int, ...]
    senders: tuple[int, ...] = ()  # empty: anyone in the listed chats
    api: str = "https://api.telegram.org"  # a self-hosted Bot API server (or the tests' stand-in)


@dataclass(frozen=True)
class MatrixChat:
    """[chat] matrix: the account Memento posts as, its token file, the room and who may steer."""

    homeserver: str
    user: str
    token_file: str
    room: str
    senders: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    """A validated memento.toml; durations in seconds."""

    agent_preset: str = DEFAULT_PRESET
    agent_command: str = ""
    agent_timeout: float = 1800.0
    agent_model: str = ""
    agent_extra_args: tuple[str, ...] = ()
    verify_timeout: float = 600.0
    schedule_every: float = 300.0
    schedule_every_text: str = DEFAULT_SCHEDULE_EVERY
    git_author: str = ""
    workers_max: int = 1
    workers_remote: str = ""  # a git remote: several hosts work the plan through it (SPEC §12)
    workers_host: str = ""  # this host's name in claims and entries; empty: the hostname
    # Which CLI's output the `command` preset's agent prints (its usage and limits are
    # read as that preset's); empty: the preset's own.
    agent_output: str = ""
    agent_fallback: tuple[str, ...] = ()
    budget_daily_usd: float = 0.0
    budget_task_usd: float = 0.0
    budget_daily_tokens: int = 0
    budget_task_tokens: int = 0
    budget_window_pause_at: float = 0.0  # a percentage; 0: off (SPEC §20)
    sandbox_mode: str = "auto"
    sandbox_network: str = "model"  # model | all | none (SPEC §13; true/false read as all/none)
    sandbox_allow: tuple[str, ...] = ()  # hosts or host:port the agent may reach besides its model
    sandbox_writable: tuple[str, ...] = ()
    sandbox_readable: tuple[str, ...] = ()  # paths of the home folder the agent may read
    sandbox_env: tuple[str, ...] = ()  # more variables passed to the agent and verify
    notify_urls: tuple[str, ...] = ()
    notify_events: tuple[str, ...] = NOTIFY_EVENTS
    # [chat] (SPEC §18): rooms where Memento posts what [notify] would and reads replies; None: not set.
    chat_telegram: TelegramChat | None = None
    chat_matrix: MatrixChat | None = None
    # [architect] (SPEC §16): its own agent settings (each key not set is the agent's) and when it runs itself.
    architect: AgentSettings = field(default_factory=AgentSettings)
    architect_auto: bool = False
    architect_max_runs_per_day: int = 3
    keys: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    review: AgentSettings | None = None  # [review]: the acceptance gate (SPEC §16); None: no review
    # [forge] (SPEC §19): where issues come from and status goes back to.
    forge_land: str = "direct"
    forge_api: str = DEFAULT_FORGE_API
    forge_repo: str = ""  # OWNER/REPO; empty: read from the remote's URL
    forge_remote: str = "origin"
    forge_stack: bool = False

    def as_agent(self, role: AgentSettings) -> Config:
        """This config with ``role``'s agent in [agent]'s place (no fallback, the preset's own output)."""
        return replace(self, agent_preset=role.preset, agent_command=role.command, agent_model=role.model,
                       agent_extra_args=role.extra_args, agent_timeout=role.timeout, agent_output=role.output,
                       agent_fallback=())

    @property
    def author(self) -> tuple[str, str] | None:
        """``git_author`` as (name, email) for git's commits; None when it is not set."""
        return parse_author(self.git_author)

    @property
    def host(self) -> str:
        """This host's name in claims and status entries: $MEMENTO_HOST (memento.toml is shared by
        the fleet), else ``[workers] host``, else the hostname."""
        import os
        import socket

        return os.environ.get("MEMENTO_HOST", "").strip() or self.workers_host or socket.gethostname()
