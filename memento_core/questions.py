"""A worker's question and a person's answer (SPEC §18, the first two bullets).

The worker may write ``.memento/worker/question.md`` (a question, optional choices as
``- [ ] choice`` lines) and exit: the tick reads it here (:func:`read_question`, never
blocking on a FIFO, never through a link, capped), keeps the whole question in
``.memento/questions/T-ID.json`` (:func:`save_question`) and marks the task ``[?]`` with
``- question: <first line>`` and ``- questions: N``.

A person answers with :func:`answer_question` (``memento answer``, the dashboard, the
browser view, a chat reply): the running tick gets a receipt first (receipts.py: an agent,
inside the tick's own process tree, is refused before anything changes), then the answer is
written as an ``[ANSWER]`` note for the task in HUMAN_NOTES.md and the task goes back to
``[ ]`` with its retries as they were. Like ``memento note``, nothing is committed here: the
next tick commits Memento's documents as ``memento: sync docs``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import owned
from .errors import MementoError
from .lines import NotAFile, clean_block, message_text, read_regular
from .notes import ANSWER, add_note
from .plan.model import Task
from .plan.scan import parse_plan
from .receipts import check_person, vouch
from .runlog import utc_stamp
from .workspace import Workspace

MAX_QUESTION_BYTES = 16 * 1024  # more is cut: a question is for a person to read on a phone
MAX_FIRST_LINE = 200  # the plan's `- question:` line
MAX_CHOICES = 20
SOURCES = ("cli", "dashboard", "browser", "telegram", "matrix")
_CHOICE_RE = re.compile(r"^[ \t]*[-*+][ \t]+\[[ \t]?\][ \t]+(?P<text>\S.*)$")
_HEADING_MARK_RE = re.compile(r"^#{1,6}[ \t]+")


@dataclass(frozen=True)
class Question:
    """An open question: a ``[?]`` task and what its worker asked."""

    task_id: str
    title: str  # the task's title
    text: str  # the whole question as the worker wrote it (defused, capped)
    first_line: str  # what the plan's `- question:` holds
    choices: tuple[str, ...]  # from `- [ ] choice` lines, in order
    asked: str  # UTC stamp of the attempt that asked


class BadQuestion(MementoError):
    """question.md is there but is no question (empty, binary, a FIFO, a link): the attempt fails."""


def read_question(path: Path) -> tuple[str, str, tuple[str, ...]] | None:
    """(text, first line, choices) of the question file at ``path``; None when there is none.

    Raises :class:`BadQuestion` with a reason a person understands when the file is empty, not
    UTF-8 text, a symbolic link, a FIFO, a socket, a device or a folder: never opened to block on,
    never followed. A file over MAX_QUESTION_BYTES is cut there and says so."""
    try:
        data = read_regular(path, "question.md", limit=MAX_QUESTION_BYTES + 1, what="question file")
    except FileNotFoundError:
        return None
    except NotAFile as exc:
        raise BadQuestion(f"the question file {_why(exc)}") from None
    except IsADirectoryError:
        raise BadQuestion("the question file is a folder, not a file; no question was asked") from None
    except OSError as exc:
        raise BadQuestion(f"the question file could not be read ({exc.strerror or exc})") from None
    cut = len(data) > MAX_QUESTION_BYTES
    data = data[:MAX_QUESTION_BYTES]
    if b"\0" in data:
        raise BadQuestion("the question file is binary, not text; no question was asked")
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not cut or exc.start < len(data) - 4:  # a cut may split the last character
            raise BadQuestion("the question file is not UTF-8 text; no question was asked") from None
        raw = data[:exc.start].decode("utf-8")
    text = clean_block(message_text(raw))
    if not text.strip():
        raise BadQuestion("the question file is empty; no question was asked")
    if cut:
        text += f"\n\n(cut at {MAX_QUESTION_BYTES // 1024} KiB)"
    choices = tuple(m.group("text").strip() for m in map(_CHOICE_RE.match, text.splitlines()) if m)[:MAX_CHOICES]
    return text, first_line_of(text), choices


def without_choices(text: str) -> str:
    """The question's text without its ``- [ ] choice`` lines (shown apart, to be picked)."""
    return "\n".join(line for line in text.splitlines() if not _CHOICE_RE.match(line)).strip()


def _why(exc: MementoError) -> str:
    message = str(exc)
    return message.split(": ", 1)[1] if message.startswith("question.md: ") else message


