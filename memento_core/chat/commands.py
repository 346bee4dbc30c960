"""What a message from a listed chat does (SPEC §18), each through the code the command line runs.

A reply to a question's message answers it; a plain message answers when exactly one question
is open, else gets a one-line hint; a bare number answers with that choice when the question
offers choices. Commands: ``/status``, ``/report``, ``/note [T-ID] text``, ``/answer T-ID text``,
``/reset T-ID``, ``/skip T-ID reason``, ``/pause``, ``/resume``, ``/tick``. What a person typed is
stored defused (no control, bidi or format characters, mentions defused: lines.message_text) and
each answer goes back as plain text, never rendered as markup.
"""

from __future__ import annotations

from ..errors import MementoError
from ..lines import listed, message_text, plural
from ..workspace import Workspace
from .inbox import Incoming

COMMANDS = ("/status", "/report", "/note [T-ID] text", "/answer T-ID text", "/reset T-ID", "/skip T-ID reason",
            "/pause", "/resume", "/tick")
HELP = "Commands: " + ", ".join(COMMANDS) + ". Reply to a question's message to answer it."


def act(ws: Workspace, message: Incoming, questions: dict, old: dict | None = None, *,
        in_tick: bool = False) -> str:
    """Do what ``message`` asks; the answer to post in the room. ``questions``: chat.json's map of
    task id → {target: message id} of the open questions posted; ``old``: "target message id" →
    task id of those no longer open. Never raises for a person's mistake: a MementoError is the
    answer."""
    text = clean(message.text)
    try:
        if text.startswith("/"):
            return command(ws, text, message.service, in_tick=in_tick)
        if message.reply_to is not None and (old or {}).get(f"{message.target} {message.reply_to}"):
            task_id = old[f"{message.target} {message.reply_to}"]
            return (f"✗ that question of {task_id} is no longer open (answered, or asked again since); "
                    "nothing changed. /status shows what waits for you")
        return reply(ws, message, text, questions)
    except MementoError as exc:
        return f"✗ {exc}"


def clean(text: str) -> str:
    """What a person typed, defused: it is stored (a note, an answer) and echoed."""
    return message_text(text).strip()


# --------------------------------------------------------------------------- answers


def reply(ws: Workspace, message: Incoming, text: str, questions: dict) -> str:
    from ..questions import open_questions

    if not text:
        return HELP
    task_id = None
    if message.reply_to is not None:
        task_id = next((task for task, posts in questions.items()
                        if str(posts.get(message.target)) == message.reply_to), None)
    open_now = open_questions(ws)
    if task_id is None:
        if len(open_now) != 1:
            if not open_now:
                return f"No question is open. {HELP}"
            return (f"{plural(len(open_now), 'question')} are open ({listed([q.task_id for q in open_now])}): "
                    "reply to one's message, or /answer T-ID text")
        task_id = open_now[0].task_id
    return answer(ws, task_id, text, message.service, open_now)


def answer(ws: Workspace, task_id: str, text: str, source: str, open_now=None) -> str:
    """`memento answer T-ID TEXT` (or `--choice N` for a bare number when the question offers choices)."""
    from ..control import answer_task
    from ..questions import open_questions

    question = next((q for q in (open_now if open_now is not None else open_questions(ws))
                     if q.task_id == task_id), None)
    choice = None
    if question is not None and question.choices and text.isdigit():
        choice = int(text)  # out of range: answer_question says so and nothing changes
    stored, _ = answer_task(ws, task_id, None if choice else text, choice=choice, source=source)
    return f"✓ {task_id} answered: {_short(stored)}\nIt goes back to the queue; the next attempt reads your answer."


def _short(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --------------------------------------------------------------------------- commands


def command(ws: Workspace, text: str, source: str, *, in_tick: bool = False) -> str:
    head, _, rest = text.partition(" ")
    name = head[1:].split("@", 1)[0].lower()  # "/status@memento_bot" in a group
    rest = rest.strip()
    if name == "status":
        return status_text(ws)
    if name == "report":
        return report_text(ws)
    if name == "note":
        return note(ws, rest)
    if name == "answer":
        task_id, _, words = rest.partition(" ")
        if not task_id or not words.strip():
            return "✗ usage: /answer T-ID text"
        return answer(ws, _task_id(ws, task_id), words.strip(), source)
    if name == "reset":
        return reset(ws, rest)
    if name == "skip":
        task_id, _, reason = rest.partition(" ")
        if not task_id or not reason.strip():
            return "✗ usage: /skip T-ID reason"
        return skip(ws, _task_id(ws, task_id), reason.strip())
    if name in ("pause", "resume"):
        return mode(ws, "paused" if name == "pause" else "auto")
    if name == "tick":
        return tick(ws, in_tick=in_tick)
    if name in ("help", "start"):
        return HELP
    return f"✗ unknown command /{_short(name, 40)}. {HELP}"


def _plan(ws: Workspace):
    from ..plan.scan import parse_plan

    return parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))


