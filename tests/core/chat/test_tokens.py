"""chat/tokens.py (SPEC §18): a chat token is read only from a file of mode 0600 that this user owns,
outside the project, holding one word; every refusal says why and never shows the token. On real
files, then through a chat round: `memento chat poll` refuses, the tick runs its task and skips the chat,
the doctor says so (the Bot API stand-in, tests/core/telegram_standin.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from memento_core.chat.tokens import MAX_TOKEN_BYTES, TokenError, inside, outside_home, read_token
from memento_core.cli.main import main as cli
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.chat.chats import CHAT, PERSON, chat_ws

TOKEN = "123456:AAbbCCddEEffGGhh"


def token_file(folder: Path, content: str = TOKEN + "\n", mode: int = 0o600) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "token"
    path.write_text(content)
    path.chmod(mode)
    return path


def refusal(path: Path | str, project: Path | None = None) -> str:
    with pytest.raises(TokenError) as info:
        read_token(str(path), project)
    assert TOKEN not in str(info.value)
    return str(info.value)


def test_the_token_is_the_files_one_word_stripped(tmp_path):
    assert read_token(str(token_file(tmp_path / "secrets", f"  {TOKEN}\r\n\n"))) == TOKEN


def test_a_tilde_is_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    token_file(tmp_path / ".config" / "memento")
    assert read_token("~/.config/memento/token") == TOKEN


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o606, 0o644])
def test_a_file_others_may_read_or_write_is_refused_with_its_mode(tmp_path, mode):
    path = token_file(tmp_path, mode=mode)
    assert refusal(path) == (f"token file {path}: mode {mode:04o}, others can read it; it must be 0600 "
                             f"(`chmod 600 {path}`)")


def test_0400_is_as_good_as_0600(tmp_path):
    assert read_token(str(token_file(tmp_path, mode=0o400))) == TOKEN


def test_a_missing_file_says_how_to_make_it(tmp_path):
    path = tmp_path / "nowhere"
    assert refusal(path) == f"token file {path}: does not exist (write the token there, then `chmod 600 {path}`)"


@pytest.mark.parametrize(("content", "why"), [
    ("", "empty"), (" \n\t\n", "empty"),
    (f"{TOKEN} {TOKEN}", "holds more than one word; only the token goes there"), (f"{TOKEN}\n{TOKEN}\n", "holds more than one word; only the token goes there"),
    (f"{TOKEN}\x01", "holds more than one word; only the token goes there"),
    ("x" * (MAX_TOKEN_BYTES + 1), f"over {MAX_TOKEN_BYTES} bytes, not a token"),
])
def test_what_is_not_one_token_is_refused(tmp_path, content, why):
    path = token_file(tmp_path, content)
    assert refusal(path) == f"token file {path}: {why}"


def test_a_fifo_or_a_folder_is_not_a_token_file_and_never_blocks(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)  # no writer: an open() without O_NONBLOCK would wait for ever

    def blocked(signum, frame):
        raise AssertionError("reading the token blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(10)
    try:
        assert refusal(fifo) == f"token file {fifo}: not a regular file"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    assert refusal(folder) == f"token file {folder}: not a regular file"


def test_a_file_in_the_project_is_refused_even_through_a_link(tmp_path):
    project = tmp_path / "project"
    inner = token_file(project / "config")
    message = refusal(inner, project)
    assert message.startswith(f"token file {inner}: inside the project, where the agent can read it")
    link = tmp_path / "home-token"
    link.symlink_to(inner)  # a link from outside still reads the project's file
    assert "inside the project" in refusal(link, project)
    assert read_token(str(token_file(tmp_path / "secrets")), project) == TOKEN


def test_inside_is_by_path_components_after_links():
    assert inside(Path("/a/b"), Path("/a/b")) and inside(Path("/a/b/c"), Path("/a/b/"))
    assert not inside(Path("/a/bc"), Path("/a/b")) and not inside(Path("/a"), Path("/a/b"))


def test_outside_home_is_neither_the_home_folder_nor_tmp(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert not outside_home("~/.config/memento/token")
    assert not outside_home("/tmp/token")
    assert outside_home("/etc/memento/token")


# --------------------------------------------------------------------------- through a chat round


def test_a_token_file_others_can_read_is_refused_everywhere(tmp_path, telegram, capsys):
    from memento_core.doctor.runner import check_workspace

    ws = chat_ws(tmp_path, telegram, mode=0o644)
    path = tmp_path / "secrets" / "telegram-token"
    telegram.say(CHAT, PERSON, "/pause")
    assert cli(["chat", "poll", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert f"token file {path}: mode 0644, others can read it; it must be 0600" in err
    outcome = run_tick(ws.root)  # the tick runs its task and skips the chat
    assert parse_plan(ws.plan_path).task("T-1").status == "x" and outcome.exit_code == 0
    assert f"chat skipped: token file {path}: mode 0644" in ws.cron_log.read_text()
    assert telegram.requests == []
    [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
    assert finding.severity == "CRITICAL" and "mode 0644" in finding.message
    path.chmod(0o600)
    assert cli(["chat", "poll", str(ws.root)]) == 0
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"


@pytest.mark.parametrize("content, why", [("", "empty"), ("two words", "more than one word")])
def test_an_empty_or_odd_token_file_is_refused(tmp_path, telegram, content, why, capsys):
    ws = chat_ws(tmp_path, telegram)
    path = tmp_path / "secrets" / "telegram-token"
    path.write_text(content)
    assert cli(["chat", "poll", str(ws.root)]) == 2
    assert why in capsys.readouterr().err
    path.unlink()
    os.mkfifo(path, 0o600)  # a FIFO there never blocks the tick
    assert cli(["chat", "poll", str(ws.root)]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_token_file_inside_the_project_is_refused(tmp_path, telegram, capsys):
    ws = chat_ws(tmp_path, telegram)
    inside = ws.root / "secrets" / "token"
    inside.parent.mkdir()
    inside.write_text(telegram.token)
    inside.chmod(0o600)
    ws.config_path.write_text(ws.config_path.read_text().replace(str(tmp_path / "secrets" / "telegram-token"),
                                                                 str(inside)))
    assert cli(["chat", "poll", str(ws.root)]) == 2
    assert "inside the project, where the agent can read it" in capsys.readouterr().err
    assert telegram.requests == []
