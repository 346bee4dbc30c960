"""memento.toml's sections validated: [agent]'s keys for another role, [workers], [notify],
[architect] and [forge] (SPEC §10, §12, §15, §16, §19).

Each function reads its section through the :class:`Validator` and returns
what it adds to the Config (or the role's :class:`AgentSettings`); [sandbox]
and [chat] have modules of their own.
"""

from __future__ import annotations

import re
from typing import Any

from .model import DEFAULT_FORGE_API, NOTIFY_EVENTS, PRESET_NAMES, AgentSettings
from .validator import Validator

_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$")
_REMOTE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


def workers_section(v: Validator) -> dict[str, Any]:
    """[workers] remote and host (SPEC §12 "Across machines"), validated."""
    remote = v.string("workers", "remote", "").strip()
    if remote and (not _REMOTE_RE.match(remote) or ".." in remote):
        raise v.fail("workers", "remote", f'expected the name of a git remote such as "origin", got {remote!r}')
    host = v.string("workers", "host", "").strip()
    if host and not _HOST_RE.match(host):
        raise v.fail("workers", "host", f"expected a name of letters, digits, '.', '_', '-' or '@', got {host!r}")
    return {"workers_remote": remote, "workers_host": host}


def agent_section(v: Validator, section: str, base: AgentSettings, *, max_rounds: bool = False,
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


def notify_section(v: Validator) -> dict[str, Any]:
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


def architect_runs(v: Validator) -> dict[str, Any]:
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


def forge_section(v: Validator) -> dict[str, Any]:
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