def _task_id(ws: Workspace, word: str) -> str:
    """The plan's spelling of a task id typed on a phone (``t-3`` is T-3)."""
    ids = {t.id.upper(): t.id for t in _plan(ws).tasks}
    return ids.get(word.upper(), word)


def status_text(ws: Workspace) -> str:
    """`memento status` in a few lines: the pipeline's word and why, the counts, what runs, what waits."""
    from ..state import TickState
    from ..state_word import word_for

    plan = _plan(ws)
    state = TickState.load(ws)
    word, why = word_for(ws, plan, state)
    counts: dict[str, int] = {}
    for task in plan.tasks:
        counts[task.status] = counts.get(task.status, 0) + 1
    parts = [f"{counts.get(s, 0)} {w}" for s, w in (("x", "done"), (" ", "to do"), ("~", "running"),
                                                     ("?", "waiting for you"), ("!", "blocked"), ("-", "skipped"))
             if counts.get(s)]
    lines = [f"{plan.title or ws.root.name}: {word}" + (f" ({why})" if why else ""),
             f"Tasks: {', '.join(parts) or 'none'} (of {len(plan.tasks)})"]
    lines += [f"Running: {t.id} {t.title}" for t in plan.tasks if t.status == "~"][:5]
    lines += [f"Question: {t.id} {t.title}: {t.question or ''}" for t in plan.tasks if t.status == "?"][:5]
    lines += [f"Blocked: {t.id} {t.title}" for t in plan.tasks if t.status == "!"][:5]
    if state.breaker_reason:
        lines.append(f"Circuit breaker: {state.breaker_reason}")
    return "\n".join(lines)


def report_text(ws: Workspace) -> str:
    """`memento report` (the last 12 hours), as its lines."""
    from ..report import build_report, report_lines

    return "\n".join(report_lines(build_report(ws, since="12h")))


def note(ws: Workspace, rest: str) -> str:
    """`memento note [--task T-ID] text`: the first word is the task when the plan has it."""
    from ..notes import add_note

    if not rest:
        return "✗ usage: /note [T-ID] text"
    first, _, words = rest.partition(" ")
    plan = _plan(ws)
    task = next((t for t in plan.tasks if t.id.upper() == first.upper()), None)
    if task is not None and words.strip():
        added = add_note(ws.notes_path, words.strip(), target=task.id)
        after = f"; {task.id} is already {task.state}, no worker reads it unless it is reset" \
            if task.status in ("x", "-") else ""
        return f"✓ note for {task.id} added to {ws.rel(ws.notes_path)} at line {added.line}{after}"
    added = add_note(ws.notes_path, rest)
    return f"✓ global note added to {ws.rel(ws.notes_path)} at line {added.line}"


def reset(ws: Workspace, word: str) -> str:
    from ..control import reset_task, still_not_running
    from ..state import TickState

    if not word or " " in word:
        return "✗ usage: /reset T-ID"
    task_id = _task_id(ws, word)
    task = _plan(ws).task(task_id)
    if task is not None and task.status == "~":
        return f"✗ {task_id} is running ([~]); if its worker is gone, the next tick resets it"
    plan = reset_task(ws, task_id)
    still = still_not_running(plan, TickState.load(ws), resume="/resume")
    return f"✓ {task_id} is [ ] again with retries 0 ({plan.task(task_id).title})" + (f"\n{still}" if still else "")


def skip(ws: Workspace, task_id: str, reason: str) -> str:
    from ..control import skip_task, still_not_running
    from ..state import TickState

    plan = skip_task(ws, task_id, reason)
    still = still_not_running(plan, TickState.load(ws), resume="/resume")
    return f"✓ {task_id} skipped [-]: {_short(reason)}" + (f"\n{still}" if still else "")


def mode(ws: Workspace, tick_mode: str) -> str:
    from ..control import set_mode

    before = _plan(ws).meta.tick_mode
    set_mode(ws, tick_mode)
    return f"✓ tick_mode: {tick_mode} (was {before})"


def tick(ws: Workspace, *, in_tick: bool) -> str:
    """`memento tick`, started beside the chat round: a tick may run for half an hour, and the
    round that read the command must not hold the next messages that long."""
    import os
    import subprocess
    import sys

    from ..cron import TICK_ARGS  # -P: the project's folder, the child's, is not on its import path
    from ..locks import LockBusy, file_lock, open_append

    if in_tick:
        return "A tick is running now: it picks a task right after reading the chat."
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            pass
    except LockBusy:
        return "A tick is already running; /status shows what it does."
    ws.logs_dir.mkdir(parents=True, exist_ok=True)
    with open_append(ws.cron_log, split=True) as log:
        child = subprocess.Popen([sys.executable, *TICK_ARGS, "--project", str(ws.root)],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ws.root,
                                 start_new_session=True, env=os.environ.copy())
    STARTED.append(child)
    return f"✓ a tick started (pid {child.pid}); /status shows how it goes"


STARTED: list = []  # the ticks /tick started from this process (a test waits for them)
