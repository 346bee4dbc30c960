"""A worker's question (SPEC §18): the attempt ends ``❓ NEEDS INPUT`` and the task waits ``[?]``.

The worker writes ``.memento/worker/question.md`` and exits. :func:`take_question` reads it
after the agent (questions.read_question: never a FIFO or a link, capped); the attempt is then
rolled back and saved like any failure (outcome.record_failure, crew_result.failed) but counts
no retry and no failed tick for the breaker, and :func:`mark_waiting` marks the task ``[?]`` with
``- question:`` and ``- questions: N``. A question past Meta ``max_questions`` blocks the task
(``🚫 BLOCKED — max_questions reached``), again without a retry counted.
"""

from __future__ import annotations

import shutil

from ..errors import EditConflict, MementoError
from ..plan.edits import edit_plan
from ..plan.model import Plan, Task
from ..questions import BadQuestion, read_question, save_question
from .context import TickContext, append_log, unlink

NEEDS_INPUT = "❓ NEEDS INPUT"
MAX_QUESTIONS_BLOCKED = "🚫 BLOCKED — max_questions reached"


def clear_question_file(ctx: TickContext) -> None:
    """Before the agent runs: a question.md left from before is no question of this attempt."""
    path = ctx.ws.question_path
    try:
        unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def take_question(ctx: TickContext, at, reason: str) -> str:
    """After the agent: whether the worker asked (``at.question`` set to (text, first line,
    choices)); returns the attempt's reason. A question file that is no question (empty,
    binary, a FIFO, a link) is the attempt's failure with that reason. A question asked by an
    attempt that failed otherwise (timed out, refused by the sandbox, interrupted) is not taken:
    that failure stands."""
    try:
        asked = read_question(ctx.ws.question_path)
    except BadQuestion as exc:
        clear_question_file(ctx)
        append_log(ctx.log_path, f"[memento] {exc}\n")
        return f"{reason}; {exc}" if reason else str(exc)
    clear_question_file(ctx)
    if asked is None:
        return reason
    limited = at.agent is not None and (at.agent.limit is not None or at.agent.fall_back)
    if ctx.interrupted or limited or (reason and not reason.startswith("agent exited with code")):
        append_log(ctx.log_path, f"[memento] the worker's question was not taken: {reason or 'rate limited'}\n")
        return reason
    at.question = asked
    append_log(ctx.log_path, f"[memento] the worker asked a question: {asked[1]}\n")
    return f"the worker asked a question: {asked[1]}"


def outcome(plan: Plan, task: Task) -> tuple[str, bool, int]:
    """(the entry's status, whether the task blocks, its question count now) for a question of ``task``."""
    asked = task.questions + 1
    if asked > plan.meta.max_questions:
        return f"{MAX_QUESTIONS_BLOCKED} ({asked - 1}/{plan.meta.max_questions} asked)", True, asked - 1
    return f"{NEEDS_INPUT} (question {asked}/{plan.meta.max_questions}, no retry counted)", False, asked


def mark_waiting(ctx: TickContext, task: Task, question: tuple, blocked: bool, count: int) -> None:
    """The plan after a question: ``[?]`` with ``- question:`` and ``- questions: N`` (or ``[!]``
    past max_questions); the whole question kept for the person (questions.save_question)."""
    text, first, choices = question

    def apply(e):
        if blocked:
            e.set_status(task.id, "!", expect="~")
        else:
            e.set_field(task.id, "question", first)
            e.set_field(task.id, "questions", str(count))
            e.set_status(task.id, "?", expect="~")
        e.update_counters()

    if not blocked:
        try:
            save_question(ctx.ws, task.id, text, first, choices)
        except (OSError, MementoError) as exc:  # the plan's line still carries the question
            append_log(ctx.log_path, f"[memento] the whole question could not be kept: {exc}\n")
    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        pass  # a person changed the task meanwhile; their edit stands


def entry_fields(task: Task, question: tuple, blocked: bool) -> list[tuple[str, str]]:
    """What the entry says besides the failure's fields: the question, and what to do."""
    first, choices = question[1], question[2]
    fields = [("Question", first)]
    if choices:
        fields.append(("Choices", "; ".join(f"{n}. {c}" for n, c in enumerate(choices, 1))))
    if blocked:
        fields.append(("Escalation", "⚠️ NEEDS ARCHITECT ATTENTION (the worker keeps asking)"))
    else:
        how = f"`memento answer {task.id} --choice N`" if choices else f"`memento answer {task.id} TEXT`"
        fields.append(("Action", f"answer with {how}, or in the dashboard"))
    return fields
