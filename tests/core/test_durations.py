"""Durations as people write them (90s, 5min, 1h30m) and as Memento shows them: durations.py."""

from __future__ import annotations

import pytest

from memento_core.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5min", 300),
        ("5m", 300),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1h 30min", 5400),
        ("2d", 172800),
        ("1.5h", 5400),
        ("45", 45),
        ("0.5", 0.5),
        (" 10 sec ", 10),
        (120, 120),
        (2.5, 2.5),
    ],
)
def test_parse_duration_accepts(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "min", "5 parsecs", "5x", "h1", "1h30", "-5s", "5min!", True, -3]
)
def test_parse_duration_rejects_with_the_value_in_the_message(text):
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (38, "38s"),
        (38.4, "38s"),
        (292, "4m52s"),
        (65, "1m05s"),
        (3720, "1h02m"),
        (86400 + 3 * 3600, "1d03h"),
        (-1, "0s"),
        (0.42, "0.4s"),
        (9.99, "10s"),
    ],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_and_parse_agree_on_whole_units():
    for seconds in (38, 292, 3720, 5400):
        assert parse_duration(format_duration(seconds)) == seconds
