"""memento.toml: how to run here (SPEC §10).

Read with tomllib, validated into a frozen ``Config``; every problem is a
MementoError naming the file, the key and (when it can be found) the line.
Only ``set_schedule_every`` writes the file: it edits the one ``every = …``
line when it can (comments survive) and otherwise rewrites the whole file
with tomli-w, which drops comments.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .durations import parse_duration
from .errors import MementoError
from .locks import atomic_write_bytes, file_lock, lock_path_for

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

DEFAULT_CONFIG_TOML = """\
# memento.toml: how Memento runs in this project.
# Durations: 90s, 5min, 5m, 1h, 1h30m, 2d (a plain number is seconds).

[agent]
# claude | codex | aider | gemini | openclaw | script | command
#   script:  runs each task's `do:` command; needs no model.
#   command: runs `command` below; {prompt_file}, {system_prompt_file},
#            {task_id}, {workdir} and {model} are replaced, and the prompt
#            is also given on standard input.
preset = "script"
command = ""            # e.g. "python3 tools/my_agent.py {prompt_file}"
timeout = "30min"       # per task, unless the task sets `timeout`
model = ""              # passed to presets that take a model; empty: the CLI's default
extra_args = []         # appended to the agent's command line
fallback = []           # presets tried in the same tick when this one is rate limited, e.g. ["codex"]

# [review]              # the acceptance gate: an agent checks each task's `accept:` criteria
# preset = "claude"     # after verify passes (the keys of [agent]; a different model is the point)
# model = "opus"
# max_rounds = 2        # failed reviews before the task is blocked for a person

[budget]
daily_usd = 0           # stop ticking for the day once today's cost reaches this (0: no limit)
task_usd = 0            # an attempt that costs more fails (0: no limit)
daily_tokens = 0        # the same in tokens (in + out), for every CLI that reports them (0: no limit)
task_tokens = 0
window_pause_at = 0     # Claude Code: no attempt while a usage window is this % used (0: off)

[verify]
timeout = "10min"

[schedule]
every = "5min"          # cron interval; also the dashboard's auto-tick interval

[git]
author = ""             # "Name <email>"; empty: your git identity, else Memento <memento@localhost>

[workers]
max = 1                 # tasks run at once in `parallel: true` phases
# remote = "origin"     # several machines on one plan: claims and results go through this git remote
# host = ""             # this machine's name in claims and status entries (default: its hostname)

[sandbox]
mode = "auto"           # auto | bwrap | none. auto: bubblewrap when it works here, else unconfined
network = "model"       # model: only the preset's model API and `allow` | all | none (loopback only)
writable = []           # extra paths the agent may write, e.g. "~/.cache/pip"
readable = []           # extra paths of the home folder the agent may read, e.g. "~/datasets"
env = []                # extra environment variables passed to the agent and verify, e.g. "PYTHONPATH"
allow = []              # more hosts the agent (and verify) may reach, e.g. ["pypi.org", "files.pythonhosted.org"]

[notify]
urls = []               # Apprise URLs, e.g. ["tgram://BOT/CHAT", "ntfys://ntfy.sh/TOPIC", "json://host/path"]
# events = ["blocked", "breaker", "complete", "dirty", "rate_limited", "budget", "architect", "question"]

[architect]
# The architect (`memento architect`) turns blocked tasks and notes into plan
# changes. It takes the keys of [agent] (preset, command, model, extra_args, timeout);
# each one not set here is the agent's.
auto = false            # a tick that finds the pipeline blocked runs the architect
max_runs_per_day = 3    # automatic runs per UTC day; after that the person is alerted

