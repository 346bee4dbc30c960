"""The ``gemini`` preset: Gemini CLI in headless mode (docs/agents.md explains each flag).

``--output-format stream-json`` makes gemini print one JSON event per line as it
works (SPEC §20; its StreamJsonFormatter): ``{"type": "init", …}``, ``{"type":
"message", "role": "assistant", "content": "…", "delta": true}``, ``{"type":
"tool_use", "tool_name": "run_shell_command", "tool_id": …, "parameters": {…}}``,
``{"type": "tool_result", …}``, ``{"type": "error", "severity": …, "message": …}``
and last ``{"type": "result", "status": "success" | "error", "error": {"type": …,
"message": …}, "stats": {"input_tokens": …, "output_tokens": …, "cached": …,
"models": {…}, …}}``. Each ``tool_use`` is a ``[tool]`` line in the log as it
comes; the usage is the result's ``input_tokens`` (cached ones included) and
``output_tokens``; the answer is the assistant's messages joined. The stream says
nothing of the account's quota (gemini asks its server for it in its TUI only).
The single object of ``--output-format json`` (a person's ``extra_args``, or an
older gemini) is read too: ``{"response": "…", "stats": {"models": {"<model>":
{"tokens": {"prompt": …, "candidates": …, "thoughts": …}}}}, "error": {"type": …,
"message": …, "code": …}}``, ``prompt`` in, ``candidates`` + ``thoughts`` out;
gemini reports no cost. ``GEMINI_CLI_TRUST_WORKSPACE=true``
trusts the project for this run (a fresh install otherwise exits 55 in a
folder it was never told to trust). A quota error reads "Quota exceeded …",
"RESOURCE_EXHAUSTED" or "TerminalQuotaError", with "reset after 2h9m" when known.
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
    argv = ["gemini", "--approval-mode", mode, "--output-format", "stream-json"]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += ["--prompt", GEMINI_PROMPT_SUFFIX]
    return Invocation(tuple(argv), False, Path(req.prompt_file), "gemini", env=dict(TRUST_ENV))


_STREAM_EVENTS = ("init", "message", "tool_use", "tool_result", "error")


def _report(log_text: str) -> dict | None:
    """The stream's ``result`` event, or the one object of ``--output-format json``."""
    found = None
    for obj in json_objects(log_text):
        if obj.get("type") in _STREAM_EVENTS:
            continue
        if obj.get("type") == "result" or "stats" in obj or "response" in obj or "error" in obj:
            found = obj
    return found


def parse_usage(log_text: str) -> Usage | None:
    """The stream's ``input_tokens`` and ``output_tokens``; from ``--output-format json``, the sum
    over ``stats.models`` of prompt (in) and candidates + thoughts (out) tokens."""
    report = _report(log_text)
    stats = report.get("stats") if report else None
    if isinstance(stats, dict) and ("input_tokens" in stats or "output_tokens" in stats):
        return Usage(number(stats.get("input_tokens")), number(stats.get("output_tokens")), None)
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
    """The assistant's streamed messages joined (or the ``response`` text), for the log."""
    said = "".join(str(e.get("content") or "") for e in json_objects(log_text)
                   if e.get("type") == "message" and e.get("role") == "assistant")
    return said if said.strip() else answer_text(_report(log_text), "response")


def render(event: dict):
    """gemini's stream events to log lines: ``[tool] run_shell_command: pytest -q``, errors."""
    kind = event.get("type")
    if kind == "tool_use":
        yield tool_line(str(event.get("tool_name") or "?"), event.get("parameters"))
    elif kind == "error":
        yield f"[error] {short(event.get('message') or '', 300)}"
    elif kind == "result" and isinstance(event.get("error"), dict):
        yield f"[error] {short(event['error'].get('message') or '', 300)}"


SPEC = AgentSpec(
    "gemini",
    "gemini",
    "Gemini CLI headless mode; prompt on stdin, edits auto-approved (every tool when confined), "
    "the project trusted",
    build,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    readable=readable,
    stream=lambda: render,
    usage_marker=b'"stats"',
)
