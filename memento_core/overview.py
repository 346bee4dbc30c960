"""What `memento status` and the dashboard say about a workspace: one set of rules.

The one word a person reads first (RUNNING, IDLE, BLOCKED, …) is state_word.pipeline_word's;
this module gathers the facts it is judged on (:func:`summarize`) and what a person must do (:func:`needs_you`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import scheduler
from .config.load import load_config
from .config.model import Config
from .errors import MementoError
from .lines import listed
from .plan.model import Plan
from .runlog import parse_utc_stamp
from .state import TickState
from .state_word import (  # noqa: F401 - the one word (state_word.py); named here for overview's callers
    NO_CRON_DAEMON,
    NOTHING_TICKS,
    cron_facts,
    git_error,
    pipeline_word,
    plan_state,
    tick_pick,
)
from .status_log import TickEntry
from .task_deps import waits_on
from .workspace import Workspace


def summarize(ws: Workspace, plan: Plan, entries: Sequence[TickEntry]) -> dict:
    """Everything `memento status` shows, as plain data (its --json schema), from files already read.

    ``entries`` are the status log's, oldest first. The dashboard calls this with what it
    has read; the CLI through :func:`status_document`.
    """
    config, config_error = _load_config(ws)  # once: the parts below read it, None when invalid
    verdict = tick_pick(ws, plan, config)
    total = scheduler.plan_progress(plan)
    durations = [e.duration_seconds for e in entries if e.status == "SUCCESS" and e.duration_seconds is not None]
    # Time left means something only while tasks can still be picked, not while a person is waited for.
    can_progress = verdict.kind in (scheduler.TASK, scheduler.WAITING) and not verdict.on_person and not plan.plan_errors
    eta = scheduler.estimate_left(plan, durations) if can_progress else None
    state_file = TickState.load(ws)
    return {
        "project": plan.title,
        "root": str(ws.root),
        "plan": ws.rel(ws.plan_path),
        "plan_state": plan_state(plan, verdict),  # the plan's own; the word a person reads is state_word's
        "tick_mode": plan.meta.tick_mode,
        "total_ticks": plan.meta.total_ticks,
        "counts": {
            "total": total.total, "done": total.done, "pending": total.pending,
            "blocked": total.blocked, "in_progress": total.in_progress, "skipped": total.skipped,
            "questions": total.waiting,
        },
        "phases": _phases(plan),
        "next": _next_step(plan, verdict),
        "blocked": _blocked(plan, entries),
        "questions": open_questions_of(ws, plan),
        "reviewer_failed": _reviewer_failed(plan, entries),
        "eta_seconds": round(eta, 1) if eta is not None else None,
        "alert": ws.alert_path.exists(),
        "breaker": {"tripped": bool(state_file.breaker_reason), "reason": state_file.breaker_reason or None,
                    "at": state_file.breaker_at or None},
        "config_error": config_error,
        "git_error": git_error(ws.root),
        "refused": state_file.dirty_signature.splitlines(),
        **_spending(ws, config or Config(), state_file, entries),
        "sandbox": _sandbox(config),
        "notify": _notify(ws, config or Config()),
        "architect": _architect(config, state_file),
        "verify_changes": _verify_changes(ws),
        **_fleet(config or Config()),
        "workers": running_workers(ws, plan),
        **_forge(ws),
        # Every error, a task's too: a task that is never picked is an error to a person everywhere.
        "plan_errors": [str(e) for e in scheduler.plan_errors(plan)],
        "waits_on": waits_on(plan),
        "last_tick": entries[-1].timestamp if entries else None,
    }


def running_workers(ws: Workspace, plan: Plan, now: float | None = None) -> list[dict]:
    """The workers running now (SPEC §12), from their claim files: a claim whose task is `[~]`
    and whose worker lives; a serial attempt is one worker with no worktree."""
    import time

    from .state import claim_is_stale, read_claim

    now = time.time() if now is None else now
    out = []
    for task in plan.tasks:
        if task.status != "~":
            continue
        claim = read_claim(ws, task.id)
        if claim is None or claim_is_stale(claim, plan.meta.stale_lock_timeout, now=now) is not None:
            continue
        started = parse_utc_stamp(claim.started)
        began = started.timestamp() if started is not None else now
        out.append({"task": task.id, "stage": claim.stage, "elapsed_s": round(max(0.0, now - began), 1),
                    "worktree": claim.worktree, "log": claim.log, "host": claim.host})
    return out


def _blocked(plan: Plan, entries: Sequence[TickEntry]) -> list[dict]:
    last_by_task: dict[str, object] = {}
    for entry in entries:
        if entry.task_id and not entry.is_event:
            last_by_task[entry.task_id] = entry
    return [{"id": task.id, "title": task.title, "retries": task.retries, "line": task.line,
             "last_error": getattr(last_by_task.get(task.id), "error", None)}
            for task in plan.tasks if task.status == "!"]


def open_questions_of(ws: Workspace, plan: Plan) -> list[dict]:
    """The open questions (SPEC §18), in plan order: {id, title, question, text, choices, asked, line}."""
    out = []
    for task in plan.tasks:
        if task.status == "?":
            # The question's reader (notes, receipts) only for a question asked.
            from .questions import question_of

            q = question_of(ws, task)
            out.append({"id": q.task_id, "title": q.title, "question": q.first_line, "text": q.text,
                        "choices": list(q.choices), "asked": q.asked or None, "line": task.line})
    return out


def _reviewer_failed(plan: Plan, entries: Sequence[TickEntry]) -> list[dict]:
    """Pending tasks whose last attempt was set aside because the acceptance reviewer could not
    review (its run failed, or its review could not be read twice, SPEC §16): every tick redoes
    the task and asks the reviewer again until a person looks at the reviewer."""
    last: dict[str, TickEntry] = {}
    for entry in entries:
        if entry.task_id:
            last[entry.task_id] = entry
    out = []
    for task in plan.tasks:
        entry = last.get(task.id)
        if task.status == " " and entry is not None and "the reviewer could not review" in (entry.field("Status") or ""):
            out.append({"task": task.id, "reason": entry.field("Reason") or ""})
    return out


def _phases(plan: Plan) -> list[dict]:
    finished = scheduler.finished_phases(plan)
    return [{
        "id": phase.id, "title": phase.title, "line": phase.line,
        "total": prog.total, "done": prog.done, "blocked": prog.blocked,
        "pending": prog.pending, "in_progress": prog.in_progress, "skipped": prog.skipped,
        "questions": prog.waiting, "open": all(d in finished for d in phase.depends), "depends": list(phase.depends),
    } for phase, prog in scheduler.phase_progress(plan)]


def _next_step(plan: Plan, verdict) -> dict:
    if plan.plan_errors:
        return {"kind": "invalid", "task": None, "message": "no task runs until the plan is fixed (`memento lint`)"}
    stopping = scheduler.stopping_errors(plan, verdict)
    if stopping:
        first = f"{stopping[0].task_id} {stopping[0].message}" if stopping[0].task_id else stopping[0].message
        return {"kind": "invalid", "task": None,
                "message": f"no task can run until the plan is fixed: {first} (`memento lint`)"}
    return {"kind": verdict.kind, "task": verdict.task.id if verdict.task else None, "message": verdict.message}


def _spending(ws: Workspace, config: Config, state: TickState, entries: Sequence[TickEntry]) -> dict:
    """"usage", "rate_limit" and "budget" (SPEC §14) from usage.json, state.json and memento.toml.

    Without usage.json (a project from before it, or a copied one) the usage is
    summed from the status log's Usage fields instead.
    """
    from .runlog import utc_stamp
    from .spending import ledger_path, usage_from_entries, usage_summary

    usage = usage_summary(ws) if ledger_path(ws).exists() else usage_from_entries(entries)
    until = state.rate_limited_until or None
    if until and until <= utc_stamp():
        until = None  # the wait is over; the next tick clears it
    daily, tokens = config.budget_daily_usd, config.budget_daily_tokens
    today = usage["today"]
    window = state.window_paused_until or None
    if window and window <= utc_stamp():
        window = None
    return {
        "usage": usage,
        "rate_limit": {"until": until, "preset": (state.rate_limited_preset or None) if until else None},
        "budget": {"daily_usd": daily, "task_usd": config.budget_task_usd,
                   "daily_tokens": tokens, "task_tokens": config.budget_task_tokens,
                   "reached": (daily > 0 and today["cost_usd"] >= daily)
                   or (tokens > 0 and today["tokens_in"] + today["tokens_out"] >= tokens)},
        "window": {"until": window, "what": (state.window_paused_what or None) if window else None,
                   "preset": (state.window_paused_preset or None) if window else None},
    }


def _sandbox(config: Config | None) -> dict:
    """How the agent runs here (SPEC §13): {"mode": "bwrap"|"none", "confined": bool, "reason": str|None,
    and "fix": [lines] when bubblewrap is missing or cannot run here (sandbox/reach.py)}."""
    from . import sandbox

    if config is None:
        return {"mode": "none", "confined": False, "reason": "memento.toml is invalid: no task runs"}
    return sandbox.resolve(config).as_dict()


def _notify(ws: Workspace, config: Config) -> dict:
    """[notify] (SPEC §15): {"urls": [masked], "events", "last_error", "last_sent"}."""
    from .notify import summary

    return summary(ws, config)


def _architect(config: Config | None, state: TickState) -> dict:
    """[architect] (SPEC §16): {"auto": bool, "runs_today": int, "max_runs_per_day": int, "last": stamp|None}."""
    return {"auto": bool(config and config.architect_auto), "runs_today": state.architect_runs_today(),
            "max_runs_per_day": config.architect_max_runs_per_day if config else 3,
            "last": state.architect_last or None}


def _verify_changes(ws: Workspace) -> list[dict]:
    """The verify commands the architect changed that no person acknowledged (verify_changes.py)."""
    from dataclasses import asdict

    from .verify_changes import pending

    return [asdict(c) for c in pending(ws)]


def _fleet(config: Config) -> dict:
    """This host's name ("host", SPEC §12: $MEMENTO_HOST, [workers] host or the hostname) and the
    git remote the fleet works through ("remote", None without one)."""
    return {"host": config.host, "remote": config.workers_remote or None}


def _forge(ws: Workspace) -> dict:
    """Each phase's pull request as last seen on GitHub, and GitHub refusing the token (SPEC §19)."""
    from .forge import pulls, trouble

    return {"pull_requests": [{"phase": r.phase, "branch": r.branch, "number": r.number, "url": r.url,
                               "state": r.state, "checks": r.checks,
                               "failing": [{"name": c.name, "url": c.url} for c in r.failing],
                               "review": r.review}
                              for r in pulls.load(ws).values()],
            "forge_trouble": trouble.current(ws)}


