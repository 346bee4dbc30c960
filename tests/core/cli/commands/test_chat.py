"""`memento chat poll` (cli/commands/chat.py) through the Bot API stand-in: a round that fails (a wrong
token) exits 1 and names no token."""

from __future__ import annotations

from memento_core.cli.main import main as cli
from tests.core.chat.chats import (
    chat_ws,
)


def test_a_wrong_token_is_a_failed_round_that_names_no_token(tmp_path, telegram, capsys, git_identity):
    ws = chat_ws(tmp_path, telegram)
    (tmp_path / "secrets" / "telegram-token").write_text("999:wrongwrongwrongwrongwrongwrongwrong\n")
    assert cli(["chat", "poll", str(ws.root)]) == 1
    out = capsys.readouterr().out
    assert "answered HTTP 401: Unauthorized" in out and "wrongwrong" not in out
