"""Rate limits, fallback presets, usage and the budget (SPEC §14), around step 10.

:func:`run_agent` runs the agent (attempt.run_agent) and reads what its own
output says: the usage (recorded in the entry and in .memento/usage.json) and
a rate limit. A rate-limited attempt is not the task's failure: the next
preset of ``[agent] fallback`` runs at once in the same tick (the work tree
rolled back to the snapshot first); when none is left the attempt is set
aside with ``⏳ RATE LIMITED — until 14:05 UTC (preset claude)`` and ticks skip
(:func:`skip_reason`) until the reset time the CLI printed, else a backoff of
5, 10, 20 … up to 120 minutes. A rate limit is only looked for when the agent
failed (exit code, timeout): a CLI that succeeds was not refused.

The budget: an attempt costing more than ``[budget] task_usd`` fails with
"task budget exceeded": stopped while it runs when the CLI streams its cost
(aider), judged when it ends for those that report it at the end; once today's cost reaches ``daily_usd``
one ``💸 BUDGET REACHED`` entry is written and ticks skip until the next UTC day.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import agents, spending
from ..agents.usage import RateLimit
from ..runlog import utc_stamp
from ..spending import Usage
from ..workspace import KEPT_DOCS
from .context import TickContext
from .files import append_log

BACKOFF_MINUTES = (5, 120)  # the first wait without a reset time, and the longest


@dataclass
class AgentOutcome:
    """What the agent's output said in one attempt (kept on the Attempt)."""

    usage: Usage | None = None
    limit: RateLimit | None = None  # set when every preset tried was rate limited
    preset: str = ""
    until: datetime | None = None
    fallbacks: list[str] = field(default_factory=list)

    def status(self) -> str:
        """The entry's Status for a rate-limited attempt, '' for any other."""
        if self.limit is None or self.until is None:
            return ""
        return f"⏳ RATE LIMITED — until {clock(self.until)} (preset {self.preset})"

    def fields(self) -> list[tuple[str, str]]:
        out = [("Usage", self.usage.describe())] if self.usage is not None else []
        if self.fallbacks:
            out.append(("Fallback", "; ".join(self.fallbacks)))
        return out


def clock(moment: datetime) -> str:
    """``14:05 UTC``, with the date when it is not today."""
    moment = moment.astimezone(UTC)
    if moment.date() != datetime.now(UTC).date():
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%H:%M UTC")


def with_usage(fields: list[tuple[str, str]], outcome: AgentOutcome | None) -> list[tuple[str, str]]:
    """The entry's fields with Usage (and Fallback) before its Log field."""
    extra = outcome.fields() if outcome is not None else []
    if not extra:
        return fields
    at = next((i for i, (name, _) in enumerate(fields) if name == "Log"), len(fields))
    return [*fields[:at], *extra, *fields[at:]]


# ---------------------------------------------------------------- step 10 with fallback


def presets_to_try(ctx: TickContext, now: datetime) -> list[str]:
    """The configured preset, then its fallbacks, without those still rate limited."""
    chain = list(dict.fromkeys([ctx.config.agent_preset, *ctx.config.agent_fallback]))
    with ctx.state_lock:
        limits = dict(ctx.state.preset_limits)
    ready = [p for p in chain if not _still_limited(limits.get(p, ""), now)]
    return ready or chain[:1]


def _still_limited(stamp: str, now: datetime) -> bool:
    until = parse_stamp(stamp)
    return until is not None and until > now


def parse_stamp(stamp: str) -> datetime | None:
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return None


