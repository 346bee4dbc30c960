"""`memento notify test` (cli/commands/notify.py, SPEC §15): one message to every [notify] URL through a
real receiver on 127.0.0.1, the URL's secret never printed; a receiver that is down or no URL at all is
an error (exit 2), and a test is never queued for a retry."""

from __future__ import annotations

import json

import pytest

from memento_core import notify
from memento_core.cli.main import main as cli
from tests.core.notifyhelp import with_notify
from tests.core.scenarios.test_engine import agent, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_notify_test_sends_one_and_says_so(tmp_path, receiver, capsys):
    receiver.start()
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    with_notify(ws, receiver.url("tok3n-abcdef"))
    assert cli(["notify", "test", str(ws.root)]) == 0
    assert [m["title"] for m in receiver.received] == ["Memento · engine test: test notification"]
    out = capsys.readouterr().out
    assert f"json://127.0.0.1:{receiver.port}/***" in out and "tok3n" not in out


def test_notify_test_with_the_receiver_down_exits_2(tmp_path, receiver, capsys):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    with_notify(ws, receiver.url("tok3n-abcdef"))
    assert cli(["notify", "test", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert "[error] notify: json://127.0.0.1" in err and "tok3n" not in err
    assert json.loads(notify.notify_path(ws).read_text())["pending"] == []  # a test is never retried


def test_notify_test_without_urls_is_an_error(tmp_path, capsys):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    assert cli(["notify", "test", str(ws.root)]) == 2
    assert "[notify] urls is empty" in capsys.readouterr().err

