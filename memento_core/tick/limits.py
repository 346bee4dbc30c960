"""Rate limits, fallback presets, usage and the budget (SPEC §14), around step 10.

:func:`run_agent` runs the agent (agent.run_agent) and reads what its own
output says: the usage (recorded in the entry and in .memento/usage.json) and
a rate limit. A rate-limited attempt is not the task's failure: the next
preset of ``[agent] fallback`` runs at once in the same tick (the work tree
rolled back to the snapshot first); when none is left the attempt is set
aside with ``⏳ RATE LIMITED — until 14:05 UTC (preset claude)`` and ticks skip
(:func:`skip_reason`) until the reset time the CLI printed, else a backoff of
5, 10, 20 … up to 120 minutes. A rate limit is read from the CLI's last words
whatever its exit code (aider and Claude Code exit 0 after giving up): after a
failed run it is one at once; after a run that exited 0 it is only suspected
(``AgentOutcome.suspect``) and the task's verify decides (:func:`judge_suspect`):
verify passes, it was a mention, not a limit; verify fails, the attempt was
rate limited (attempt.py then rolls back and runs the next free preset of
``[agent] fallback`` in the same tick, as for any refusal).

The budget: an attempt costing more than ``[budget] task_usd``, or using more
tokens than ``task_tokens`` (SPEC §20: in + out, cache reads and writes counted
as input), fails with "task budget exceeded": stopped while it runs when the CLI
reports as it goes (aider's cost, codex's turns), judged when it ends for those
that report at the end; once today's cost reaches ``daily_usd`` or today's
tokens ``daily_tokens`` (whichever first) one ``💸 BUDGET REACHED`` entry is
written and ticks skip until the next UTC day.

A subscription's usage windows (SPEC §20): after each attempt, a window the CLI
reported (Claude Code's ``rate_limit_event``) at or over ``[budget]
window_pause_at`` percent stops new attempts until it resets (the latest reset of
those over it): one ``⏳ WINDOW 95% (5-hour) — until 14:05 UTC (preset claude)``
entry, skipped ticks in cron.log only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import agents, spending
from ..agents.usage import RateLimit
from ..runlog import parse_utc_stamp, utc_stamp
from ..spending import Usage, short_count
from ..workspace import KEPT_DOCS
from .context import TickContext, append_log

BACKOFF_MINUTES = (5, 120)  # the first wait without a reset time, and the longest
STREAK_FREE = 6  # rate-limited attempts of one task in a row that count no retry; the next ones do (SPEC §14)


@dataclass
class AgentOutcome:
    """What the agent's output said in one attempt (kept on the Attempt)."""

    usage: Usage | None = None
    limit: RateLimit | None = None  # set when every preset tried was rate limited
    preset: str = ""
    until: datetime | None = None
    fallbacks: list[str] = field(default_factory=list)
    # exit 0, yet the last words say refused: (preset, limit, its config, the presets after it)
    suspect: tuple | None = None
    fall_back: bool = False  # that limit stands and a preset after it is free: run it in this tick

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
    return parse_utc_stamp(stamp)


