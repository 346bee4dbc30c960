"""[chat] telegram (SPEC §18) through a local stand-in of the Bot API (tests/core/telegram_standin.py):
commands from the listed chat, strangers ignored and logged, text defused, a service that is
down, token files, the tick's round before its pick, and the doctor."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from memento_core.chat import poll
from memento_core.cli.main import main as cli
from memento_core.config.load import load_config
from memento_core.errors import MementoError
from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import agent, make_ws
from tests.core.telegram_standin import TelegramStandIn

CHAT, PERSON = 123456789, 111222333
STRANGER_CHAT, STRANGER = 555000555, 999000999
WRITES = agent("does_task.py", "{task_id}.txt", "done")
TASKS = "".join(f"- [ ] `T-{n}` [MODULE:m] Write file {n}\n  - verify: `grep -q done T-{n}.txt`\n"
                f"  - context_files: [T-{n}.txt]\n" for n in (1, 2, 3))


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def token_file(tmp_path, token: str, mode: int = 0o600):
    path = tmp_path / "secrets" / "telegram-token"
    path.parent.mkdir(exist_ok=True)
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


def chat_ws(tmp_path, telegram, *, senders=(PERSON,), mode: int = 0o600, tasks: str = TASKS, extra: str = ""):
    ws = make_ws(tmp_path, WRITES, tasks)
    path = token_file(tmp_path, telegram.token, mode)
    ws.config_path.write_text(ws.config_path.read_text() + extra + (
        f'[chat]\ntelegram = {{ token_file = "{path}", chats = [{CHAT}], '
        f'senders = [{", ".join(map(str, senders))}], api = "{telegram.api}" }}\n'))
    subprocess.run(["git", "commit", "-qam", "chat"], cwd=ws.root, check=True)
    return ws


def chat_round(ws, budget: float = 10.0):
    return poll.run_round(ws, load_config(ws.config_path), budget=budget)


def replies(telegram, to: int) -> list[str]:
    """What Memento answered to the person's message ``to``."""
    return [s["text"] for s in telegram.sent_to(CHAT)
            if (s.get("reply_parameters") or {}).get("message_id") == to]


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


