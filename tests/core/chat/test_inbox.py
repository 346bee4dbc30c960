"""chat/inbox.py: a message of either service in one shape (anything but text ignored, a Matrix edit
not acted on twice, a long text cut), and, through the Bot API stand-in, who is obeyed. A chat or a sender that is not listed is
ignored, logged with its text defused and never answered; without senders anyone in a listed chat steers."""

from __future__ import annotations

from memento_core.chat.inbox import MAX_IN, Incoming, from_matrix, from_telegram, obeyed
from memento_core.config.model import MatrixChat, TelegramChat
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


def test_a_telegram_update_is_its_text_message_or_nothing():
    update = {"update_id": 7, "message": {"message_id": 41, "chat": {"id": -100200}, "from": {"id": 111},
                                          "text": "x" * (MAX_IN + 10), "reply_to_message": {"message_id": 40}}}
    assert from_telegram(update) == Incoming("telegram", "telegram:-100200", "-100200", "111", "x" * MAX_IN, "41", "40")
    assert from_telegram({"update_id": 8, "edited_message": {"text": "changed"}}) is None
    assert from_telegram({"update_id": 9, "message": {"message_id": 42, "sticker": {}}}) is None
    plain = from_telegram({"message": {"message_id": 43, "chat": {"id": 1}, "from": {"id": 2}, "text": "hi",
                                       "reply_to_message": {"message_id": "40"}}})
    assert plain.reply_to is None and plain.text == "hi"


def test_a_matrix_event_is_its_text_or_nothing_and_an_edit_is_not_acted_on_again():
    event = {"type": "m.room.message", "sender": "@me:m.org", "event_id": "$e1",
             "content": {"msgtype": "m.text", "body": "/status"}}
    assert from_matrix(event, "!room:m.org") == Incoming("matrix", "matrix", "!room:m.org", "@me:m.org", "/status",
                                                         "$e1", None)
    assert from_matrix({**event, "content": {"msgtype": "m.image", "body": "cat.png"}}, "!r") is None
    edit = {**event, "content": {"msgtype": "m.text", "body": "* /pause",
                                 "m.relates_to": {"rel_type": "m.replace", "event_id": "$e0"}}}
    assert from_matrix(edit, "!r") is None
    reply = {**event, "content": {"msgtype": "m.text", "body": "> <@memento:m.org> T-1 asks: which?\n\nRedis",
                                  "m.relates_to": {"m.in_reply_to": {"event_id": "$q1"}}}}
    found = from_matrix(reply, "!r")
    assert (found.text, found.reply_to) == ("Redis", "$q1")  # the quoted fallback dropped


def test_who_is_obeyed_on_each_service():
    telegram = TelegramChat("/t", (100,), (111,))
    def tg(chat: str, sender: str) -> Incoming:
        return Incoming("telegram", f"telegram:{chat}", chat, sender, "/status", "1", None)
    assert obeyed(tg("100", "111"), telegram, None) == ""
    assert obeyed(tg("100", "222"), telegram, None) == "not a listed sender"
    assert obeyed(tg("101", "111"), telegram, None) == "not a listed chat"
    assert obeyed(tg("100", "None"), telegram, None) == "no chat or sender id"
    assert obeyed(tg("100", "222"), TelegramChat("/t", (100,)), None) == ""  # no senders: anyone there
    assert obeyed(tg("100", "111"), None, None) == "telegram is not configured"
    matrix = MatrixChat("https://m.org", "@memento:m.org", "/t", "!room:m.org", ("@me:m.org",))
    def mx(room: str, sender: str) -> Incoming:
        return Incoming("matrix", "matrix", room, sender, "/status", "$e", None)
    assert obeyed(mx("!room:m.org", "@me:m.org"), None, matrix) == ""
    assert obeyed(mx("!other:m.org", "@me:m.org"), None, matrix) == "not the listed room"
    assert obeyed(mx("!room:m.org", "@eve:m.org"), None, matrix) == "not a listed sender"
    assert obeyed(mx("!room:m.org", "@me:m.org"), telegram, None) == "matrix is not configured"
