"""A person's skip of the last blocked task ends the alert at once and tells "ALL TASKS
COMPLETE" then, not at a tick that may never come (issue 25, item 8): judged on disk and at
a real receiver on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys

from memento_core.tick.__main__ import run_tick
from tests.core.notifyhelp import ONE_BLOCKS, WRITES, with_notify

from .test_engine import make_ws


def test_skipping_the_last_blocked_task_removes_the_alert_and_sends_complete(tmp_path, receiver, git_identity):  # noqa: F811
    receiver.start()
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)
    with_notify(ws, receiver.url())
    for _ in range(4):
        run_tick(ws.root)  # T-1 blocks; T-2..T-4 pass
    assert ws.alert_path.exists() and "blocked: T-1" in ws.alert_path.read_text()
    assert [m["title"].split(": ", 1)[1] for m in receiver.received] == ["T-1 is blocked: Write file 1"]
    r = subprocess.run([sys.executable, "-m", "memento_core.cli", "skip", "T-1", "--reason", "not needed",
                        str(ws.root)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not ws.alert_path.exists()  # no tick ran, and the alert is gone
    titles = [m["title"].split(": ", 1)[1] for m in receiver.received]
    assert titles == ["T-1 is blocked: Write file 1", "ALL TASKS COMPLETE"]
    run_tick(ws.root)  # the next tick sends it no second time
    assert len(receiver.received) == 2 and not ws.alert_path.exists()


def test_a_reset_keeps_the_alert_while_other_tasks_are_blocked(tmp_path, receiver, git_identity):  # noqa: F811
    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS.replace("- [ ] `T-2`", "- [!] `T-2`"), max_retries=1)
    run_tick(ws.root)
    assert "blocked: T-1, T-2" in ws.alert_path.read_text()
    r = subprocess.run([sys.executable, "-m", "memento_core.cli", "reset", "T-1", str(ws.root)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = ws.alert_path.read_text()
    assert "blocked: T-2" in text and "T-1" not in text
