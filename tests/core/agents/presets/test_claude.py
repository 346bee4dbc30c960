"""agents/presets/claude.py: Claude Code's argv (unconfined and confined), its stream-json rendered as
log lines, its usage, its windows and its usage-limit messages, on the samples in
tests/core/fixtures/agent_output/."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memento_core.agents import build_invocation
from memento_core.agents.presets import claude
from memento_core.spending import Usage
from tests.core.agents.outputs import CLAUDE, CLAUDE_LINES, NOW, ev, rendered, sample
from tests.core.agents.presets.requests_of import config, request


def test_claude_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("claude"), **req)
    assert inv.argv == (
        "claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose",
        "--append-system-prompt-file", str(req["system_prompt_file"]),
    )
    assert inv.stdin_path == req["prompt_file"] and not inv.shell and inv.preset == "claude"
    inv = build_invocation(config("claude", "opus", ("--max-turns", "40")), **req)
    assert inv.argv[-4:] == ("--model", "opus", "--max-turns", "40")
    assert inv.env == {}  # unconfined: edits accepted, any other tool (Bash) needs a person


def test_confined_claude_runs_every_tool_without_asking(tmp_path):
    """In the sandbox (SPEC §13) the worker must run the project's tests: bypassPermissions, and
    IS_SANDBOX=1, without which Claude Code refuses that mode as root."""
    req = request(tmp_path)
    inv = build_invocation(config("claude"), **req, confined=True)
    assert inv.argv == (
        "claude", "-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose",
        "--append-system-prompt-file", str(req["system_prompt_file"]),
    )
    assert inv.env == {"IS_SANDBOX": "1"}


def test_claude_without_a_system_prompt_file_leaves_the_flag_out(tmp_path):
    req = request(tmp_path)
    req["system_prompt_file"].unlink()
    inv = build_invocation(config("claude"), **req)
    assert inv.argv == ("claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose")


def test_claude_tool_calls_become_one_line_each_sub_agents_indented():
    assert rendered(claude.SPEC, CLAUDE, root="/p").splitlines() == CLAUDE_LINES


def test_claude_windows_from_its_rate_limit_events():
    reset = 1_900_000_000
    data = (ev({"type": "rate_limit_event", "rate_limit_info": {
                "status": "allowed", "unifiedWindows": {"five_hour": {"utilization": 0.5, "resetsAt": reset}}}})
            + ev({"type": "rate_limit_event", "rate_limit_info": {
                "status": "allowed_warning", "unifiedWindows": {
                    "five_hour": {"utilization": 0.96, "resetsAt": reset},
                    "seven_day": {"utilization": 0.31, "resetsAt": reset + 86400}}}})
            + ev({"type": "result", "result": "ok", "usage": {}})).decode()
    found = {w.name: (round(w.percent), int(w.resets_at.timestamp()), w.label) for w in claude.windows(data)}
    assert found == {"five_hour": (96, reset, "5-hour"), "seven_day": (31, reset + 86400, "7-day")}
    # an older shape: no unifiedWindows, the one window that changed at the top
    old = ev({"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "rateLimitType": "seven_day", "utilization": 0.9, "resetsAt": reset}}).decode()
    assert [(w.name, round(w.percent)) for w in claude.windows(old)] == [("seven_day", 90)]
    assert claude.windows('{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}\n') == []


def test_claude_usage_counts_cache_tokens_as_input_and_takes_the_cost():
    assert claude.parse_usage(sample("claude_success.log")) == Usage(12 + 10234 + 2100, 2134, 0.0421875)
    assert claude.readable(sample("claude_success.log")).startswith("I wrote hello.txt")


def test_claude_usage_limit_with_its_reset_time_in_the_named_zone():
    limit = claude.rate_limit(sample("claude_usage_limit.log"), NOW)
    assert limit is not None and "hit your limit" in limit.message
    rome = datetime(2026, 12, 1, 14, 0, tzinfo=ZoneInfo("Europe/Rome"))
    assert limit.until == rome.astimezone(UTC)  # 13:00 UTC


def test_claude_old_limit_message_carries_epoch_seconds():
    limit = claude.rate_limit(sample("claude_old_limit.log"), NOW)
    assert limit.until == datetime.fromtimestamp(1764604800, UTC)


def test_claude_429_without_a_time_is_a_limit_with_no_reset():
    limit = claude.rate_limit(sample("claude_429.log"), NOW)
    assert limit is not None and limit.until is None and "429" in limit.message


def test_an_answer_that_talks_about_rate_limits_is_not_one():
    assert claude.rate_limit(sample("claude_talks_about_limits.log"), NOW) is None
    assert claude.rate_limit(sample("claude_success.log"), NOW) is None


def test_claudes_own_limit_wording_in_an_answer_is_a_limit_an_answer_mentioning_one_is_not():
    def answer(text: str, error: bool = False) -> str:
        return "[memento] agent (claude): claude -p\n" + json.dumps(
            {"type": "result", "subtype": "success", "is_error": error, "result": text}) + "\n"

    for text in ("Claude usage limit reached. Your limit will reset at 9pm (UTC).",
                 "You've hit your limit · resets 4pm (UTC)"):
        limit = claude.rate_limit(answer(text), NOW)  # exit 0, is_error false: Claude Code's own words
        assert limit is not None and limit.message == text, text
        assert limit.until == datetime(2026, 12, 1, 21 if "9pm" in text else 16, 0, tzinfo=UTC)
    for text in ("I added a handler for 'usage limit reached' and HTTP 429 Too Many Requests.",
                 "Done. Note: you've hit your limit of three files? No, all are written."):
        assert claude.rate_limit(answer(text), NOW) is None, text
    assert claude.rate_limit(answer("Request failed: 429 Too Many Requests", error=True), NOW) is not None
