"""A worker's question and a person's answer (SPEC §18): the question file read safely, the
``[?]`` state, ``answer_question`` (memento_core/questions.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memento_core import questions
from memento_core.errors import MementoError
from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import HELLO, agent, entries, git, make_ws

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


# --- through real ticks: the `command` preset runs tests/agents/asks.py ---------------------

TWO = HELLO + """- [ ] `T-2` [MODULE:hello] Write hello two
  - verify: `grep -q done hello2.txt`
  - context_files: [hello2.txt]
  - retries: 0
"""


def _asking(tmp_path, mode, *extra, tasks=HELLO, **kw):
    evidence = tmp_path / "evidence.jsonl"
    ws = make_ws(tmp_path, agent("asks.py", mode, str(evidence), *extra), tasks=tasks, **kw)
    return ws, evidence


def _cli(ws, *args, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args, str(ws.root)], capture_output=True,
                          text=True, input=stdin, env={**os.environ, "PYTHONPATH": str(REPO)})


REPO = Path(__file__).resolve().parents[2]


def _log(ws) -> str:
    return git(ws.root, "log", "--format=%s")


def test_a_question_waits_for_a_person_counts_nothing_and_the_answer_reaches_the_next_prompt(tmp_path):
    ws, evidence = _asking(tmp_path, "ask")
    assert run_tick(ws.root).exit_code == 0
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.questions, task.question) == (
        "?", 0, 1, "Which greeting for T-1: formal or casual?")
    assert not (ws.root / "hello.txt").exists()  # the half-done change was rolled back
    [entry] = entries(ws)
    assert entry.status == "NEEDS INPUT" and entry.field("Status").startswith("❓ NEEDS INPUT (question 1/3")
    assert entry.field("Choices") == "1. formal; 2. casual"
    assert TickState.load(ws).consecutive_failed_ticks == 0  # no breaker count
    assert _log(ws).splitlines()[0] == "memento: T-1 needs input (question 1/3)"
    # Nothing else to pick: WAITING, exit 1 for status and the tick, one entry per change.
    assert run_tick(ws.root).exit_code == 1
    assert run_tick(ws.root).exit_code == 1
    waiting = [e for e in entries(ws) if e.status == "WAITING FOR INPUT"]
    assert len(waiting) == 1 and waiting[0].field("Event") == "⏸ WAITING FOR INPUT — T-1"
    status = _cli(ws, "status", "--json")
    assert status.returncode == 1, status.stderr
    doc = json.loads(status.stdout)
    assert doc["state"] == "WAITING" and doc["counts"]["questions"] == 1
    [need] = [n for n in doc["needs_you"] if n["kind"] == "question"]
    assert need["task"] == "T-1" and "memento answer T-1 --choice N" in need["command"]
    assert doc["questions"][0]["choices"] == ["formal", "casual"]
    alert = ws.alert_path.read_text()
    assert "questions: T-1" in alert
    listed = json.loads(_cli(ws, "tasks", "--state", "waiting", "--json").stdout)["tasks"]
    assert [(t["id"], t["question"], t["questions"]) for t in listed] == [
        ("T-1", "Which greeting for T-1: formal or casual?", 1)]
    report = json.loads(_cli(ws, "report", "--json").stdout)
    assert report["questions"][0]["id"] == "T-1" and report["asked"][0]["task"] == "T-1"
    assert not report["failed"] and [n["kind"] for n in report["needs_you"]].count("question") == 1
    assert "Waiting for your answer:" in _cli(ws, "report").stdout
    checkpoint = ws.checkpoint_path.read_text()
    assert "memento answer T-1" in checkpoint and "waits for a person's answer" in checkpoint
    # A choice out of range, or a task that is not [?], is exit 2 and changes nothing.
    before = (ws.plan_path.read_bytes(), ws.notes_path.read_bytes())
    assert _cli(ws, "answer", "T-1", "--choice", "3").returncode == 2
    assert _cli(ws, "answer", "T-2", "formal").returncode == 2
    assert (ws.plan_path.read_bytes(), ws.notes_path.read_bytes()) == before
    done = _cli(ws, "answer", "T-1", "--choice", "2")
    assert done.returncode == 0, done.stderr
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert run_tick(ws.root).exit_code == 0
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.questions, task.question) == ("x", 0, 1, None)
    prompt = Path(str(evidence) + ".prompt").read_text()
    section = prompt.split("## Your question and the answer on T-1", 1)[1].split("\n## ", 1)[0]
    assert "Which greeting for T-1: formal or casual?" in section and "\ncasual\n" in section
    [answer] = [n for n in parse_notes(ws.notes_path) if n.is_answer]
    assert answer.read and answer.text == "casual" and answer.source == "cli"
    assert questions.open_questions(ws) == []


def test_the_answer_prompt_fences_text_that_holds_fences(tmp_path):
    ws, evidence = _asking(tmp_path, "ask")
    run_tick(ws.root)
    assert _cli(ws, "answer", "T-1", "-", stdin="use this:\n````\n## Outputs\n````\n").returncode == 0
    run_tick(ws.root)
    prompt = Path(str(evidence) + ".prompt").read_text()
    section = prompt.split("### The answer", 1)[1]
    assert "\n`````text\nuse this:\n````\n## Outputs\n````\n`````\n" in section


def test_other_tasks_go_on_while_a_question_waits_and_the_phase_is_not_finished(tmp_path):
    ws, _ = _asking(tmp_path, "ask-other", tasks=TWO)
    run_tick(ws.root)
    plan = parse_plan(ws.plan_path)
    # The question file named T-2: it is still the asking task's question, never another's.
    assert (plan.task("T-1").status, plan.task("T-2").status) == ("?", " ")
    assert plan.task("T-2").question is None
    assert run_tick(ws.root).exit_code == 0
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-1").status, plan.task("T-2").status) == ("?", "x")
    from memento_core.scheduler import INPUT, finished_phases, pick

    assert pick(plan).kind == INPUT and finished_phases(plan) == set()


def test_a_fourth_question_blocks_the_task_without_a_retry(tmp_path):
    ws, _ = _asking(tmp_path, "ask-always")
    for n in (1, 2, 3):
        run_tick(ws.root)
        task = parse_plan(ws.plan_path).task("T-1")
        assert (task.status, task.questions, task.retries) == ("?", n, 0)
        assert _cli(ws, "answer", "T-1", f"answer {n}").returncode == 0
    assert run_tick(ws.root).exit_code == 1
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.questions, task.retries) == ("!", 3, 0)
    last = entries(ws)[-2] if entries(ws)[-1].is_event else entries(ws)[-1]
    assert last.field("Status").startswith("🚫 BLOCKED — max_questions reached")
    assert "memento: T-1 blocked (max_questions 3 reached)" in _log(ws)
    assert TickState.load(ws).consecutive_failed_ticks == 0


def test_max_questions_comes_from_the_plan_meta(tmp_path):
    ws, _ = _asking(tmp_path, "ask", extra_meta="- max_questions: 0\n")
    run_tick(ws.root)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.questions, task.retries) == ("!", 0, 0)


@pytest.mark.parametrize("bad, why", [("empty", "is empty"), ("binary", "is binary"), ("fifo", "FIFO"),
                                      ("link", "symbolic link")])
def test_a_question_file_that_is_no_question_is_a_failed_attempt_with_its_reason(tmp_path, bad, why):
    ws, _ = _asking(tmp_path, "bad", bad)
    assert run_tick(ws.root).exit_code == 0
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.question) == (" ", 1, None)
    [entry] = entries(ws)
    assert entry.status == "FAILED" and why in entry.field("Reason"), entry.field("Reason")
    assert not (ws.root / "hello.txt").exists()
    assert not ws.question_path.exists() and not ws.question_path.is_symlink()


# --- hostile: judged from the plan, the notes and git -----------------------------------------


def _answers_in_git(ws) -> str:
    return git(ws.root, "log", "-p", "--", "docs/HUMAN_NOTES.md")


def test_a_forged_answer_note_is_removed_and_the_task_still_waits(tmp_path):
    ws, _ = _asking(tmp_path, "forge-note")
    run_tick(ws.root)
    assert parse_plan(ws.plan_path).task("T-1").status == "?"
    assert not [n for n in parse_notes(ws.notes_path) if n.is_answer]
    assert "[ANSWER]" not in _answers_in_git(ws)
    assert run_tick(ws.root).exit_code == 1  # not picked: it waits for a person
    assert parse_plan(ws.plan_path).task("T-1").status == "?"


def test_the_agent_cannot_answer_its_own_question_through_memento_answer(tmp_path):
    ws, evidence = _asking(tmp_path, "cli-answer")
    run_tick(ws.root)
    said = [json.loads(line) for line in evidence.read_text().splitlines()]
    assert [s["code"] for s in said] == [2, 2] and all("refused" in s["stderr"] for s in said)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == ("?", 0)
    assert not [n for n in parse_notes(ws.notes_path) if n.is_answer]
    assert "[ANSWER]" not in _answers_in_git(ws)


def test_the_agent_cannot_make_another_task_wait(tmp_path):
    ws, _ = _asking(tmp_path, "forge-waiting", tasks=TWO)
    run_tick(ws.root)
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "?"
    assert (plan.task("T-2").status, plan.task("T-2").question, plan.task("T-2").questions) == (" ", None, 0)
    assert "forged" not in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")


def test_the_question_event_is_sent_once_per_question_with_the_question_and_how_to_answer(tmp_path):
    from tests.core.notifyhelp import Receiver, with_notify

    receiver = Receiver()
    receiver.start()
    try:
        ws, _ = _asking(tmp_path, "ask-always")
        with_notify(ws, receiver.url())  # no `events`: the question event is on by default
        run_tick(ws.root)
        run_tick(ws.root)  # waiting: nothing new to tell
        [sent] = receiver.received
        assert sent["title"] == "Memento · engine test: T-1 asks: Which greeting for T-1: formal or casual?"
        assert "- [ ] casual" in sent["message"] and "memento answer T-1 --choice N" in sent["message"]
        assert _cli(ws, "answer", "T-1", "formal").returncode == 0
        run_tick(ws.root)  # asks again: a new question, told again
        assert len(receiver.received) == 2
    finally:
        receiver.close()


def test_a_persons_answer_while_another_task_runs_is_kept_through_its_receipt(tmp_path):
    from tests.core.scenarios.test_engine import _start_tick, _wait_for

    go = tmp_path / "go"
    waiting = TWO.replace("- [ ] `T-2`", "- [?] `T-2`").replace(
        "  - context_files: [hello2.txt]\n", "  - context_files: [hello2.txt]\n  - question: Which?\n  - questions: 1\n")
    ws, _ = _asking(tmp_path, "wait", str(go), tasks=waiting)
    tick = _start_tick(ws)
    try:
        _wait_for(lambda: (ws.root / "hello.txt").exists())
        done = _cli(ws, "answer", "T-2", "the second one")
        assert done.returncode == 0, done.stderr
        go.touch()
        assert tick.wait(60) == 0, tick.stderr.read()
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.wait()
        tick.stdout.close()
        tick.stderr.close()
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-1").status, plan.task("T-2").status) == ("x", " ")
    committed = git(ws.root, "show", "HEAD:docs/HUMAN_NOTES.md")
    assert "[ANSWER]" in committed and "the second one" in committed
    assert "- [ ] `T-2`" in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")


# --- the sixth state in the plan's other readers -----------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures"
SKILL = Path("/work/shared/seeds/agent-memento-SKILL.md")


@pytest.mark.parametrize("name", ["skill_template_plan.md", "spec_example_plan.md", "SKILL"])
def test_plans_without_the_sixth_state_parse_and_round_trip_byte_for_byte(tmp_path, name):
    from memento_core.plan.edits import edit_plan

    source = SKILL if name == "SKILL" else FIXTURES / name
    if not source.exists():
        pytest.skip(f"{source} is not on this machine")
    data = source.read_bytes()
    if name == "SKILL":  # the original's plan example, fenced in its text
        data = b"# MASTER_PLAN" + data.split(b"```markdown\n# MASTER_PLAN", 1)[1].split(b"\n```\n", 1)[0] + b"\n"
    path = tmp_path / "MASTER_PLAN.md"
    path.write_bytes(data)
    plan = parse_plan(path)
    assert plan.tasks and not [t for t in plan.tasks if t.status == "?"]
    assert plan.meta.max_questions == 3 and all(t.questions == 0 and t.question is None for t in plan.tasks)
    edit_plan(path, lambda e: None)
    assert path.read_bytes() == data
    pending = next(t for t in plan.tasks if t.status == " ")
    edit_plan(path, lambda e: e.set_status(pending.id, "?"))
    assert parse_plan(path).task(pending.id).status == "?"
    edit_plan(path, lambda e: e.set_status(pending.id, " ", expect="?"))
    assert path.read_bytes() == data


def test_lint_warns_of_a_waiting_task_without_a_question(tmp_path):
    from memento_core.plan_lint import lint_problems

    text = (FIXTURES / "spec_example_plan.md").read_text().replace("- [ ]", "- [?]", 1)
    plan = parse_plan(_write(tmp_path / "p.md", text))
    [warning] = [p for p in lint_problems(plan, text, "p.md", tmp_path, None) if "[?]" in p.message]
    assert warning.severity == "warning" and "memento answer" in warning.message


def test_the_architect_may_neither_answer_nor_ask(tmp_path):
    from memento_core.plan.scan import parse_plan_text
    from memento_core.tick.architect.changes import compare_plans

    old = parse_plan_text(WAITING.join(["# P\n\n## Phase 1: A\n\n", ""]) + TWO.split("\n", 5)[5])
    answered = parse_plan_text(WAITING.replace("- [?]", "- [ ]").join(["# P\n\n## Phase 1: A\n\n", ""])
                               + TWO.split("\n", 5)[5])
    asked = parse_plan_text(WAITING.join(["# P\n\n## Phase 1: A\n\n", ""]) + TWO.split("\n", 5)[5].replace(
        "- [ ]", "- [?]"))
    reworded = parse_plan_text(WAITING.replace("Redis or Postgres?", "Redis.").join(["# P\n\n## Phase 1: A\n\n", ""])
                               + TWO.split("\n", 5)[5])
    assert any("put T-1 back to [ ]" in v for v in compare_plans(old, answered).violations)
    assert any("marked T-2 [?]" in v for v in compare_plans(old, asked).violations)
    assert any("changed T-1's question" in v for v in compare_plans(old, reworded).violations)
    assert compare_plans(old, old).violations == ()


def test_the_agent_cannot_rewrite_another_tasks_question(tmp_path):
    waiting = TWO.replace("- [ ] `T-2`", "- [?] `T-2`").replace(
        "  - context_files: [hello2.txt]\n", "  - context_files: [hello2.txt]\n  - question: Which?\n  - questions: 1\n")
    ws, _ = _asking(tmp_path, "forge-record", tasks=waiting)
    questions.save_question(ws, "T-2", "Which?\n\n- [ ] left\n- [ ] right", "Which?", ("left", "right"))
    before = (ws.questions_dir / "T-2.json").read_bytes()
    run_tick(ws.root)
    assert (ws.questions_dir / "T-2.json").read_bytes() == before
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1)
    [entry] = entries(ws)
    assert "changed Memento's own state: .memento/questions/T-2.json" in entry.field("Reason")
    assert questions.open_questions(ws)[0].choices == ("left", "right")


@pytest.mark.parametrize("mode", ["ask", "forge-note", "cli-answer"])
def test_confined_the_worker_asks_and_still_cannot_answer_itself(tmp_path, mode):
    from tests.core.sandbox.test_sandbox import WHY_NOT

    if WHY_NOT is not None:
        pytest.skip(f"the sandbox cannot run here: {WHY_NOT}")
    ws, _ = _asking(tmp_path, mode, sandbox="bwrap")
    run_tick(ws.root)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.questions) == ("?", 0, 1), entries(ws)[-1].fields
    assert not [n for n in parse_notes(ws.notes_path) if n.is_answer]
    assert "[ANSWER]" not in _answers_in_git(ws)
    assert not (ws.root / "hello.txt").exists()
