"""agents/usage.py: the parsers every preset shares, on real-shaped agent output
(tests/core/fixtures/agent_output/): no report is no usage, a generic 429 (the reset
times in the CLIs' wordings: test_reset_times.py), a log's last words and its JSON objects (each preset's own parsers: tests/core/agents/presets/).

The limit messages are the ones these CLIs print ("You've hit your limit · resets 2pm
(Europe/Rome)", "You've hit your usage limit … try again in 2 hours 5 minutes",
"exceeded retry limit, last status: 429 Too Many Requests", litellm's RateLimitError).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from memento_core.agents.presets import aider, claude, codex, command, gemini
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
