"""checks/notify.py (SPEC §15): none configured is OK; a URL Apprise cannot read and a failed last send
are warnings, named without the URL's secret; once the receiver answers only the unreadable URL is left.
Real ticks send to a real receiver on 127.0.0.1."""

from __future__ import annotations

import pytest

from memento_core.tick.__main__ import run_tick
from tests.core.notifyhelp import ONE_BLOCKS, WRITES, with_notify
from tests.core.scenarios.test_engine import make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_doctor_names_an_unreadable_url_and_a_failed_send(tmp_path, receiver):
    from memento_core.doctor.runner import check_workspace

    ws = make_ws(tmp_path, WRITES, ONE_BLOCKS, max_retries=1)

    def notify_findings():
        return [f for f in check_workspace(ws) if f.check == "notify"]

    assert notify_findings()[0].severity == "OK"  # none configured
    with_notify(ws, "nosuchscheme://s3cret/x", receiver.url("p4th"))
    messages = [f.message for f in notify_findings()]
    assert messages == ["[notify] urls: Apprise cannot read nosuchscheme://***: nothing is sent there"]
    run_tick(ws.root)  # the receiver is down
    messages = [f.message for f in notify_findings()]
    assert len(messages) == 2 and messages[1].startswith("the last notification failed")
    assert "1 send(s) wait for the next tick" in messages[1]
    assert not any("s3cret" in m or "p4th" in m for m in messages)
    receiver.start()
    run_tick(ws.root)
    assert [f.severity for f in notify_findings()] == ["WARNING"]  # only the unreadable URL is left

