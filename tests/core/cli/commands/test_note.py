"""`memento note` (cli/commands/note.py), a real subprocess: a note for a task or for everyone, the
rest of the line, standard input or the editor; printed as written (no markup), an unknown task refused."""

from __future__ import annotations

import os
from pathlib import Path

from tests.core.cli.runs import memento


def test_a_note_for_a_task_and_one_for_everyone_and_an_unknown_task(ws: Path):
    assert memento("note", "--task", "T-101", "[bold red]literal[/]", str(ws)).returncode == 0
    assert memento("note", "for everyone", "--project", str(ws)).returncode == 0
    notes = (ws / "docs/HUMAN_NOTES.md").read_text()
    assert "→ T-101\n[bold red]literal[/]\n" in notes and "→ global\nfor everyone\n" in notes
    r = memento("note", "--task", "T-5", "x", str(ws))
    assert r.returncode == 2 and "T-5 is not in docs/MASTER_PLAN.md" in r.stderr


def notes_of(words_ws: Path) -> str:
    return (words_ws / "docs/HUMAN_NOTES.md").read_text()


def test_a_note_is_the_rest_of_the_line(words_ws: Path):
    (words_ws / "bugs").mkdir()  # a folder called like the note's last word is no workspace
    r = memento("note", "fix", "bugs", cwd=words_ws)
    assert r.returncode == 0, r.stderr
    r = memento("note", "use", "the", "force", cwd=words_ws)
    assert r.returncode == 0, r.stderr
    r = memento("note", "--task", "T-2", "quoted", "for", "T-2", str(words_ws))  # the last word a workspace: DIR
    assert r.returncode == 0, r.stderr
    text = notes_of(words_ws)
    assert "→ global\nfix bugs\n" in text and "→ global\nuse the force\n" in text
    assert "→ T-2\nquoted for T-2\n" in text


def test_a_note_without_text_reads_stdin(words_ws: Path):
    r = memento("note", "--project", str(words_ws), input="line one\nline two\n")
    assert r.returncode == 0, r.stderr
    assert "→ global\nline one\nline two\n" in notes_of(words_ws)
    r = memento("note", "--project", str(words_ws), input="  \n")
    assert r.returncode == 2 and r.stderr == "[error] the note is empty; nothing added\n"


def test_a_note_without_text_on_a_terminal_opens_the_editor(words_ws: Path):
    controller, terminal = os.openpty()
    try:
        editor = "sh -c 'printf \"written in the editor\\n\" > \"$1\"' editor"
        r = memento("note", "--project", str(words_ws), stdin=terminal, env={"EDITOR": editor, "VISUAL": ""})
        assert r.returncode == 0, r.stderr
        assert "→ global\nwritten in the editor\n" in notes_of(words_ws)
        r = memento("note", "--project", str(words_ws), stdin=terminal, env={"EDITOR": "false", "VISUAL": ""})
        assert r.returncode == 2 and "the editor (false) exited with code 1; no note added" in r.stderr
    finally:
        os.close(controller)
        os.close(terminal)
