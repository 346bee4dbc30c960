"""The ``gemini`` preset: Gemini CLI in headless mode (docs/agents.md explains each flag).

``--output-format json`` makes gemini print one object when it is done:
``{"session_id": …, "response": "…", "stats": {"models": {"<model>": {"tokens":
{"prompt": …, "candidates": …, "total": …, "cached": …, "thoughts": …}}}, …},
"error": {"type": …, "message": …, "code": …}}`` (``error`` only on failure).
Memento sums the models' ``prompt`` (input) and ``candidates`` + ``thoughts``
(output) tokens; gemini reports no cost. ``GEMINI_CLI_TRUST_WORKSPACE=true``
trusts the project for this run (a fresh install otherwise exits 55 in a
folder it was never told to trust). A quota error reads "Quota exceeded …",
"RESOURCE_EXHAUSTED" or "TerminalQuotaError", with "reset after 2h9m" when known.
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
    limit_from,
    number,
    plain_lines,
    refused_429,
)

# Gemini CLI appends its --prompt text to what it reads on stdin (the prompt file).
GEMINI_PROMPT_SUFFIX = "Do the task described above, following every rule in it, then stop."
TRUST_ENV = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
LIMIT_RE = re.compile(r"quota exceeded|resource_exhausted|TerminalQuotaError|exhausted your (?:daily )?quota"
                      r"|rate limit exceeded", re.I)


def build(config: Config, req: AgentRequest) -> Invocation:
    """``gemini --prompt``, the prompt file on stdin, the project trusted; confined (SPEC §13)
    every tool is approved (``yolo``: its shell tool runs the project's tests), else only edits."""
    mode = "yolo" if req.confined else "auto_edit"
    argv = ["gemini", "--approval-mode", mode, "--output-format", "json"]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += ["--prompt", GEMINI_PROMPT_SUFFIX]
    return Invocation(tuple(argv), False, Path(req.prompt_file), "gemini", env=dict(TRUST_ENV))


def _report(log_text: str) -> dict | None:
    found = None
    for obj in json_objects(log_text):
        if "stats" in obj or "response" in obj or "error" in obj:
            found = obj
    return found


def parse_usage(log_text: str) -> Usage | None:
    """The sum over ``stats.models`` of prompt (in) and candidates + thoughts (out) tokens."""
    report = _report(log_text)
    stats = report.get("stats") if report else None
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict):
        return None
    tokens_in = tokens_out = 0
    for model in models.values():
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if isinstance(tokens, dict):
            tokens_in += number(tokens.get("prompt", tokens.get("input")))
            tokens_out += number(tokens.get("candidates")) + number(tokens.get("thoughts"))
    return Usage(tokens_in, tokens_out, None)


def rate_limit(log_text: str, now: datetime | None = None) -> RateLimit | None:
    """The JSON ``error`` (code 429 or quota wording) or the same words on stderr."""
    now = now or datetime.now(UTC)
    report = _report(log_text)
    error = report.get("error") if report else None
    said = str(error.get("message") or "") if isinstance(error, dict) else ""
    text = said + "\n" + plain_lines(log_text)
    found = limit_from(text, LIMIT_RE, now)
    if found:
        return found
    if isinstance(error, dict) and error.get("code") == 429:
        return refused_429(said, now)
    return generic_rate_limit(text, now)


def readable(log_text: str) -> str | None:
    """The ``response`` text, for the log."""
    return answer_text(_report(log_text), "response")


SPEC = AgentSpec(
    "gemini",
    "gemini",
    "Gemini CLI headless mode; prompt on stdin, edits auto-approved (every tool when confined), "
    "the project trusted",
    build,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    readable=readable,
)
