"""The ``aider`` preset: aider with ``--message-file`` (docs/agents.md explains each flag).

aider prints ``Tokens: 1.2k sent, 345 received. Cost: $0.01 message, $0.02 session.``
after each reply (with ", 1.4k cache write, 3.1k cache hit" when the provider
caches); Memento sums them. A rate limit shows litellm's
``litellm.RateLimitError: …`` and "The API provider has rate limited you."
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ...config.model import Config
from ...errors import MementoError
from ..invocation import AgentRequest, AgentSpec, Invocation, model_args
from ..reset_times import reset_time
from ..usage import RateLimit, Usage, generic_rate_limit, last_words, limit_from

_GLOB_CHARS = set("*?[")
# Memento's documents: given to aider to read, never to edit (the prompt names them,
# and aider would otherwise add them to the chat as editable files).
READ_ONLY_DOCS = ("docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "docs/CURRENT_STATE.md", "docs/HUMAN_NOTES.md")
NO_MODEL = ('the aider preset needs a model: set [agent] model in memento.toml, e.g. '
            'model = "sonnet" or "openai/gpt-4o" (without one aider starts a browser login '
            'and waits for a person)')
_TOKENS_RE = re.compile(r"^Tokens: (?P<body>.*?) received\.(?: Cost: \$(?P<msg>[\d.]+) message, "
                        r"\$(?P<session>[\d.]+) session\.)?", re.M)
_AMOUNT_RE = re.compile(r"(?P<n>[\d.]+)(?P<k>[kKmM]?) (?P<what>sent|cache write|cache hit)")
LIMIT_RE = re.compile(r"RateLimitError|rate limited you|exceeded your current quota|insufficient_quota", re.I)


def _task_context_files(req: AgentRequest) -> tuple[str, ...]:
    """The task's context_files: given by the caller, else read from the plan (best effort)."""
    if req.context_files is not None:
        return tuple(req.context_files)
    from ...plan.scan import parse_plan  # only the aider preset needs the plan here

    try:
        task = parse_plan(Path(req.workdir) / "docs" / "MASTER_PLAN.md").task(req.task_id)
    except (MementoError, OSError):
        return ()
    return tuple(task.context_files) if task is not None else ()


def _aider_files(req: AgentRequest) -> list[str]:
    """context_files aider can open for editing: plain paths, not folders or patterns."""
    files = []
    for entry in _task_context_files(req):
        entry = entry.strip()
        if (not entry or entry.startswith("-") or entry.endswith("/") or entry in READ_ONLY_DOCS
                or _GLOB_CHARS & set(entry) or (Path(req.workdir) / entry).is_dir()):
            continue
        files.append(entry)
    return files


def _answers(confined: bool) -> list[str]:
    """How aider's questions are answered. Unconfined: ``--yes-always``, which answers no to
    "Run shell command?" (aider asks it with explicit_yes_required), and no shell commands
    suggested. Confined (SPEC §13): no ``--yes-always``; standard input is /dev/null, so each
    question takes its default answer, yes for all of them, and the shell commands aider
    suggests run in the sandbox (a project's tests)."""
    if confined:
        return ["--suggest-shell-commands"]
    return ["--yes-always", "--no-suggest-shell-commands"]


def build(config: Config, req: AgentRequest) -> Invocation:
    """aider on the prompt file, the task's context_files open, no commits, no prompts."""
    if not config.agent_model.strip():
        raise MementoError(NO_MODEL)
    state = Path(req.workdir) / ".memento" / "worker"  # writable in the sandbox (SPEC §13)
    argv = ["aider", "--message-file", str(req.prompt_file)]
    if Path(req.system_prompt_file).is_file():
        argv += ["--read", str(req.system_prompt_file)]
    for doc in READ_ONLY_DOCS:
        if (Path(req.workdir) / doc).is_file():
            argv += ["--read", doc]
    argv += _answers(req.confined)
    argv += [
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-git",  # Memento owns git: without an identity aider would write user.name into .git/config
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-detect-urls",
        "--no-pretty",
        "--no-stream",
        "--no-fancy-input",
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
    ]
    argv += model_args("--model", config)
    argv += config.agent_extra_args
    argv += _aider_files(req)
    return Invocation(tuple(argv), False, None, "aider")


def _tokens(number: str, suffix: str) -> int:
    scale = {"k": 1000, "m": 1_000_000}.get(suffix.lower(), 1)
    return int(round(float(number) * scale))


def parse_usage(log_text: str) -> Usage | None:
    """The sum of aider's ``Tokens:`` lines; the cost is the last ``session`` amount."""
    found, tokens_in, tokens_out, cost = False, 0, 0, None
    for m in _TOKENS_RE.finditer(log_text):
        found = True
        body, _, received = m.group("body").rpartition(", ")
        for part in _AMOUNT_RE.finditer(body):
            tokens_in += _tokens(part.group("n"), part.group("k"))
        r = re.match(r"([\d.]+)([kKmM]?)$", received.strip())
        if r:
            tokens_out += _tokens(r.group(1), r.group(2))
        if m.group("session"):
            cost = float(m.group("session"))
    return Usage(tokens_in, tokens_out, cost) if found else None


def rate_limit(log_text: str, now: datetime | None = None) -> RateLimit | None:
    """litellm's RateLimitError or aider's "rate limited you", else an HTTP 429, in aider's last
    words: after its retries it prints them and exits 0; a refusal it got past, or the words in a
    file it wrote, come earlier."""
    now = now or datetime.now(UTC)
    said = last_words(log_text)
    found = limit_from(said, LIMIT_RE, now) or generic_rate_limit(said, now)
    if found is not None and found.until is None:  # aider wraps its lines: "… Please retry after" on the next
        return RateLimit(reset_time(said, now), found.message)
    return found


SPEC = AgentSpec(
    "aider",
    "aider",
    "aider with --message-file; the task's context_files opened for editing; "
    "its shell commands run when confined",
    build,
    separate_system_prompt=True,
    parse_usage=parse_usage,
    rate_limit=rate_limit,
    usage_marker=b"Tokens: ",
)