def run_agent(ctx: TickContext, at, prompt_file: Path, run_one: Callable,
              build_prompt: Callable) -> tuple[str, int | None]:
    """Step 10 through the presets to try; ('' or the failure reason, exit code), ``at.agent`` filled.

    ``run_one`` is agent.run_agent, ``build_prompt`` agent.build_worker_prompt
    (a fallback preset may take the system prompt differently).
    """
    prior = at.agent if isinstance(at.agent, AgentOutcome) and at.agent.fall_back else None
    outcome = at.agent = AgentOutcome()
    if prior is not None:  # the preset before was refused at exit 0: its usage and note carry over
        outcome.usage, outcome.fallbacks = prior.usage, prior.fallbacks
    primary = ctx.config
    chain = presets_to_try(ctx, datetime.now(UTC))
    try:
        for i, preset in enumerate(chain):
            if preset != ctx.config.agent_preset:
                ctx.config = dataclasses.replace(primary, agent_preset=preset, agent_output="")
                prompt_file, _ = build_prompt(ctx, at.task)
            # What the agent printed, as Memento copied it from its pipe (agents/logpipe.py): never
            # re-read from the log, which an unconfined agent could reach by its path.
            with agents.capture(ctx.log_path) as printed, BudgetWatch(ctx, at.beat, printed) as watch:
                reason, code = run_one(ctx, at.task, prompt_file, at.beat)
            if watch.stopped:
                reason = watch.stopped
            text = printed.text()
            usage, limit = read_output(ctx, text)
            note_windows(ctx, text, preset)
            if usage is not None:
                outcome.usage = usage if outcome.usage is None else outcome.usage + usage
                _record(ctx, usage)
            over = over_task_budget(ctx, outcome.usage)
            if watch.stopped or (over and not reason):
                limit = None  # over the task's budget (stopped by Memento or not): not refused
            if limit is not None and not reason:  # exit 0: the task's verify decides
                outcome.suspect = (preset, limit, ctx.config, chain[i + 1:])
                append_log(ctx.log_path, f"[memento] {preset} exited 0, but its last words read as a rate "
                                         f"limit ({limit.message[:120]}): the task's verify decides\n")
                return "", code
            if limit is None:
                _clear_limit(ctx, preset)
                return reason or over, code
            until = _limited(ctx, preset, limit)
            if i + 1 < len(chain) and not ctx.interrupted:
                outcome.fallbacks.append(f"{preset} rate limited until {clock(until)}; ran {chain[i + 1]}")
                append_log(ctx.log_path, f"[memento] {preset} is rate limited until {clock(until)}: "
                                         f"trying {chain[i + 1]} in this tick\n")
                roll_back_for_fallback(ctx, at)
                continue
            outcome.limit, outcome.until = limit, _tick_wait(ctx)
            outcome.preset = ctx.state.rate_limited_preset  # the first of them to be free again
            return f"rate limited: {limit.message}", code
    finally:
        ctx.config = primary
    # Never reached: the chain is never empty and its last preset returns above (mypy wants a return).
    return "no agent preset to run", None  # pragma: no mutate


def _record(ctx: TickContext, usage: Usage) -> None:
    """Today's running total in usage.json (the entry's Usage field is the record)."""
    try:
        spending.add_usage(ctx.ws, usage)
    except OSError as exc:
        append_log(ctx.log_path, f"[memento] could not update .memento/usage.json: {exc}\n")


def read_output(ctx: TickContext, text: str) -> tuple[Usage | None, RateLimit | None]:
    """Usage and rate limit from what the agent printed (``text``), as the output preset's parsers
    read them (a rate limit from the CLI's last words, whatever its exit code).

    The CLI's answer, when it was inside JSON, and the usage are written to the
    log as plain lines, so the log stays readable.
    """
    name = ctx.config.agent_output or ctx.config.agent_preset
    spec = agents.PRESETS.get(name)
    if spec is None:
        return None, None
    usage = spec.parse_usage(text) if spec.parse_usage else None
    limit = spec.rate_limit(text, datetime.now(UTC)) if spec.rate_limit else None
    said = spec.readable(text) if spec.readable else None
    if said:
        append_log(ctx.log_path, f"[memento] {name} said:\n{said.rstrip()}\n")
    if usage is not None:
        append_log(ctx.log_path, f"[memento] usage: {usage.describe()}\n")
    return usage, limit