def run_agent(ctx: TickContext, at, prompt_file: Path, run_one: Callable,
              build_prompt: Callable) -> tuple[str, int | None]:
    """Step 10 through the presets to try; ('' or the failure reason, exit code), ``at.agent`` filled.

    ``run_one`` is attempt.run_agent, ``build_prompt`` attempt.build_worker_prompt
    (a fallback preset may take the system prompt differently).
    """
    outcome = at.agent = AgentOutcome()
    primary = ctx.config
    chain = presets_to_try(ctx, datetime.now(UTC))
    try:
        for i, preset in enumerate(chain):
            if preset != ctx.config.agent_preset:
                ctx.config = dataclasses.replace(primary, agent_preset=preset, agent_output="")
                prompt_file, _ = build_prompt(ctx, at.task)
            start = _size(ctx.log_path)
            with BudgetWatch(ctx, at.beat, start) as watch:
                reason, code = run_one(ctx, at.task, prompt_file, at.beat)
            if watch.stopped:
                reason = watch.stopped
            usage, limit = read_output(ctx, start, failed=bool(reason) and not watch.stopped)
            if usage is not None:
                outcome.usage = usage if outcome.usage is None else outcome.usage + usage
                _record(ctx, usage)
            if limit is None:
                _clear_limit(ctx, preset)
                return reason or over_task_budget(ctx, outcome.usage), code
            until = _limited(ctx, preset, limit)
            if i + 1 < len(chain) and not ctx.interrupted:
                outcome.fallbacks.append(f"{preset} rate limited until {clock(until)}; ran {chain[i + 1]}")
                append_log(ctx.log_path, f"[memento] {preset} is rate limited until {clock(until)}: "
                                         f"trying {chain[i + 1]} in this tick\n")
                _roll_back_for_fallback(ctx, at)
                continue
            outcome.limit, outcome.until = limit, _tick_wait(ctx)
            outcome.preset = ctx.state.rate_limited_preset  # the first of them to be free again
            return f"rate limited: {limit.message}", code
    finally:
        ctx.config = primary
    return "no agent preset to run", None


def _record(ctx: TickContext, usage: Usage) -> None:
    """Today's running total in usage.json (the entry's Usage field is the record)."""
    try:
        spending.add_usage(ctx.ws, usage)
    except OSError as exc:
        append_log(ctx.log_path, f"[memento] could not update .memento/usage.json: {exc}\n")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_output(ctx: TickContext, start: int, *, failed: bool) -> tuple[Usage | None, RateLimit | None]:
    """Usage and rate limit from the log since ``start``, as the output preset's parsers read them.

    The CLI's answer, when it was inside JSON, and the usage are written to the
    log as plain lines, so the log stays readable.
    """
    name = ctx.config.agent_output or ctx.config.agent_preset
    spec = agents.PRESETS.get(name)
    if spec is None:
        return None, None
    text = _read_from(ctx.log_path, start)
    usage = spec.parse_usage(text) if spec.parse_usage else None
    limit = spec.rate_limit(text, datetime.now(UTC)) if spec.rate_limit and failed else None
    said = spec.readable(text) if spec.readable else None
    if said:
        append_log(ctx.log_path, f"[memento] {name} said:\n{said.rstrip()}\n")
    if usage is not None:
        append_log(ctx.log_path, f"[memento] usage: {usage.describe()}\n")
    return usage, limit


class BudgetWatch:
    """While the agent runs, its log is read every second; an attempt whose streamed cost
    (aider prints it after every reply) goes over ``task_usd`` is stopped there.

    CLIs that report the cost only at the end (claude's json, codex, gemini) are
    judged by :func:`over_task_budget` once they finish.
    """

    def __init__(self, ctx: TickContext, beat, start: int, every: float = 1.0):
        import threading

        name = ctx.config.agent_output or ctx.config.agent_preset
        spec = agents.PRESETS.get(name)
        self.parse = spec.parse_usage if spec is not None else None
        self.limit, self.log, self.start, self.beat, self.every = (
            ctx.config.budget_task_usd, ctx.log_path, start, beat, every)
        self.stopped = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="budget-watch", daemon=True)

    def __enter__(self) -> BudgetWatch:
        if self.limit > 0 and self.parse is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        seen = -1
        while not self._done.wait(self.every):
            size = _size(self.log)
            if size == seen:
                continue
            seen = size
            usage = self.parse(_read_from(self.log, self.start))
            pgid = getattr(getattr(self.beat, "claim", None), "pgid", None)
            if usage is not None and (usage.cost_usd or 0.0) > self.limit and pgid:
                self.stopped = (f"task budget exceeded: ${usage.cost_usd:.3f} of ${self.limit:.2f} "
                                "(the agent was stopped)")
                agents.kill_group(pgid)
                return


