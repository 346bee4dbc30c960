"""Agents live and on a budget with the real CLIs (SPEC §20, issue 41).

The mock model answers the CLI's first turn with a tool call, then holds its
next answer until the test has seen the tool call's ``[tool]`` line in the
tick log: the line is there while the CLI still runs (its process alive, no
"agent exited" yet), read from the CLI's own event stream. Then a token budget
stops codex, which reports tokens and no cost; and the service's usage-window
headers reach Claude Code, whose ``rate_limit_event`` pauses the ticks. Judged
on the log, /proc, the status entries, state.json, the plan and git.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from datetime import UTC, datetime

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.limits import clock
from memento_core.workspace import Workspace

from .conftest import alive_with_marker, configure, make_workspace, script_edit
from .mock_model import (
    HOLD_MAX,
    USAGE_IN,
    USAGE_OUT,
    claude_reset_epoch,
    gateway_token,
    window_headers,
)

pytestmark = pytest.mark.e2e

GOOD = "hello from the mock\n"
# What each CLI's tool call looks like in the log: claude's Write, codex's shell (the mock's
# write through it when codex offers no apply_patch), gemini's write_file; paths relative.
TOOL_LINE = {"claude": re.compile(r"^\[tool\] Write: hello\.txt$", re.M),
             "codex": re.compile(r"^\[tool\] shell: .*printf .*> hello\.txt.*$", re.M),
             "gemini": re.compile(r"^\[tool\] write_file: hello\.txt$", re.M)}


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini"])
def test_a_tool_call_is_in_the_log_before_the_cli_exits(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    script_edit(run, GOOD)
    run.mock.hold = threading.Event()
    logs = Workspace(root).logs_dir
    seen: dict[str, object] = {}

    def watch():
        deadline = time.monotonic() + HOLD_MAX
        try:
            while time.monotonic() < deadline and not seen:
                for log in sorted(logs.glob("tick_*.log")):
                    text = log.read_text(errors="replace")
                    if TOOL_LINE[preset].search(text):
                        seen.update(exited="agent exited" in text, alive=alive_with_marker(run.marker),
                                    raw='"tool_use"' in text or '"item.completed"' in text)
                time.sleep(0.05)
        finally:
            run.mock.hold.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outcome = run_tick(root)
    finally:
        run.mock.hold.set()
        watcher.join()

    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    assert seen, f"no {TOOL_LINE[preset].pattern!r} line while the CLI ran:\n{log[-4000:]}"
    assert seen["exited"] is False and seen["alive"], seen  # the CLI was still running
    assert seen["raw"] is False, log[-4000:]  # the log has the readable line, not the events
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], outcome.message + log[-4000:]
    assert TOOL_LINE[preset].search(log).start() < log.index("agent exited with code 0")
    assert "[memento] usage: " in log  # still read from the stream's end


def test_a_token_budget_stops_codex(run, monkeypatch):
    """codex reports tokens, no cost: `task_tokens` fails its attempt (rolled back, a retry
    counted), `daily_tokens` then stops the day with one entry."""
    agent = configure(run, "codex", monkeypatch)
    root = make_workspace(run, "codex", agent, tasks=2)
    toml = root / "memento.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[budget]\ntask_tokens = 1000\ndaily_tokens = 2000\n",
                    encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "token budget"], cwd=root, check=True)
    script_edit(run, GOOD)

    outcome = run_tick(root)

    (result,) = outcome.results
    assert not result.passed
    # two model turns of USAGE_IN + USAGE_OUT tokens each, in codex's one turn.completed
    spent = 2 * (USAGE_IN + USAGE_OUT)
    assert result.reason.startswith(f"task budget exceeded: {spent / 1000:.1f}k of 1.0k tokens"), result.reason
    assert not (root / "hello.txt").exists()  # rolled back
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-101").retries == 1

    skipped = run_tick(root)
    assert skipped.results == []
    assert skipped.message == f"tick skipped: budget reached ({spent / 1000:.1f}k of 2.0k tokens today)"
    entries = status_log.parse_status(Workspace(root).status_path)
    budget = [e for e in entries if e.status == "BUDGET REACHED"]
    assert [e.field("Event") for e in budget] == [f"💸 BUDGET REACHED — {spent / 1000:.1f}k of 2.0k tokens today"]
    assert len(run.mock.model_requests()) == 2  # the skipped tick ran no codex


@pytest.mark.parametrize("login", ["gateway", "api_key"])
def test_claudes_usage_window_over_window_pause_at_pauses_the_ticks(run, monkeypatch, login):
    """The service says the 5-hour window is 96 % used. Logged in to a gateway (as for a
    subscription), Claude Code reports it in its stream and, with `window_pause_at = 95`, ticks start
    no attempt until it resets; with an API key it reports no window and nothing pauses."""
    configure(run, "claude", monkeypatch)
    if login == "gateway":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", gateway_token())
    root = make_workspace(run, "claude", {}, tasks=2)
    toml = root / "memento.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[budget]\nwindow_pause_at = 95\n", encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "window"], cwd=root, check=True)
    script_edit(run, GOOD)
    run.mock.anthropic_headers = window_headers(0.96, 0.3)

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8")
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], outcome.message + log[-4000:]
    state = TickState.load(Workspace(root))
    if login == "api_key":
        assert "[window]" not in log and state.window_paused_until == ""
        return
    reset = datetime.fromtimestamp(claude_reset_epoch(), UTC)
    assert "[window] 5-hour: 96% used" in log and "[window] 7-day: 30% used" in log, log[-4000:]
    assert state.window_paused_until == reset.strftime("%Y-%m-%dT%H:%M:%SZ")
    requests = len(run.mock.model_requests())
    skipped = run_tick(root)
    assert skipped.results == []
    assert skipped.message == f"tick skipped: usage window 96% (5-hour) until {clock(reset)} (preset claude)"
    entries = status_log.parse_status(Workspace(root).status_path)
    assert [e.field("Event") for e in entries if e.status == "WINDOW"] == [
        f"⏳ WINDOW 96% (5-hour) — until {clock(reset)} (preset claude)"]
    assert len(run.mock.model_requests()) == requests  # no attempt started
