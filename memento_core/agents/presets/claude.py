"""The ``claude`` preset: Claude Code in print mode (docs/agents.md explains each flag).

``--output-format stream-json --verbose`` makes claude print one JSON event per
line as it works (SPEC §20): ``{"type": "assistant", "message": {"content":
[{"type": "tool_use", "name": "Bash", "input": {…}}, …]}, "parent_tool_use_id":
null | "toolu_…"}`` for each model turn (a sub-agent's turns name the tool call
that started it), ``{"type": "user", …}`` with the tools' results,
``{"type": "rate_limit_event", "rate_limit_info": {"status": …, "unifiedWindows":
{"five_hour": {"utilization": 0.96, "resetsAt": <epoch s>}, "seven_day": …}}}``
when the provider's usage windows change (a subscription or gateway login), and
last the result object ``--output-format json`` prints alone:
``{"type": "result", "subtype": "success", "is_error": false, "result": "…",
"total_cost_usd": 0.042, "usage": {"input_tokens": …, "cache_creation_input_tokens":
…, "cache_read_input_tokens": …, "output_tokens": …}, …}``. Memento writes a line
per tool call into the log as it comes (:class:`Render`), reads the usage and
cost from the result and writes its ``result`` text to the log as plain lines.
A usage limit reads "You've hit your limit · resets 4:50am (Europe/Rome)"
(also "session limit", "5-hour limit reached ∙ resets 2pm", "Claude usage limit
reached. Your limit will reset at 9pm (UTC).", and the older "Claude AI usage
limit reached|1766502000" with the reset as epoch seconds). Claude Code words
it itself for a subscriber or a gateway; with an API key it prints "API Error:
Request rejected (429) · <the service's message>". The result object is its
last word, whatever the exit code (:func:`rate_limit`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ...config.model import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args
from ..reset_times import reset_time
from ..stream import tool_line
from ..usage import (
    RateLimit,
    Usage,
    Window,
    answer_text,
    generic_rate_limit,
    json_objects,
    last_words,
    limit_from,
    lines_with,
    number,
    plain_lines,
    refused_429,
)

LIMIT_RE = re.compile(
    r"usage limit reached|hit your (?:\w+ )?limit\b|\b\d+-hour limit reached|\bweekly limit reached"
    r"|limit will reset at|grace_daily_limit_reached",
    re.I)
# What Claude Code itself says at a limit (its wording, not the model's), opening its answer.
OWN_LIMIT_RE = re.compile(
    r"(?:API Error: [^\n]{0,40}?·\s*)?(?:Claude (?:AI )?usage limit reached|You've hit your|You've reached your"
    r"|You're out of (?:usage|extra usage)|Your org is out of usage)", re.I)


# Claude Code refuses bypassPermissions as root unless told it is in a sandbox
# (its check: getuid() == 0 and IS_SANDBOX != "1" and no CLAUDE_CODE_BUBBLEWRAP).
CONFINED_ENV = {"IS_SANDBOX": "1"}


def build(config: Config, req: AgentRequest) -> Invocation:
    """``claude -p``, the prompt on stdin, the system prompt by its own flag; confined (SPEC §13)
    every tool runs without asking (``bypassPermissions``), else only edits are accepted."""
    mode = "bypassPermissions" if req.confined else "acceptEdits"
    argv = ["claude", "-p", "--permission-mode", mode, "--output-format", "stream-json", "--verbose"]
    # The prompt on stdin starts with the system prompt too; a missing file must
    # not make claude refuse to start.
    if Path(req.system_prompt_file).is_file():
        argv += ["--append-system-prompt-file", str(req.system_prompt_file)]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    env = dict(CONFINED_ENV) if req.confined else {}
    return Invocation(tuple(argv), False, Path(req.prompt_file), "claude", env=env)


def _result(log_text: str) -> dict | None:
    found = None
    for obj in json_objects(log_text):
        if obj.get("type") == "result":
            found = obj
    return found


def parse_usage(log_text: str) -> Usage | None:
    """Tokens (cache reads and writes counted as input) and ``total_cost_usd`` of the result object."""
    result = _result(log_text)
    if result is None:
        return None
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    tokens_in = sum(number(usage.get(k)) for k in
                    ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    cost = result.get("total_cost_usd")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    return Usage(tokens_in, number(usage.get("output_tokens")), cost)


def rate_limit(log_text: str, now: datetime | None = None) -> RateLimit | None:
    """Claude's usage-limit message (its reset time when printed), else an HTTP 429, from its last
    words: the result object's text. An error result is searched; an answer (``is_error`` false, as
    when claude ends at a limit with exit 0) only when it opens with Claude's own limit wording, so
    an answer that talks about rate limits is not one. Without a result object: its last lines."""
    now = now or datetime.now(UTC)
    result = _result(log_text)
    if result is None:
        said = last_words(plain_lines(log_text))
        return limit_from(said, LIMIT_RE, now) or generic_rate_limit(said, now)
    said = str(result.get("result") or "")
    if not result.get("is_error"):
        if not OWN_LIMIT_RE.match(said.strip()):
            return None
        return limit_from(said, LIMIT_RE, now) or RateLimit(reset_time(said, now), said.strip()[:300])
    found = limit_from(said, LIMIT_RE, now)
    if found:
        return found
    if result.get("api_error_status") == 429:
        return refused_429(said, now)
    return generic_rate_limit(said, now)


def readable(log_text: str) -> str | None:
    """The result object's answer, for the log."""
    return answer_text(_result(log_text), "result")


