"""chat/commands.py through the Bot API stand-in (tests/core/telegram_standin.py): the commands a listed
person sends act as the command line would and are answered in the chat, in plain text with markup,
control and bidi characters defused; a reply to a question's message, a choice's number or /answer
answers it; /tick starts a tick beside the round."""

from __future__ import annotations

import json
import subprocess

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from tests.core.chat.chats import (
    CHAT,
    PERSON,
    answers,
    asking,
    chat_round,
    chat_ws,
    posted_question,
    replies,
)


def test_commands_from_the_listed_chat_run_and_are_answered_there(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    pause = telegram.say(CHAT, PERSON, "/pause")
    status = telegram.say(CHAT, PERSON, "/status@memento_test_bot")
    note = telegram.say(CHAT, PERSON, "/note t-2 the API key is in the vault")
    done = chat_round(ws)
    assert (done.acted, done.ignored, done.errors) == (3, 0, [])
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"
    assert replies(telegram, pause) == ["✓ tick_mode: paused (was auto)"]
    [said] = replies(telegram, status)
    assert said.startswith("engine test: PAUSED") and "Tasks: 3 to do (of 3)" in said
    [n] = [n for n in parse_notes(ws.notes_path) if not n.is_global]
    assert (n.target, n.text) == ("T-2", "the API key is in the vault")
    assert replies(telegram, note)[0].startswith("✓ note for T-2 added to docs/HUMAN_NOTES.md")
    # Every answer is plain text: nothing a title or a person wrote is rendered as markup.
    assert all("parse_mode" not in s for s in telegram.sent)
    # The update offset is confirmed: the next round acts on nothing twice.
    resume = telegram.say(CHAT, PERSON, "/resume")
    assert chat_round(ws).acted == 1
    assert parse_plan(ws.plan_path).meta.tick_mode == "auto" and len(replies(telegram, resume)) == 1
    assert len(telegram.sent) == 4
    assert json.loads((ws.memento_dir / "chat.json").read_text())["telegram"]["offset"] == telegram.next_update + 1
    log = (ws.logs_dir / "chat.log").read_text()
    assert f"telegram {CHAT} from {PERSON}: '/pause' -> '✓ tick_mode: paused (was auto)'" in log


def test_skip_reset_and_report(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    skip = telegram.say(CHAT, PERSON, "/skip T-3 not needed any more")
    bad = telegram.say(CHAT, PERSON, "/skip T-3")
    chat_round(ws)
    assert parse_plan(ws.plan_path).task("T-3").status == "-"
    assert replies(telegram, skip) == ["✓ T-3 skipped [-]: not needed any more"]
    assert replies(telegram, bad) == ["✗ usage: /skip T-ID reason"]
    reset = telegram.say(CHAT, PERSON, "/reset T-3")
    report = telegram.say(CHAT, PERSON, "/report")
    unknown = telegram.say(CHAT, PERSON, "/frobnicate")
    chat_round(ws)
    assert parse_plan(ws.plan_path).task("T-3").status == " "
    assert replies(telegram, reset)[0].startswith("✓ T-3 is [ ] again with retries 0")
    assert replies(telegram, report)[0].startswith("Report for engine test:")
    assert replies(telegram, unknown)[0].startswith("✗ unknown command /frobnicate. Commands: /status")


def test_markup_control_and_bidi_text_is_stored_and_echoed_defused(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    hostile = ("/note <b>bold</b> *x* [link](http://e.invalid) \u202egnp.exe\u200b \x1b[31mred\x07 @everyone "
               "<@123> \u2066iso\u2069")
    sent = telegram.say(CHAT, PERSON, hostile)
    chat_round(ws)
    [n] = parse_notes(ws.notes_path)
    for bad in ("\u202e", "\u200b", "\x1b", "\x07", "\u2066", "\u2069", "@everyone", "<@123>"):
        assert bad not in n.text
        assert bad not in replies(telegram, sent)[0]
    assert n.text == ("<b>bold</b> *x* [link](http://e.invalid) gnp.exe red ＠everyone ‹@123› iso")
    assert all("parse_mode" not in s for s in telegram.sent)


def test_a_question_is_posted_once_and_a_reply_to_it_answers_it(tmp_path, telegram):
    ws = asking(tmp_path, telegram, "T-1", "T-2")
    chat_round(ws)
    chat_round(ws)  # once per change of state
    q1, q2 = posted_question(telegram, "T-1"), posted_question(telegram, "T-2")
    assert len(telegram.sent) == 2
    assert "The plan names both." in q1["text"] and "Postgres" in q1["text"]
    assert q1["text"].endswith("Reply to this message with your answer, or with a choice's number.")
    plain = telegram.say(CHAT, PERSON, "Postgres please")  # two are open: a hint, nothing answered
    chat_round(ws)
    assert replies(telegram, plain) == ["2 questions are open (T-1, T-2): reply to one's message, or /answer T-ID text"]
    assert answers(ws) == []
    reply = telegram.say(CHAT, PERSON, "Postgres, \u202eplease", reply_to=q2["message_id"])
    chat_round(ws)
    assert answers(ws) == [("T-2", "Postgres, please", "telegram")]
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").retries, plan.task("T-1").status) == (" ", 1, "?")
    assert replies(telegram, reply)[0].startswith("✓ T-2 answered: Postgres, please")
    again = telegram.say(CHAT, PERSON, "Redis after all", reply_to=q2["message_id"])  # no longer open
    chat_round(ws)
    assert replies(telegram, again) == ["✗ that question of T-2 is no longer open (answered, or asked again "
                                        "since); nothing changed. /status shows what waits for you"]
    assert len(answers(ws)) == 1 and parse_plan(ws.plan_path).task("T-1").status == "?"  # not T-1's answer
    plain = telegram.say(CHAT, PERSON, "Redis after all")  # a plain message: one open question left
    chat_round(ws)
    assert replies(telegram, plain)[0].startswith("✓ T-1 answered")
    assert answers(ws)[-1] == ("T-1", "Redis after all", "telegram")


def test_a_plain_number_answers_with_that_choice(tmp_path, telegram):
    ws = asking(tmp_path, telegram, "T-1")
    chat_round(ws)
    out_of_range = telegram.say(CHAT, PERSON, "3")
    chat_round(ws)
    assert replies(telegram, out_of_range)[0].startswith("✗ choice 3 is out of range")
    assert answers(ws) == []
    telegram.say(CHAT, PERSON, "2")
    chat_round(ws)
    assert answers(ws) == [("T-1", "Postgres", "telegram")]


def test_answer_command_and_no_open_question(tmp_path, telegram):
    ws = asking(tmp_path, telegram, "T-1", "T-2")
    cmd = telegram.say(CHAT, PERSON, "/answer t-2 use Redis")
    chat_round(ws)
    assert answers(ws) == [("T-2", "use Redis", "telegram")] and replies(telegram, cmd)[0].startswith("✓ T-2 answered")
    wrong = telegram.say(CHAT, PERSON, "/answer T-3 anything")
    chat_round(ws)
    assert replies(telegram, wrong) == ["✗ T-3 has no open question (it is [ ] pending); nothing changed"]
    telegram.say(CHAT, PERSON, "/answer T-1 Postgres")
    chat_round(ws)
    nothing = telegram.say(CHAT, PERSON, "hello?")
    chat_round(ws)
    assert replies(telegram, nothing)[0].startswith("No question is open. Commands: /status")


def test_tick_starts_a_tick_beside_the_round(tmp_path, telegram):
    from memento_core.chat import commands

    ws = chat_ws(tmp_path, telegram)
    # A memento_core of the project's, committed: the tick starts in its folder, and is Memento's still.
    marker = tmp_path / "imported"
    (ws.root / "memento_core" / "tick").mkdir(parents=True)
    for rel in ("__init__.py", "tick/__init__.py", "tick/__main__.py"):
        (ws.root / "memento_core" / rel).write_text(f"open({str(marker)!r}, 'a').write(__file__)\n")
    subprocess.run(["git", "add", "memento_core"], cwd=ws.root, check=True)
    subprocess.run(["git", "commit", "-qm", "the project's own memento_core"], cwd=ws.root, check=True)
    tick = telegram.say(CHAT, PERSON, "/tick")
    chat_round(ws)
    [child] = commands.STARTED
    commands.STARTED.clear()
    assert child.wait(120) == 0
    assert not marker.exists()
    [said] = replies(telegram, tick)
    assert said == f"✓ a tick started (pid {child.pid}); /status shows how it goes"
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    from memento_core.locks import file_lock

    with file_lock(ws.tick_lock_path, blocking=False):  # a tick running: /tick says so, starts none
        busy = telegram.say(CHAT, PERSON, "/tick")
        chat_round(ws)
    assert replies(telegram, busy) == ["A tick is already running; /status shows what it does."]
    assert commands.STARTED == []
