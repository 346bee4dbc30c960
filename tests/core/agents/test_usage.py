"""Each preset's usage and rate-limit parsers on real-shaped agent output (tests/core/fixtures/agent_output/).

The samples follow each CLI's documented output: claude's ``--output-format
json`` result object, codex ``exec --json`` events (codex-rs/exec/src/exec_events.rs),
gemini's ``--output-format json`` report, aider's ``Tokens:`` lines, and the
limit messages these CLIs print ("You've hit your limit · resets 2pm
(Europe/Rome)", "You've hit your usage limit … try again in 2 hours 5 minutes",
"exceeded retry limit, last status: 429 Too Many Requests", litellm's RateLimitError).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memento_core.agents.presets import aider, claude, codex, command, gemini
from memento_core.agents.reset_times import reset_time
from memento_core.agents.usage import (
    LAST_LINES,
    generic_rate_limit,
    json_objects,
    last_words,
    plain_lines,
    tail_rate_limit,
)
from memento_core.spending import Usage, parse_usage_field

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agent_output"
NOW = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


def sample(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ usage


def test_claude_usage_counts_cache_tokens_as_input_and_takes_the_cost():
    assert claude.parse_usage(sample("claude_success.log")) == Usage(12 + 10234 + 2100, 2134, 0.0421875)
    assert claude.readable(sample("claude_success.log")).startswith("I wrote hello.txt")


def test_codex_usage_sums_the_turns_and_has_no_cost():
    text = sample("codex_success.log")
    assert codex.parse_usage(text) == Usage(24763, 122, None)
    doubled = text.replace('{"type":"turn.completed"', '{"type":"turn.completed","usage":{"input_tokens":1,'
                           '"cached_input_tokens":0,"output_tokens":2}}\n{"type":"turn.completed"', 1)
    assert codex.parse_usage(doubled) == Usage(24764, 124, None)
    assert codex.readable(text) == "Wrote hello.txt."


def test_gemini_usage_sums_every_model_prompt_and_output_tokens():
    assert gemini.parse_usage(sample("gemini_success.log")) == Usage(9312 + 700, 241 + 148 + 12, None)
    assert gemini.readable(sample("gemini_success.log")) == "I have written hello.txt."


def test_aider_usage_sums_tokens_lines_and_keeps_the_session_cost():
    # 2.5k sent + 1.4k cache write + 1.1k cache hit, then 12k sent; 345 + 1.2k received
    assert aider.parse_usage(sample("aider_success.log")) == Usage(2500 + 1400 + 1100 + 12000, 345 + 1200, 0.04)


@pytest.mark.parametrize("parser", [claude.parse_usage, codex.parse_usage, gemini.parse_usage,
                                    aider.parse_usage])
def test_no_report_is_no_usage(parser):
    assert parser("[memento] agent (x) in /p: x\nworking\nnot json { at all\n") is None


def test_usage_field_reads_back_what_it_writes():
    usage = Usage(12345, 2100, 0.042)
    assert usage.describe() == "12.3k in / 2.1k out tokens, $0.042"
    assert parse_usage_field(usage.describe()) == Usage(12300, 2100, 0.042)
    assert Usage(5, 7, None).describe() == "5 in / 7 out tokens, cost not reported"
    assert parse_usage_field("5 in / 7 out tokens, cost not reported") == Usage(5, 7, None)
    assert Usage(1, 2, 0.5) + Usage(3, 4, None) == Usage(4, 6, 0.5)


# ------------------------------------------------------------------ rate limits


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


def test_codex_usage_limit_try_again_in():
    limit = codex.rate_limit(sample("codex_usage_limit.log"), NOW)
    assert "usage limit" in limit.message
    assert limit.until == NOW + timedelta(hours=2, minutes=5)


def test_codex_429_after_its_retries():
    limit = codex.rate_limit(sample("codex_429.log"), NOW)
    assert "429" in limit.message and limit.until is None
    assert codex.rate_limit(sample("codex_success.log"), NOW) is None


def test_gemini_quota_with_reset_after():
    limit = gemini.rate_limit(sample("gemini_quota.log"), NOW)
    assert limit is not None
    assert limit.until == NOW + timedelta(hours=2, minutes=9, seconds=12)
    assert gemini.rate_limit(sample("gemini_success.log"), NOW) is None


def test_aider_litellm_rate_limit_error():
    limit = aider.rate_limit(sample("aider_rate_limit.log"), NOW)
    assert limit is not None and "rate limited you" in limit.message
    assert aider.rate_limit(sample("aider_success.log"), NOW) is None


@pytest.mark.parametrize("line", [
    "Error: 429 Too Many Requests",
    "HTTP/1.1 429 Too Many Requests",
    "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}",
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}',
    "request failed: status code 429",
])
def test_generic_429(line):
    assert generic_rate_limit(f"working\n{line}\n", NOW) is not None
    assert command.SPEC.rate_limit(f"{line}\n", NOW) is not None


@pytest.mark.parametrize("line", ["wrote 429 lines", "issue #429 fixed", "port 4290", "took 429ms"])
def test_a_number_429_alone_is_not_a_rate_limit(line):
    assert generic_rate_limit(line, NOW) is None


# ------------------------------------------------------------------ reset times


@pytest.mark.parametrize("text, expected", [
    ("resets 2pm (UTC)", datetime(2026, 12, 1, 14, 0, tzinfo=UTC)),
    ("resets 9am UTC", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # 9am passed: tomorrow
    ("5-hour limit reached ∙ resets 10:30am (UTC)", datetime(2026, 12, 1, 10, 30, tzinfo=UTC)),
    ("try again at 3:28 PM UTC", datetime(2026, 12, 1, 15, 28, tzinfo=UTC)),
    ("try again in 3 days 6 hours 57 minutes", NOW + timedelta(days=3, hours=6, minutes=57)),
    ("Please retry in 37.5s.", NOW + timedelta(seconds=37.5)),
    ("Your limit will reset at 11am (America/Chicago).",
     datetime(2026, 12, 1, 11, 0, tzinfo=ZoneInfo("America/Chicago")).astimezone(UTC)),
    ("Claude AI usage limit reached|1764604800", datetime.fromtimestamp(1764604800, UTC)),
    ("You've hit your usage limit. Try again at Aug 8th, 2027 12:30 PM.",
     datetime(2027, 8, 8, 12, 30).astimezone().astimezone(UTC)),  # codex: local time, another day
    ("You've hit your usage limit. Try again later.", None),
    ("You've hit your limit", None),
    ("resets 25pm", None),
    # 12am is midnight, 12pm noon (the clock's hour 12 is 0 before the am/pm)
    ("You've hit your limit · resets 12am (UTC)", datetime(2026, 12, 2, 0, 0, tzinfo=UTC)),
    ("You've hit your limit · resets 12pm (UTC)", datetime(2026, 12, 1, 12, 0, tzinfo=UTC)),
    ("resets 12:30am UTC", datetime(2026, 12, 2, 0, 30, tzinfo=UTC)),
    ("You've hit your usage limit. Try again at Aug 8th, 2027 12:30 AM.",
     datetime(2027, 8, 8, 0, 30).astimezone().astimezone(UTC)),
    ("You've hit your usage limit. Try again at Aug 8th, 2027 12:05 PM.",
     datetime(2027, 8, 8, 12, 5).astimezone().astimezone(UTC)),
])
def test_reset_time(text, expected):
    assert reset_time(text, NOW) == expected


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


def test_aider_and_the_command_preset_read_only_the_last_words():
    refused = "litellm.RateLimitError: Error code: 429\nThe API provider has rate limited you. Try again later.\n"
    later = "".join(f"Applied edit to file{n}.py\n" for n in range(LAST_LINES))
    assert aider.rate_limit(refused, NOW) is not None
    assert aider.rate_limit(refused + later, NOW) is None  # it got past the refusal
    assert aider.rate_limit(refused + "\n[memento] agent exited with code 0 after 80s\n", NOW) is not None
    line = "Error: 429 Too Many Requests\n"
    assert tail_rate_limit(line, NOW) is not None and tail_rate_limit(line + later, NOW) is None
    assert last_words("a\n\n[memento] x\nb\n", 2) == "a\nb"
    wrapped = ("litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit exceeded: \n"
               "too many requests. Please retry after 3600 seconds.\n"
               "The API provider has rate limited you. Try again later or check your quotas.\n")
    assert aider.rate_limit(wrapped, NOW).until == NOW + timedelta(hours=1)  # aider wraps at 80 columns


def test_json_objects_and_plain_lines_split_a_log():
    text = 'before\n{"a": 1}\nmiddle {"not": "at line start"}\n{\n  "b": 2\n}\nafter\n'
    assert list(json_objects(text)) == [{"a": 1}, {"b": 2}]
    assert plain_lines(text) == 'before\n\nmiddle {"not": "at line start"}\n\nafter\n'
