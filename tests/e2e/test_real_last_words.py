"""A refusal read from what the real CLI says last, whatever its exit code (SPEC §14, issue 24),
and a review verdict read the way models write it (SPEC §16).

aider 0.86 gives up on a 429 after its own retries (its RETRY_TIMEOUT of 60 s is a constant in
aider/models.py, not a setting: the test waits them out, about 65 s) and exits 0 with "The API
provider has rate limited you". Claude Code words a usage limit itself for a subscriber or a
gateway (the mock answers with the headers that make it do so, mock_model.CLAUDE_LIMITS); 2.1.332
then exits 1 (the exit-0 answer of other versions is covered at tick level by
tests/agents/reports_like_a_cli.py ``claude-limit-0``). Judged on disk: the entry, the plan, state.json.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.limits import clock
from memento_core.workspace import Workspace

from .conftest import configure, make_workspace, script_edit
from .mock_model import CLAUDE_OLD_LIMIT_HOUR, claude_reset_epoch, gateway_token
from .test_real_limits import GOOD, assert_set_aside, git, last_entry, next_clock, tick_log

pytestmark = pytest.mark.e2e

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def test_aider_giving_up_on_429s_and_exiting_0_is_rate_limited(run, monkeypatch):
    agent = configure(run, "aider", monkeypatch)
    root = make_workspace(run, "aider", agent)
    script_edit(run, GOOD)
    run.mock.script.mode = "429"
    head = git(root, "rev-parse", "HEAD").strip()
    started = datetime.now(UTC)

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8")
    assert "agent exited with code 0" in log, tick_log(root, outcome)  # aider says it, and exits 0
    assert "The API provider has rate limited you" in log
    until = assert_set_aside(root, "aider", head)
    assert "rate limited you" in last_entry(root).field("Reason")
    # "… Please retry after 3600 seconds." in litellm's RateLimitError line
    assert started + timedelta(minutes=58) <= until <= datetime.now(UTC) + timedelta(hours=1), until
    assert len(run.mock.model_requests()) > 3  # aider's own retries


@pytest.mark.parametrize("mode", ["claude_limit", "claude_limit_old"])
def test_claudes_own_usage_limit_wordings_are_rate_limited_with_the_printed_reset(run, monkeypatch, mode):
    configure(run, "claude", monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", gateway_token())
    monkeypatch.setenv("TZ", "UTC")  # claude prints the reset in this zone: "(UTC)"
    root = make_workspace(run, "claude", {})
    script_edit(run, GOOD)
    run.mock.script.mode = mode
    head = git(root, "rev-parse", "HEAD").strip()

    outcome = run_tick(root)

    log = (root / outcome.log).read_text(encoding="utf-8")
    said = ("You've hit your limit · resets " if mode == "claude_limit"
            else "Claude usage limit reached. Your limit will reset at 9pm (UTC).")
    assert said in log, tick_log(root, outcome)
    until = assert_set_aside(root, "claude", head)
    if mode == "claude_limit":
        expected = datetime.fromtimestamp(claude_reset_epoch(), UTC)
        assert abs(until - expected) <= timedelta(minutes=1), (until, expected)
    else:
        assert until == next_clock(CLAUDE_OLD_LIMIT_HOUR, 0)
    assert clock(until) in last_entry(root).field("Status")
    served = len(run.mock.model_requests())
    assert run_tick(root).message.startswith("tick skipped: rate limited until")
    assert len(run.mock.model_requests()) == served


def test_a_review_with_a_heading_and_an_emphasised_verdict_passes_the_task(run, monkeypatch):
    configure(run, "claude", monkeypatch)
    root = make_workspace(run, "claude", {})
    out = run.base / "review-out"
    out.mkdir()  # writable in the sandbox: it must exist to be bound
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace(
        "  - retries: 0\n", "  - accept: hello.txt holds the mock's greeting\n  - retries: 0\n", 1),
        encoding="utf-8")
    toml = root / "memento.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        '[sandbox]\n', f'[sandbox]\nwritable = ["{out}"]\n')
        + f'\n[review]\npreset = "command"\ncommand = "{sys.executable} {AGENTS}/reviews.py '
          f'{{prompt_file}} {out} heading"\ntimeout = "1min"\n', encoding="utf-8")
    git(root, "commit", "-qam", "a review")
    script_edit(run, GOOD)

    outcome = run_tick(root)

    assert [r.passed for r in outcome.results] == [True], tick_log(root, outcome)
    assert (out / "review_prompt_1.md").exists()  # the reviewer ran
    entry = last_entry(root)
    assert entry.status == "SUCCESS" and entry.field("Review") == "PASS (1/1 criteria)"
    assert git(root, "show", "HEAD:hello.txt") == GOOD
    assert parse_plan(plan).task("T-101").status == "x"
    assert TickState.load(Workspace(root)).consecutive_failed_ticks == 0
    assert [e.status for e in status_log.parse_status(Workspace(root).status_path)] == ["SUCCESS"]
