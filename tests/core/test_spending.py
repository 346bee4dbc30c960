"""spending.py (SPEC §14): an attempt's Usage as the status entry writes it and reads it back, and the
running totals per UTC day in .memento/usage.json — added under its lock, never onto what an agent
wrote there, damaged values read as zero, the oldest days dropped past KEEP_DAYS."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from memento_core import spending, status_log
from memento_core.spending import Usage, parse_usage_field
from memento_core.workspace import Workspace

NOW = datetime(2026, 5, 6, 23, 59, tzinfo=UTC)


def workspace(tmp_path) -> Workspace:
    (tmp_path / "proj" / ".memento").mkdir(parents=True)
    return Workspace(tmp_path / "proj")


def test_usage_field_reads_back_what_it_writes():
    usage = Usage(12345, 2100, 0.042)
    assert usage.describe() == "12.3k in / 2.1k out tokens, $0.042"
    assert parse_usage_field(usage.describe()) == Usage(12300, 2100, 0.042)
    assert Usage(5, 7, None).describe() == "5 in / 7 out tokens, cost not reported"
    assert parse_usage_field("5 in / 7 out tokens, cost not reported") == Usage(5, 7, None)
    assert Usage(1, 2, 0.5) + Usage(3, 4, None) == Usage(4, 6, 0.5)


def test_counts_are_written_short_and_read_back_at_any_scale():
    assert [spending.short_count(n) for n in (999, 1000, 62_049, 999_999, 1_000_000, 1_250_000)] == \
        ["999", "1.0k", "62.0k", "1000.0k", "1.0M", "1.2M"]
    assert parse_usage_field("Usage: 1.2M in / 3K out tokens, $12.5 (estimated)") == Usage(1_200_000, 3000, 12.5)
    assert parse_usage_field("no usage here") is None and parse_usage_field(None) is None
    assert Usage(1, 2).tokens == 3 and (Usage(1, 2) + Usage(3, 4)).cost_usd is None


def test_each_attempt_is_added_to_its_utc_day_and_the_total(tmp_path):
    ws = workspace(tmp_path)
    spending.add_usage(ws, Usage(100, 10, 0.5), now=NOW)
    spending.add_usage(ws, Usage(50, 5, None), now=NOW.astimezone(timezone(timedelta(hours=9))))  # 05-07 in Tokyo
    ledger = spending.add_usage(ws, Usage(1, 1, 0.25), now=NOW + timedelta(minutes=2))  # past midnight UTC
    assert ledger == spending.read_ledger(ws)
    assert ledger["days"] == {"2026-05-06": {"tokens_in": 150, "tokens_out": 15, "cost_usd": 0.5},
                              "2026-05-07": {"tokens_in": 1, "tokens_out": 1, "cost_usd": 0.25}}
    assert ledger["total"] == {"tokens_in": 151, "tokens_out": 16, "cost_usd": 0.75}
    assert spending.usage_summary(ws, now=NOW) == {"today": ledger["days"]["2026-05-06"], "total": ledger["total"]}
    assert spending.usage_summary(ws, now=NOW + timedelta(days=5))["today"] == \
        {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}


def test_only_the_last_days_are_kept_and_the_total_keeps_them_all(tmp_path, monkeypatch):
    monkeypatch.setattr(spending, "KEEP_DAYS", 2)
    ws = workspace(tmp_path)
    for day in (2, 0, 1):  # a day written late (a worker's attempt that ended after midnight)
        spending.add_usage(ws, Usage(10, 1, 0.1), now=NOW + timedelta(days=day))
    ledger = spending.read_ledger(ws)
    assert list(ledger["days"]) == ["2026-05-07", "2026-05-08"]
    assert ledger["total"]["tokens_in"] == 30


def test_a_damaged_ledger_reads_as_zero_where_damaged(tmp_path):
    ws = workspace(tmp_path)
    spending.ledger_path(ws).write_text(json.dumps({
        "days": {"2026-05-06": {"tokens_in": -5, "tokens_out": True, "cost_usd": "9"}, "2026-05-05": 3},
        "total": {"tokens_in": 7, "tokens_out": 2.0, "cost_usd": 1}}))
    zero = {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}
    assert spending.read_ledger(ws) == {"days": {"2026-05-06": zero, "2026-05-05": zero},
                                        "total": {"tokens_in": 7, "tokens_out": 2, "cost_usd": 1.0}}
    spending.ledger_path(ws).write_text("[1, 2]")
    assert spending.read_ledger(ws) == {"days": {}, "total": zero}
    spending.ledger_path(ws).unlink()
    assert spending.read_ledger(ws) == {"days": {}, "total": zero}


def test_totals_summed_from_status_entries_count_today_by_the_entrys_stamp(tmp_path):
    rows = [("2026-05-06T10:00:00Z", "12.3k in / 2.1k out tokens, $0.042"),
            ("2026-05-05T10:00:00Z", "1.0k in / 100 out tokens, cost not reported"),
            ("2026-05-06T11:00:00Z", "")]
    text = "# TICK STATUS LOG\n\n" + "---\n".join(
        status_log.format_entry(stamp, n, [("Task", "T-1 x"), ("Status", "✅ SUCCESS"), ("Usage", usage)])
        for n, (stamp, usage) in enumerate(rows, 1))
    summary = spending.usage_from_entries(status_log.parse_status_text(text), now=NOW)
    assert summary == {"today": {"tokens_in": 12300, "tokens_out": 2100, "cost_usd": 0.042},
                       "total": {"tokens_in": 13300, "tokens_out": 2200, "cost_usd": 0.042}}


def test_what_an_agent_wrote_into_the_ledger_is_put_back_before_adding(tmp_path):
    ws = workspace(tmp_path)
    spending.add_usage(ws, Usage(10, 1, 1.0), now=NOW)
    spending.ledger_path(ws).write_text(json.dumps({"days": {}, "total": {"cost_usd": 999.0}}))  # not Memento's
    ledger = spending.add_usage(ws, Usage(10, 1, 1.0), now=NOW)
    assert ledger["total"] == {"tokens_in": 20, "tokens_out": 2, "cost_usd": 2.0}
