"""config/validator.py: memento.toml's typed reads, each refusal a MementoError at the key's line
(tomllib gives none: key_line and entry_line find it in the text, a list spanning lines included)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memento_core.config.validator import Validator, entry_line, key_line
from memento_core.errors import MementoError

TEXT = """\
# memento.toml
project = "demo"

[agent]
preset = "claude"
"timeout" = "10min"

[budget]
max_tokens = 1.5
warn_percent = 0.9
alert_percent = 95

[fallback]
presets = [
  "codex",
  'gemini',
  "robot",
]
after = "0s"

[schedule]
"""


def validator(text: str = TEXT) -> Validator:
    return Validator(Path("memento.toml"), text, tomllib.loads(text))


def test_key_line_finds_a_key_in_its_section_quoted_dotted_or_the_section_itself():
    assert key_line(TEXT, "agent", "preset") == 5
    assert key_line(TEXT, "agent", "timeout") == 6  # a quoted key
    assert key_line(TEXT, "budget", "max_tokens") == 9
    dotted = "project = 1\nbudget.max_usd = 3\n[budget]\nmax_usd = 4\n"  # at the top, before any table
    assert key_line(dotted, "budget", "max_usd") == 2
    assert key_line("[other]\nbudget.max_usd = 1\n[budget]\nmax_usd = 2\n", "budget", "max_usd") == 4
    assert key_line("[other]\nmax_usd = 1\n[budget]\nmax_usd = 2\n", "budget", "max_usd") == 4
    assert key_line(TEXT, "schedule", "every") == 21  # missing: the section's header
    assert key_line(TEXT, "nowhere", "every") == 0


def test_entry_line_finds_an_entry_of_a_list_spanning_lines():
    assert entry_line(TEXT, "fallback", "presets", "robot") == 17
    assert entry_line(TEXT, "fallback", "presets", "gemini") == 16  # single quotes
    assert entry_line(TEXT, "fallback", "presets", "absent") == 14  # not there: the key's line
    assert entry_line('[fallback]\npresets = ["robot"]\n', "fallback", "presets", "robot") == 2  # on one line
    # the next key ends the search: a value there is not the list's
    assert entry_line('[fallback]\npresets = ["codex"]\nafter = "robot"\n', "fallback", "presets", "robot") == 2


def refusal(read) -> str:
    with pytest.raises(MementoError) as caught:
        read()
    return str(caught.value)


def test_each_read_refuses_a_wrong_value_at_its_line():
    v = validator()
    assert v.string("agent", "preset", "script") == "claude" and v.string("agent", "model", "") == ""
    assert refusal(lambda: validator("[agent]\npreset = 3\n").string("agent", "preset", "")) == (
        "memento.toml:2: [agent] preset: expected a string, got 3")
    assert refusal(lambda: v.tokens("budget", "max_tokens")) == (
        "memento.toml:9: [budget] max_tokens: expected a whole number of tokens (0 or more), got 1.5")
    assert refusal(lambda: v.percent("budget", "warn_percent")) == (
        "memento.toml:10: [budget] warn_percent: a percentage from 1 to 100, e.g. 95 (not a fraction), got 0.9")
    assert v.percent("budget", "alert_percent") == 95.0 and v.percent("budget", "other_percent") == 0.0
    assert refusal(lambda: v.presets("fallback", "presets", [])).startswith(
        "memento.toml:14: [fallback] presets: unknown preset 'robot'; one of claude, ")
    assert refusal(lambda: v.duration("fallback", "after", "1min")) == (
        "memento.toml:19: [fallback] after: must be longer than zero, got '0s'")
    assert v.duration("fallback", "wait", "90s") == (90.0, "90s")
    assert v.string("agent", "timeout", "") == "10min"


@pytest.mark.parametrize("value", ["-1", "true", '"5"'])
def test_dollars_are_a_number_of_zero_or_more(value):
    v = validator(f"[budget]\nmax_usd = {value}\n")
    assert refusal(lambda: v.dollars("budget", "max_usd")).startswith(
        "memento.toml:2: [budget] max_usd: expected an amount in US dollars (0 or more)")


@pytest.mark.parametrize("value", ["-1", "true", "inf", "nan", "2.5"])
def test_tokens_are_a_whole_number_of_zero_or_more(value):
    v = validator(f"[budget]\nmax_tokens = {value}\n")
    assert "expected a whole number of tokens" in refusal(lambda: v.tokens("budget", "max_tokens"))


def test_a_section_that_is_not_a_table_is_refused_at_its_line():
    v = validator('budget = 5\n[agent]\npreset = "claude"\n')
    assert refusal(lambda: v.table("budget")) == "memento.toml:1: [budget] must be a table, got int"
    assert refusal(lambda: v.string("budget", "x", "")) == "memento.toml:1: [budget] must be a table, got int"
