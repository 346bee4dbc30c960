"""`memento answer ID TEXT… | - | --choice N [DIR]` (cli/commands/answer.py, SPEC §18), a real subprocess:
the words after the id are the answer and a last word naming a workspace is the DIR, `-` reads standard
input, no answer at all is exit 2 with nothing changed, and a pipeline that still will not run is said.
The question's life (asked, waiting, answered, read by the next attempt) is tests/core/test_questions.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core import questions
from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from tests.core.cli.runs import memento
from tests.core.scenarios.test_engine import HELLO, make_ws

WAITING = HELLO.replace("- [ ]", "- [?]").replace("  - retries: 0\n", "  - question: Which database?\n"
                                                                       "  - questions: 1\n")


@pytest.fixture
def ws(tmp_path: Path, git_identity):
    """T-1 waiting [?] on "Which database?" with the choices Redis and Postgres."""
    ws = make_ws(tmp_path, "true", tasks=WAITING)
    questions.save_question(ws, "T-1", "Which database?", "Which database?", ("Redis", "Postgres"))
    return ws


def answers(ws) -> list[str]:
    return [n.text for n in parse_notes(ws.notes_path) if n.is_answer]


def test_the_words_are_the_answer_and_a_last_word_naming_a_workspace_is_its_dir(ws, tmp_path):
    done = memento("answer", "T-1", "Postgres,", "it", "has", "JSONB", str(ws.root), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == ("[ok] T-1 answered (Postgres, it has JSONB); it goes back to [ ] and "
                                           "the next attempt gets the question and your answer")
    assert answers(ws) == ["Postgres, it has JSONB"]
    assert parse_plan(ws.plan_path).task("T-1").status == " "


def test_a_dash_reads_the_answer_from_standard_input(ws):
    done = memento("answer", "T-1", "-", cwd=ws.root, input="Redis:\nit is only a cache\n")
    assert done.returncode == 0, done.stderr
    assert "T-1 answered (Redis: it is only a cache)" in done.stdout
    assert answers(ws) == ["Redis:\nit is only a cache"]


def test_a_choice_is_the_choice_with_the_dir_after_it(ws, tmp_path):
    done = memento("answer", "T-1", "--choice", "2", str(ws.root), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert answers(ws) == ["Postgres"]


@pytest.mark.parametrize("words", [[], ["   "], ["-"]])
def test_no_answer_is_exit_2_and_nothing_changes(ws, words):
    before = (ws.plan_path.read_bytes(), ws.notes_path.read_bytes())
    done = memento("answer", "T-1", *words, cwd=ws.root, input="  \n")
    assert done.returncode == 2
    assert done.stderr.startswith("[error] no answer given: `memento answer ID TEXT`")
    assert (ws.plan_path.read_bytes(), ws.notes_path.read_bytes()) == before


def test_an_answer_to_a_paused_pipeline_says_it_still_will_not_run(ws):
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- tick_mode: auto", "- tick_mode: paused"))
    done = memento("answer", "T-1", "Redis", cwd=ws.root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "[warn] the pipeline is still paused: `memento resume` to run it"
