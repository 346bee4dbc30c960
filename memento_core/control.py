"""Steering the pipeline: the mode changes a person makes, from the CLI or the dashboard."""

from __future__ import annotations

from .errors import MementoError
from .lines import read_text_file
from .locks import open_append
from .plan import edits as plan_edits
from .plan import scan as plan_scan
from .plan.model import Plan
from .state import TickState
from .workspace import Workspace

MODES = ("auto", "paused", "stopped")


def set_mode(ws: Workspace, mode: str) -> Plan:
    """Set ``tick_mode``. Resuming (``auto``) also resets a tripped circuit breaker.

    The breaker pauses the pipeline and remembers why; a person's resume is the
    acknowledgement, so the reason and the failure streak are cleared (else the
    alert would stay TRIGGERED and the breaker could never trip again).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    from .receipts import vouch

    # The receipt goes to a running tick under the plan's lock, before the file is written (SPEC §13).
    plan = plan_edits.edit_plan(ws.plan_path, lambda e: (e.set_meta("tick_mode", mode),
                                                     vouch(ws.root, {"op": "mode", "mode": mode})))
    note_for_architect(ws, {"op": "mode", "mode": mode})
    if mode == "auto":
        state = TickState.load(ws)
        if state.breaker_reason or state.consecutive_failed_ticks:
            state.breaker_reason = state.breaker_at = ""
            state.consecutive_failed_ticks = 0
            state.save(ws)
    refresh_checkpoint(ws, plan)
    after_person(ws, plan)
    return plan


def note_for_architect(ws: Workspace, op: dict) -> None:
    """While an architect run is going (its record exists), tell it what a person changed in the
    plan: it keeps the person's change instead of taking it for its own (tick/architect/person.py)."""
    import json

    folder = ws.memento_dir / "records"
    if not (folder / "ARCHITECT.json").exists():
        return
    try:  # the architect's agent may have put a link there: never followed nor written through (SPEC §13)
        with open_append(folder / "ARCHITECT.person", split=True) as fh:
            fh.write(json.dumps(op, ensure_ascii=False) + "\n")
    except (OSError, MementoError):
        pass


def refresh_checkpoint(ws: Workspace, plan: Plan) -> None:
    """CURRENT_STATE.md after a person's change: a paused pipeline runs no tick that would rewrite it.

    Without this the checkpoint kept saying "Next tick runs T-…" while paused. Never fatal:
    the change itself is made; the next tick rewrites the checkpoint anyway.
    """
    from .checkpoint import write_checkpoint
    from .errors import MementoError

    try:
        write_checkpoint(ws, plan, TickState.load(ws))
    except (MementoError, OSError):
        pass


def after_person(ws: Workspace, plan: Plan) -> None:
    """After a person's skip, reset or mode change: `.memento_alert` says what is true now (it
    stayed after the last blocked task was skipped), and a change worth telling (ALL TASKS
    COMPLETE) is sent now, not at a tick that may never come while nothing ticks.

    Sending happens in a thread of its own (never the dashboard's UI thread; the CLI waits for
    it with :func:`wait_for_senders`), under the tick lock when it is free: a running tick
    sends what changed itself when it ends.
    """
    from .checkpoint import write_alert
    from .config.load import load_config
    from .errors import MementoError

    state = TickState.load(ws)
    problem = "uncommitted changes outside Memento's files" if state.dirty_signature else ""
    if not problem and any(t.status == "!" for t in plan.tasks):
        problem = _alert_problem(ws)  # e.g. the architect could not help: still true
    try:
        write_alert(ws, plan, state, problem)
    except OSError:
        pass
    try:
        urls = load_config(ws.config_path).notify_urls
    except MementoError:
        return
    if urls:
        import threading

        sender = threading.Thread(target=_notify_now, args=(ws,), name="memento-notify", daemon=True)
        _SENDERS.append(sender)
        sender.start()


_SENDERS: list = []  # notification threads after_person started (the CLI waits for them)


def wait_for_senders(timeout: float = 15.0) -> None:
    """Wait for the notifications a person's change started (a notification sends within 10 s)."""
    while _SENDERS:
        _SENDERS.pop().join(timeout)


def _alert_problem(ws: Workspace) -> str:
    try:
        for line in read_text_file(ws.alert_path).splitlines():
            if line.startswith("problem: "):
                return line[len("problem: "):]
    except (OSError, UnicodeDecodeError):
        pass
    return ""


def _notify_now(ws: Workspace) -> None:
    from .locks import LockBusy, file_lock
    from .notify import after_tick

    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            after_tick(ws)
    except LockBusy:
        pass  # a tick is running: it sends what changed when it ends
    except OSError:
        pass


