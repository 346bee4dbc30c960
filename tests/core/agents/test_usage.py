"""agents/usage.py: the parsers every preset shares, on real-shaped agent output
(tests/core/fixtures/agent_output/): no report is no usage, a generic 429, reset times in the CLIs'
wordings, a log's last words and its JSON objects (each preset's own parsers: tests/core/agents/presets/).

The limit messages are the ones these CLIs print ("You've hit your limit · resets 2pm
(Europe/Rome)", "You've hit your usage limit … try again in 2 hours 5 minutes",
"exceeded retry limit, last status: 429 Too Many Requests", litellm's RateLimitError).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
from tests.core.agents.outputs import NOW

# ------------------------------------------------------------------ usage


@pytest.mark.parametrize("parser", [claude.parse_usage, codex.parse_usage, gemini.parse_usage,
                                    aider.parse_usage])
def test_no_report_is_no_usage(parser):
    assert parser("[memento] agent (x) in /p: x\nworking\nnot json { at all\n") is None


# ------------------------------------------------------------------ rate limits


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
