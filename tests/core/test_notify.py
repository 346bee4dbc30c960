"""Notifications (SPEC §15) through a real local receiver: an HTTP server on 127.0.0.1 and
Apprise's ``json://`` URL, real ticks with fake agents, the record judged on disk."""

from __future__ import annotations

import json

import pytest

from memento_core import notify
from memento_core.cli.main import main as cli
from memento_core.config.model import NOTIFY_EVENTS
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from tests.core.notifyhelp import ONE_BLOCKS, WRITES, with_notify
from tests.core.scenarios.test_engine import HELLO, agent, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity








def test_a_blocked_task_is_sent_once_and_idle_ticks_send_nothing_more(tmp_path, receiver):
    receiver.start()
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
    with_notify(ws, receiver.url("secret-token-path"))
    run_tick(ws.root)
    assert TickState.load(ws).breaker_reason == ""
    assert [m["title"] for m in receiver.received] == ["Memento · engine test: T-1 is blocked: Write file 1"]
    message = receiver.received[0]["message"]
    assert "exit code 1" in message
    assert "What to do: fix it, then `memento reset T-1`" in message
    assert receiver.received[0]["path"] == "/secret-token-path"
    for _ in range(5):
        run_tick(ws.root)  # T-2..T-4 pass (no event), then idle: still blocked
    assert [m["title"].split(": ")[-2] for m in receiver.received] == ["T-1 is blocked"]
    record = json.loads(notify.notify_path(ws).read_text())
    assert record["states"] == {"blocked:T-1": "blocked"} and record["pending"] == []
    assert record["last_error"] is None and record["last_sent"]


def test_blocked_then_reset_then_blocked_again_is_sent_twice(tmp_path, receiver):
    """A state that ended (the person's reset) is forgotten: the task blocking again is news."""
    receiver.start()
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=2)
    with_notify(ws, receiver.url())
    run_tick(ws.root)
    run_tick(ws.root)  # T-1 fails twice: blocked
    blocked = "Memento · engine test: T-1 is blocked: Write file 1"
    assert [m["title"] for m in receiver.received] == [blocked]
    assert cli(["reset", "T-1", str(ws.root)]) == 0
    run_tick(ws.root)  # retry 1 of 2: not blocked, the state is over
    assert "blocked:T-1" not in json.loads(notify.notify_path(ws).read_text())["states"]
    run_tick(ws.root)  # blocked again
    assert [m["title"] for m in receiver.received] == [blocked, blocked]


def test_all_tasks_complete_sends_one(tmp_path, receiver):
    receiver.start()
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    with_notify(ws, receiver.url())
    run_tick(ws.root)
    run_tick(ws.root)
    titles = [m["title"] for m in receiver.received]
    assert titles == ["Memento · engine test: ALL TASKS COMPLETE"]


def test_a_receiver_that_is_down_fails_nothing_and_the_next_tick_sends(tmp_path, receiver):
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
    with_notify(ws, receiver.url())
    outcome = run_tick(ws.root)  # the receiver refuses connections
    assert outcome.exit_code == 1 and "blocked" in outcome.message  # the task's own outcome, nothing added
    record = json.loads(notify.notify_path(ws).read_text())
    assert [p["key"] for p in record["pending"]] == ["blocked:T-1"]
    assert record["last_error"].startswith(f"json://127.0.0.1:{receiver.port}/***")
    cron = ws.cron_log.read_text()
    assert "notify: send failed (blocked:T-1), retried next tick" in cron
    assert "/hook" not in cron
    run_tick(ws.root)  # still down: still pending, nothing sent twice later
    assert len(json.loads(notify.notify_path(ws).read_text())["pending"]) == 1
    receiver.start()
    run_tick(ws.root)
    assert [m["title"].rsplit(": ", 2)[-2] for m in receiver.received] == ["T-1 is blocked"]
    record = json.loads(notify.notify_path(ws).read_text())
    assert record["pending"] == [] and record["last_error"] is None
    run_tick(ws.root)
    assert len(receiver.received) == 1


def test_a_receiver_that_never_answers_costs_the_tick_at_most_the_budget(tmp_path, monkeypatch):
    import socket

    silent = socket.create_server(("127.0.0.1", 0))  # listens, never accepts, never answers
    try:
        monkeypatch.setattr(notify, "TOTAL_SECONDS", 2.0)
        monkeypatch.setattr(notify, "SEND_SECONDS", 1.0)
        ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
        port = silent.getsockname()[1]
        with_notify(ws, f"json://127.0.0.1:{port}/a", f"json://127.0.0.1:{port}/b", f"json://127.0.0.1:{port}/c")
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 1
        record = json.loads(notify.notify_path(ws).read_text())
        # Each send gave up at its timeout; what the budget left untried waits for the next tick.
        assert [p["key"] for p in record["pending"]] == ["blocked:T-1"]
        assert len(record["pending"][0]["urls"]) == 3
        assert "send failed" in ws.cron_log.read_text()
    finally:
        silent.close()


def test_a_pending_message_whose_state_is_over_is_dropped(tmp_path, receiver):
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
    with_notify(ws, receiver.url())
    run_tick(ws.root)
    assert cli(["skip", "T-1", "--reason", "not needed", str(ws.root)]) == 0
    receiver.start()
    for _ in range(4):  # T-1's block is old news; T-2..T-4 pass, then the plan is complete
        run_tick(ws.root)
    assert [m["title"].split(": ")[-1] for m in receiver.received] == ["ALL TASKS COMPLETE"]


