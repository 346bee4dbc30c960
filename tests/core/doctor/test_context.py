"""doctor/context.py: the workspace's files as the checks see them, each read at most once and only
when a check asks; stamps read leniently (a damaged one is None, never an exception)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from memento_core.doctor.context import Context, mtime, parse_stamp, stamp
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace

NOW = datetime(2026, 1, 1, tzinfo=UTC)
T0 = NOW.timestamp()


def fresh(tmp_path) -> Context:
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    return Context(Workspace(tmp_path / "proj"), NOW)


@pytest.fixture
def far_east(monkeypatch):
    """The machine's local time nine hours ahead of UTC, so a naive stamp read as local shows."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_stamps_read_with_z_an_offset_or_naive_as_utc_and_a_damaged_one_is_none(far_east):
    assert stamp(T0 + 61) == "2026-01-01T00:01:01Z"
    assert parse_stamp("2026-01-01T00:01:01Z") == T0 + 61
    assert parse_stamp(" 2026-01-01T00:01:01 ") == T0 + 61  # naive: UTC
    assert parse_stamp("2026-01-01T01:00:00+01:00") == T0
    assert parse_stamp(stamp(T0 + 3600)) == T0 + 3600
    for damaged in (None, "", "yesterday", "2026-13-01T00:00:00Z"):
        assert parse_stamp(damaged) is None


def test_the_plan_is_read_once_and_kept_for_every_check_that_asks(tmp_path):
    c = fresh(tmp_path)
    first = c.plan
    text = c.ws.plan_path.read_text()
    c.ws.plan_path.unlink()
    assert c.plan_problem is None  # the same reading as the plan's
    assert c.plan is first and c.usable_plan is first  # the doctor judges one reading of the workspace
    c.ws.plan_path.write_text(text + "- [ ] `T-1` again\n  - verify: `true`\n- [ ] `T-1` twice\n  - verify: `true`\n")
    again = Context(c.ws, NOW)
    assert again.plan.plan_errors and again.usable_plan is None  # read, but it cannot run


def test_a_missing_plan_is_a_problem_naming_it_not_an_exception(tmp_path):
    c = fresh(tmp_path)
    c.ws.plan_path.unlink()
    assert c.plan is None and c.usable_plan is None
    assert str(c.plan_problem) == "docs/MASTER_PLAN.md does not exist"


def test_a_checkpoint_missing_or_not_utf8_reads_as_none(tmp_path):
    c = fresh(tmp_path)
    assert c.checkpoint is not None and c.checkpoint_text == c.ws.checkpoint_path.read_text()
    c.ws.checkpoint_path.write_bytes(b"## Objective\n\xff\xfe\n")
    assert Context(c.ws, NOW).checkpoint_text is None and Context(c.ws, NOW).checkpoint is None
    c.ws.checkpoint_path.unlink()
    assert Context(c.ws, NOW).checkpoint is None


def test_a_broken_config_is_an_error_kept_beside_no_config(tmp_path):
    c = fresh(tmp_path)
    config, error = c.config_and_error
    assert config is not None and error is None
    c.ws.config_path.write_text("[agent]\npreset = 3\n")
    config, error = Context(c.ws, NOW).config_and_error
    assert config is None and "[agent] preset: expected a string, got 3" in str(error)


def test_the_newest_tick_log_is_the_one_written_last_whatever_its_name(tmp_path):
    c = fresh(tmp_path)
    assert c.newest_log is None
    c.ws.logs_dir.mkdir(parents=True, exist_ok=True)
    for name, at in (("tick_0003.log", T0), ("tick_0001.log", T0 + 60), ("other.log", T0 + 120)):
        (c.ws.logs_dir / name).write_text("x\n")
        os.utime(c.ws.logs_dir / name, (at, at))
    assert Context(c.ws, NOW).newest_log == (c.ws.logs_dir / "tick_0001.log", T0 + 60)
    assert mtime(c.ws.logs_dir / "gone.log") is None


def test_line_of_finds_the_first_line_holding_the_text_or_none(tmp_path):
    c = fresh(tmp_path)
    path = tmp_path / "f.md"
    path.write_text("a\nneedle one\nneedle two\n")
    assert c.line_of(path, "needle") == 2
    assert c.line_of(path, "hay") is None
    assert c.line_of(tmp_path / "gone.md", "needle") is None
    assert c.rel(c.ws.plan_path) == "docs/MASTER_PLAN.md"

