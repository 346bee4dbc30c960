"""`memento doctor --agent` (SPEC §20): one real, minimal call of the agent, exactly as a tick makes it.

The usual checks read files; this one runs the configured preset once with a
one-line prompt, through the tick's own steps: the sandbox (tick/confine.py:
bubblewrap, ``[sandbox] network`` and its proxy), the invocation and the
environment (tick/agent.run_agent), what the CLI printed read by its
preset's parsers (tick/limits.read_output). So what fails here fails the
first tick of the night: not logged in, the endpoint unreachable from inside
the sandbox, the model refused.

The verdict names the endpoint (host:port, from sandbox/network.py) and, on a
failure, the CLI's last words. A real CLI often exits 0 when it gave up (an
error result, an error event, a line that says so): exit 0 counts as an
answer only when the CLI reported the model's usage, or, for a CLI that
reports none, when its last words say no failure. The run is logged in
``logs/doctor-agent_<stamp>.log``; it holds the tick lock (never beside a tick).
"""

from __future__ import annotations

import re
import time

from ... import agents
from ...agents.usage import json_objects, last_words, plain_lines
from ...config.model import Config
from ...errors import MementoError
from ...locks import LockBusy, atomic_write_text, file_lock
from ...plan.model import Task
from ...workspace import Workspace
from ..context import Context
from ..findings import CRITICAL, WARNING, CheckResult, Finding

NAME = "agent-call"
MAX_SECONDS = 120.0  # a preflight: never the task's whole timeout
PROMPT = ("This is Memento's preflight check (`memento doctor --agent`), not a task. Answer with the one "
          "word OK. Use no tool; read and change nothing.\n")
QUOTE = 240  # how much of the CLI's last words a finding quotes

# What a CLI's last words say when it gave up, most telling first (the verdict's words).
_GAVE_UP = (
    ("not logged in", re.compile(r"not logged in|please run /login|/login|log ?in again|invalid (?:x-)?api[ _-]?key|"
                                 r"authentication|unauthori[sz]ed|\b401\b|api key (?:is )?(?:missing|not set|invalid)|"
                                 r"no api key|credentials? (?:missing|expired|invalid)|token (?:expired|refresh)", re.I)),
    ("endpoint unreachable", re.compile(r"connection (?:error|refused|reset|failed|dropped)|waiting for network|econnrefused|econnreset|enotfound|"
                                        r"eai_again|unreachable|could not connect|failed to connect|fetch failed|"
                                        r"network error|stream disconnected|timed? ?out|getaddrinfo|"
                                        r"no route to host", re.I)),
    ("model refused", re.compile(r"model[^\n]{0,60}(?:not found|does not exist|not available|not supported|"
                                 r"unknown|invalid)|\b40[34]\b|forbidden|permission denied|overloaded|\b5\d\d\b|"
                                 r"refus|rejected|api error|\berror\b", re.I)),
)


class _Beat:
    """The heartbeat a tick keeps on its claim; the doctor has no claim."""

    def update(self, **_fields) -> None:
        return None


def check_agent_call(c: Context) -> CheckResult:
    """One call of the agent: OK with the endpoint and how long it took, or CRITICAL with why."""
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    try:
        with file_lock(c.ws.tick_lock_path, blocking=False):
            return _call(c.ws, config)
    except LockBusy:
        return [Finding(WARNING, NAME, f"{NAME}: a tick is running; run `memento doctor --agent` again "
                                       "once it has ended")]


def endpoint_of(config: Config) -> str:
    """The preset's model endpoint as host:port, as the sandbox's network policy knows it."""
    from ...sandbox import network

    found = network.reach(config)
    if found.endpoints:
        return str(found.endpoints[0])
    if found.unknown:
        return f"an endpoint Memento cannot know ({found.unknown})"
    return f"no model endpoint of its own: {config.agent_preset} preset"