class BudgetWatch:
    """While the agent runs, what it printed (``printed``, a logpipe.Capture) is read every second;
    an attempt whose cost or tokens so far (aider prints them after every reply, codex after
    every turn) go over ``task_usd`` or ``task_tokens`` is stopped there.

    CLIs that report usage only at the end (claude's result, gemini's) are
    judged by :func:`over_task_budget` once they finish.
    """

    def __init__(self, ctx: TickContext, beat, printed, every: float = 1.0):
        import threading

        name = ctx.config.agent_output or ctx.config.agent_preset
        spec = agents.PRESETS.get(name)
        self.parse = spec.parse_usage if spec is not None else None
        self.marker = spec.usage_marker if spec is not None else None
        self.ctx, self.printed, self.beat, self.every = ctx, printed, beat, every
        self.stopped = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="budget-watch", daemon=True)
        self._tap = None

    def __enter__(self) -> BudgetWatch:
        config = self.ctx.config
        if (config.budget_task_usd > 0 or config.budget_task_tokens > 0) and self.parse is not None:
            if self.marker:  # only the usage lines, picked as they come: a 50 MB stream is never re-read
                self._tap = agents.listening(self.ctx.log_path, agents.LineTap(self.marker))
                self.printed = self._tap.__enter__()
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        if self._tap is not None:
            self._tap.__exit__(None, None, None)

    def _run(self) -> None:
        seen = -1
        while not self._done.wait(self.every):
            size = getattr(self.printed, "picked", None)
            size = self.printed.size if size is None else size
            if size != seen:  # output that did not grow is not parsed again
                seen = self._look(size)
                if self.stopped:
                    return

    def _look(self, size: int) -> int:
        """Stop the agent if what it printed is over a budget; the size judged (-1: over before
        its process group was known, so looked at again whether it prints more or not)."""
        usage = self.parse(self.printed.text())
        pgid = getattr(getattr(self.beat, "claim", None), "pgid", None)
        over = over_task_budget(self.ctx, usage)
        if over and pgid:
            self.stopped = f"{over} (the agent was stopped)"
            agents.kill_group(pgid)
        return -1 if over and not pgid else size


def over_task_budget(ctx: TickContext, usage: Usage | None) -> str:
    """'task budget exceeded …' when the attempt cost more than ``task_usd`` or used more tokens
    than ``task_tokens``, else ''."""
    if usage is None:
        return ""
    limit, tokens = ctx.config.budget_task_usd, ctx.config.budget_task_tokens
    if limit > 0 and (usage.cost_usd or 0.0) > limit:
        return f"task budget exceeded: ${usage.cost_usd:.3f} of ${limit:.2f}"
    if tokens > 0 and usage.tokens > tokens:
        return f"task budget exceeded: {short_count(usage.tokens)} of {short_count(tokens)} tokens"
    return ""


# ---------------------------------------------------------------- usage windows (SPEC §20)


def note_windows(ctx: TickContext, text: str, preset: str) -> None:
    """After an attempt: a usage window the CLI reported at or over ``window_pause_at`` pauses new
    attempts until it resets (the latest reset of those over it, when several are)."""
    at = ctx.config.budget_window_pause_at
    spec = agents.PRESETS.get(ctx.config.agent_output or ctx.config.agent_preset)
    if at <= 0 or spec is None or spec.windows is None:
        return
    now = datetime.now(UTC)
    full = [w for w in spec.windows(text) if w.percent >= at and w.resets_at is not None and w.resets_at > now]
    if not full:
        return
    last = max(full, key=lambda w: w.resets_at)
    until = utc_stamp(last.resets_at.replace(microsecond=0))
    with ctx.state_lock:
        if until <= ctx.state.window_paused_until:
            return  # a pause as long or longer is on already
        ctx.state.window_paused_until = until
        ctx.state.window_paused_what = f"{last.percent:.0f}% ({last.label})"
        ctx.state.window_paused_preset = preset
    append_log(ctx.log_path, f"[memento] {preset}'s {last.label} usage window is {last.percent:.0f}% used "
                             f"([budget] window_pause_at = {at:g}): no attempt starts until "
                             f"{clock(last.resets_at)}\n")


def _window_paused(ctx: TickContext, now: datetime) -> datetime | None:
    until = parse_stamp(ctx.state.window_paused_until)
    return until if until is not None and until > now else None