def _load_config(ws: Workspace) -> tuple[Config | None, str | None]:
    """memento.toml and None, or None and why it is invalid."""
    try:
        return load_config(ws.config_path), None
    except MementoError as exc:
        return None, str(exc)


# --------------------------------------------------------------------------- what a person must do now

@dataclass(frozen=True)
class Need:
    """One thing a person must do now: what kind, a line saying it, and how to act on it."""

    kind: str  # git, blocked, question, dirty, breaker, stale_tick, invalid, config, schedule, sandbox,
    # rate_limit, budget, notes, results, verify (a verify command the architect changed),
    # review (the reviewer could not review), forge (GitHub refuses the token), check (a required
    # check fails on a phase's pull request)
    text: str
    action: str = ""  # in the dashboard's words (its keys)
    task: str | None = None
    command: str = ""  # the same in a terminal's words (`memento …`), for `memento report`
    # A failing check (kind "check"): its name, its page and the pull request's number; in the
    # JSON only when set (every other kind has none).
    name: str = ""
    url: str = ""
    pr: int = 0


def needs_you(summary: dict, state: TickState, plan: Plan | None, notes: Sequence = (),
              unsurfaced: Sequence[dict] = (), *, idle_why: str = "") -> list[Need]:
    """What a person must do now, most urgent first; empty when nothing is needed.

    Pure: every input is already read (``summary`` is :func:`summarize`'s,
    ``unsurfaced`` is checkpoint.unsurfaced_results'); ``idle_why`` is
    :func:`pipeline_word`'s reason when nothing will tick.
    """
    out: list[Need] = []
    for error in summary.get("plan_errors") or []:
        where, _, what = str(error).partition(": ")  # "docs/MASTER_PLAN.md:22", "T-101 has no verify command"
        out.append(Need("invalid", f"{what} ({where})" if what else str(error), "fix the plan (memento lint)",
                        command="fix the plan (`memento lint` lists every problem)"))
    if summary.get("git_error"):
        out.append(Need("git", summary["git_error"], "git init, then commit the workspace",
                        command="`git init`, then commit the workspace"))
    if summary.get("config_error"):
        out.append(Need("config", f"memento.toml: {summary['config_error']}", "fix memento.toml",
                        command="fix memento.toml (`memento doctor` names the line)"))
    if state.breaker_reason:
        out.append(Need("breaker", f"circuit breaker tripped: {state.breaker_reason}",
                        "fix the cause, then resume (space)", command="fix the cause, then `memento resume`"))
    if state.stale_tick:  # tick/lock.py: a stopped tick was killed and taken over
        out.append(Need("stale_tick", state.stale_tick, "find what stopped it, then acknowledge (a)",
                        command="find what stopped it (its agent?), then `memento ack`"))
    if state.dirty_signature:
        shown = listed(state.dirty_signature.splitlines())
        out.append(Need("dirty", f"tick refused: uncommitted changes in {shown}", "commit or stash them",
                        command="commit or stash them"))
    for b in summary.get("blocked") or []:
        why = " ".join(str(b.get("last_error") or "no reason recorded").split())
        out.append(Need("blocked", f"{b['id']} blocked after {b.get('retries', 0)} retries: {why}",
                        "fix it, then reset (r) or skip (s)", task=b["id"],
                        command=f"fix it, then `memento reset {b['id']}` or `memento skip {b['id']} --reason …`"))
    for q in summary.get("questions") or []:
        how = f"`memento answer {q['id']} --choice N`" if q.get("choices") else f"`memento answer {q['id']} TEXT`"
        choices = "".join(f" [{n}] {c}" for n, c in enumerate(q.get("choices") or [], 1))
        out.append(Need("question", f"{q['id']} asks: {q['question']}{choices}", "answer it (w)", task=q["id"],
                        command=f"answer with {how}"))
    for c in summary.get("verify_changes") or []:
        how = f"wrote {c['task']}'s verify: `{c['new']}`" if not c["old"] else \
            f"changed {c['task']}'s verify: `{c['old']}` → `{c['new']}`"
        out.append(Need("verify", f"the architect {how}", f"{c['task']} waits: check it, then acknowledge (v)",
                        task=c["task"], command=f"{c['task']} does not run until you check it, then "
                                                f"`memento architect --ack {c['task']}`"))
    for r in summary.get("reviewer_failed") or []:
        why = " ".join(str(r.get("reason") or "").split()).removeprefix("reviewer failed: ")
        out.append(Need("review", f"{r['task']}'s acceptance reviewer could not review: {why}",
                        "check [review] and its prompt; the task runs again next tick", task=r["task"],
                        command="check `[review]` in memento.toml and scripts/review_system_prompt.md; "
                                f"{r['task']} runs again at the next tick"))
    out += _forge_needs(summary)
    out += _agent_needs(summary)
    if idle_why:
        out.append(Need("schedule", idle_why, "memento cron install · o auto-tick · t tick now",
                        command="`memento cron install` (or `memento tick` by hand)"))
    out += _note_needs(plan, notes)
    if unsurfaced:
        ids = listed(str(u.get("task", "?")) for u in unsurfaced)
        out.append(Need("results", f"{len(unsurfaced)} passed task(s) not yet reviewed: {ids}",
                        "look at them (d diff), then acknowledge (a)",
                        command="look at them (`git show`), then `memento ack`"))
    return out