def _call(ws: Workspace, config: Config) -> CheckResult:
    from ...tick import agent, confine, limits
    from ...tick.context import TickContext, _unique

    preset, endpoint = config.agent_preset, endpoint_of(config)
    via = f"via {endpoint}" if endpoint[:1].isalnum() and " " not in endpoint else f"({endpoint})"
    ctx = TickContext(ws, config=config)
    ctx.number = 0
    ctx.log_path = _unique(ws.logs_dir / f"doctor-agent_{ctx.started.strftime('%Y-%m-%dT%H%M%SZ')}.log")
    ctx.log_path.parent.mkdir(parents=True, exist_ok=True)
    log = ws.rel(ctx.log_path)
    task = Task("DOCTOR", " ", None, 0, raw_rest=" the doctor's agent check",
                block="\n  - verify: `true`\n  - context_files: []\n")
    prompt_file = ws.memento_dir / "prompts" / "doctor-agent.md"
    atomic_write_text(prompt_file, PROMPT)
    try:
        confine.check_network(ctx)
        archive = ctx.plan().meta.status_archive_dir
    except MementoError as exc:
        return [Finding(CRITICAL, NAME, f"{NAME}: {preset} cannot run: {exc}")]
    wrap, refused = confine.prepare(ctx, task, (), archive_dir=archive)
    if refused:
        return [Finding(CRITICAL, NAME, f"{NAME}: {preset} cannot run: {refused} (log {log})")]
    began = time.monotonic()
    with agents.capture(ctx.log_path) as printed:
        reason, code = agent.run_agent(ctx, task, prompt_file, _Beat(), wrap,
                                         timeout=min(config.agent_timeout or MAX_SECONDS, MAX_SECONDS))
    took = time.monotonic() - began
    text = printed.text()
    usage, limit = limits.read_output(ctx, text)
    said = _last_words(text)
    why = _gave_up(config, text, said, usage)
    if limit is not None:
        why = f"rate limited: {limit.message}"
    elif reason:
        why = f"{_kind(said) or ('no answer' if 'timed out' in reason else 'it failed')}: {reason}"
    elif why:
        why = f"{why}, though it exited 0"
    if why:
        words = f"; its last words: {said!r}" if said else "; it printed nothing"
        return [Finding(CRITICAL, NAME, f"{NAME}: {preset} did not answer {via} ({why}){words} (log {log})")]
    return f"{NAME}: {preset} answered {via} in {took:.1f} s"


def _last_words(text: str) -> str:
    """What the CLI said last, on one line: its JSON error's message when it ended with one."""
    said = last_words(plain_lines(text), 4) if text else ""
    for obj in reversed(list(json_objects(text))):
        message = _error_message(obj)
        if message:
            said = message
            break
    said = " / ".join(" ".join(line.split()) for line in said.splitlines() if line.strip())
    return said if len(said) <= QUOTE else "…" + said[-(QUOTE - 1):]


def _error_message(obj: dict) -> str:
    """The message of a JSON error a CLI printed (claude's error result, codex's error event), else ''."""
    if obj.get("is_error"):
        return str(obj.get("result") or obj.get("subtype") or "error")
    kind = str(obj.get("type") or "")
    if kind in ("error", "turn.failed") or kind.endswith(".error"):
        error = obj.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(obj.get("message") or error or kind)
    return ""


def _kind(said: str) -> str:
    """Which failure the last words read as: not logged in, endpoint unreachable, model refused."""
    return next((kind for kind, pattern in _GAVE_UP if pattern.search(said)), "")


def _gave_up(config: Config, text: str, said: str, usage) -> str:
    """'' when an exit 0 is an answer; else what the CLI's output says it gave up on."""
    if any(_error_message(obj) for obj in json_objects(text)):
        return _kind(said) or "it reported an error"
    if usage is not None:
        return "" if usage.tokens_in + usage.tokens_out > 0 else (_kind(said) or "the model used no tokens")
    spec = agents.PRESETS.get(config.agent_output or config.agent_preset)
    if spec is not None and spec.parse_usage is not None:  # its answer always carries its usage
        return _kind(said) or "it reported no usage: the model never answered"
    return _kind(said)