def _window_wait(ctx: TickContext, now: datetime) -> str:
    """Why this tick starts no attempt: a usage window over window_pause_at ('' when none); its
    entry once per pause."""
    state = ctx.state
    until = _window_paused(ctx, now)
    if until is None:
        if state.window_paused_until:
            state.window_paused_until = state.window_paused_what = state.window_paused_preset = ""
        return ""  # pragma: no mutate (None would do as well: skip_reason's `or` is its one reader)
    what, preset = state.window_paused_what, state.window_paused_preset or ctx.config.agent_preset
    if state.window_noted_until != state.window_paused_until:
        state.window_noted_until = state.window_paused_until
        ctx.event(f"⏳ WINDOW {what} — until {clock(until)} (preset {preset})",
                  [("Action", "ticks start no attempt until the window resets; raise [budget] "
                              "window_pause_at in memento.toml (0: off) to go on")])
        ctx.commit(list(KEPT_DOCS), "memento: usage window paused")
    return f"tick skipped: usage window {what} until {clock(until)} (preset {preset})"


def roll_back_for_fallback(ctx: TickContext, at) -> None:
    """Whatever the refused preset did is undone before the next one starts."""
    from .rollback import restore_documents, roll_back, rollback_folder
    from .unseen import settle

    snap = at.snap
    settle(ctx.root, snap.unseen, rollback_folder(ctx.ws, f"{at.task.id}-unseen"), ctx.log_path)
    ctx.rolled_back(roll_back(ctx.ws, snap.base, snap.untracked, at.task.id, keep_patterns=snap.cleanignore))
    restore_documents(ctx.ws, snap, at.task.id, confined=bool(at.wrap))


def judge_suspect(ctx: TickContext, outcome: AgentOutcome | None, reason: str) -> str:
    """The attempt's reason once its guards and verify (or the review) have judged the work of an
    agent that exited 0 with a rate limit in its last words: the work passed (``reason`` empty), a
    mention, not a limit; it failed, "rate limited: …", set aside like any refusal (as one that
    exits non-zero is: its unfinished work rolled back, no retry counted)."""
    if outcome is None or outcome.suspect is None or ctx.interrupted:
        return reason
    if reason:
        return confirm_limit(ctx, outcome)
    preset = outcome.suspect[0]
    outcome.suspect = None
    append_log(ctx.log_path, f"[memento] {preset}'s last words mention a rate limit, but the task "
                             "passed: not a rate limit\n")
    _clear_limit(ctx, preset)
    return reason


def confirm_limit(ctx: TickContext, outcome: AgentOutcome) -> str:
    """The suspected limit stands: remembered for its preset; ticks wait unless a preset after it
    is free (``fall_back``: attempt.py rolls the work back and runs that one in this tick)."""
    preset, limit, config, rest = outcome.suspect
    outcome.suspect = None
    saved, ctx.config = ctx.config, config  # the chain of the role that was refused
    try:
        until = _limited(ctx, preset, limit)
        now = datetime.now(UTC)
        free = [p for p in rest if not _still_limited(ctx.state.preset_limits.get(p, ""), now)]
        if free and not ctx.interrupted:  # attempt.py rolls back and runs it in this tick
            outcome.fall_back = True
            outcome.fallbacks.append(f"{preset} rate limited until {clock(until)}; ran {free[0]}")
            append_log(ctx.log_path, f"[memento] {preset} is rate limited until {clock(until)}: "
                                     f"trying {free[0]} in this tick\n")
        else:
            outcome.limit, outcome.until = limit, _tick_wait(ctx)
            outcome.preset = ctx.state.rate_limited_preset
    finally:
        ctx.config = saved
    return f"rate limited: {limit.message}"


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
        state.rate_limited_since = state.rate_limited_since or utc_stamp()
    return until


