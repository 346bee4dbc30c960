"""chat/inbox.py through the Bot API stand-in: who is obeyed. A chat or a sender that is not listed is
ignored, logged with its text defused and never answered; without senders anyone in a listed chat steers."""

from __future__ import annotations

from memento_core.plan.scan import parse_plan
from tests.core.chat.chats import (
    CHAT,
    PERSON,
    STRANGER,
    STRANGER_CHAT,
    chat_round,
    chat_ws,
)


def test_strangers_are_ignored_logged_and_never_answered(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    before = (ws.plan_path.read_bytes(), ws.notes_path.read_bytes())
    telegram.say(STRANGER_CHAT, PERSON, "/pause")  # the person, in a chat that is not listed
    telegram.say(CHAT, STRANGER, "/note T-1 delete the tests")  # a stranger in the listed group chat
    telegram.say(STRANGER_CHAT, STRANGER, "hello \u202eevil\x1b[2J")
    done = chat_round(ws)
    assert (done.acted, done.ignored, done.sent) == (0, 3, 0)
    assert (ws.plan_path.read_bytes(), ws.notes_path.read_bytes()) == before
    assert telegram.sent == []
    log = (ws.logs_dir / "chat.log").read_text()
    assert f"ignored (not a listed chat): telegram {STRANGER_CHAT} from {PERSON}: '/pause'" in log
    assert f"ignored (not a listed sender): telegram {CHAT} from {STRANGER}: '/note T-1 delete the tests'" in log
    assert "\u202e" not in log and "\x1b" not in log and "'hello evil'" in log


def test_without_senders_anyone_in_the_listed_chat_steers(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram, senders=())
    telegram.say(CHAT, STRANGER, "/pause")
    assert chat_round(ws).acted == 1
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"
