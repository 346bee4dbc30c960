"""chat/chatlog.py: logs/chat.log gets one stamped line per message, whatever the sender typed (newlines,
escapes, bidi overrides); a log line quotes a message short, defused and on one line."""

from __future__ import annotations

import os
import re

from memento_core.chat.chatlog import chat_log, preview
from memento_core.workspace import Workspace


def test_each_message_is_one_stamped_defused_line(tmp_path):
    ws = Workspace(tmp_path)
    chat_log(ws, "telegram 1 from 2: 'first'")
    chat_log(ws, "a\nsecond \x1b[2Jline \u202eevil\u202c  here")
    lines = (ws.logs_dir / "chat.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "
    assert re.fullmatch(stamp + re.escape("telegram 1 from 2: 'first'"), lines[0])
    assert re.fullmatch(stamp + "a second line evil here", lines[1])


def test_a_hard_link_in_the_logs_place_is_split_not_written_through(tmp_path):
    """The agent linked logs/chat.log to a person's file: the person's file is left as it was."""
    ws = Workspace(tmp_path)
    persons = tmp_path / "thesis.tex"
    persons.write_text("mine\n")
    ws.logs_dir.mkdir()
    os.link(persons, ws.logs_dir / "chat.log")
    chat_log(ws, "hello")
    assert persons.read_text() == "mine\n"
    assert (ws.logs_dir / "chat.log").read_text().endswith(" hello\n")


def test_preview_quotes_a_short_one_line_defused_text():
    assert preview("hi\nthere\u202e") == "'hi there'"
    long = preview("x" * 200, limit=10)
    assert long == repr("x" * 9 + "…")
    assert preview("y" * 10, limit=10) == repr("y" * 10)