def _clear_limit(ctx: TickContext, preset: str) -> None:
    state = ctx.state
    with ctx.state_lock:
        state.preset_limits.pop(preset, None)
        state.rate_limit_streak = 0
        state.rate_limited_until = state.rate_limited_preset = state.rate_limited_since = ""


def task_streak(ctx: TickContext, task_id: str, limited: str, reason: str) -> tuple[str, str]:
    """(limited, reason) of an attempt that ended, its task's streak of rate-limited attempts
    counted: past STREAK_FREE in a row, a rate limit counts a retry like any failure (``limited``
    emptied, the reason says why), so a task whose agent always prints a 429 still ends `[!]`.
    An attempt that was not rate limited ends the streak."""
    if ctx.interrupted:
        return limited, reason
    with ctx.state_lock:
        streaks = ctx.state.task_limit_streaks
        if not isinstance(streaks, dict):
            streaks = ctx.state.task_limit_streaks = {}
        if not limited.startswith("⏳"):
            streaks.pop(task_id, None)
            return limited, reason
        count = streaks[task_id] = int(streaks.get(task_id, 0) or 0) + 1
    if count <= STREAK_FREE:
        return limited, reason
    append_log(ctx.log_path, f"[memento] {task_id}: {count} rate-limited attempts in a row: this one "
                             "counts a retry\n")
    return "", f"{reason} ({count} rate-limited attempts of {task_id} in a row: counted as a failure)"


def skip_reason(ctx: TickContext, now: datetime | None = None) -> str:
    """Why this tick skips (rate limited, budget reached), or ''; writes the budget entry once a day."""
    now = now or datetime.now(UTC)
    state = ctx.state
    until = parse_stamp(state.rate_limited_until)
    if until is not None and until > now:
        return f"tick skipped: rate limited until {clock(until)} (preset {state.rate_limited_preset})"
    if until is not None:
        state.rate_limited_until = state.rate_limited_preset = ""
    return _window_wait(ctx, now) or _budget_reached(ctx, now)


def _today(ctx: TickContext, now: datetime) -> dict:
    return spending.read_ledger(ctx.ws)["days"].get(spending.today(now), {})


def _daily_reached(ctx: TickContext, now: datetime) -> tuple[str, str]:
    """(what today's spending is, the key that stopped it) once ``daily_usd`` or ``daily_tokens``
    is reached, else ('', '')."""
    config = ctx.config
    if config.budget_daily_usd <= 0 and config.budget_daily_tokens <= 0:
        return "", ""
    today = _today(ctx, now)
    spent = today.get("cost_usd", 0.0)
    if config.budget_daily_usd > 0 and spent >= config.budget_daily_usd:
        return f"${spent:.2f} of ${config.budget_daily_usd:.2f}", "daily_usd"
    tokens = today.get("tokens_in", 0) + today.get("tokens_out", 0)
    if config.budget_daily_tokens > 0 and tokens >= config.budget_daily_tokens:
        return f"{short_count(tokens)} of {short_count(config.budget_daily_tokens)} tokens", "daily_tokens"
    return "", ""


def daily_budget_spent(ctx: TickContext) -> bool:
    """Today's cost or tokens reached their daily budget, or a usage window paused the agent: no
    further task in this tick (the next one says so)."""
    now = datetime.now(UTC)
    with ctx.state_lock:
        if _window_paused(ctx, now) is not None:
            return True
    return bool(_daily_reached(ctx, now)[0])


def _budget_reached(ctx: TickContext, now: datetime) -> str:
    spent, key = _daily_reached(ctx, now)
    if not spent:
        return ""
    day = spending.today(now)
    if ctx.state.budget_reached_day != day:
        ctx.state.budget_reached_day = day
        ctx.event(f"💸 BUDGET REACHED — {spent} today",
                  [("Action", f"ticks skip until the next UTC day; raise [budget] {key} in "
                              "memento.toml to go on today")])
        ctx.commit(list(KEPT_DOCS), "memento: budget reached")
    return f"tick skipped: budget reached ({spent} today)"
