"""The ``claude`` preset: Claude Code in print mode (docs/agents.md explains each flag).

``--output-format json`` makes claude print one result object at the end:
``{"type": "result", "subtype": "success", "is_error": false, "result": "…",
"total_cost_usd": 0.042, "usage": {"input_tokens": …, "cache_creation_input_tokens":
…, "cache_read_input_tokens": …, "output_tokens": …}, …}``. Memento reads the
usage and cost from it and writes the ``result`` text to the log as plain lines.
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

from ...config import Config
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args
from ..usage import (
    RateLimit,
    Usage,
    answer_text,
    generic_rate_limit,
    json_objects,
    last_words,
    limit_from,
    number,
    plain_lines,
    refused_429,
    reset_time,
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
    argv = ["claude", "-p", "--permission-mode", mode, "--output-format", "json"]
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


SPEC = AgentSpec(
    "claude",
    "claude",
    "Claude Code in print mode; prompt on stdin, edits auto-accepted (every tool when confined)",
    build,
    separate_system_prompt=True,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    readable=readable,
)
