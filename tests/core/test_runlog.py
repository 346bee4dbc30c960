"""runlog.parse_utc_stamp reads back what utc_stamp writes, and anything else as strptime does."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memento_core.runlog import parse_utc_stamp, utc_stamp


def _strptime(stamp):
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return None


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)))  # strftime pads no year
def test_what_utc_stamp_writes_reads_back(when):
    stamp = utc_stamp(when)
    assert parse_utc_stamp(stamp) == when.replace(microsecond=0, tzinfo=UTC) == _strptime(stamp)


_PART = st.sampled_from(["2026", "0001", "9999", "12", "02", "30", "31", "00", "13", "23", "24", "59", "60", "61",
                         "1", "-", "T", ":", "Z", " ", "t", "z", "+00:00", "２", "٣", "\n", ".5"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PART, max_size=12).map("".join))
def test_any_text_reads_as_strptime_reads_it(text):
    assert parse_utc_stamp(text) == _strptime(text), text


def test_stamps_close_to_the_shape_read_as_strptime_reads_them():
    for text in ("2026-12-06T20:01:02Z", "2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-12-06T23:59:60Z",
                 "2026-12-06T24:00:00Z", "2026-13-06T20:01:02Z", "2026-1-6T2:1:2Z", "2026-12-06T20:01:02z",
                 "2026-12-06 20:01:02Z", "2026-12-06T20:01:02Z\n", " 2026-12-06T20:01:02Z", "٢٠٢٦-12-06T20:01:02Z",
                 "0000-12-06T20:01:02Z", "", None, 20261206, "0000-1-1T0:0:0Z", "0000-1-1T0:0:0", "0000-1-1t0:0:0z",
                 "0000-1- 1T0:0:0Z"):
        assert parse_utc_stamp(text) == _strptime(text), text
