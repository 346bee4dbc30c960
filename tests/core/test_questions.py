"""A worker's question and a person's answer (SPEC §18): the question file read safely, the
``[?]`` state, ``answer_question`` (memento_core/questions.py)."""

from __future__ import annotations

import os

import pytest

from memento_core import questions
from memento_core.errors import MementoError
from memento_core.notes import parse_notes
from memento_core.plan import parse_plan

from .test_engine import HELLO, agent, make_ws

WAITING = HELLO.replace("- [ ]", "- [?]").replace("  - retries: 0\n", "  - retries: 2\n  - question: Redis or Postgres?\n"
                                                                       "  - questions: 1\n")


def _waiting(tmp_path, choices=("Redis", "Postgres")):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), tasks=WAITING)
    text = "Redis or Postgres?\n\nThe plan names both.\n" + "".join(f"- [ ] {c}\n" for c in choices)
    _, first, parsed = questions.read_question(_write(tmp_path / "q.md", text))
    questions.save_question(ws, "T-1", text.strip(), first, parsed, "2026-12-06T13:00:00Z")
    return ws


def _write(path, text):
    path.write_text(text)
    return path


def test_open_questions_lists_the_waiting_task_with_its_choices(tmp_path):
    ws = _waiting(tmp_path)
    [q] = questions.open_questions(ws)
    assert (q.task_id, q.title, q.first_line, q.choices, q.asked) == (
        "T-1", "Write hello", "Redis or Postgres?", ("Redis", "Postgres"), "2026-12-06T13:00:00Z")
    assert "The plan names both." in q.text


def test_an_answer_is_an_answer_note_and_the_task_back_to_pending_with_its_retries(tmp_path):
    ws = _waiting(tmp_path)
    assert questions.answer_question(ws, "T-1", choice=2, source="cli") == "Postgres"
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.questions, task.question) == (" ", 2, 1, "Redis or Postgres?")
    [note] = [n for n in parse_notes(ws.notes_path) if n.is_answer]
    assert (note.target, note.text, note.source, note.read) == ("T-1", "Postgres", "cli", False)
    assert questions.open_questions(ws) == []


@pytest.mark.parametrize("kwargs, why", [
    ({"choice": 3}, "out of range"), ({"choice": 0}, "out of range"), ({"text": "  \n"}, "empty"),
    ({"text": "x", "choice": 1}, "not both"),
])
def test_a_bad_answer_changes_nothing(tmp_path, kwargs, why):
    ws = _waiting(tmp_path)
    plan, notes = ws.plan_path.read_bytes(), ws.notes_path.read_bytes()
    with pytest.raises(MementoError, match=why):
        questions.answer_question(ws, "T-1", **kwargs)
    assert (ws.plan_path.read_bytes(), ws.notes_path.read_bytes()) == (plan, notes)


def test_a_task_without_an_open_question_cannot_be_answered(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"))
    plan, notes = ws.plan_path.read_bytes(), ws.notes_path.read_bytes()
    with pytest.raises(MementoError, match=r"T-1 has no open question \(it is \[ \] pending\)"):
        questions.answer_question(ws, "T-1", "Redis")
    with pytest.raises(MementoError, match="T-9 is not in"):
        questions.answer_question(ws, "T-9", "Redis")
    assert (ws.plan_path.read_bytes(), ws.notes_path.read_bytes()) == (plan, notes)


# --- the question file -------------------------------------------------------------------


def test_the_question_file_gives_text_first_line_and_choices(tmp_path):
    text, first, choices = questions.read_question(_write(
        tmp_path / "q.md", "# Which database?\r\n\r\nWe need one.\r\n- [ ] Redis\r\n* [ ] Postgres \u202e!\r\n"))
    assert first == "Which database?" and choices == ("Redis", "Postgres !")
    assert "\u202e" not in text and "We need one." in text


def test_a_missing_question_file_is_no_question(tmp_path):
    assert questions.read_question(tmp_path / "none.md") is None


@pytest.mark.parametrize("make, why", [
    (lambda p: p.write_text(" \n\n\t\n"), "is empty"),
    (lambda p: p.write_bytes(b"PK\x03\x04\x00\x00binary"), "is binary"),
    (lambda p: p.write_bytes(b"caf\xe9 au lait?"), "not UTF-8"),
    (lambda p: os.mkfifo(p), "FIFO"),
    (lambda p: ((p.parent / "real.md").write_text("Really?\n"), p.symlink_to(p.parent / "real.md")), "symbolic link"),
    (lambda p: p.mkdir(), "folder"),
])
def test_a_bad_question_file_is_refused_with_its_reason_without_blocking(tmp_path, make, why):
    path = tmp_path / "question.md"
    make(path)
    with pytest.raises(questions.BadQuestion, match=why):
        questions.read_question(path)


def test_a_huge_question_is_cut_and_says_so(tmp_path):
    text, first, _ = questions.read_question(_write(tmp_path / "q.md", "Why?\n" + "é" * 200_000))
    assert first == "Why?" and len(text.encode()) < questions.MAX_QUESTION_BYTES + 100
    assert text.endswith("(cut at 16 KiB)")
