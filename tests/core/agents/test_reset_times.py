"""agents/reset_times.py: when a CLI's limit resets, read from the wordings the CLIs print at a limit
(claude's "resets 2pm (UTC)", codex's "Try again at Aug 8th, 2027 12:30 PM." in local time, gemini's
"Please retry in 37.5s.", a bare epoch), relative to the moment the line was read; None where no time
is said or the time is not a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memento_core.agents.reset_times import reset_time
from tests.core.agents.outputs import NOW


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