def fresh_streak(ws: Workspace) -> None:
    """A person acted on a failing task: the breaker's count of failed ticks starts again at 0."""
    state = TickState.load(ws)
    if state.consecutive_failed_ticks:
        state.consecutive_failed_ticks = 0
        state.save(ws)


def refuse_ambiguous(ws: Workspace, task_id: str) -> None:
    """A MementoError when ``task_id`` names more than one task: the tick calls such a plan
    INVALID, and a reset or skip would act on one of them at random as far as a person can tell."""
    from .errors import MementoError

    plan = plan_scan.parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    lines = [t.line for t in plan.tasks if t.id == task_id]
    if len(lines) > 1:
        raise MementoError(f"{ws.rel(ws.plan_path)}: {task_id} is defined {len(lines)} times (lines "
                           f"{', '.join(map(str, lines))}): the plan is invalid and no tick runs; give each task "
                           "its own id first (`memento lint`)")


def reset_task(ws: Workspace, task_id: str) -> Plan:
    """``memento reset`` / the dashboard's ``r``: the task back to ``[ ]``, and the failure streak afresh.

    Without the streak reset, a task reset after three failures would trip the
    breaker ("5 consecutive ticks … passed nothing") after two more.
    """
    refuse_ambiguous(ws, task_id)
    plan = plan_edits.reset_task(ws.plan_path, task_id)
    note_for_architect(ws, {"op": "reset", "task": task_id})
    fresh_streak(ws)
    refresh_checkpoint(ws, plan)
    after_person(ws, plan)
    return plan


def skip_task(ws: Workspace, task_id: str, reason: str) -> Plan:
    """``memento skip`` / the dashboard's ``s``: the task ``[-]`` with its reason, the failure streak afresh."""
    refuse_ambiguous(ws, task_id)
    plan = plan_edits.skip_task(ws.plan_path, task_id, reason)
    note_for_architect(ws, {"op": "skip", "task": task_id, "reason": reason})
    fresh_streak(ws)
    refresh_checkpoint(ws, plan)
    after_person(ws, plan)
    return plan


def answer_task(ws: Workspace, task_id: str, text: str | None = None, *, choice: int | None = None,
                source: str = "cli") -> tuple[str, Plan]:
    """``memento answer`` / the dashboard's composer / the browser / a chat reply (SPEC §18): the
    ``[ANSWER]`` note and the task back to ``[ ]`` (questions.answer_question, a person's receipt
    first), then the checkpoint, the alert and the notifications as after any person's change.
    Returns the answer stored and the plan as it is now."""
    from .questions import answer_question

    refuse_ambiguous(ws, task_id)
    answer = answer_question(ws, task_id, text, choice=choice, source=source)
    note_for_architect(ws, {"op": "answer", "task": task_id})
    plan = plan_scan.parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    refresh_checkpoint(ws, plan)
    after_person(ws, plan)
    return answer, plan


def still_not_running(plan: Plan, state: TickState | None = None, *, resume: str = "`memento resume`") -> str:
    """After a reset or skip: what still keeps the pipeline from running (a pause, the circuit
    breaker's pause, a stop), said with how to resume; '' when it runs. A person who fixed the
    blocked task must not believe that the next tick will pick it up."""
    mode = plan.meta.tick_mode
    if mode == "auto":
        return ""
    why = f" (the circuit breaker paused it: {state.breaker_reason})" if state and state.breaker_reason else ""
    return f"the pipeline is still {mode}{why}: {resume} to run it"


def acknowledge_verify(ws: Workspace, tasks: list[str]) -> list:
    """``memento architect --ack`` / the dashboard's ``v``: a person checked the verify commands the
    architect changed (``tasks``'s, or every one): they leave "needs you" (verify_changes.py).
    The receipt goes to a running tick first, so its guards keep the change as a person's and an
    agent's own ack is refused (SPEC §13); nothing changes when it is refused."""
    from .receipts import vouch
    from .verify_changes import acknowledge, pending

    wanted = {t.upper() for t in tasks}
    going = [c.task for c in pending(ws) if not wanted or c.task.upper() in wanted]
    if going:
        vouch(ws.root, {"op": "verify_ack", "tasks": going})
    # In a fleet the next tick here commits the acknowledgement, so every host hears of it.
    return acknowledge(ws, tasks, publish=_in_a_fleet(ws))


def _in_a_fleet(ws: Workspace) -> bool:
    from .config.load import load_config

    try:
        return bool(load_config(ws.config_path).workers_remote)
    except MementoError:
        return False