class Render:
    """Claude's stream events to log lines: ``[tool] Bash: pytest -q``, a sub-agent's calls
    indented below the call that started it (``parent_tool_use_id``), a window's new level, the
    calls it was refused (``[denied] Bash: …``, the result's ``permission_denials``)."""

    def __init__(self) -> None:
        self._depth: dict[str, int] = {}  # tool_use id -> how deep the call that made it is

    def __call__(self, event: dict):
        kind = event.get("type")
        if kind == "assistant":
            parent = event.get("parent_tool_use_id")
            depth = self._depth.get(parent, 0) + 1 if parent else 0
            message = event.get("message")
            for block in message.get("content") or () if isinstance(message, dict) else ():
                if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                    if len(self._depth) < 100_000:
                        self._depth[str(block.get("id"))] = depth
                    yield tool_line(str(block.get("name") or "?"), block.get("input"), depth)
        elif kind == "rate_limit_event":
            for window in _event_windows(event):
                yield f"[window] {window.label}: {window.percent:.0f}% used" + (
                    f", resets {window.resets_at:%Y-%m-%d %H:%M} UTC" if window.resets_at else "")
        elif kind == "result":
            # calls print mode refused for want of a person to ask (unconfined: acceptEdits)
            for denied in event.get("permission_denials") or ():
                if isinstance(denied, dict):
                    yield tool_line(str(denied.get("tool_name") or "?"), denied.get("tool_input")).replace(
                        "[tool]", "[denied]", 1)
            if event.get("is_error"):
                yield f"[error] {str(event.get('result') or event.get('subtype') or '')[:300]}"


_UNSHOWN = (b'{"type":"user"', b'{"type":"stream_event"')


def stream_wanted(data: bytes, start: int) -> bool:
    """Tool results and partial-message deltas (most of the stream's bytes) show nothing."""
    return not data.startswith(_UNSHOWN, start)


def _epoch(value) -> datetime | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e11:
        return datetime.fromtimestamp(value, UTC)
    return None


def _event_windows(event: dict) -> list[Window]:
    info = event.get("rate_limit_info")
    if not isinstance(info, dict):
        return []
    found = []
    unified = info.get("unifiedWindows")
    for name, window in (unified.items() if isinstance(unified, dict) else ()):
        used = window.get("utilization") if isinstance(window, dict) else None
        if isinstance(used, (int, float)) and not isinstance(used, bool):
            found.append(Window(str(name), float(used), _epoch(window.get("resetsAt"))))
    used, name = info.get("utilization"), info.get("rateLimitType")
    if (not found and isinstance(used, (int, float)) and not isinstance(used, bool)
            and isinstance(name, str) and name != "overage"):
        found.append(Window(name, float(used), _epoch(info.get("resetsAt"))))
    return found


def windows(log_text: str) -> list[Window]:
    """The usage windows of the last ``rate_limit_event`` that reported each (its latest level)."""
    latest: dict[str, Window] = {}
    for event in lines_with(log_text, '"rate_limit_event"'):
        if event.get("type") == "rate_limit_event":
            for window in _event_windows(event):
                latest[window.name] = window
    return list(latest.values())


SPEC = AgentSpec(
    "claude",
    "claude",
    "Claude Code in print mode; prompt on stdin, edits auto-accepted (every tool when confined)",
    build,
    separate_system_prompt=True,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    readable=readable,
    stream=Render,
    usage_marker=b'"result"',
    stream_wanted=stream_wanted,
    windows=windows,
)