[keys]
# Dashboard key remaps, action = "key", e.g.:
# pause = "f7"
"""

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


_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$")
_REMOTE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


def _fleet(v: _Validator) -> dict[str, Any]:
    """[workers] remote and host (SPEC §12 "Across machines"), validated."""
    remote = v.string("workers", "remote", "").strip()
    if remote and (not _REMOTE_RE.match(remote) or ".." in remote):
        raise v.fail("workers", "remote", f'expected the name of a git remote such as "origin", got {remote!r}')
    host = v.string("workers", "host", "").strip()
    if host and not _HOST_RE.match(host):
        raise v.fail("workers", "host", f"expected a name of letters, digits, '.', '_', '-' or '@', got {host!r}")
    return {"workers_remote": remote, "workers_host": host}


def _key_line(text: str, section: str, key: str) -> int:
    """Best-effort 1-based line of ``key`` in ``[section]`` (0 if not found)."""
    lines = text.splitlines()
    current = ""
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
    assign = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    dotted = re.compile(rf"^\s*{re.escape(section)}\s*\.\s*{re.escape(key)}\s*=")
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m:
            current = m.group(1)
            continue
        if current == section and assign.match(line):
            return number
        if current == "" and dotted.match(line):
            return number
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m and m.group(1) == section:
            return number
    return 0


class _Validator:
    def __init__(self, path: Path, text: str, raw: dict[str, Any]):
        self.path = path
        self.text = text
        self.raw = raw

    def fail(self, section: str, key: str, message: str) -> MementoError:
        return MementoError(
            f"[{section}] {key}: {message}", path=self.path, line=_key_line(self.text, section, key)
        )

    def table(self, section: str) -> dict[str, Any]:
        value = self.raw.get(section, {})
        if not isinstance(value, dict):
            raise MementoError(
                f"[{section}] must be a table, got {type(value).__name__}",
                path=self.path,
                line=_key_line(self.text, "", section),
            )
        return value

    def string(self, section: str, key: str, default: str) -> str:
        value = self.table(section).get(key, default)
        if not isinstance(value, str):
            raise self.fail(section, key, f"expected a string, got {value!r}")
        return value

    def dollars(self, section: str, key: str) -> float:
        value = self.table(section).get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(section, key, f"expected an amount in US dollars (0 or more), got {value!r}")
        return float(value)

    def tokens(self, section: str, key: str) -> int:
        value = self.table(section).get(key, 0)
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0
                or value == float("inf") or value != int(value)):
            raise self.fail(section, key, f"expected a whole number of tokens (0 or more), got {value!r}")
        return int(value)

    def percent(self, section: str, key: str) -> float:
        value = self.table(section).get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
            raise self.fail(section, key, f"expected a percentage from 1 to 100 (0: off), got {value!r}")
        if 0 < value < 1:
            raise self.fail(section, key, f"a percentage from 1 to 100, e.g. 95 (not a fraction), got {value!r}")
        return float(value)

    def presets(self, section: str, key: str, default: list) -> tuple[str, ...]:
        value = self.table(section).get(key, default)
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise self.fail(section, key, f"expected a list of preset names, got {value!r}")
        for name in value:
            if name not in PRESET_NAMES:
                raise self.fail(section, key, f"unknown preset {name!r}; one of {', '.join(PRESET_NAMES)}")
        return tuple(value)

    def duration(self, section: str, key: str, default: str) -> tuple[float, str]:
        value = self.table(section).get(key, default)
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise self.fail(section, key, str(exc)) from None
        if seconds <= 0:
            raise self.fail(section, key, f"must be longer than zero, got {value!r}")
        return seconds, value if isinstance(value, str) else str(value)


def config_from_dict(
    raw: dict[str, Any], *, path: Path | str = "memento.toml", text: str = ""
) -> Config:
    """Validate parsed TOML into a Config; errors name ``path`` and the key's line in ``text``."""
    v = _Validator(Path(path), text, raw)
    preset = v.string("agent", "preset", DEFAULT_PRESET)
    if preset not in PRESET_NAMES:
        raise v.fail(
            "agent", "preset", f"unknown preset {preset!r}; one of {', '.join(PRESET_NAMES)}"
        )
    command = v.string("agent", "command", "")
    if preset == "command" and not command.strip():
        raise v.fail("agent", "command", 'preset "command" needs a command, e.g. '
                     'command = "python3 tools/my_agent.py {prompt_file}"')
    agent_timeout, _ = v.duration("agent", "timeout", DEFAULT_AGENT_TIMEOUT)
    model = v.string("agent", "model", "")
    fallback = v.presets("agent", "fallback", [])
    if "aider" in (preset, *fallback) and not model.strip():
        # Without a model aider starts a browser login and waits for a person (SPEC §14).
        where = "model" if "model" in v.table("agent") else "preset" if preset == "aider" else "fallback"
        raise v.fail("agent", where,
                     'the aider preset needs [agent] model to run unattended, e.g. model = "sonnet" '
                     'or "openai/gpt-4o" (without one aider starts a browser login and waits)')
    extra = v.table("agent").get("extra_args", [])
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise v.fail("agent", "extra_args", f"expected a list of strings, got {extra!r}")
    verify_timeout, _ = v.duration("verify", "timeout", DEFAULT_VERIFY_TIMEOUT)
    every, every_text = v.duration("schedule", "every", DEFAULT_SCHEDULE_EVERY)
    author = v.string("git", "author", "")
    if author.strip() and parse_author(author) is None:
        raise v.fail("git", "author", f'expected "Name <email>", got {author!r}')
    workers = v.table("workers").get("max", 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise v.fail("workers", "max", f"expected a whole number of at least 1, got {workers!r}")
    output = v.string("agent", "output", "")
    if output and output not in PRESET_NAMES:
        raise v.fail("agent", "output", f"unknown preset {output!r}; one of {', '.join(PRESET_NAMES)}")
    sandbox = _sandbox(v)
    base = AgentSettings(preset, command, model, tuple(extra), agent_timeout)
    review = agent_section(v, "review", base, max_rounds=True)
    architect = agent_section(v, "architect", base, runs=v.table("architect").get("auto", False) is True) or base
    keys = v.table("keys")
    for action, key in keys.items():
        if not isinstance(key, str) or not key:
            raise v.fail("keys", action, f'expected a key name such as "f7", got {key!r}')
    return Config(
        agent_preset=preset,
        agent_command=command,
        agent_timeout=agent_timeout,
        agent_model=model,
        agent_extra_args=tuple(extra),
        verify_timeout=verify_timeout,
        schedule_every=every,
        schedule_every_text=every_text.strip(),
        git_author=author.strip(),
        workers_max=workers,
        **_fleet(v),
        agent_output=output,
        agent_fallback=fallback,
        budget_daily_usd=v.dollars("budget", "daily_usd"),
        budget_task_usd=v.dollars("budget", "task_usd"),
        budget_daily_tokens=v.tokens("budget", "daily_tokens"),
        budget_task_tokens=v.tokens("budget", "task_tokens"),
        budget_window_pause_at=v.percent("budget", "window_pause_at"),
        **sandbox,
        **_notify(v),
        **_chat(v),
        **_architect_runs(v),
        **_forge(v),
        architect=architect,
        keys=dict(keys),
        raw=raw,
        review=review,
    )


def agent_section(v: _Validator, section: str, base: AgentSettings, *, max_rounds: bool = False,
                  runs: bool = True) -> AgentSettings | None:
    """``[section]`` with the keys of [agent]; None when absent. Keys left out are the agent's when
    the preset is the agent's, else the preset's defaults. ``runs``: the role runs by itself
    (the reviewer always, the architect with ``auto = true``), so the agent's ``script`` preset,
    which runs no model, cannot be inherited either."""
    if section not in v.raw:
        return None
    v.table(section)
    preset = v.string(section, "preset", base.preset)
    if preset not in PRESET_NAMES or (preset == "script" and "preset" in v.table(section)):
        raise v.fail(section, "preset", f"unknown preset {preset!r} (script runs no model); one of "
                     + ", ".join(p for p in PRESET_NAMES if p != "script"))
    if preset == "script" and runs:
        raise v.fail(section, "preset", f'[{section}] takes [agent] preset "script", which runs no model: '
                     f'set a preset in [{section}], e.g. preset = "claude"')
    same = preset == base.preset
    command = v.string(section, "command", base.command if same else "")
    if preset == "command" and not command.strip():
        raise v.fail(section, "command", 'preset "command" needs a command, e.g. '
                     'command = "python3 tools/reviewer.py {prompt_file}"')
    model = v.string(section, "model", base.model if same else "")
    if preset == "aider" and not model.strip():
        raise v.fail(section, "model", "the aider preset needs a model to run unattended")
    extra = v.table(section).get("extra_args", list(base.extra_args) if same else [])
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise v.fail(section, "extra_args", f"expected a list of strings, got {extra!r}")
    timeout = v.duration(section, "timeout", "")[0] if "timeout" in v.table(section) else base.timeout
    rounds = v.table(section).get("max_rounds", 2) if max_rounds else 2
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise v.fail(section, "max_rounds", f"expected a whole number of at least 1, got {rounds!r}")
    output = v.string(section, "output", "")
    if output and output not in PRESET_NAMES:
        raise v.fail(section, "output", f"unknown preset {output!r}; one of {', '.join(PRESET_NAMES)}")
    return AgentSettings(preset, command, model, tuple(extra), timeout, rounds, output)


SANDBOX_MODES = ("auto", "bwrap", "none")

# Never passed to the agent, whatever [sandbox] env says (SPEC §13; sandbox/environment.py).
ENV_NEVER = frozenset({
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "TMUX", "TMUX_PANE", "STY", "DISPLAY",
    "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
    "NPM_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "CARGO_REGISTRY_TOKEN", "KUBECONFIG",
    "HCLOUD_TOKEN", "DIGITALOCEAN_TOKEN", "MEMENTO_SANDBOX", "MEMENTO_TICK",
})
ENV_NEVER_PREFIXES = ("DBUS_", "AWS_", "AZURE_", "GITHUB_", "GH_", "GITLAB_", "CLOUDSDK_", "CLOUDFLARE_",
                      "TWINE_", "PYPI_", "VAULT_", "DOCKER_")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_never(name: str) -> bool:
    """A variable the agent is never given, whatever ``[sandbox] env`` says."""
    return name in ENV_NEVER or name.startswith(ENV_NEVER_PREFIXES)


def _sandbox(v: _Validator) -> dict[str, Any]:
    """[sandbox] mode, network, writable, allow (SPEC §13), validated."""
    from .hosts import NETWORK_MODES, parse_host

    mode = v.string("sandbox", "mode", "auto")
    if mode not in SANDBOX_MODES:
        raise v.fail("sandbox", "mode", f"unknown mode {mode!r}; one of {', '.join(SANDBOX_MODES)}")
    network = v.table("sandbox").get("network", "model")
    network = {True: "all", False: "none"}.get(network, network) if isinstance(network, bool) else network
    if network not in NETWORK_MODES:
        raise v.fail("sandbox", "network", f"unknown network {network!r}; one of {', '.join(NETWORK_MODES)} "
                     "(true and false are all and none)")
    writable = v.table("sandbox").get("writable", [])
    if not isinstance(writable, list) or not all(isinstance(w, str) and w.strip() for w in writable):
        raise v.fail("sandbox", "writable", f'expected a list of paths such as "~/.cache/pip", got {writable!r}')
    allow = v.table("sandbox").get("allow", [])
    if not isinstance(allow, list):
        raise v.fail("sandbox", "allow", f'expected a list of hosts such as ["pypi.org", "example.com:8443"], '
                     f"got {allow!r}")
    for entry in allow:
        if not isinstance(entry, str) or parse_host(entry) is None:
            raise MementoError(f'[sandbox] allow: {entry!r} is not a host or host:port (e.g. "pypi.org", '
                               '"*.example.com", "10.0.0.5:5432", "[::1]:8080")', path=v.path,
                               line=_entry_line(v.text, "sandbox", "allow", entry))
    return {"sandbox_mode": mode, "sandbox_network": network,
            "sandbox_writable": tuple(w.strip() for w in writable),
            "sandbox_allow": tuple(entry.strip() for entry in allow), **_sandbox_home(v)}


def _entry_line(text: str, section: str, key: str, entry: object) -> int:
    """The line of ``entry`` in the list ``key`` of ``[section]`` (a list may span lines), else the key's."""
    start = _key_line(text, section, key)
    if start and isinstance(entry, str):
        lines = text.splitlines()
        for number in range(start, min(len(lines), start + 200) + 1):
            if f'"{entry}"' in lines[number - 1] or f"'{entry}'" in lines[number - 1]:
                return number
            if number > start and re.match(r"^\s*(\[|[A-Za-z0-9_\"'-]+\s*=)", lines[number - 1]):
                break
    return start


def _sandbox_home(v: _Validator) -> dict[str, Any]:
    """[sandbox] readable (paths of the home folder) and env (variable names), SPEC §13."""
    table = v.table("sandbox")
    readable = table.get("readable", [])
    if not isinstance(readable, list):
        readable = [readable]
    for entry in readable:
        path = entry.strip() if isinstance(entry, str) else ""
        if not (path == "~" or path.startswith(("~/", "/"))) or any(c in path for c in "\0\n"):
            raise v.fail("sandbox", "readable", f'expected a list of paths of the home folder such as '
                         f'"~/datasets", got {entry!r}')
    names = table.get("env", [])
    if not isinstance(names, list):
        names = [names]
    for name in names:
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise v.fail("sandbox", "env", f'expected a list of variable names such as "PYTHONPATH", got {name!r}')
        if env_never(name):
            raise v.fail("sandbox", "env", f"{name} is never passed to the agent (no agent sockets, "
                         "terminals, display, cloud or forge tokens reach it; see docs/confinement.md)")
    return {"sandbox_readable": tuple(r.strip() for r in readable), "sandbox_env": tuple(names)}


def _notify(v: _Validator) -> dict[str, Any]:
    """[notify] urls, events (SPEC §15), validated; whether Apprise can read a URL is doctor's check."""
    urls = v.table("notify").get("urls", [])
    if not isinstance(urls, list) or not all(isinstance(u, str) and "://" in u for u in urls):
        raise v.fail("notify", "urls", 'expected a list of Apprise URLs such as "tgram://BOT/CHAT"')
    events = v.table("notify").get("events", list(NOTIFY_EVENTS))
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise v.fail("notify", "events", f"expected a list of event names, got {events!r}")
    for name in events:
        if name not in NOTIFY_EVENTS:
            raise v.fail("notify", "events", f"unknown event {name!r}; one of {', '.join(NOTIFY_EVENTS)}")
    return {"notify_urls": tuple(u.strip() for u in urls), "notify_events": tuple(events)}

# Keys that would hold a secret: never in memento.toml, which is committed and read by the agent.
_SECRET_KEYS = ("token", "access_token", "bot_token", "password", "secret", "api_key")
_BOT_TOKEN_RE = re.compile(r"^\d{5,}:[A-Za-z0-9_-]{30,}$")  # what BotFather hands out
_MATRIX_TOKEN_RE = re.compile(r"^(syt|mct|syl)_[A-Za-z0-9_=-]{10,}$")  # Synapse's access tokens


def _chat_line(v: _Validator, service: str, key: str) -> int:
    """The line of ``key`` of ``[chat] service``: an inline table's line, or [chat.service]'s key."""
    return _key_line(v.text, f"chat.{service}", key) if f"chat.{service}" in v.text.replace(" ", "") \
        else _key_line(v.text, "chat", service)


def _chat_fail(v: _Validator, service: str, key: str, message: str) -> MementoError:
    return MementoError(f"[chat] {service}.{key}: {message}", path=v.path, line=_chat_line(v, service, key))


def _chat(v: _Validator) -> dict[str, Any]:
    """[chat] telegram and matrix (SPEC §18), validated. A token written here is an error: tokens
    live in files of mode 0600 named by ``token_file`` (chat/tokens.py checks those)."""
    table = v.table("chat")
    for key, value in table.items():
        if key in _SECRET_KEYS or (isinstance(value, str) and _looks_like_token(value)):
            raise _token_here(v, "", key, _key_line(v.text, "chat", key))
        if key not in ("telegram", "matrix"):
            continue
        if not isinstance(value, dict):
            raise v.fail("chat", key, f"expected a table such as {key} = {{ token_file = \"…\", … }}, got {value!r}")
        for inner, item in value.items():
            if inner in _SECRET_KEYS or (isinstance(item, str) and _looks_like_token(item)):
                raise _token_here(v, key, inner, _chat_line(v, key, inner))
    out: dict[str, Any] = {}
    if "telegram" in table:
        out["chat_telegram"] = _telegram(v, table["telegram"])
    if "matrix" in table:
        out["chat_matrix"] = _matrix(v, table["matrix"])
    return out


def _looks_like_token(value: str) -> bool:
    value = value.strip()
    return bool(_BOT_TOKEN_RE.match(value) or _MATRIX_TOKEN_RE.match(value))


def _token_here(v: _Validator, service: str, key: str, line: int) -> MementoError:
    where = f"[chat] {service}.{key}" if service else f"[chat] {key}"
    return MementoError(f"{where}: a token is never written in memento.toml (it is committed, and the agent "
                        "reads it): put it in a file of mode 0600 and name that file with token_file",
                        path=v.path, line=line)


def _token_file(v: _Validator, service: str, table: dict) -> str:
    path = table.get("token_file")
    if not isinstance(path, str) or not path.strip():
        raise _chat_fail(v, service, "token_file", 'expected the path of a file of mode 0600 holding the token, '
                         f'e.g. "~/.config/memento/{service}-token"')
    return path.strip()


def _telegram(v: _Validator, table: dict) -> TelegramChat:
    known = ("token_file", "chats", "senders", "api")
    for key in table:
        if key not in known:
            raise _chat_fail(v, "telegram", key, f"unknown key; one of {', '.join(known)}")
    token_file = _token_file(v, "telegram", table)
    chats = table.get("chats")
    if not isinstance(chats, list) or not chats or not all(_whole(c) for c in chats):
        raise _chat_fail(v, "telegram", "chats", f"expected a list of chat ids such as [123456789], got {chats!r}")
    senders = table.get("senders", [])
    if not isinstance(senders, list) or not all(_whole(s) for s in senders):
        raise _chat_fail(v, "telegram", "senders", f"expected a list of user ids such as [111222333], got {senders!r}")
    api = table.get("api", "https://api.telegram.org")
    if not isinstance(api, str) or not re.match(r"^https?://[^\s/]+(/[^\s]*)?$", api.strip()):
        raise _chat_fail(v, "telegram", "api", f'expected a URL such as "https://api.telegram.org", got {api!r}')
    return TelegramChat(token_file, tuple(chats), tuple(senders), api.strip().rstrip("/"))


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_MATRIX_USER_RE = re.compile(r"^@[^:\s]+:\S+$")


def _matrix(v: _Validator, table: dict) -> MatrixChat:
    known = ("homeserver", "user", "token_file", "room", "senders")
    for key in table:
        if key not in known:
            raise _chat_fail(v, "matrix", key, f"unknown key; one of {', '.join(known)}")
    homeserver = table.get("homeserver")
    if not isinstance(homeserver, str) or not re.match(r"^https?://[^\s/]+/?$", homeserver.strip()):
        raise _chat_fail(v, "matrix", "homeserver", f'expected a URL such as "https://matrix.example.org", '
                         f"got {homeserver!r}")
    user = table.get("user")
    if not isinstance(user, str) or not _MATRIX_USER_RE.match(user.strip()):
        raise _chat_fail(v, "matrix", "user", f'expected a Matrix user id such as "@memento:example.org", got {user!r}')
    token_file = _token_file(v, "matrix", table)
    room = table.get("room")
    if not isinstance(room, str) or not re.match(r"^!\S+$", room.strip()):  # v12 room ids have no server part
        raise _chat_fail(v, "matrix", "room", f'expected a room id such as "!abc:example.org" (the room\'s '
                         f"settings show it), got {room!r}")
    senders = table.get("senders")
    if not isinstance(senders, list) or not senders or not all(
            isinstance(s, str) and _MATRIX_USER_RE.match(s.strip()) for s in senders):
        raise _chat_fail(v, "matrix", "senders", 'required: the Matrix users who may steer, such as '
                         f'["@me:example.org"], got {senders!r}')
    return MatrixChat(homeserver.strip().rstrip("/"), user.strip(), token_file, room.strip(),
                      tuple(s.strip() for s in senders))


def _architect_runs(v: _Validator) -> dict[str, Any]:
    """[architect] auto and max_runs_per_day (SPEC §16); its agent keys are agent_section's."""
    table = v.table("architect")
    auto = table.get("auto", False)
    if not isinstance(auto, bool):
        raise v.fail("architect", "auto", f"expected true or false, got {auto!r}")
    runs = table.get("max_runs_per_day", 3)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 0:
        raise v.fail("architect", "max_runs_per_day", f"expected a whole number (0 or more), got {runs!r}")
    return {"architect_auto": auto, "architect_max_runs_per_day": runs}


FORGE_LANDS = ("direct", "pr")
_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def repo_problem(repo: str) -> str:
    """'' when ``repo`` is ``OWNER/REPO`` as GitHub spells them, else what it should look like."""
    if _REPO_RE.match(repo) and repo.split("/")[1] not in (".", ".."):
        return ""
    return f'expected OWNER/REPO such as "octo-org/shop-api", got {repo!r}'


def _forge(v: _Validator) -> dict[str, Any]:
    """[forge] land, api, repo, remote, stack (SPEC §19), validated. ``land = "pr"`` with
    ``[workers] remote`` is refused: a fleet's hosts claim tasks by pushing the base branch itself
    (SPEC §12), which is exactly what a team that asked for pull requests protects."""
    from urllib.parse import urlsplit

    land = v.string("forge", "land", "direct").strip()
    if land == "pr" and v.string("workers", "remote", "").strip():
        raise v.fail("forge", "land", '"pr" cannot be used with [workers] remote: the hosts of a fleet claim and '
                     "land tasks by pushing the base branch, which pull requests exist to protect; use one host "
                     '(leave [workers] remote out) or land = "direct"')
    if land not in FORGE_LANDS:
        raise v.fail("forge", "land", f"unknown land {land!r}; one of direct, pr")
    api = v.string("forge", "api", DEFAULT_FORGE_API).strip().rstrip("/")
    parts = urlsplit(api)
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
    if not parts.hostname or not secure or parts.query or parts.fragment or parts.username:
        raise v.fail("forge", "api", 'expected the API\'s https URL, e.g. "https://api.github.com" or '
                     f'"https://github.example.com/api/v3" (the token is never sent in the clear), got {api!r}')
    repo = v.string("forge", "repo", "").strip()
    if repo and repo_problem(repo):
        raise v.fail("forge", "repo", repo_problem(repo))
    remote = v.string("forge", "remote", "origin").strip()
    if not _REMOTE_RE.match(remote) or ".." in remote:
        raise v.fail("forge", "remote", f'expected the name of a git remote such as "origin", got {remote!r}')
    stack = v.table("forge").get("stack", False)
    if not isinstance(stack, bool):
        raise v.fail("forge", "stack", f"expected true or false, got {stack!r}")
    return {"forge_land": land, "forge_api": api, "forge_repo": repo, "forge_remote": remote, "forge_stack": stack}


KNOWN_KEYS: dict[str, tuple[str, ...] | None] = {
    "agent": ("preset", "command", "timeout", "model", "extra_args", "output", "fallback"),
    "budget": ("daily_usd", "task_usd", "daily_tokens", "task_tokens", "window_pause_at"),
    "verify": ("timeout",),
    "schedule": ("every",),
    "git": ("author",),
    "workers": ("max", "remote", "host"),
    "sandbox": ("mode", "network", "writable", "readable", "env", "allow"),
    "notify": ("urls", "events"),
    "chat": ("telegram", "matrix"),
    "architect": ("preset", "command", "timeout", "model", "extra_args", "auto", "max_runs_per_day"),
    "keys": None,  # action names: the dashboard knows them
    "review": ("preset", "command", "model", "extra_args", "timeout", "max_rounds", "output"),
    "forge": ("land", "api", "repo", "remote", "stack"),
}


def unknown_keys(config: Config, text: str = "") -> list[tuple[str, int]]:
    """Sections and keys memento.toml has but Memento does not read (a typo runs the defaults)."""
    found = []
    for section, value in config.raw.items():
        if section not in KNOWN_KEYS:
            found.append((f"[{section}]", _key_line(text, section, "\0")))
            continue
        allowed = KNOWN_KEYS[section]
        if allowed is not None and isinstance(value, dict):
            for key in value:
                if key not in allowed:
                    found.append((f"[{section}] {key}", _key_line(text, section, key)))
    return found


# [keys] (the dashboard's remaps): the names Textual reads, and the keys a terminal or tmux keeps.
_MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
_NAMED_KEYS = frozenset({"backspace", "delete", "down", "end", "enter", "escape", "home", "insert", "left", "pagedown",
                         "pageup", "return", "right", "space", "tab", "up", "newline"}
                        | {f"f{n}" for n in range(1, 25)})
RESERVED_KEYS = {
    "ctrl+b": "tmux's prefix: tmux keeps it, the dashboard never sees it",
    "ctrl+a": "the prefix of screen (and of many tmux setups)",
    "ctrl+space": "a tmux and terminal prefix (sent as ctrl+@)",
    "ctrl+at": "a tmux and terminal prefix (ctrl+space)",
    "ctrl+s": "flow control (XOFF) in many terminals: it freezes the screen",
    "ctrl+q": "flow control (XON) in many terminals",
    "ctrl+c": "the terminal's interrupt, and copy in the dashboard's text fields",
    "ctrl+z": "suspends the program in a shell",
    "ctrl+j": "what a terminal sends for enter",
    "ctrl+m": "what a terminal sends for enter",
    "ctrl+i": "what a terminal sends for tab",
    "ctrl+h": "what many terminals send for backspace",
}


def key_problem(key: str) -> str:
    """Why ``key`` (a [keys] value: one key, or several joined by commas) cannot be a dashboard key,
    or ''. A name Textual does not know never fires; a key tmux or the terminal keeps never arrives."""
    import unicodedata

    for one in (k.strip() for k in key.split(",")):
        *mods, name = one.lower().split("+")
        if not name or any(m not in _MODIFIERS for m in mods):
            return f"{one!r} is not a key name (examples: \"f7\", \"x\", \"ctrl+r\")"
        known = len(name) == 1 or name in _NAMED_KEYS
        if not known:
            try:
                known = len(unicodedata.lookup(name.replace("_", " "))) == 1  # "question_mark" is "?"
            except KeyError:
                known = False
        if not known:
            return f"{one!r} is not a key name (examples: \"f7\", \"x\", \"ctrl+r\", \"question_mark\")"
        why = RESERVED_KEYS.get(one.lower().replace("ctrl+@", "ctrl+at"))
        if why:
            return f"{one} is {why}"
    return ""


def key_problems(config: Config, text: str = "") -> list[tuple[str, int]]:
    """The [keys] remaps the dashboard refuses (the action keeps its own key), each with its line."""
    return [(f"[keys] {action} = {key!r} is refused: {problem}; {action} keeps its own key",
             _key_line(text, "keys", action))
            for action, key in config.keys.items() if (problem := key_problem(key))]


def unknown_key_message(what: str) -> str:
    """The warning for an unknown section or key of :func:`unknown_keys`, with the nearest known
    name (`timout` → `timeout`, `[budgt]` → `[budget]`) when there is one."""
    import difflib

    if what.startswith("[") and what.endswith("]"):
        near = difflib.get_close_matches(what[1:-1], KNOWN_KEYS, n=1, cutoff=0.6)
        hint = f"did you mean [{near[0]}]?" if near else "a typo?"
    else:
        section, _, key = what[1:].partition("] ")
        near = difflib.get_close_matches(key, KNOWN_KEYS.get(section) or (), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}?" if near else "a typo?"
    return f"unknown {what} is ignored ({hint} the default applies)"


_TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column \d+\)|\s*\(at end of document\)")


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = _TOML_POS_RE.search(message)
        line = 0
        if m:
            line = int(m.group(1)) if m.group(1) else max(1, len(text.splitlines()))
            message = _TOML_POS_RE.sub("", message)
        raise MementoError(f"invalid TOML: {message}", path=path, line=line) from None


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MementoError(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MementoError(f"not UTF-8 text (byte {exc.start})", path=path) from None


def load_config(path: Path | str) -> Config:
    """Read and validate memento.toml; a missing file gives the defaults."""
    path = Path(path)
    text = _read_text(path)
    if text is None:
        return Config()
    # Messages name it as a person finds it in the project: memento.toml:12, not its absolute path.
    shown = Path(path.name) if path.name == "memento.toml" else path
    return config_from_dict(_parse_toml(shown, text), path=shown, text=text)


def _edit_every_line(text: str, new_line: str) -> str | None:
    """``text`` with the ``every = …`` line of [schedule] replaced, or None if there is none."""
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
    assign = re.compile(r"^(\s*)every\s*=\s*(\"[^\"\\]*\"|'[^']*'|[0-9.]+)(\s*(#.*)?)$")
    current = ""
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        m = header.match(body)
        if m:
            current = m.group(1)
            continue
        if current == "schedule":
            a = assign.match(body)
            if a:
                lines[i] = f"{a.group(1)}{new_line}{a.group(3)}{ending}"
                return "".join(lines)
    return None


def set_schedule_every(path: Path | str, text: str) -> Config:
    """Set ``[schedule] every`` (validated) and return the new Config.

    The file is edited under its lock and replaced atomically. When the value
    sits on a plain ``every = "…"`` line only that line changes; otherwise the
    whole file is rewritten with tomli-w, which drops comments.
    """
    import tomli_w  # only writers pay for the import

    path = Path(path)
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise MementoError(f"[schedule] every: {exc}", path=path) from None
    if seconds <= 0:
        raise MementoError(f"[schedule] every: must be longer than zero, got {text!r}", path=path)
    text = text.strip() if isinstance(text, str) else str(text)
    with file_lock(lock_path_for(path)):
        current = _read_text(path)
        if current is None:
            current = DEFAULT_CONFIG_TOML
        raw = _parse_toml(path, current)
        wanted = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
        schedule = wanted.setdefault("schedule", {})
        if not isinstance(schedule, dict):
            raise MementoError("[schedule] must be a table", path=path)
        schedule["every"] = text
        new_text = _edit_every_line(current, tomli_w.dumps({"every": text}).strip())
        if new_text is None or _parse_or_none(new_text) != wanted:
            new_text = tomli_w.dumps(wanted)
        config = config_from_dict(_parse_toml(path, new_text), path=path, text=new_text)
        atomic_write_bytes(path, new_text.encode("utf-8"))
    return config


def _parse_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
