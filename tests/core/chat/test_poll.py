"""chat/poll.py, a chat round through the Bot API stand-in: the tick's round before its pick, a service
that is down or never answers (the tick goes on, the sends wait for the next round, one request a
round), a post for a chat no longer listed dropped."""

from __future__ import annotations

import json
import subprocess

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.chat.chats import (
    CHAT,
    PERSON,
    STRANGER_CHAT,
    TASKS,
    chat_round,
    chat_ws,
    replies,
)
from tests.core.telegram_standin import TelegramStandIn


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


def test_a_post_for_a_chat_no_longer_listed_is_dropped(tmp_path, telegram):
    ws = chat_ws(tmp_path, telegram)
    (ws.memento_dir / "chat.json").write_text(json.dumps({"pending": [
        {"id": "a", "key": "reply", "text": "to the old chat", "targets": [f"telegram:{STRANGER_CHAT}"]},
        {"id": "b", "key": "reply", "text": "to the listed one", "targets": [f"telegram:{CHAT}"]}]}))
    assert chat_round(ws).sent == 1
    assert [(s["chat_id"], s["text"]) for s in telegram.sent] == [(CHAT, "to the listed one")]
    assert json.loads((ws.memento_dir / "chat.json").read_text())["pending"] == []
