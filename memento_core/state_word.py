"""The one word a person reads first about a pipeline, and why (SPEC §6 header, §7 `memento status`).

RUNNING, IDLE, PAUSED, STOPPED, BLOCKED, WAITING, COMPLETE, REFUSED or INVALID. Every
place that names the pipeline's state asks :func:`pipeline_word`: the
dashboard's header, `memento status` (its first line and ``state`` in
--json), `memento report`, `memento tasks`, `.memento_alert` and the
notifications. No other function decides it, so they cannot disagree.

It is judged on plain facts (:func:`plan_facts`, or the summary of
``overview.summarize`` that holds the same keys): what the plan alone says
(:func:`plan_state`), whether git and memento.toml let a tick run, what the
last tick refused, and whether anything will tick (a cron entry and a cron
daemon, the dashboard's auto-tick, a tick running now). The cron facts are
asked only when the word depends on them.
"""

from __future__ import annotations

from pathlib import Path

from . import scheduler
from .lines import listed
from .plan.model import Plan
from .state import TickState
from .workspace import Workspace

NOTHING_TICKS = "nothing will tick (no cron entry, auto-tick off)"
NO_CRON_DAEMON = "nothing will tick (a cron entry, but no cron daemon is running; auto-tick off)"
TICK_RUNNING = "a tick is running now"
# The words that ask a person to act: `memento status` and `memento tasks` exit 1 on them.
ATTENTION_WORDS = ("BLOCKED", "WAITING", "INVALID", "REFUSED", "IDLE")


def plan_state(plan: Plan, verdict: scheduler.Verdict | None = None) -> str:
    """What the plan alone says: INVALID, PAUSED, STOPPED, BLOCKED, WAITING, COMPLETE or RUNNING.

    WAITING: nothing can be picked but tasks ``[?]`` whose question waits for a person (SPEC §18),
    or the tick waits on a person's act (``verdict.on_person``: a pull request to merge, a changed
    verify to acknowledge; :func:`tick_pick`).

    INVALID when an error stops the pipeline (a plan-level one, or invalid tasks
    that leave nothing else to pick); ``verdict`` is scheduler.pick's, asked when not given.
    """
    verdict = verdict or scheduler.pick(plan)
    if scheduler.stopping_errors(plan, verdict):
        return "INVALID"
    if plan.meta.tick_mode != "auto":
        return plan.meta.tick_mode.upper()
    if verdict.kind == scheduler.BLOCKED:
        return "BLOCKED"
    if verdict.kind == scheduler.INPUT or verdict.on_person:
        return "WAITING"
    if verdict.kind == scheduler.COMPLETE:
        return "COMPLETE"
    return "RUNNING"


def git_error(root: Path) -> str | None:
    """Why no tick can run here for want of git (the tick exits 2), or None: a `.git` at or above
    the root (a file check; no git process, so the dashboard's refresh stays cheap)."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return None
    return f"{root} is not a git repository: no tick can run (`git init`, then commit the workspace)"


def cron_facts(root: Path | str) -> tuple[bool, bool]:
    """(this workspace has a cron entry, a cron daemon is running): what decides whether cron ticks."""
    from . import cron

    try:
        installed = cron.installed(root)
    except Exception:  # noqa: BLE001 - no crontab binary: not installed
        installed = False
    try:
        return installed, installed and cron.daemon_running()
    except Exception:  # noqa: BLE001
        return installed, False


def tick_pick(ws: Workspace, plan: Plan, config) -> scheduler.Verdict:
    """The tick's pick, as the tick makes it: a task whose verify the architect changed waits for a
    person's ack (held.py; tick/pick.py passes over them), a phase waits for its pull request's merge (``land = "pr"``,
    tick/land.py). So "next" names the task that will run, or says whom it waits for.

    ``config`` is memento.toml's Config, or None when it is invalid (no pull request is looked at).
    """
    from .verify_changes import pending

    changes = pending(ws)
    if changes:  # held.py (its git history reader with it) only for a verify change still listed
        from .held import held_in

        held = held_in(plan, changes)
    else:
        held = frozenset()
    on_pull, rec = _pull_waits(ws, plan, config)
    verdict = scheduler.pick(plan, exclude=held | on_pull)
    if rec is not None and verdict.kind != scheduler.TASK:
        from .forge.landing import wait_message

        return scheduler.Verdict(scheduler.WAITING, phase=rec.phase, message=wait_message(rec), on_person=True)
    if not held or verdict.kind == scheduler.TASK or scheduler.pick(plan).kind != scheduler.TASK:
        return verdict
    ids = sorted(held)
    return scheduler.Verdict(scheduler.WAITING, tasks=tuple(ids), on_person=True,
                             message=f"waiting for you: the architect changed the verify of {', '.join(ids)} "
                                     "(`memento architect --ack` once checked)")


def _pull_waits(ws: Workspace, plan: Plan, config) -> tuple[frozenset[str], object]:
    """With ``land = "pr"``: (the tasks the tick passes over, the pull request it waits on or None),
    as tick/land.py decides them; every task done waits on a phase's unmerged pull request too."""
    if config is None or config.forge_land != "pr":
        return frozenset(), None
    from .forge import pulls
    from .forge.landing import passed_over, unmerged

    records = pulls.load(ws)
    skipped, rec = passed_over(plan, records, config.forge_stack)
    if rec is None and scheduler.pick(plan, exclude=skipped).kind == scheduler.COMPLETE:
        rec = unmerged(records)
    return skipped, rec