def _read_from(path: Path, start: int) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def over_task_budget(ctx: TickContext, usage: Usage | None) -> str:
    """'task budget exceeded …' when the attempt cost more than ``task_usd``, else ''."""
    limit = ctx.config.budget_task_usd
    if limit > 0 and usage is not None and (usage.cost_usd or 0.0) > limit:
        return f"task budget exceeded: ${usage.cost_usd:.3f} of ${limit:.2f}"
    return ""


def _roll_back_for_fallback(ctx: TickContext, at) -> None:
    """Whatever the refused preset did is undone before the next one starts."""
    from .rollback import restore_documents, roll_back

    snap = at.snap
    ctx.rolled_back(roll_back(ctx.ws, snap.base, snap.untracked, at.task.id, keep_patterns=snap.cleanignore))
    restore_documents(ctx.ws, snap, at.task.id, confined=bool(at.wrap))


# ---------------------------------------------------------------- waiting


def _limited(ctx: TickContext, preset: str, limit: RateLimit) -> datetime:
    """Remember until when ``preset`` is refused: the CLI's reset time, else the backoff."""
    now = datetime.now(UTC)
    until = limit.until if limit.until is not None and limit.until > now else None
    with ctx.state_lock:  # the tick's state, shared by parallel workers
        if until is None:
            first, longest = BACKOFF_MINUTES
            until = now + timedelta(minutes=min(first * 2 ** min(ctx.state.rate_limit_streak, 10), longest))
        ctx.state.preset_limits[preset] = utc_stamp(until.replace(microsecond=0))
    return until


def _tick_wait(ctx: TickContext) -> datetime:
    """Every preset is refused: ticks skip until the first of them is free again."""
    ctx.rate_limited = True
    state = ctx.state
    chain = [ctx.config.agent_preset, *ctx.config.agent_fallback]
    with ctx.state_lock:
        times = [(parse_stamp(state.preset_limits.get(p, "")), p) for p in chain]
        until, preset = min((t, p) for t, p in times if t is not None)
        state.rate_limited_until, state.rate_limited_preset = utc_stamp(until), preset
        state.rate_limit_streak += 1
    return until


def _clear_limit(ctx: TickContext, preset: str) -> None:
    state = ctx.state
    with ctx.state_lock:
        state.preset_limits.pop(preset, None)
        state.rate_limit_streak = 0
        state.rate_limited_until = state.rate_limited_preset = ""


def skip_reason(ctx: TickContext, now: datetime | None = None) -> str:
    """Why this tick skips (rate limited, budget reached), or ''; writes the budget entry once a day."""
    now = now or datetime.now(UTC)
    state = ctx.state
    until = parse_stamp(state.rate_limited_until)
    if until is not None and until > now:
        return f"tick skipped: rate limited until {clock(until)} (preset {state.rate_limited_preset})"
    if until is not None:
        state.rate_limited_until = state.rate_limited_preset = ""
    return _budget_reached(ctx, now)


def _spent_today(ctx: TickContext, now: datetime) -> float:
    return spending.read_ledger(ctx.ws)["days"].get(spending.today(now), {}).get("cost_usd", 0.0)


def daily_budget_spent(ctx: TickContext) -> bool:
    """Today's cost has reached ``daily_usd``: no further task in this tick (the next one says so)."""
    daily = ctx.config.budget_daily_usd
    return daily > 0 and _spent_today(ctx, datetime.now(UTC)) >= daily


def _budget_reached(ctx: TickContext, now: datetime) -> str:
    daily = ctx.config.budget_daily_usd
    if daily <= 0:
        return ""
    day = spending.today(now)
    spent = _spent_today(ctx, now)
    if spent < daily:
        return ""
    if ctx.state.budget_reached_day != day:
        ctx.state.budget_reached_day = day
        ctx.event(f"💸 BUDGET REACHED — ${spent:.2f} of ${daily:.2f} today",
                  [("Action", "ticks skip until the next UTC day; raise [budget] daily_usd in "
                              "memento.toml to go on today")])
        ctx.commit(list(KEPT_DOCS), "memento: budget reached")
    return f"tick skipped: budget reached (${spent:.2f} of ${daily:.2f} today)"
