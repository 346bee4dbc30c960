"""A rate limit cannot hide a broken task forever (SPEC §14): after 6 rate-limited attempts of
one task in a row the next counts a retry, so the task ends `[!]`; a limit lasting over 2 hours
is notified once. The hostile always_rate_limited.py agent through the real `command` preset,
real ticks, judged in the plan, the status log, state.json and at a loopback receiver."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.runlog import utc_stamp
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.limits import STREAK_FREE
from tests.core.notifyhelp import Receiver, task, with_notify
from tests.core.scenarios.test_engine import agent, entries, git, make_ws

FOUR = task(1) + task(2) + task(3) + task(4)  # one blocked task stays under the breaker's 30 %


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def wait_over(ws, **moved) -> None:
    """What the tick waits for is over (the test moves state.json's clock, never sleeps)."""
    state = TickState.load(ws)
    state.rate_limited_until = utc_stamp(datetime.now(UTC) - timedelta(seconds=1))
    state.preset_limits = {}
    for name, value in moved.items():
        setattr(state, name, value)
    state.save(ws)


@pytest.mark.parametrize("code", ["1", "0"])
def test_an_agent_that_always_says_429_still_ends_blocked(tmp_path, code):
    ws = make_ws(tmp_path, agent("always_rate_limited.py", code), FOUR, max_retries=3)
    for n in range(1, STREAK_FREE + 1):
        outcome = run_tick(ws.root)
        assert outcome.results and not outcome.results[0].passed, outcome.message
        t1 = parse_plan(ws.plan_path).task("T-1")
        assert (t1.status, t1.retries) == (" ", 0), f"attempt {n} counted a retry"
        assert (entries(ws)[-1].field("Status") or "").startswith("⏳ RATE LIMITED"), entries(ws)[-1].field("Status")
        assert TickState.load(ws).task_limit_streaks == {"T-1": n}
        wait_over(ws)
    for retry in (1, 2, 3):  # the 7th, 8th and 9th in a row count, as any failure does
        outcome = run_tick(ws.root)
        assert outcome.results and not outcome.results[0].passed, outcome.message
        t1 = parse_plan(ws.plan_path).task("T-1")
        assert t1.retries == retry
        last = entries(ws)[-1]
        assert "rate-limited attempts of T-1 in a row: counted as a failure" in (last.field("Reason") or ""), last.field("Reason")
        wait_over(ws)
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    assert "T-1 blocked (retry 3/3)" in git(ws.root, "log", "-1", "--format=%s")
    assert not TickState.load(ws).breaker_reason


def test_a_pass_ends_the_streak(tmp_path):
    """Rate limited 6 times, then an attempt that is not: the count starts again."""
    flip = tmp_path / "limited"
    flip.write_text("1")
    command = (f"sh -c 'if [ -e {flip} ]; then exec {agent('always_rate_limited.py')}; "
               f"else exec {agent('does_task.py', '{task_id}.txt', 'done')}; fi'")
    ws = make_ws(tmp_path, command, FOUR)
    for _ in range(STREAK_FREE):
        run_tick(ws.root)
        wait_over(ws)
    assert TickState.load(ws).task_limit_streaks == {"T-1": STREAK_FREE}
    flip.unlink()
    assert run_tick(ws.root).results[0].passed
    state = TickState.load(ws)
    assert state.task_limit_streaks == {} and state.rate_limited_since == "" and state.rate_limit_streak == 0


def test_a_limit_lasting_over_two_hours_is_notified_once(tmp_path):
    receiver = Receiver()
    receiver.start()
    try:
        ws = make_ws(tmp_path, agent("always_rate_limited.py"), FOUR)
        with_notify(ws, receiver.url(), events='["rate_limited"]')
        run_tick(ws.root)
        since = TickState.load(ws).rate_limited_since
        assert since, "the first refusal of the streak is not recorded"
        long = [m for m in receiver.received if "rate limited for" in m["title"]]
        assert long == []  # minutes old: only "rate limited until …"
        three_hours_ago = utc_stamp(datetime.now(UTC) - timedelta(hours=3))
        wait_over(ws, rate_limited_since=three_hours_ago)
        run_tick(ws.root)  # refused again: the limit has lasted 3 hours now
        long = [m for m in receiver.received if "rate limited for" in m["title"]]
        assert len(long) == 1 and "rate limited for 3h" in long[0]["title"], receiver.received
        assert f"since {three_hours_ago}" in long[0]["message"]
        for _ in range(2):
            wait_over(ws)
            run_tick(ws.root)
        assert len([m for m in receiver.received if "rate limited for" in m["title"]]) == 1
    finally:
        receiver.close()