def plan_facts(ws: Workspace, plan: Plan, verdict: scheduler.Verdict | None = None, *,
               config_error: str | None = None) -> dict:
    """The facts :func:`pipeline_word` judges, without the rest of a status summary (for the
    alert, the notifications and `memento tasks`, which need the word and not the summary)."""
    blocked = sum(1 for t in plan.tasks if t.status == "!")
    return {"root": str(ws.root), "plan_state": plan_state(plan, verdict), "git_error": git_error(ws.root),
            "config_error": config_error, "counts": {"blocked": blocked}}


def pipeline_word(facts: dict, state: TickState, *, cron_installed: bool | None = None,
                  cron_daemon: bool | None = None, auto_tick: bool = False, ticking: bool = False) -> tuple[str, str]:
    """The one word a person reads first, and why: RUNNING only when something will tick.

    ``facts`` holds ``plan_state``, ``git_error``, ``config_error``, ``root`` and, from a
    status summary, ``workers`` (the ticks running now). INVALID: the plan, memento.toml or
    git (no repository) stops every tick; PAUSED and STOPPED come from the plan (BLOCKED when
    the circuit breaker paused it over tasks that are still blocked); a refused dirty
    tree is REFUSED (the tick will not start until the paths are committed), then BLOCKED
    and COMPLETE; a runnable plan is RUNNING while a tick runs (``ticking``, or a live claim)
    or when something will tick (auto-tick, a cron entry with a cron daemon: asked of the
    crontab here when the caller did not say), else IDLE: nothing will tick.
    """
    word = facts.get("plan_state") or "INVALID"
    if word == "INVALID":
        return word, _first_error(facts)
    if facts.get("git_error"):
        return "INVALID", facts["git_error"]
    if facts.get("config_error"):
        return "INVALID", "memento.toml: " + str(facts["config_error"]).splitlines()[0]
    if word == "PAUSED" and state.breaker_reason and _blocked(facts):
        # The breaker paused it over blocked tasks that are still blocked: what a person must do
        # first is the blocked task (reset or skip), then resume.
        return "BLOCKED", "the circuit breaker paused the pipeline: fix the blocked task(s), then resume"
    if word in ("PAUSED", "STOPPED"):
        return word, _paused_why(word, state)
    if state.dirty_signature:
        return "REFUSED", "uncommitted changes: " + listed(state.dirty_signature.splitlines(), 3)
    if word != "RUNNING":
        return word, ""
    if ticking or facts.get("workers"):
        return "RUNNING", TICK_RUNNING
    if auto_tick:
        return "RUNNING", "auto-tick"
    if cron_installed is None:
        cron_installed, cron_daemon = cron_facts(facts.get("root") or ".")
    if cron_installed:
        return ("RUNNING", "cron") if cron_daemon else ("IDLE", NO_CRON_DAEMON)
    return "IDLE", NOTHING_TICKS


def _blocked(facts: dict) -> int:
    return int((facts.get("counts") or {}).get("blocked") or 0)


def _first_error(facts: dict) -> str:
    errors = facts.get("plan_errors") or []
    return str(errors[0]) if errors else ""


def _paused_why(word: str, state: TickState) -> str:
    if word == "PAUSED" and state.breaker_reason:
        return "the circuit breaker paused it: " + state.breaker_reason
    return ""


def word_for(ws: Workspace, plan: Plan, state: TickState | None = None, *, ticking: bool = False) -> tuple[str, str]:
    """:func:`pipeline_word` for ``ws`` from its files (memento.toml read here): for the callers
    that have no status summary (the alert, the notifications, `memento tasks`)."""
    from .config.load import load_config
    from .errors import MementoError

    try:
        config, config_error = load_config(ws.config_path), None
    except MementoError as exc:
        config, config_error = None, str(exc)
    facts = plan_facts(ws, plan, tick_pick(ws, plan, config), config_error=config_error)
    facts["plan_errors"] = [str(e) for e in scheduler.stopping_errors(plan)]
    return pipeline_word(facts, state if state is not None else TickState.load(ws), ticking=ticking)