def _forge_needs(summary: dict) -> list[Need]:
    """GitHub refusing the token, and each required check failing on a phase's pull request."""
    out: list[Need] = []
    refused = summary.get("forge_trouble")
    if refused:
        from .forge.trouble import action

        out.append(Need("forge", f"GitHub refuses the token from {refused['source']} (since {refused['since']}, "
                                 f"{refused['doing']}): {refused['message']}",
                        "give Memento a token GitHub takes", command=action(refused["source"])))
    for pr in summary.get("pull_requests") or []:
        if pr.get("checks") != "failing" or pr.get("state") not in ("open", "merged"):
            continue
        for check in pr.get("failing") or [{"name": "a required check", "url": ""}]:
            where = f": {check['url']}" if check.get("url") else ""
            out.append(Need("check", f"check {check['name']} fails on pull request #{pr['number']} "
                                     f"({pr['phase']}){where}",
                            "fix it on the branch, or a task that does",
                            command=f"fix it: a push to {pr['branch']}, or a task in the phase that fixes it "
                                    "(the plan); Memento looks at the checks again each tick",
                            name=check["name"], url=check.get("url", ""), pr=int(pr["number"])))
    return out


def _agent_needs(summary: dict) -> list[Need]:
    """The sandbox, the rate limit and the budget (issues 12 and 13 add them to the summary)."""
    out: list[Need] = []
    sandbox = summary.get("sandbox") or {}
    if sandbox and sandbox.get("confined") is False:
        why = sandbox.get("reason") or f"sandbox mode {sandbox.get('mode', 'none')}"
        out.append(Need("sandbox", f"the agent runs unconfined: {why}", "see memento doctor",
                        command="see `memento doctor`"))
    until = (summary.get("rate_limit") or {}).get("until")
    if until:
        out.append(Need("rate_limit", f"the agent is rate limited until {until}", "wait, or switch preset"))
    if (summary.get("budget") or {}).get("reached"):
        out.append(Need("budget", "the spending budget is reached: no agent runs", "raise [budget] or wait"))
    window = summary.get("window") or {}
    if window.get("until"):
        out.append(Need("budget", f"a usage window is {window.get('what') or 'full'}: no attempt starts until "
                                  f"{window['until']}", "wait, or raise [budget] window_pause_at"))
    return out