def test_events_limits_what_is_sent(tmp_path, receiver):
    receiver.start()
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), max_retries=1)
    with_notify(ws, receiver.url(), events='["complete"]')
    run_tick(ws.root)
    assert receiver.received == []








def test_status_shows_urls_masked(tmp_path, receiver, capsys):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), max_retries=1)
    with_notify(ws, "tgram://123456789:AAsecretBOTtoken/987654", receiver.url("s3cr3t"))
    run_tick(ws.root)  # the receiver is down: the last error is shown, masked
    cli(["status", str(ws.root)])
    out = capsys.readouterr().out
    assert "tgram://***" in out and f"json://127.0.0.1:{receiver.port}/***" in out
    assert "[warn] notify: the last send failed" in out
    cli(["status", "--json", str(ws.root)])
    raw = capsys.readouterr().out
    doc = json.loads(raw)
    assert doc["notify"]["urls"] == ["tgram://***", f"json://127.0.0.1:{receiver.port}/***"]
    assert doc["notify"]["events"] == list(NOTIFY_EVENTS)
    for secret in ("AAsecretBOTtoken", "987654", "s3cr3t", "123456789"):
        assert secret not in out and secret not in raw
        assert secret not in ws.cron_log.read_text()


@pytest.mark.parametrize("url, masked", [
    ("tgram://123:ABC/456", "tgram://***"),
    ("discord://1234/abcd", "discord://***"),
    ("json://127.0.0.1:8080/a/b?x=1", "json://127.0.0.1:8080/***"),
    ("jsons://user:pw@hooks.example.com/x", "jsons://***"),
    ("ntfys://ntfy.sh/my-topic", "ntfys://ntfy.sh/***"),
    ("mailto://me:pass@gmail.com", "mailto://***"),
    ("nonsense", "***"),
])
def test_mask_url(url, masked):
    assert notify.mask_url(url) == masked


def test_no_urls_no_record_and_no_apprise(tmp_path):
    import subprocess
    import sys

    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"), tasks=HELLO)
    code = ("import sys; from memento_core.tick.__main__ import run_tick; run_tick(sys.argv[1]); "
            "print('apprise' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(ws.root)], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
    assert not notify.notify_path(ws).exists()




def test_the_cron_tick_prints_no_secret_of_a_url(tmp_path, receiver):
    import subprocess
    import sys

    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
    with_notify(ws, "nosuchscheme://s3cret/x", receiver.url("p4th"), "tgram://123456789:AAsecretBOT/42424242")
    r = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(ws.root)],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    for secret in ("s3cret", "p4th", "AAsecretBOT", "42424242"):
        assert secret not in r.stdout + r.stderr
        assert secret not in ws.cron_log.read_text()
        assert secret not in notify.notify_path(ws).read_text()


def test_every_kind_of_state_is_read_from_the_workspace(tmp_path):
    from memento_core.plan.scan import parse_plan
    from memento_core.runlog import utc_stamp
    from memento_core.status_log import append_entry, format_entry, parse_status

    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS)
    state = TickState(breaker_reason="5 ticks in a row failed", breaker_at="2026-12-01T10:00:00Z",
                      dirty_signature="src/a.py\nsrc/b.py", rate_limited_until="2999-01-01T00:00:00Z",
                      rate_limited_preset="claude", budget_reached_day=utc_stamp()[:10])
    append_entry(ws.status_path, format_entry("2026-12-01T09:00:00Z", 7, [("Event", "🏗 ARCHITECT — split T-1 into T-5, T-6")]))
    ws.alert_path.write_text("timestamp: x\nproblem: architect: the limit of 3 runs a day is reached\n")
    events = notify.current_events(ws, parse_plan(ws.plan_path), state, parse_status(ws.status_path))
    got = {e.key: (e.kind, e.reason) for e in events}
    assert got == {
        "breaker": ("breaker", "5 ticks in a row failed"),
        "dirty": ("dirty", "src/a.py, src/b.py"),
        "rate_limited": ("rate_limited", "claude refused with a rate limit"),
        "budget": ("budget", "no agent runs until the next UTC day"),
        "architect": ("architect", "ARCHITECT — split T-1 into T-5, T-6"),
        "architect_alert": ("architect", "the limit of 3 runs a day is reached"),
    }
    # Once queued, the same states queue nothing; a changed one (the breaker tripped again) does.
    record = notify.load_record(ws)
    assert notify.queue_changes(record, events, "p", ["json://h/x"]) is True
    assert len(record["pending"]) == 6
    assert notify.queue_changes(record, events, "p", ["json://h/x"]) is False
    again = [notify.Event(**{**e.__dict__, "signature": "2026-12-02T00:00:00Z"}) if e.key == "breaker" else e
             for e in events]
    assert notify.queue_changes(record, again, "p", ["json://h/x"]) is True
    assert [p["key"] for p in record["pending"]] == ["dirty", "rate_limited", "budget", "architect",
                                                      "architect_alert", "breaker"]


def test_a_rate_limit_is_sent_once_while_the_ticks_skip(tmp_path, receiver):
    receiver.start()
    ws = make_ws(tmp_path, agent("reports_like_a_cli.py", "claude-limit"))
    ws.config_path.write_text(ws.config_path.read_text().replace("[agent]\n", '[agent]\noutput = "claude"\n', 1))
    with_notify(ws, receiver.url())
    run_tick(ws.root)
    for _ in range(2):
        assert "rate limited until" in run_tick(ws.root).message  # the skip path
    assert [m["title"].split(": ", 1)[1] for m in receiver.received] == \
        [f"rate limited until {TickState.load(ws).rate_limited_until}"]