def test_the_tick_reads_the_chat_before_its_pick(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    pause = telegram.say(CHAT, PERSON, "/pause")
    outcome = run_tick(ws.root)
    assert outcome.message == "tick skipped: tick_mode is paused"  # read before the pick: nothing ran
    assert parse_plan(ws.plan_path).task("T-1").status == " " and replies(telegram, pause)
    resume = telegram.say(CHAT, PERSON, "/resume")  # a paused tick still reads the chat
    tick = telegram.say(CHAT, PERSON, "/tick")
    run_tick(ws.root)
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert replies(telegram, resume) == ["✓ tick_mode: auto (was paused)"]
    assert replies(telegram, tick) == ["A tick is running now: it picks a task right after reading the chat."]


def test_a_service_that_is_down_never_stops_the_tick_and_the_send_is_retried(tmp_path, telegram):
    from memento_core.doctor.runner import check_workspace

    # T-1 never passes; four more keep the share of blocked tasks under the breaker's 30 %.
    four = "".join(f"- [ ] `T-{n}` [MODULE:m] Write file {n}\n  - verify: `grep -q done T-{n}.txt`\n"
                   f"  - context_files: [T-{n}.txt]\n" for n in (4, 5))
    ws = chat_ws(tmp_path, telegram, tasks=TASKS.replace("grep -q done T-1.txt", "test -f never.txt") + four)
    (ws.root / "docs" / "MASTER_PLAN.md").write_text(ws.plan_path.read_text().replace("max_retries: 3",
                                                                                       "max_retries: 1"))
    subprocess.run(["git", "commit", "-qam", "one retry"], cwd=ws.root, check=True)
    port = telegram.port
    telegram.stop()
    run_tick(ws.root)  # T-1 fails and blocks; the chat is down
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "!"
    record = json.loads((ws.memento_dir / "chat.json").read_text())
    assert [p["key"] for p in record["pending"]] == ["blocked:T-1"]
    assert record["errors"]["telegram"]["error"].startswith(f"cannot reach 127.0.0.1:{port}")
    assert "chat: telegram unreachable, retried next round" in ws.cron_log.read_text()
    assert telegram.token not in ws.cron_log.read_text() + json.dumps(record)
    [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
    assert finding.severity == "WARNING" and "telegram was unreachable at the last round" in finding.message
    assert "1 send(s) wait for the next round" in finding.message
    telegram.start(port)
    run_tick(ws.root)  # T-2 passes; the blocked post goes out now, once
    assert [s["text"].splitlines()[0] for s in telegram.sent_to(CHAT)] == ["Memento · engine test: T-1 is blocked: Write file 1"]
    run_tick(ws.root)
    assert len(telegram.sent) == 1
    assert json.loads((ws.memento_dir / "chat.json").read_text())["errors"] == {}
    assert [f.severity for f in check_workspace(ws) if f.check == "chat"] == ["OK"]


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


def test_a_wrong_token_is_a_failed_round_that_names_no_token(tmp_path, telegram, capsys):
    ws = chat_ws(tmp_path, telegram)
    (tmp_path / "secrets" / "telegram-token").write_text("999:wrongwrongwrongwrongwrongwrongwrong\n")
    assert cli(["chat", "poll", str(ws.root)]) == 1
    out = capsys.readouterr().out
    assert "answered HTTP 401: Unauthorized" in out and "wrongwrong" not in out


@pytest.mark.parametrize("line, key", [
    ('telegram = { token_file = "/t", chats = [1], token = "x" }', "telegram.token"),
    ('telegram = { token_file = "/t", chats = [1], api = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ" }',
     "telegram.api"),
    ('matrix_token = "syt_bWVtZW50bw_abcdefghijklmnopqrst_1a2b3c"', "matrix_token"),
])
def test_a_token_in_memento_toml_is_a_config_error_with_its_line(tmp_path, line, key):
    path = tmp_path / "memento.toml"
    path.write_text(f'[agent]\npreset = "script"\n\n[chat]\n{line}\n')
    with pytest.raises(MementoError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"memento.toml:5: [chat] {key}: a token is never written in memento.toml")


def test_doctor_warns_when_the_agent_has_the_whole_network(tmp_path, telegram):
    from memento_core.doctor.runner import check_workspace

    ws = chat_ws(tmp_path, telegram, extra="")
    text = ws.config_path.read_text().replace('mode = "none"\n', 'mode = "none"\nnetwork = "all"\n')
    ws.config_path.write_text(text)
    [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
    assert finding.severity == "WARNING" and '[sandbox] network = "all" with [chat] set' in finding.message


# --------------------------------------------------------------------------- questions


def asking(tmp_path, telegram, *ids: str, choices=("Redis", "Postgres")):
    """A workspace whose tasks ``ids`` wait for an answer ([?]) to "Redis or Postgres?"."""
    from memento_core import questions

    tasks = TASKS
    for task_id in ids:
        tasks = tasks.replace(f"- [ ] `{task_id}`", f"- [?] `{task_id}`").replace(
            f"  - context_files: [{task_id}.txt]\n",
            f"  - context_files: [{task_id}.txt]\n  - retries: 1\n  - question: Redis or Postgres?\n  - questions: 1\n")
    ws = chat_ws(tmp_path, telegram, tasks=tasks)
    text = "Redis or Postgres?\n\nThe plan names both.\n" + "".join(f"- [ ] {c}\n" for c in choices)
    for task_id in ids:
        questions.save_question(ws, task_id, text.strip(), "Redis or Postgres?", tuple(choices))
    return ws


def posted_question(telegram, task_id: str) -> dict:
    [post] = [s for s in telegram.sent_to(CHAT) if s["text"].startswith(f"Memento · engine test: {task_id} asks:")]
    return post


def answers(ws) -> list[tuple[str, str, str]]:
    return [(n.target, n.text, n.source) for n in parse_notes(ws.notes_path) if n.is_answer]


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


def test_doctor_warns_of_a_token_file_outside_the_home_the_sandbox_hides(tmp_path, telegram):
    import shutil
    import tempfile
    from pathlib import Path

    from memento_core.doctor.runner import check_workspace

    base = Path(tempfile.mkdtemp(prefix="memento-token-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK) else None))
    try:
        ws = chat_ws(tmp_path, telegram)
        token = base / "telegram-token"
        token.write_text(telegram.token)
        token.chmod(0o600)
        text = ws.config_path.read_text().replace(str(tmp_path / "secrets" / "telegram-token"), str(token))
        ws.config_path.write_text(text.replace('mode = "none"', 'mode = "auto"'))
        [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
        assert finding.severity == "WARNING" and "is outside your home folder" in finding.message
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_service_that_never_answers_costs_one_request_per_round(tmp_path):
    import socket

    silent = socket.create_server(("127.0.0.1", 0), backlog=50)  # listens, never answers
    try:
        standin = TelegramStandIn()
        standin.port = silent.getsockname()[1]  # its address only: nothing serves there
        ws = chat_ws(tmp_path, standin)
        record = {"pending": [{"id": f"p{n}", "key": "reply", "text": f"answer {n}", "targets": [f"telegram:{CHAT}"]}
                              for n in range(5)]}
        (ws.memento_dir).mkdir(exist_ok=True)
        (ws.memento_dir / "chat.json").write_text(json.dumps(record))
        outcome = run_tick(ws.root)  # reads (times out), runs T-1, posts (times out once, tries no more)
        assert outcome.exit_code == 0 and parse_plan(ws.plan_path).task("T-1").status == "x"
        silent.setblocking(False)
        tried = 0
        while True:
            try:
                silent.accept()[0].close()
                tried += 1
            except BlockingIOError:
                break
        assert tried == 2  # one getUpdates before the pick, one send after the tick
        left = json.loads((ws.memento_dir / "chat.json").read_text())
        assert len(left["pending"]) == 5  # the five answers wait for the next round
        assert "timed out" in left["errors"]["telegram"]["error"]
        assert ws.cron_log.read_text().count("chat: telegram unreachable") == 2
    finally:
        silent.close()


def test_tick_starts_a_tick_beside_the_round(tmp_path, telegram):
    from memento_core.chat import commands

    ws = chat_ws(tmp_path, telegram)
    tick = telegram.say(CHAT, PERSON, "/tick")
    chat_round(ws)
    [child] = commands.STARTED
    commands.STARTED.clear()
    assert child.wait(120) == 0
    [said] = replies(telegram, tick)
    assert said == f"✓ a tick started (pid {child.pid}); /status shows how it goes"
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    from memento_core.locks import file_lock

    with file_lock(ws.tick_lock_path, blocking=False):  # a tick running: /tick says so, starts none
        busy = telegram.say(CHAT, PERSON, "/tick")
        chat_round(ws)
    assert replies(telegram, busy) == ["A tick is already running; /status shows what it does."]
    assert commands.STARTED == []


def test_a_post_for_a_chat_no_longer_listed_is_dropped(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    (ws.memento_dir / "chat.json").write_text(json.dumps({"pending": [
        {"id": "a", "key": "reply", "text": "to the old chat", "targets": [f"telegram:{STRANGER_CHAT}"]},
        {"id": "b", "key": "reply", "text": "to the listed one", "targets": [f"telegram:{CHAT}"]}]}))
    assert chat_round(ws).sent == 1
    assert [(s["chat_id"], s["text"]) for s in telegram.sent] == [(CHAT, "to the listed one")]
    assert json.loads((ws.memento_dir / "chat.json").read_text())["pending"] == []
