"""Agents live and on a budget through real ticks (SPEC §20): the tool calls in the log as they
happen, token budgets, a subscription's usage window.

The agent is tests/agents/reports_like_a_cli.py run through the real `command`
preset, printing claude's stream-json or codex's events (``[agent] output``).
Judged on disk: the tick log while the agent runs, the status entries, the
plan's retries, usage.json, state.json, cron.log and git.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from memento_core import spending
from memento_core.config.load import load_config
from memento_core.errors import MementoError
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.limits import clock, parse_stamp

from .test_limits import cron_lines, entries, git, make_ws, retries, runs, status_json


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def tick_logs(ws) -> list:
    return sorted(ws.logs_dir.glob("tick_*.log"))


# ------------------------------------------------------------------ live


def test_each_tool_call_is_in_the_tick_log_while_the_agent_still_runs(tmp_path):
    """The agent prints a Bash call, then waits for the test to have seen its line in the log."""
    ws = make_ws(tmp_path, "claude-stream")
    (tmp_path / "runs.hold").touch()  # the fake agent waits after the Bash call's line...
    go = tmp_path / "runs.go"  # ...and goes on once this exists
    seen: dict[str, object] = {}

    def watch():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "at" not in seen:
            for log in tick_logs(ws):
                text = log.read_text(errors="replace")
                if "[tool] Bash: pytest -q" in text:
                    seen["at"] = time.monotonic()
                    seen["exited"] = "agent exited" in text
                    seen["raw"] = '"tool_use"' in text
            time.sleep(0.02)
        go.touch()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outcome = run_tick(ws.root)
    finally:
        go.touch()
        watcher.join()
    assert "at" in seen, "the tool call's line never reached the log while the agent ran"
    assert seen["exited"] is False and seen["raw"] is False  # before the agent exited; no raw events
    assert [r.passed for r in outcome.results] == [True], outcome.message
    log = (ws.root / outcome.log).read_text()
    assert ("[tool] Bash: pytest -q\n[tool] Task: Check the file\n  [tool] Read: T-1.txt\n"
            "[window] 5-hour: 4% used") in log
    assert "[tool] Write: T-1.txt\n" in log
    assert "[memento] claude said:\nWrote the file." in log
    assert "[memento] usage: 12.3k in / 2.1k out tokens, $0.042" in log
    assert entries(ws)[-1].usage == spending.Usage(12300, 2100, 0.042)


def test_a_broken_stream_is_written_as_text_and_the_tick_goes_on(tmp_path):
    """Not JSON, a truncated object, 10 MB of tool output, 10 MB of text on one line, an event of
    an unknown kind, a last line cut off: the tick passes, the log stays small and readable."""
    ws = make_ws(tmp_path, "claude-stream-bad")
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [True], outcome.message
    log = (ws.root / outcome.log).read_text()
    assert len(log) < 100_000
    assert "\nnode: warning: this line is not JSON\n" in log
    assert '\n{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba\n' in log
    assert "bytes of this line cut]" in log and "x" * 100 not in log
    assert "  [tool] Read: T-1.txt\n" in log
    assert '{"type":"assistant","message":{"content":[{"type":"tool_use","na\n' in log  # the cut-off line
    assert entries(ws)[-1].usage == spending.Usage(12300, 2100, 0.042)  # usage from the final result


# ------------------------------------------------------------------ token budgets


def test_an_attempt_over_the_task_token_budget_fails_like_one_over_task_usd(tmp_path):
    ws = make_ws(tmp_path, "claude-stream", extra="[budget]\ntask_tokens = 10000")
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [False]
    assert outcome.results[0].reason == "task budget exceeded: 14.4k of 10.0k tokens"
    assert retries(ws) == 1  # a retry counted
    assert (ws.root / "T-1.txt").read_text() == "not yet\n"  # rolled back
    assert entries(ws)[-1].usage == spending.Usage(12300, 2100, 0.042)


def test_codex_is_stopped_mid_attempt_once_its_turns_pass_the_task_token_budget(tmp_path):
    """codex reports each turn's tokens as it goes: the attempt is stopped after the first turn
    (the fake codex would otherwise sleep 20 s before its second)."""
    ws = make_ws(tmp_path, "codex-done", output="codex", cost="5000",
                 extra="[budget]\ntask_tokens = 3000")
    (ws.root / "memento.toml").write_text((ws.root / "memento.toml").read_text().replace(
        'runs.txt"""', 'runs.txt wait"""'))
    git(ws.root, "commit", "-qam", "wait")
    started = time.monotonic()
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [False]
    assert outcome.results[0].reason == "task budget exceeded: 5.5k of 3.0k tokens (the agent was stopped)"
    assert time.monotonic() - started < 20  # not the 20 s the agent would have slept
    assert retries(ws) == 1 and (ws.root / "T-1.txt").read_text() == "not yet\n"
    assert entries(ws)[-1].field("Usage") == "5.0k in / 500 out tokens, cost not reported"


def test_the_daily_token_budget_stops_the_day_with_one_entry(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ndaily_tokens = 20000\ndaily_usd = 5", tasks=3)
    assert [r.passed for r in run_tick(ws.root).results] == [True]  # 14.4k tokens today
    assert [r.passed for r in run_tick(ws.root).results] == [True]  # 28.8k: over 20.0k, the dollars are not
    for _ in range(2):
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 0
        assert outcome.message == "tick skipped: budget reached (28.8k of 20.0k tokens today)"
    budget = [e for e in entries(ws) if e.status == "BUDGET REACHED"]
    assert len(budget) == 1 and budget[0].field("Event") == "💸 BUDGET REACHED — 28.8k of 20.0k tokens today"
    assert "raise [budget] daily_tokens" in budget[0].field("Action")
    assert runs(ws) == ["claude-done", "claude-done"]
    assert cron_lines(ws)[-1].endswith("tick skipped: budget reached (28.8k of 20.0k tokens today)")
    assert git(ws.root, "status", "--porcelain") == ""
    doc = status_json(ws)
    assert doc["budget"]["reached"] is True and doc["budget"]["daily_tokens"] == 20000


def test_a_tick_of_several_tasks_stops_at_the_daily_token_budget(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ndaily_tokens = 10000", tasks=3, per_tick=3)
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)]
    assert runs(ws) == ["claude-done"]


@pytest.mark.parametrize("key, value, says", [
    ("task_tokens", "-5", "expected a whole number of tokens (0 or more), got -5"),
    ("daily_tokens", '"50k"', "expected a whole number of tokens (0 or more), got '50k'"),
    ("daily_tokens", "1.5", "expected a whole number of tokens (0 or more), got 1.5"),
    ("window_pause_at", "-1", "expected a percentage from 1 to 100 (0: off), got -1"),
    ("window_pause_at", "0.95", "a percentage from 1 to 100, e.g. 95 (not a fraction), got 0.95"),
    ("window_pause_at", '"95%"', "expected a percentage from 1 to 100 (0: off), got '95%'"),
    ("window_pause_at", "nan", "expected a percentage from 1 to 100 (0: off), got nan"),
])
def test_a_bad_budget_value_is_a_config_error_with_its_line(tmp_path, key, value, says):
    path = tmp_path / "memento.toml"
    path.write_text(f'[agent]\npreset = "claude"\n\n[budget]\ndaily_usd = 1\n{key} = {value}\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == 6 and f"[budget] {key}: {says}" in str(info.value)


# ------------------------------------------------------------------ usage windows


def _window(ws, **changes) -> None:
    data = json.loads(ws.state_path.read_text())
    data.update(changes)
    ws.state_path.write_text(json.dumps(data))


def test_a_usage_window_over_window_pause_at_stops_new_attempts_until_it_resets(tmp_path):
    ws = make_ws(tmp_path, "claude-stream", cost=0.96, tasks=3, per_tick=3,
                 extra="[budget]\nwindow_pause_at = 95")
    outcome = run_tick(ws.root)
    # the attempt itself is judged as usual; the window stops the tick's next task
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    until = parse_stamp(TickState.load(ws).window_paused_until)
    assert until is not None and abs((until - datetime.now(UTC)) - timedelta(hours=3)) < timedelta(minutes=1)
    log = (ws.root / outcome.log).read_text()
    assert "5-hour usage window is 96% used ([budget] window_pause_at = 95)" in log

    for _ in range(2):
        skipped = run_tick(ws.root)
        assert skipped.results == []
        assert skipped.message == f"tick skipped: usage window 96% (5-hour) until {clock(until)} (preset command)"
    windows = [e for e in entries(ws) if e.status == "WINDOW"]
    assert len(windows) == 1
    assert windows[0].field("Event") == f"⏳ WINDOW 96% (5-hour) — until {clock(until)} (preset command)"
    assert cron_lines(ws)[-1].endswith(skipped.message) and runs(ws) == ["claude-stream"]
    assert git(ws.root, "status", "--porcelain") == ""
    doc = status_json(ws)
    assert doc["window"] == {"until": TickState.load(ws).window_paused_until, "what": "96% (5-hour)",
                             "preset": "command"}
    human = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", str(ws.root)],
                           capture_output=True, text=True).stdout
    assert f"[warn] usage window 96% (5-hour) until {doc['window']['until']} (preset command)" in human

    # as if the window had reset: its pause long over (the fake agent's next reset may be the same
    # second as the first one's, which a real window's never is)
    _window(ws, window_paused_until="2000-01-01T00:00:00Z", window_noted_until="2000-01-01T00:00:00Z")
    again = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in again.results] == [("T-2", True)]
    assert run_tick(ws.root).results == []  # the window is over it again: a new pause, a new entry
    assert [e.status for e in entries(ws)].count("WINDOW") == 2


def test_several_windows_over_it_wait_for_the_latest_reset(tmp_path):
    ws = make_ws(tmp_path, "claude-stream", cost=0.96, extra="[budget]\nwindow_pause_at = 20")
    run_tick(ws.root)
    until = parse_stamp(TickState.load(ws).window_paused_until)
    expected = datetime.now(UTC) + timedelta(hours=3, days=5)  # the 7-day window's reset
    assert until is not None and abs(until - expected) < timedelta(minutes=1)
    assert run_tick(ws.root).message.startswith("tick skipped: usage window 20% (7-day) until ")


@pytest.mark.parametrize("extra", ["[budget]\nwindow_pause_at = 97", ""])
def test_a_window_under_the_threshold_or_with_it_off_pauses_nothing(tmp_path, extra):
    ws = make_ws(tmp_path, "claude-stream", cost=0.96, tasks=2, per_tick=2, extra=extra)
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True), ("T-2", True)]
    assert TickState.load(ws).window_paused_until == ""


def test_window_pause_at_1_the_lowest_percentage_pauses_at_a_window_barely_used(tmp_path):
    ws = make_ws(tmp_path, "claude-stream", cost=0.01, tasks=2, per_tick=2, extra="[budget]\nwindow_pause_at = 1")
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)]  # T-2 waits for the window
    assert TickState.load(ws).window_paused_until != ""
    assert run_tick(ws.root).message.startswith("tick skipped: usage window ")