def _note_needs(plan: Plan | None, notes: Sequence) -> list[Need]:
    """Unread notes to tasks that are done or skipped: no worker will read them."""
    if plan is None:
        return []
    out: list[Need] = []
    for note in notes:
        task = None if note.read or note.archived or note.is_global else plan.task(note.target)
        if task is not None and task.status in ("x", "-"):
            out.append(Need("notes", f"a note for {task.id} ({task.state}) will not be read: "
                            + " ".join(note.text.split())[:80], "reset the task or write a global note",
                            task=task.id, command=f"`memento reset {task.id}`, or write a global note"))
    return out


def note_warning(plan: Plan | None, target: str) -> str:
    """The warning for a note to a finished task (the CLI and the dashboard say the same)."""
    task = plan.task(target) if plan is not None and target.lower() != "global" else None
    if task is not None and task.status in ("x", "-"):
        return f"{task.id} is already {task.state}: no worker will read this note unless the task is reset"
    return ""


def eta_with_interval(summary: dict, interval: float | None, per_tick: int = 1,
                      until_next: float = 0.0) -> float | None:
    """Time left counting the wait between ticks: a task per tick (``per_tick``) every ``interval`` seconds,
    the first tick ``until_next`` seconds from now.

    ``summary["eta_seconds"]`` is the work alone (durations of past successes);
    with ticks every 6 minutes, 3 tasks of 2 s each take ~12 minutes, not 6 s, and
    one task whose tick is 7 minutes away takes 7 minutes, not 0.4 s.
    """
    eta = summary.get("eta_seconds")
    if eta is None or not interval:
        return eta
    counts = summary.get("counts") or {}
    left = int(counts.get("pending", 0)) + int(counts.get("in_progress", 0))
    ticks = -(-left // max(per_tick, 1))
    waits = max(until_next, 0.0) + max(ticks - 1, 0) * float(interval)
    return max(float(eta), waits + float(eta) / max(left, 1))
