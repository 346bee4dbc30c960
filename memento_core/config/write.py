"""memento.toml written: the file ``memento init`` writes, and the schedule's one-line edit (SPEC §10).

Only :func:`set_schedule_every` edits the file: it changes the one
``every = …`` line when it can (comments survive) and otherwise rewrites the
whole file with tomli-w, which drops comments; under the file's lock, replaced
atomically.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from ..durations import parse_duration
from ..errors import MementoError
from ..locks import atomic_write_bytes, file_lock, lock_path_for
from .load import config_from_dict, parse_toml, read_text
from .model import Config

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
        current = read_text(path)
        if current is None:
            current = DEFAULT_CONFIG_TOML
        raw = parse_toml(path, current)
        wanted = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
        schedule = wanted.setdefault("schedule", {})
        if not isinstance(schedule, dict):
            raise MementoError("[schedule] must be a table", path=path)
        schedule["every"] = text
        new_text = _edit_every_line(current, tomli_w.dumps({"every": text}).strip())
        if new_text is None or _parse_or_none(new_text) != wanted:
            new_text = tomli_w.dumps(wanted)
        config = config_from_dict(parse_toml(path, new_text), path=path, text=new_text)
        atomic_write_bytes(path, new_text.encode("utf-8"))
    return config


def _parse_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
