"""The ``codex`` preset: OpenAI Codex CLI ``codex exec`` (docs/agents.md explains each flag).

``--json`` makes codex print one JSON event per line (codex-rs/exec/src/exec_events.rs):
``{"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,
"output_tokens":…}}`` after each turn, ``{"type":"turn.failed","error":{"message":…}}``
and ``{"type":"error","message":…}`` when it fails. Memento sums the turns'
usage (``input_tokens`` includes the cached ones; codex reports no cost) and
writes the agent's messages to the log as plain lines. The items it works through
(``item.started`` / ``item.completed``: ``command_execution`` with its ``command``,
``file_change`` with its ``changes`` [{``path``, ``kind``}], ``mcp_tool_call``,
``web_search``, ``collab_tool_call``) become a ``[tool]`` line each in the log as they
come (SPEC §20, :class:`Render`). ``exec --json`` says nothing of the account's usage
windows (codex shows them in its TUI only). A usage limit reads
"You've hit your usage limit. … try again at 3:28 PM." (or "try again in 3 days
6 hours"); a rate limit "exceeded retry limit, last status: 429 Too Many Requests".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ...config.model import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args
from ..stream import short, tool_line
from ..usage import (
    RateLimit,
    Usage,
    generic_rate_limit,
    json_objects,
    limit_from,
    number,
    plain_lines,
)

LIMIT_RE = re.compile(r"hit your usage limit|usage_limit_reached|rate limit reached|quota exceeded"
                      r"|insufficient_quota|exceeded retry limit, last status: 429", re.I)


def build(config: Config, req: AgentRequest) -> Invocation:
    """``codex exec --json`` in the project, sandboxed to it, the prompt read from stdin.

    In Memento's sandbox codex's own (bubblewrap too) cannot start, and every command of
    codex would fail: there it runs with ``--sandbox danger-full-access``, confined by
    Memento's sandbox instead (the project writable, its own files read-only, SPEC §13)."""
    own = "danger-full-access" if req.confined else "workspace-write"
    argv = ["codex", "exec", "--json", "--sandbox", own, "--cd", str(req.workdir),
            "--color", "never"]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv.append("-")  # the prompt is read from stdin
    return Invocation(tuple(argv), False, Path(req.prompt_file), "codex")


def parse_usage(log_text: str) -> Usage | None:
    """The sum of every ``turn.completed`` event's usage; None when there was none."""
    total = None
    for event in json_objects(log_text):
        if event.get("type") == "turn.completed" and isinstance(event.get("usage"), dict):
            u = event["usage"]
            turn = Usage(number(u.get("input_tokens")), number(u.get("output_tokens")), None)
            total = turn if total is None else total + turn
    return total


def _error_messages(log_text: str) -> list[str]:
    messages = []
    for event in json_objects(log_text):
        if event.get("type") == "error":
            messages.append(str(event.get("message") or ""))
        elif event.get("type") == "turn.failed" and isinstance(event.get("error"), dict):
            messages.append(str(event["error"].get("message") or ""))
    return messages


def rate_limit(log_text: str, now: datetime | None = None) -> RateLimit | None:
    """A usage-limit or 429 error event (or the same words on stderr), its reset time when given."""
    now = now or datetime.now(UTC)
    errors = "\n".join(_error_messages(log_text))
    text = errors + "\n" + plain_lines(log_text)
    found = limit_from(text, LIMIT_RE, now)
    if found:
        return found
    return generic_rate_limit(text, now)


def readable(log_text: str) -> str | None:
    """The agent's messages (``item.completed`` of type agent_message), for the log."""
    said = [str(e["item"].get("text") or "") for e in json_objects(log_text)
            if e.get("type") == "item.completed" and isinstance(e.get("item"), dict)
            and e["item"].get("type") == "agent_message"]
    return "\n".join(s for s in said if s.strip()) or None


_KINDS = {"add": "Write", "update": "Edit", "delete": "Delete"}


class Render:
    """codex's items to log lines, each the first time its id shows (a command when it starts,
    a patch when it is applied): ``[tool] shell: pytest -q``, ``[tool] Edit: src/x.py``."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def __call__(self, event: dict):
        kind = event.get("type")
        if kind in ("error", "turn.failed"):
            error = event.get("error") if kind == "turn.failed" else event
            yield f"[error] {short((error or {}).get('message') or '', 300)}"
            return
        if kind not in ("item.started", "item.completed", "item.updated"):
            return
        item = event.get("item") or {}
        key = str(item.get("id") or id(item))
        if key in self._seen:
            return
        what = item.get("type")
        if what == "command_execution":
            line = tool_line("shell", {"command": item.get("command")})
        elif what == "file_change":
            changes = [c for c in item.get("changes") or () if isinstance(c, dict)]
            if not changes:
                return
            line = "\n".join(tool_line(_KINDS.get(str(c.get("kind")), "Edit"), {"path": c.get("path")})
                             for c in changes)
        elif what == "mcp_tool_call":
            line = tool_line(f"{item.get('server')}.{item.get('tool')}", item.get("arguments"))
        elif what == "web_search":
            line = tool_line("WebSearch", {"query": item.get("query")})
        elif what == "collab_tool_call":
            line = tool_line(str(item.get("tool") or "collab"), {"prompt": item.get("prompt")})
        elif what == "error":
            line = f"[error] {short(item.get('message') or '', 300)}"
        else:
            return  # messages, reasoning and the to-do list: the answer is written at the end
        if len(self._seen) < 100_000:
            self._seen.add(key)
        yield from line.split("\n")


SPEC = AgentSpec(
    "codex",
    "codex",
    "OpenAI Codex CLI `codex exec --json`; prompt on stdin, workspace-write sandbox",
    build,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    readable=readable,
    stream=Render,
    usage_marker=b"turn.completed",
)