def first_line_of(text: str) -> str:
    """The line the plan's ``- question:`` holds: the first line of the question that is not a
    choice, without a heading's ``#``, on one line, capped."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and not _CHOICE_RE.match(line):
            line = _HEADING_MARK_RE.sub("", line).strip() or line
            return line if len(line) <= MAX_FIRST_LINE else line[: MAX_FIRST_LINE - 1] + "…"
    return "(a choice)"


def _record_path(ws: Workspace, task_id: str) -> Path:
    return ws.questions_dir / f"{task_id}.json"


def save_question(ws: Workspace, task_id: str, text: str, first_line: str, choices: tuple[str, ...],
                  asked: str | None = None) -> None:
    """Keep the whole question for the person (the plan holds only its first line)."""
    record = {"task": task_id, "text": text, "first_line": first_line, "choices": list(choices),
              "asked": asked or utc_stamp()}
    # Through owned.py: an unconfined agent's rewrite of a question is found and put back (SPEC §13).
    owned.write(_record_path(ws, task_id), json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8"))


def forget_question(ws: Workspace, task_id: str) -> None:
    """The task passed: its question is no longer open."""
    if _record_path(ws, task_id).exists() or _record_path(ws, task_id).is_symlink():
        owned.remove(_record_path(ws, task_id))


def _load_record(ws: Workspace, task_id: str) -> dict:
    try:
        record = json.loads(read_regular(_record_path(ws, task_id), limit=4 * MAX_QUESTION_BYTES))
    except (OSError, NotAFile, ValueError):
        return {}
    return record if isinstance(record, dict) and record.get("task") == task_id else {}


def question_of(ws: Workspace, task: Task) -> Question:
    """The question of ``task`` as it was asked; from the plan's line alone when the record is gone."""
    record = _load_record(ws, task.id)
    first = message_text(task.question or "") or "(no question recorded)"
    text = record.get("text") if isinstance(record.get("text"), str) else ""
    choices = record.get("choices") if isinstance(record.get("choices"), list) else []
    if not text or first_line_of(text) != first:  # the record is of an older question
        text, choices = first, []
    return Question(task.id, message_text(task.title), message_text(text), first,
                    tuple(message_text(str(c)) for c in choices[:MAX_CHOICES]),
                    str(record.get("asked") or "") if text != first or record else "")


def open_questions(ws: Workspace) -> list[Question]:
    """Every ``[?]`` task's question, in plan order."""
    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    return [question_of(ws, t) for t in plan.tasks if t.status == "?"]


def answer_question(ws: Workspace, task_id: str, text: str | None = None, *,
                    choice: int | None = None, source: str = "cli") -> str:
    """A person's answer to the question of ``task_id``; returns the answer text stored.

    Writes the ``[ANSWER]`` note (HUMAN_NOTES.md) and returns the task to ``[ ]`` with its
    retries as they were. A MementoError, and nothing changed, when the task is not ``[?]``,
    ``choice`` (1-based) is out of range, the text is empty, or the caller is the running
    tick's own agent (receipts.PersonRefused)."""
    if source not in SOURCES:
        raise MementoError(f"unknown answer source {source!r} (one of {', '.join(SOURCES)})")
    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    matches = [t for t in plan.tasks if t.id == task_id]
    if not matches:
        raise MementoError(f"task {task_id} is not in {ws.rel(ws.plan_path)}")
    if len(matches) > 1:
        raise MementoError(f"{task_id} is defined {len(matches)} times in {ws.rel(ws.plan_path)}; "
                           "give each task its own id first (`memento lint`)")
    task = matches[0]
    if task.status != "?":
        raise MementoError(f"{task_id} has no open question (it is [{task.status}] {task.state}); nothing changed")
    question = question_of(ws, task)
    if choice is not None:
        if text:
            raise MementoError("give either a choice or a text, not both; nothing changed")
        if not question.choices:
            raise MementoError(f"the question of {task_id} offers no choices; answer with a text")
        if not 1 <= choice <= len(question.choices):
            raise MementoError(f"choice {choice} is out of range: the question of {task_id} offers "
                               f"1 to {len(question.choices)}; nothing changed")
        text = question.choices[choice - 1]
    answer = clean_block(text or "")
    if not answer.strip():
        raise MementoError("the answer is empty; nothing changed")
    check_person(ws.root)  # the agent of a running tick is refused before anything is written
    # Only an answer edits the plan: `memento status --json`, which reads questions, never loads the editor.
    from .plan.edits import PlanEditor, edit_plan

    def apply(e: PlanEditor) -> None:
        e.set_status(task_id, " ", expect="?")
        vouch(ws.root, {"op": "answer", "task": task_id})  # under the plan's lock, before any write
        add_note(ws.notes_path, answer, target=task_id, kind=ANSWER, source=source)

    edit_plan(ws.plan_path, apply)
    return answer
