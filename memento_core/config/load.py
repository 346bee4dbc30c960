"""memento.toml read: tomllib, then every section validated into a frozen Config (SPEC §10).

A missing file gives the defaults; every problem is a MementoError naming the
file, the key and (when it can be found) the line. The sections are validated
in a fixed order, so a file with several problems names the same one first.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from ..errors import MementoError
from .chat import chat_section
from .model import (
    DEFAULT_AGENT_TIMEOUT,
    DEFAULT_PRESET,
    DEFAULT_SCHEDULE_EVERY,
    DEFAULT_VERIFY_TIMEOUT,
    PRESET_NAMES,
    AgentSettings,
    Config,
    parse_author,
)
from .sandbox import sandbox_section
from .sections import agent_section, architect_runs, forge_section, notify_section, workers_section
from .validator import Validator


def config_from_dict(
    raw: dict[str, Any], *, path: Path | str = "memento.toml", text: str = ""
) -> Config:
    """Validate parsed TOML into a Config; errors name ``path`` and the key's line in ``text``."""
    v = Validator(Path(path), text, raw)
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
    sandbox = sandbox_section(v)
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
        **workers_section(v),
        agent_output=output,
        agent_fallback=fallback,
        budget_daily_usd=v.dollars("budget", "daily_usd"),
        budget_task_usd=v.dollars("budget", "task_usd"),
        budget_daily_tokens=v.tokens("budget", "daily_tokens"),
        budget_task_tokens=v.tokens("budget", "task_tokens"),
        budget_window_pause_at=v.percent("budget", "window_pause_at"),
        **sandbox,
        **notify_section(v),
        **chat_section(v),
        **architect_runs(v),
        **forge_section(v),
        architect=architect,
        keys=dict(keys),
        raw=raw,
        review=review,
    )


_TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column \d+\)|\s*\(at end of document\)")


def parse_toml(path: Path, text: str) -> dict[str, Any]:
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


def read_text(path: Path) -> str | None:
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
    text = read_text(path)
    if text is None:
        return Config()
    # Messages name it as a person finds it in the project: memento.toml:12, not its absolute path.
    shown = Path(path.name) if path.name == "memento.toml" else path
    return config_from_dict(parse_toml(shown, text), path=shown, text=text)
